#!/usr/bin/env bash
# DescentLab's one-command entry point (README.md): set everything up, then run the lab or its tests.
#
#   bash scripts/lab.sh run     # set up, then the GUI (or, without a display, the headless default job)
#   bash scripts/lab.sh test    # set up, then the whole test suite through ctest
#   bash scripts/lab.sh setup   # set up only
#   bash scripts/lab.sh package # set up, then build descentlab_VERSION_ARCH.deb (CPack) into packages/debian-N/
#
# Set-up = install missing Debian packages (Debian 12 or 13, detected; apt-get, needs root or password-less sudo), fetch and verify the
# datasets (datasets/fetch.sh), configure and build in Release (build/, ccache + a precompiled torch header).
# Every step is skipped when already done, so a second run takes seconds. Any failure stops with the reason.
#
# Environment: DESCENTLAB_BUILD_DIR (default build), DESCENTLAB_DATA (default datasets/cache),
# DESCENTLAB_JOBS (default: the number of cores), DESCENTLAB_THREADS (torch/BLAS threads at run time).
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir="${DESCENTLAB_BUILD_DIR:-$repo/build}"
jobs="${DESCENTLAB_JOBS:-$(nproc)}"

# shellcheck source=scripts/common.sh
. "$repo/scripts/common.sh"  # say, fail, as_root, install_missing

# Debian packages the build, the tests and the data fetch need (see README.md for what each is for). The names are
# the same on Debian 12 (bookworm: LibTorch 1.13, Qt 6.4, HDF5 1.10, GCC 12) and Debian 13 (trixie: LibTorch 2.6,
# Qt 6.8, HDF5 1.14, GCC 14): both install from this one list (Debian 13 skips libqt6opengl6-dev, a virtual
# package there), checked on fresh machines of both by CI.
packages=(
  build-essential cmake pkg-config ccache git ca-certificates
  libtorch-dev libgloo-dev libopenblas0-pthread
  libhdf5-dev nlohmann-json3-dev libcli11-dev libssl-dev zlib1g-dev libcurl4-openssl-dev libarchive-dev
  qt6-base-dev qt6-svg-dev libqt6opengl6-dev libqcustomplot-dev libqcustomplot2.1-qt6 libimgui-dev libgl-dev
  libgtest-dev libgmock-dev libbenchmark-dev python3-h5py python3-torch
  appstream desktop-file-utils lintian
)

# The Debian release this is (12, 13), from /etc/os-release; the set-up is made for those two.
debian_release() {
  local ID="" VERSION_ID="" VERSION_CODENAME="" PRETTY_NAME=""
  [ -r /etc/os-release ] && . /etc/os-release
  case "${ID:-}:${VERSION_ID:-}:${VERSION_CODENAME:-}" in
    debian:12:*|debian:*:bookworm) echo 12 ;;
    debian:13:*|debian:*:trixie) echo 13 ;;
    *) echo "other:${PRETTY_NAME:-an unknown system}" ;;
  esac
}

install_packages() {
  say "Checking Debian packages"
  local release
  release=$(debian_release)
  case "$release" in
    12|13) echo "Debian $release" ;;
    *) printf 'warning: this is %s, not Debian 12 or 13; package names may differ\n' "${release#other:}" ;;
  esac
  command -v apt-get >/dev/null || fail "apt-get not found: DescentLab's set-up needs Debian 12 or 13"
  local wanted=() package
  for package in "${packages[@]}"; do
    # Debian 13's Qt 6.8 moved QOpenGLWidget's headers into qt6-base-dev; libqt6opengl6-dev is only a virtual
    # package there, which dpkg never reports as installed (apt would be asked for it on every run).
    [ "$release" = 13 ] && [ "$package" = libqt6opengl6-dev ] && continue
    wanted+=("$package")
  done
  command -v npm >/dev/null || wanted+=(npm)  # npm fetches three datasets; a Node.js install may already bring it
  install_missing "${wanted[@]}"
  # LibTorch calls whatever BLAS Debian's alternatives select; the reference BLAS is ~16x slower.
  local blas
  blas=$(update-alternatives --query libblas.so.3-x86_64-linux-gnu 2>/dev/null | sed -n 's/^Value: //p')
  case "$blas" in
    *openblas*) echo "BLAS: $blas" ;;
    *) say "Selecting OpenBLAS for libblas.so.3 (was: ${blas:-unknown})"
       as_root update-alternatives --set libblas.so.3-x86_64-linux-gnu \
         /usr/lib/x86_64-linux-gnu/openblas-pthread/libblas.so.3 ||
         fail "could not select OpenBLAS; LibTorch would run on the slow reference BLAS" ;;
  esac
}

fetch_datasets() {
  say "Fetching and verifying datasets"
  bash "$repo/datasets/fetch.sh"
}

build() {
  say "Configuring and building (Release) in $build_dir"
  if [ ! -f "$build_dir/CMakeCache.txt" ]; then
    cmake -S "$repo" -B "$build_dir" -DCMAKE_BUILD_TYPE=Release || fail "CMake configuration failed (see above)"
  fi
  cmake --build "$build_dir" --parallel "$jobs" || fail "the build failed (see above)"
}

setup() {
  install_packages
  fetch_datasets
  build
}

run_main_job() {
  if [ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ]; then
    say "Starting the DescentLab desktop application"
    exec "$build_dir/app/descentlab" --runs-dir "$repo/runs" --preset video-constrained --size quick
  fi
  # No display: the headless default experiment, a quick constrained (layerwise-descent) run on IMDb, kept in
  # runs/. A second call resumes it if it was interrupted, and otherwise only prints its summary.
  local cli="$build_dir/app/descentlab-cli" run="$repo/runs/default-text-constrained-quick.h5"
  mkdir -p "$repo/runs"
  if [ -f "$run" ]; then
    say "No display: the default experiment exists; resuming it if unfinished ($run)"
    "$cli" train --resume "$run" || fail "could not resume $run (delete it to start over)"
  else
    say "No display: running the default experiment (text-constrained, quick) into $run"
    "$cli" train --preset text-constrained --size quick --out "$run" || fail "the default experiment failed"
  fi
  "$cli" inspect "$run"
}

run_tests() {
  say "Running the test suite (ctest)"
  ctest --test-dir "$build_dir" --output-on-failure --parallel "$jobs" || fail "tests failed (see above)"
}

# The .deb of this build (packaging/CMakeLists.txt), checked by lintian, copied to packages/debian-N/ (git-ignored):
# a Debian 13 chroot's package lands beside the host's, where scripts/install-check.sh takes it.
build_package() {
  say "Building the Debian package (CPack)"
  local release out deb
  release=$(debian_release)
  out="$repo/packages/debian-$release"
  rm -rf "$build_dir/package" "$out"  # a failed build must not leave the last package to be installed
  (cd "$build_dir" && cpack) || fail "cpack failed (see above)"
  deb=$(ls "$build_dir"/package/descentlab_*.deb) || fail "cpack made no .deb in $build_dir/package"
  say "lintian $(basename "$deb")"
  lintian --tag-display-limit 0 --fail-on error,warning "$deb" || fail "lintian found errors or warnings (see above)"
  mkdir -p "$out"
  cp "$deb" "$out/"
  echo "$out/$(basename "$deb") ($(du -k "$deb" | cut -f1) KB)"
}

case "${1:-}" in
  run) setup; run_main_job ;;
  test) setup; run_tests ;;
  setup) setup ;;
  package) setup; build_package ;;
  *) echo "usage: bash scripts/lab.sh run|test|setup|package" >&2; exit 2 ;;
esac
