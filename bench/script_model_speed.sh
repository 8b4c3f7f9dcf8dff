#!/usr/bin/env bash
# Issue 53 item 8: a user's TorchScript module trained by descentlab-cli against the equivalent Python loop
# (bench/script_model_loop.py, Debian's python3-torch), both on one thread (torch and OpenBLAS), on the examples'
# CNN and character model; the ratio is the lab's step time over Python's (lower is faster). Numbers in
# docs/benchmarks.md.
# Then the load time of a 25 M-parameter module, by descentlab_bench_script_load and by Python's torch.jit.load.
#   bash bench/script_model_speed.sh [DESCENTLAB_CLI] [STEPS]
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
cli=${1:-$repo/build/app/descentlab-cli}
steps=${2:-200}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 DESCENTLAB_THREADS=1
python=/usr/bin/python3
"$python" "$repo/examples/cnn_fashion_mnist.py" --out-dir "$work" --train-rows 16384 --test-rows 256 >/dev/null
"$python" "$repo/examples/char_model.py" --out-dir "$work" --train-rows 16384 --test-rows 256 >/dev/null

# The median of the lab's throughput series (samples/s per interval), the first interval left out as Python's is.
lab_rate() {
  local out=$1
  HDF5_EXTFILE_PREFIX='${ORIGIN}' "$python" -c '
import h5py, statistics, sys
values = h5py.File(sys.argv[1], "r")["metrics/throughput/value"][()]
print(f"{statistics.median(values[1:]):.1f}")' "$out"
}

printf "%-10s %-6s %14s %14s %8s\n" model batch "lab samples/s" "python samp/s" "ratio"
for entry in "cnn.pt fashion-mnist.h5 64" "char.pt moby-dick.h5 32"; do
  read -r module data batch <<<"$entry"
  out="$work/${module%.pt}.h5"
  "$cli" train --model "$work/$module" --data "$work/$data" --optimizer adamw --max-steps "$steps" \
    --set train.batch_size="$batch" --set train.metric_interval=20 --set sparsity.frontier_interval=0 \
    --set train.histogram_interval=100000 --out "$out" >/dev/null 2>&1
  lab=$(lab_rate "$out")
  py=$("$python" "$here/script_model_loop.py" --model "$work/$module" --data "$work/$data" --batch-size "$batch" \
    --steps "$steps" --interval 20 | awk '{print $2}')
  # Step time ratio lab / python = python rate / lab rate.
  ratio=$("$python" -c "print(f'{$py / $lab:.3f}')")
  printf "%-10s %-6s %14s %14s %8s\n" "${module%.pt}" "$batch" "$lab" "$py" "$ratio"
done

# Loading a 25 M-parameter module (six 2048 x 2048 linear layers and a readout): the lab's best of 3 against Python's.
loader=${LOADER:-$repo/build/bench/descentlab_bench_script_load}
"$python" - "$work/big.pt" <<'PY'
import sys, torch
layers = [torch.nn.Linear(2048, 2048) for _ in range(6)] + [torch.nn.Linear(2048, 10)]
torch.jit.script(torch.nn.Sequential(*layers)).save(sys.argv[1])
PY
"$loader" "$work/big.pt" 3
"$python" - "$work/big.pt" <<'PY'
import sys, time, torch
torch.set_num_threads(1)
best = min((lambda t: (torch.jit.load(sys.argv[1], map_location="cpu"), time.perf_counter() - t)[1])(time.perf_counter())
           for _ in range(3))
print(f'{{"python_torch_jit_load_seconds_best": {best:.3f}}}')
PY
