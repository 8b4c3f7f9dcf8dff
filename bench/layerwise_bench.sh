#!/usr/bin/env bash
# Layerwise-descent step benchmark, in one script: the C++ plain / ERM / constrained steps and the same plain step
# in Python PyTorch (Debian python3-torch, same version), on the same model shape and batch, one thread each.
# Usage: bash bench/layerwise_bench.sh [BUILD_DIR] [extra shape flags, e.g. --width 128 --layers 6]
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
build=${1:-$here/../build}
shift || true
cpp=$("$build/bench/descentlab_bench_layerwise_step" "$@")
python=$(/usr/bin/python3 "$here/python_step.py" "$@")
echo "$cpp"
echo "$python"
cpp_plain=$(sed -n 's/^cpp_plain_ms //p' <<<"$cpp")
python_plain=$(sed -n 's/^python_plain_ms //p' <<<"$python")
awk -v c="$cpp_plain" -v p="$python_plain" 'BEGIN { printf "ratio_cpp_over_python_plain %.3f\n", c / p }'
