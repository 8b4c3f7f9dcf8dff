#!/usr/bin/env bash
# The CUDA path, checked on a machine with a GPU and PyTorch (docs/build.md, route b): builds the engine and
# descentlab-cli (no Qt) against the LibTorch inside that PyTorch, runs a quick preset of each engine on cuda and
# on cpu with the same seed, checks that their results agree, prints steps/s for both, and counts the host syncs
# of a CUDA training step (there must be none between metric intervals).
#
#   bash scripts/gpu-check.sh bundle DEPS      # on Debian 12 with scripts/lab.sh's packages: put the headers and
#                                              # libraries a bare GPU box lacks (HDF5, OpenSSL's crypto, zlib,
#                                              # nlohmann-json, CLI11) into DEPS, about 20 MB
#   bash scripts/gpu-check.sh run [--deps DEPS] [--python PY] [--torch-prefix DIR] [--out DIR] [--jobs N]
#                                              # on the GPU box; the results go to OUT (default gpu-check/)
#   bash scripts/gpu-check.sh run --cpu-only ...   # a dry run of the script on a machine without a GPU: the same
#                                              # build, the cpu runs and the host-sync count on the cpu, no comparison
#
# run uses the system's HDF5, OpenSSL, zlib, nlohmann-json and CLI11 when --deps is not given. Moby Dick (1.2 MB,
# datasets/cache/moby-dick) must be in the dataset cache for the sparse engine's preset (gpt-horst); the
# layerwise preset (video-constrained) generates its data. Nothing is downloaded.
#
# The agreement check: a model is initialised on the CPU and then moved, so both devices start from the same
# weights; their random streams differ (dropout, noise are drawn on the device), so the final metrics agree
# statistically, not bitwise: within 10 % relative (quick presets). Timings are each device's own steps/s
# from the run's summary (the whole run, evaluations included).
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
say() { printf '\n==> %s\n' "$*"; }
fail() { printf '\nERROR: %s\n' "$*" >&2; exit 1; }

# ---------------------------------------------------------------------------------------------------- bundle
bundle() {
  local deps=${1:?usage: bash scripts/gpu-check.sh bundle DEPS}
  local multiarch
  multiarch=$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)
  local libdir=/usr/lib/$multiarch
  [ -f /usr/include/hdf5/serial/H5Cpp.h ] || fail "HDF5's C++ headers are missing: run bash scripts/lab.sh setup first"
  rm -rf "$deps.partial"
  mkdir -p "$deps.partial/include/openssl" "$deps.partial/lib" "$deps.partial/share/cmake"
  cp -a /usr/include/hdf5/serial/. "$deps.partial/include/"
  cp -a /usr/include/nlohmann /usr/include/CLI "$deps.partial/include/"
  cp -a /usr/include/openssl/. "$deps.partial/include/openssl/"
  cp -a "/usr/include/$multiarch/openssl/." "$deps.partial/include/openssl/"
  cp -a /usr/include/zlib.h /usr/include/zconf.h "$deps.partial/include/"
  cp -a /usr/share/cmake/nlohmann_json /usr/share/cmake/CLI11 "$deps.partial/share/cmake/"
  # The libraries, and every library they load except the C and C++ runtimes any Linux has.
  local wanted=("$libdir/libhdf5_serial_cpp.so" "$libdir/libhdf5_serial.so" "$libdir/libcrypto.so" "$libdir/libz.so")
  local library
  {
    for library in "${wanted[@]}"; do
      readlink -f "$library"
      ldd "$library" | awk '/=> \// { print $3 }'
    done
  } | sort -u | while read -r library; do
    case "$(basename "$library")" in
      libc.so*|libm.so*|libstdc++.so*|libgcc_s.so*|ld-linux*|libpthread.so*|libdl.so*|librt.so*|libresolv.so*) ;;
      *) cp -L "$library" "$deps.partial/lib/$(objdump -p "$library" | awk '/SONAME/ { print $2 }')" ;;
    esac
  done
  # The names a linker looks for (FindHDF5 without Debian's h5c++ wrapper looks for hdf5 and hdf5_cpp).
  ln -sf libhdf5_serial.so.103 "$deps.partial/lib/libhdf5.so"
  ln -sf libhdf5_serial_cpp.so.103 "$deps.partial/lib/libhdf5_cpp.so"
  ln -sf libcrypto.so.3 "$deps.partial/lib/libcrypto.so"
  ln -sf libz.so.1 "$deps.partial/lib/libz.so"
  for library in libhdf5_serial.so.103 libhdf5_serial_cpp.so.103 libcrypto.so.3 libz.so.1; do
    [ -f "$deps.partial/lib/$library" ] || fail "bundle: $library was not copied (a different Debian release?)"
  done
  rm -rf "$deps"
  mv "$deps.partial" "$deps"
  echo "bundled into $deps: $(du -sh "$deps" | cut -f1) ($(ls "$deps/lib" | wc -l) library files)"
}

# ---------------------------------------------------------------------------------------------------- run
json_field() {  # json_field FILE EXPRESSION  (EXPRESSION in Python over the parsed object `j`)
  "$python" -c "import json,sys; j=json.load(open(sys.argv[1])); print($2)" "$1"
}

run_check() {
  local deps="" out="$repo/gpu-check" torch_prefix="" jobs cpu_only=0
  python=python3
  jobs=$(nproc)
  while [ $# -gt 0 ]; do
    case "$1" in
      --deps) deps=$(cd "$2" && pwd); shift 2 ;;
      --python) python=$2; shift 2 ;;
      --torch-prefix) torch_prefix=$2; shift 2 ;;
      --out) out=$2; shift 2 ;;
      --jobs) jobs=$2; shift 2 ;;
      --cpu-only) cpu_only=1; shift ;;
      *) fail "unknown option $1 (see the head of scripts/gpu-check.sh)" ;;
    esac
  done
  mkdir -p "$out"
  out=$(cd "$out" && pwd)
  local build="$out/build" report="$out/gpu-check.md"

  say "PyTorch"
  "$python" - >"$out/pytorch.txt" <<'PY' || fail "$python cannot import torch (give --python PY)"
import torch, torch.utils
print("version", torch.__version__)
print("cuda", torch.version.cuda or "none")
print("cudnn", torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else "none")
print("gpu", torch.cuda.get_device_name(0) if torch.cuda.is_available() else "none")
print("cmake_prefix_path", torch.utils.cmake_prefix_path)
PY
  cat "$out/pytorch.txt"
  [ -n "$torch_prefix" ] || torch_prefix=$(awk '/^cmake_prefix_path/ { print $2 }' "$out/pytorch.txt")
  [ -f "$torch_prefix/Torch/TorchConfig.cmake" ] ||
    fail "no LibTorch CMake files at $torch_prefix/Torch (this PyTorch has none; give --torch-prefix DIR)"

  say "Configuring and building core + CLI (DESCENTLAB_HEADLESS) against $torch_prefix"
  local cmake_args=(-DCMAKE_BUILD_TYPE=Release -DDESCENTLAB_HEADLESS=ON "-DCMAKE_PREFIX_PATH=$torch_prefix${deps:+;$deps}")
  if [ -n "$deps" ]; then
    cmake_args+=("-DHDF5_ROOT=$deps" "-DOPENSSL_ROOT_DIR=$deps" "-DZLIB_ROOT=$deps" "-DCMAKE_BUILD_RPATH=$deps/lib"
      -DHDF5_NO_FIND_PACKAGE_CONFIG_FILE=ON)
    export PATH="$deps/bin:$PATH"  # no h5c++ there: FindHDF5 searches HDF5_ROOT's include/ and lib/
  fi
  local start=$SECONDS
  cmake -S "$repo" -B "$build" "${cmake_args[@]}" >"$out/configure.log" 2>&1 ||
    { tail -30 "$out/configure.log"; fail "configuration failed (log: $out/configure.log)"; }
  grep -E "LibTorch|HDF5|CUDA" "$out/configure.log" | head -8 || true
  cmake --build "$build" --parallel "$jobs" >"$out/build.log" 2>&1 ||
    { grep -E "error|Error" "$out/build.log" | head -30; fail "the build failed (log: $out/build.log)"; }
  echo "built in $((SECONDS - start)) s"
  local cli="$build/app/descentlab-cli"
  "$cli" --version | tee "$out/version.txt"
  local devices=(cpu cuda) sync_device=cuda
  if [ $cpu_only = 1 ]; then
    devices=(cpu) sync_device=cpu
  elif grep -q "^CUDA devices: none" "$out/version.txt"; then
    fail "descentlab-cli sees no CUDA device (see $out/version.txt; --cpu-only for a dry run without one)"
  fi

  local runs="$out/runs" preset device
  mkdir -p "$runs"
  {
    echo "# GPU check ($(date -u +%Y-%m-%d), commit $(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo unknown))"
    echo
    echo '```'
    cat "$out/version.txt"
    echo '```'
    echo
    echo "| preset | device | steps | steps/s | test metric | test loss | seconds |"
    echo "| --- | --- | ---: | ---: | ---: | ---: | ---: |"
  } >"$report"
  local failed=0
  for preset in video-constrained gpt-horst; do
    for device in "${devices[@]}"; do
      say "$preset on $device (quick)"
      "$cli" train --preset "$preset" --size quick --device "$device" --out "$runs/$preset-$device.h5" --overwrite \
        --json >"$out/$preset-$device.json" 2>"$out/$preset-$device.log" ||
        { tail -5 "$out/$preset-$device.log"; fail "$preset on $device failed (log: $out/$preset-$device.log)"; }
      json_field "$out/$preset-$device.json" \
        "'| $preset | $device | %d | %.2f | %.4f | %.4f | %.1f |' % (j['steps'], j['steps_per_second'], j['test']['value'], j['test']['loss'], j['seconds'])" |
        tee -a "$report"
    done
    [ $cpu_only = 1 ] && continue
    local verdict
    verdict=$("$python" - "$out/$preset-cpu.json" "$out/$preset-cuda.json" <<'PY'
import json, sys
cpu, cuda = (json.load(open(p)) for p in sys.argv[1:3])
rows = []
ok = True
for key in ("value", "loss"):
    a, b = cpu["test"][key], cuda["test"][key]
    relative = abs(a - b) / max(abs(a), 1e-12)
    ok &= relative <= 0.10
    rows.append(f"{key} cpu {a:.4f} cuda {b:.4f} (relative difference {relative:.3f})")
speed = cuda["steps_per_second"] / cpu["steps_per_second"]
print(("agree" if ok else "DISAGREE") + ": " + "; ".join(rows) + f"; cuda/cpu steps/s = {speed:.2f}")
PY
)
    echo "$verdict"
    printf '\n%s: %s\n\n' "$preset" "$verdict" >>"$report"
    case "$verdict" in agree*) ;; *) failed=1 ;; esac
  done

  say "Host syncs of a training step on $sync_device"
  # Two one-epoch runs of 20 and 40 steps (320 and 640 clips, batch 16) with no metric read before the epoch's
  # end: both have the same one interval read and one evaluation, so what the second adds is 20 steps' syncs.
  local clips syncs=() steps=()
  for clips in 320 640; do
    "$cli" train --preset video-constrained --size quick --device "$sync_device" --set train.epochs=1 \
      --set train.metric_interval=100000 --set data.train_clips=$clips --count-host-syncs \
      --out "$runs/syncs-$clips.h5" --overwrite --json >"$out/syncs-$clips.json" 2>"$out/syncs-$clips.log" ||
      fail "the host-sync run failed (log: $out/syncs-$clips.log)"
    syncs+=("$(json_field "$out/syncs-$clips.json" "j['host_syncs']['total']")")
    steps+=("$(json_field "$out/syncs-$clips.json" "j['steps']")")
  done
  local per_step
  per_step=$(awk -v a="${syncs[0]}" -v b="${syncs[1]}" -v m="${steps[0]}" -v n="${steps[1]}" \
    'BEGIN { printf "%.2f", (b - a) / (n - m) }')
  local line="host syncs on $sync_device: ${syncs[0]} in a ${steps[0]}-step epoch, ${syncs[1]} in a ${steps[1]}-step epoch (one metric read and one evaluation each): $per_step per training step"
  echo "$line"
  printf '%s (details: %s)\n' "$line" "$(json_field "$out/syncs-640.json" "j['host_syncs']")" >>"$report"
  [ "$per_step" = "0.00" ] || failed=1
  if [ $cpu_only = 0 ] && command -v nsys >/dev/null; then
    say "nsys profile of 30 CUDA steps (CUDA API summary)"
    nsys profile -o "$out/steps" --force-overwrite true "$cli" train --preset video-constrained --size quick \
      --device cuda --max-steps 30 --out "$runs/nsys.h5" --overwrite >"$out/nsys.log" 2>&1 &&
      nsys stats --report cuda_api_sum "$out/steps.nsys-rep" >"$out/nsys-cuda-api.txt" 2>&1 &&
      grep -iE "Synchronize|Memcpy" "$out/nsys-cuda-api.txt" | head -8 | tee -a "$report" || true
  fi
  say "Report: $report"
  cat "$report"
  [ $failed = 0 ] || fail "the check found a difference (see above)"
}

case "${1:-}" in
  bundle) shift; bundle "$@" ;;
  run) shift; run_check "$@" ;;
  *) echo "usage: bash scripts/gpu-check.sh bundle DEPS | run [--deps DEPS] [--python PY] [--torch-prefix DIR] [--out DIR] [--jobs N] [--cpu-only]" >&2
     exit 2 ;;
esac
