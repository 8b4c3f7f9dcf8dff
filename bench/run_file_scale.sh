#!/usr/bin/env bash
# Run-file costs at the sizes GPU users train (issue 34, item 7): this build's run file against a reference commit's
# and against torch::save, on run files holding a checkpoint of 1, 10, 100 and 500 MB: a metric interval's commit,
# a commit with a tiny checkpoint (a fold), a checkpoint's save (copy + write) with its extra peak memory, and
# torch::save with and without its fsync. Both sides run the same benchmark source (this tree's
# bench/run_file_bench.cpp, built in the reference tree too), one after the other on the same machine and folder,
# torch and OpenBLAS pinned to one thread. Results: docs/benchmarks.md.
#   bash bench/run_file_scale.sh [REFERENCE] [SIZES_MB] [REPEATS]     (defaults: 1198c29^ 1,10,100,500 5)
# Also opens folders of 30 and 300 run files on both sides (SCALE_PARTS=commits or =open runs one part).
# 1198c29^ is the last commit before the run log: every commit rebuilt the whole run file. Needs a configured
# build/ (scripts/lab.sh setup) and about 3 GB free in $SCALE_FOLDER (default /tmp); the reference is built in its
# own folder under it (ccache keeps that to the files that differ).
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
reference=${1:-1198c29^}
sizes=${2:-1,10,100,500}
repeats=${3:-5}
folder=${SCALE_FOLDER:-/tmp}/descentlab-run-file-scale
mkdir -p "$folder"
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 DESCENTLAB_THREADS=1

cmake --build "$repo/build" --target descentlab_bench_run_file --parallel 2 >/dev/null

commit=$(git -C "$repo" rev-parse --verify "$reference^{commit}")
tree="$folder/reference-$commit"
if [ ! -d "$tree" ]; then
  git -C "$repo" worktree add --detach "$tree" "$commit" >/dev/null
fi
cp "$repo/bench/run_file_bench.cpp" "$tree/bench/run_file_bench.cpp"  # the same measurement on both sides
if [ ! -f "$tree/build/CMakeCache.txt" ]; then
  cmake -S "$tree" -B "$tree/build" -DCMAKE_BUILD_TYPE=Release >/dev/null
fi
cmake --build "$tree/build" --target descentlab_bench_run_file --parallel 2 >/dev/null
git -C "$tree" checkout -- bench/run_file_bench.cpp

parts=${SCALE_PARTS:-commits,open}  # commits: the table by checkpoint size; open: 30 and 300 run files opened
run() {  # run LABEL BINARY
  echo "### $1"
  echo
  if [[ $parts == *commits* ]]; then
    "$2" --commit-scale "$sizes" --repeats "$repeats" --folder "$folder" | sed -n '/^|/p'
    echo
  fi
  if [[ $parts == *open* ]]; then
    "$2" --open-scale 30,300 --folder "$folder" | sed -n '/^|/p'
    echo
  fi
}
echo "Run-file costs, $(date -u +%Y-%m-%d), $(nproc --all) cores, folder $folder ($(df -T "$folder" | awk 'NR==2 {print $2}'))"
echo
run "this build ($(git -C "$repo" rev-parse --short HEAD))" "$repo/build/bench/descentlab_bench_run_file"
run "reference $reference ($(git -C "$repo" rev-parse --short "$commit"))" "$tree/build/bench/descentlab_bench_run_file"
