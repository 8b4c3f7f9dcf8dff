#!/usr/bin/env bash
# Screenshots of the window as each tour leaves it, the way a person starts a tour (issue 33): a fresh Xvfb screen
# of each size, fresh settings (no saved layout), `descentlab --tour NAME --shots DIR`: the tour's runs train side by
# side, and once they have finished the window and each view are saved (DIR/end-window.png is the window as the tour
# leaves it), then the lab quits.
#
#   bash scripts/tour-shots.sh OUT [TOUR...]      # default: every tour in resources/tours
#   SIZES="1024x700" bash scripts/tour-shots.sh OUT descent-breaks
#
# Writes OUT/SIZE/TOUR/*.png (with app.log). Sizes: $SIZES (default "1280x800 1920x1080"). A tour's runs take up to
# about 3 minutes on an idle 2-core machine (docs/tours.md); each is given $TOUR_SHOTS_LIMIT seconds (default 900).
# Needs xvfb, xdotool (apt-get install -y xvfb xdotool). LOOK at every PNG.
set -uo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=${1:?OUT folder}
shift
app=${APP:-$repo/build/app/descentlab}
[[ -x $app ]] || { echo "no app at $app (build it, or set APP)" >&2; exit 2; }
for tool in Xvfb xdotool; do
  command -v $tool >/dev/null || { echo "missing $tool: apt-get install -y xvfb xdotool" >&2; exit 2; }
done
tours=("$@")
if [ ${#tours[@]} -eq 0 ]; then
  for file in "$repo"/resources/tours/*.json; do tours+=("$(basename "$file" .json)"); done
fi
limit=${TOUR_SHOTS_LIMIT:-900}
status=0
for size in ${SIZES:-1280x800 1920x1080}; do
  for tour in "${tours[@]}"; do
    dir="$out/$size/$tour"
    mkdir -p "$dir"
    settings=$(mktemp -d) runs=$(mktemp -d)
    display=:$((90 + RANDOM % 100))
    Xvfb $display -screen 0 "${size}x24" >/dev/null 2>&1 &
    xvfb=$!
    sleep 1
    start=$(date +%s)
    DISPLAY=$display XDG_CONFIG_HOME=$settings DESCENTLAB_THREADS=1 timeout "$limit" "$app" --tour "$tour" \
      --shots "$dir" --runs-dir "$runs" >"$dir/app.log" 2>&1 &
    pid=$!
    # As a window manager would show it: the whole screen (the window is found by its title; $pid is timeout's).
    for _ in $(seq 30); do
      window=$(DISPLAY=$display xdotool search --onlyvisible --name '^DescentLab' 2>/dev/null | head -1)
      [ -n "$window" ] && break
      sleep 1
    done
    [ -n "$window" ] && DISPLAY=$display xdotool windowsize "$window" ${size/x/ } windowmove "$window" 0 0
    wait $pid
    code=$?
    echo "$size $tour: exit $code after $(($(date +%s) - start)) s; $dir/end-window.png"
    [ $code -eq 0 ] && [ -f "$dir/end-window.png" ] || status=1
    kill $xvfb 2>/dev/null
    wait $xvfb 2>/dev/null
    rm -rf "$settings" "$runs"
  done
done
exit $status
