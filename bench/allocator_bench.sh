#!/usr/bin/env bash
# Steps per second of descentlab-cli train with DescentLab's allocator settings (core/runtime.h,
# configure_allocator) against glibc's defaults (DESCENTLAB_MALLOC_DEFAULTS=1), alternating in rounds.
#   bash bench/allocator_bench.sh [ROUNDS]      (default 2; run on an otherwise idle machine)
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cli="${DESCENTLAB_CLI:-$repo/build/app/descentlab-cli}"
rounds=${1:-2}
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
export DESCENTLAB_THREADS=1
rate() {  # rate PRESET EXTRA... -> steps/s from the JSON summary
  local preset=$1
  shift
  rm -f "$scratch/run.h5"
  "$cli" train --preset "$preset" --out "$scratch/run.h5" --json "$@" 2>/dev/null |
    /usr/bin/python3 -c 'import json,sys; print("%.2f" % json.load(sys.stdin)["steps_per_second"])'
}
for preset in video-constrained text-constrained vit-horst; do
  extra=()
  [ "$preset" = vit-horst ] && extra=(--max-steps 150)
  for round in $(seq "$rounds"); do
    defaults=$(DESCENTLAB_MALLOC_DEFAULTS=1 rate "$preset" "${extra[@]}")
    tuned=$(rate "$preset" "${extra[@]}")
    echo "$preset round $round: glibc defaults $defaults steps/s, DescentLab's settings $tuned steps/s," \
      "ratio $(/usr/bin/python3 -c "print('%.2f' % ($tuned / $defaults))")"
  done
done
