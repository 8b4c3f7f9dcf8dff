#!/usr/bin/env bash
# Issue 53 item 3: a user's data file larger than the memory it may take, trained chunk by chunk. On one file of
# ROWS x 784 float32 features (bench/write_big_data.py; 1,000,000 rows = 3.1 GB), the same MLP trained for STEPS
# steps with the training rows held whole (data.memory_mb=8192) and read chunk by chunk (data.memory_mb=256); then
# the chunked run again inside a memory cgroup of LIMIT_MB, smaller than the file (cgroup v1 or v2, needs root),
# where the whole-file run is refused by the memory check. torch and OpenBLAS on one thread. Numbers in
# docs/benchmarks.md.
#   bash bench/chunked_data.sh [DESCENTLAB_CLI] [ROWS] [STEPS] [LIMIT_MB]
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
cli=${1:-$repo/build/app/descentlab-cli}
rows=${2:-1000000}
steps=${3:-1000}
limit_mb=${4:-1024}
work=${WORK:-$(mktemp -d)}
trap '[ -n "${cgroup:-}" ] && rmdir "$cgroup" 2>/dev/null; [ -z "${WORK:-}" ] && rm -rf "$work"' EXIT
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 DESCENTLAB_THREADS=1
python=/usr/bin/python3
[ -f "$work/big.h5" ] || "$python" "$here/write_big_data.py" "$work" "$rows"
printf 'data file: %s bytes, %s training rows\n' "$(stat -c %s "$work/big.h5")" "$rows"

# The run's samples per second over its intervals but the first: their harmonic mean (every interval trains the same
# samples, so this is the samples over the time), which counts the pauses where a new window of chunks is read.
rate() {
  HDF5_EXTFILE_PREFIX='${ORIGIN}' "$python" -c '
import h5py, statistics, sys
values = h5py.File(sys.argv[1], "r")["metrics/throughput/value"][()]
print(f"{statistics.harmonic_mean(values[1:]):.0f}")' "$1"
}

# train MEMORY_MB OUT [wrapper...]: the run, its wall time and peak memory (RSS) on one line.
train() {
  local memory=$1 out=$2
  shift 2
  "$@" /usr/bin/time -f "%e %M" -o "$work/time" "$cli" train --model "$work/mlp.pt" --data "$work/big.h5" \
    --optimizer adamw --max-steps "$steps" --set train.batch_size=256 --set data.memory_mb="$memory" \
    --set train.metric_interval=50 --set sparsity.frontier_interval=0 --set train.histogram_interval=100000 \
    --out "$out" --overwrite >"$work/log" 2>&1 || { cat "$work/log"; return 1; }
  read -r seconds rss <"$work/time"
  printf '%-22s %10s samples/s %8.1f s wall %8d MB peak RSS\n' "data.memory_mb=$memory" "$(rate "$out")" \
    "$seconds" $((rss / 1024))
}

train 8192 "$work/whole.h5"
train 256 "$work/chunked.h5"
whole=$(rate "$work/whole.h5")
chunked=$(rate "$work/chunked.h5")
"$python" -c "print(f'step time chunked / whole: {$whole / $chunked:.3f} (the startup, hashing and checking the file, apart)')"

# Inside a memory cgroup smaller than the file.
if [ -d /sys/fs/cgroup/memory ]; then
  cgroup=/sys/fs/cgroup/memory/descentlab-bench-$$
  mkdir "$cgroup" && echo $((limit_mb << 20)) >"$cgroup/memory.limit_in_bytes"
elif [ -f /sys/fs/cgroup/cgroup.controllers ]; then
  cgroup=/sys/fs/cgroup/descentlab-bench-$$
  mkdir "$cgroup" && echo $((limit_mb << 20)) >"$cgroup/memory.max"
fi
inside() { echo $BASHPID >"$cgroup/cgroup.procs" && "$@"; }
if [ -n "${cgroup:-}" ]; then
  printf 'in a memory cgroup of %d MB:\n' "$limit_mb"
  ( inside train 256 "$work/limited.h5" )
  if ( inside train 8192 "$work/refused.h5" ) >"$work/refused.log" 2>&1; then
    echo "the whole-file run was not refused"; exit 1
  fi
  grep -m1 "needs about" "$work/refused.log" || cat "$work/refused.log"
else
  echo "no memory cgroup to limit (needs root and cgroup v1 or v2): the limited run is left out"
fi
