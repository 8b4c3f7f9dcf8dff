#!/usr/bin/env bash
# Layerwise-descent step benchmark, in one script: the C++ plain / ERM / constrained steps (interleaved in one
# process) and the same plain step in Python PyTorch (Debian python3-torch, same version), on the same model shape
# and batch, one thread each. The C++ and Python processes alternate LAYERWISE_BENCH_REPEATS times (default 3), so
# a slow stretch of the machine does not land on one side only; each ratio is the median over the repeats, and the
# C++/Python ratio is also given for the fastest process of each side.
# Usage: bash bench/layerwise_bench.sh [BUILD_DIR] [shape flags for both: --width D --layers L --batch B --length T]
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
build=${1:-$here/../build}
shift || true
repeats=${LAYERWISE_BENCH_REPEATS:-3}
value() { sed -n "s/^$1 //p" <<<"$2"; }
cpp_over_python=() constrained_over_erm=() cpp_plain=() python_plain=() sdpa_over_module=()
for ((repeat = 1; repeat <= repeats; ++repeat)); do
  cpp=$("$build/bench/descentlab_bench_layerwise_step" "$@")
  python=$(/usr/bin/python3 "$here/python_step.py" "$@")
  [ "$repeat" = 1 ] && { head -2 <<<"$cpp"; value python_torch "$python" | sed 's/^/python_torch /'; }
  ratio=$(awk -v c="$(value cpp_plain_ms "$cpp")" -v p="$(value python_plain_ms "$python")" 'BEGIN { printf "%.3f", c / p }')
  echo "repeat $repeat: cpp_plain_ms $(value cpp_plain_ms "$cpp") cpp_erm_ms $(value cpp_erm_ms "$cpp")" \
    "cpp_constrained_ms $(value cpp_constrained_ms "$cpp") python_plain_ms $(value python_plain_ms "$python")" \
    "constrained/erm $(value ratio_constrained_over_erm "$cpp") cpp/python $ratio" \
    "cpp_plain_module_attention_ms $(value cpp_plain_module_attention_ms "$cpp")" \
    "sdpa/module $(value ratio_sdpa_over_module_attention "$cpp")"
  cpp_over_python+=("$ratio")
  cpp_plain+=("$(value cpp_plain_ms "$cpp")")
  python_plain+=("$(value python_plain_ms "$python")")
  constrained_over_erm+=("$(value ratio_constrained_over_erm "$cpp")")
  sdpa_over_module+=("$(value ratio_sdpa_over_module_attention "$cpp" | cut -d' ' -f1)")
done
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
echo "ratio_constrained_over_erm $(median "${constrained_over_erm[@]}") (median of $repeats)"
echo "ratio_cpp_over_python_plain $(median "${cpp_over_python[@]}") (median of $repeats)"
echo "ratio_sdpa_over_module_attention $(median "${sdpa_over_module[@]}") (median of $repeats; the C++ plain step" \
  "with the model's attention over the same step with LibTorch's MultiheadAttention module, in one process)"
# Noise from the rest of the machine only ever adds time, so the fastest process of each side is a second estimate.
fastest() { printf '%s\n' "$@" | sort -g | head -1; }
echo "cpp_plain_ms_fastest $(fastest "${cpp_plain[@]}") python_plain_ms_fastest $(fastest "${python_plain[@]}")"
awk -v c="$(fastest "${cpp_plain[@]}")" -v p="$(fastest "${python_plain[@]}")" \
  'BEGIN { printf "ratio_cpp_over_python_plain_fastest %.3f\n", c / p }'
