#!/usr/bin/env bash
# Time to the window's first paint and to an interactive window (issue 54 item 9), idle and with the machine loaded.
#
#   bash bench/startup.sh [BUILD_DIR] [REPEATS]     (default build/, 5 repeats)
#
# Each start runs the app on one Xvfb server at 1280x800 (started once, before the timings: its start is not the
# app's) with DESCENTLAB_STARTUP_TIMES=1 (app/gui/main.cpp prints each phase's time), from a fresh settings folder (no
# last session offered), with one torch and one OpenBLAS thread, and quits it once it is interactive. The phases are
# measured from just before the process was launched. Four situations: no run file, and 20 run files on the command
# line (copies of the sample descentlab_write_sample_run writes; 200 too, idle, for the growth), each idle and with
# both cores busy (two `yes` loops:
# a loaded machine). The last start's phases are printed for each situation. Each is measured twice, alternating
# start by start: as the app starts now (the window first, the datasets and the run files read behind it), and with
# DESCENTLAB_STARTUP_BLOCKING=1, the order before issue 54 (the datasets read and the run files opened before the
# window's first paint), the baseline of the ratio.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$(cd "${1:-$repo/build}" && pwd)
repeats=${2:-5}
app="$build/app/descentlab"
[ -x "$app" ] || { echo "no $app: build the target descentlab first" >&2; exit 2; }
command -v Xvfb >/dev/null || { echo "Xvfb is missing (apt-get install xvfb)" >&2; exit 2; }
scratch=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$scratch"' EXIT
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 DESCENTLAB_THREADS=1 DESCENTLAB_STARTUP_TIMES=1

# 20 run files: copies of one sample run.
"$build/tests/descentlab_write_sample_run" "$scratch/sample.h5" >/dev/null
runs=()
many=()
for i in $(seq 1 200); do
  cp "$scratch/sample.h5" "$scratch/run$i.h5"
  [ "$i" -le 20 ] && runs+=("$scratch/run$i.h5")
  many+=("$scratch/run$i.h5")
done

# One start: prints "first-paint-ms interactive-ms" measured from launch.
start_once() {
  local home="$scratch/home-$RANDOM$RANDOM"
  mkdir -p "$home"
  local launched log="$scratch/log-$RANDOM"
  launched=$(date +%s%N)
  # The app quits itself a moment after it is interactive (a timer started by the start-up mark's environment).
  HOME="$home" XDG_CONFIG_HOME="$home/.config" XDG_DATA_HOME="$home/.local/share" \
    DESCENTLAB_QUIT_WHEN_INTERACTIVE=1 "$app" --runs-dir "$home/runs" "$@" >/dev/null 2>"$log" || true
  local paint interactive
  paint=$(awk '$1 == "descentlab-startup" && $2 == "first-paint" {print $3}' "$log")
  interactive=$(awk '$1 == "descentlab-startup" && $2 == "interactive" {print $3}' "$log")
  if [ -z "$paint" ] || [ -z "$interactive" ]; then echo "no start-up marks:" >&2; cat "$log" >&2; exit 1; fi
  echo "$(( (paint - launched) / 1000000 )) $(( (interactive - launched) / 1000000 ))"
}

# measure LABEL ARGS...: the median over the repeats, now and blocking (alternating start by start), and the ratio.
measure() {
  local label=$1
  shift
  local paints=() interactives=() blocked_paints=() blocked_interactives=() p i
  for _ in $(seq 1 "$repeats"); do
    read -r p i < <(start_once "$@")
    paints+=("$p")
    interactives+=("$i")
    read -r p i < <(DESCENTLAB_STARTUP_BLOCKING=1 start_once "$@")
    blocked_paints+=("$p")
    blocked_interactives+=("$i")
  done
  local median='{a[NR]=$1} END {print a[int((NR+1)/2)]}'
  local mp mi bp bi
  mp=$(printf '%s\n' "${paints[@]}" | sort -n | awk "$median")
  mi=$(printf '%s\n' "${interactives[@]}" | sort -n | awk "$median")
  bp=$(printf '%s\n' "${blocked_paints[@]}" | sort -n | awk "$median")
  bi=$(printf '%s\n' "${blocked_interactives[@]}" | sort -n | awk "$median")
  printf '%-36s first paint %5d ms (blocking %5d ms, ratio %s)   interactive %5d ms (blocking %5d ms, ratio %s)\n' \
    "$label" "$mp" "$bp" "$(awk -v a="$mp" -v b="$bp" 'BEGIN {printf "%.2f", a / b}')" "$mi" "$bi" \
    "$(awk -v a="$mi" -v b="$bi" 'BEGIN {printf "%.2f", a / b}')"
  printf '    all (ms): paint %s; blocking %s; interactive %s; blocking %s\n' "${paints[*]}" "${blocked_paints[*]}" \
    "${interactives[*]}" "${blocked_interactives[*]}"
}

display=:$((90 + RANDOM % 100))
Xvfb "$display" -screen 0 1280x800x24 -nolisten tcp >/dev/null 2>&1 &
export DISPLAY=$display
for _ in $(seq 1 50); do xdpyinfo >/dev/null 2>&1 && break; sleep 0.1; done
xdpyinfo >/dev/null 2>&1 || { echo "Xvfb did not start on $display" >&2; exit 1; }
start_once >/dev/null  # the first start reads the libraries from disk: not counted
measure "idle, no run file"
measure "idle, 20 run files" "${runs[@]}"
measure "idle, 200 run files" "${many[@]}"
yes >/dev/null &
yes >/dev/null &
measure "loaded (2 busy cores), no run file"
measure "loaded (2 busy cores), 20 run files" "${runs[@]}"
