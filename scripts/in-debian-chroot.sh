#!/usr/bin/env bash
# Runs a command of this repository inside a Debian chroot of another release, as on a fresh machine of it.
#
#   bash scripts/in-debian-chroot.sh trixie bash scripts/lab.sh test     # what .ci/run does for Debian 13
#   bash scripts/in-debian-chroot.sh trixie bash                         # a shell there, to look around
#
# The chroot is made once with `debootstrap --variant=minbase SUITE` from Debian's archive and kept, with the
# packages the command installs, its build folder and its ccache, under $DESCENTLAB_CHROOT_CACHE (default
# /var/cache/descentlab-chroot/SUITE): a second run reuses all of it. The repository is bind-mounted at
# /src/descentlab (so its dataset cache, datasets/cache, is shared and nothing is fetched twice); the build
# goes to /var/cache/descentlab/build inside the chroot, never to the host's build/. Needs root. Every mount is
# undone on exit, also on failure or Ctrl-C. Each stage prints how long it took.
# Debian's archive is this machine's: the first enabled `deb` entry of its apt sources for its release with the
# component main ($DESCENTLAB_DEBIAN_MIRROR overrides; scripts/common.sh, debian_mirror). The command's npm uses the
# registry this machine's npm does ($DESCENTLAB_NPM_REGISTRY overrides), passed in as npm_config_registry.
set -euo pipefail

suite=${1:?usage: bash scripts/in-debian-chroot.sh SUITE COMMAND...}
shift
[ $# -gt 0 ] || { echo "usage: bash scripts/in-debian-chroot.sh SUITE COMMAND..." >&2; exit 2; }
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cache=${DESCENTLAB_CHROOT_CACHE:-/var/cache/descentlab-chroot}
root="$cache/$suite"
# shellcheck source=scripts/common.sh
. "$repo/scripts/common.sh"  # debian_mirror, npm_registry (say and fail are this script's own, below)

say() { printf '\n==> [%s] %s\n' "$suite" "$*"; }
fail() { printf '\nERROR: [%s] %s\n' "$suite" "$*" >&2; exit 1; }
stage_start=$SECONDS
stage_done() { printf '[%s] %s took %d s\n' "$suite" "$1" $((SECONDS - stage_start)); stage_start=$SECONDS; }

[ "$(id -u)" = 0 ] || fail "a chroot needs root"
command -v debootstrap >/dev/null || {
  say "Installing debootstrap"
  apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends debootstrap ||
    fail "could not install debootstrap"
}
mkdir -p "$cache"

# One user of a chroot at a time (two CI runs on one machine would share its build folder).
exec 9>"$cache/$suite.lock"
flock -w 3600 9 || fail "another run holds $cache/$suite.lock for over an hour"

if [ ! -f "$root/.descentlab-ready" ]; then
  mirror=$(debian_mirror /etc/apt)
  say "Making the chroot with debootstrap (minbase) from $mirror into $root"
  rm -rf "$root.partial" "$root"
  debootstrap --variant=minbase "$suite" "$root.partial" "$mirror" >"$cache/$suite.debootstrap.log" 2>&1 ||
    { tail -20 "$cache/$suite.debootstrap.log" >&2; fail "debootstrap failed (log: $cache/$suite.debootstrap.log)"; }
  # Keep what apt downloads: a cached chroot then reinstalls nothing, and a broken one is rebuilt from the cache.
  rm -f "$root.partial/etc/apt/apt.conf.d/docker-clean"
  touch "$root.partial/.descentlab-ready"
  mv "$root.partial" "$root"
  stage_done "debootstrap"
fi

# A run that was killed outright (SIGKILL, a session cut off) never undid its mounts, and the next `mount`
# then fails with "already mounted". We hold the lock, so every mount under the chroot now is such a leftover:
# undo it, deepest first. /dev is made a slave first so that unmounting its copy cannot reach the host's /dev.
if mountpoint -q "$root/dev"; then mount --make-rslave "$root/dev" || true; fi
while read -r stale; do
  say "Undoing a mount left by an interrupted run: $stale"
  umount -l "$stale" 2>/dev/null || true
done < <(awk -v r="$root" '$5 == r || index($5, r "/") == 1 { print $5 }' /proc/self/mountinfo | sort -r)

mounts=()
cleanup() {
  local i
  for ((i = ${#mounts[@]} - 1; i >= 0; i--)); do umount -R "${mounts[$i]}" 2>/dev/null || umount -lR "${mounts[$i]}" || true; done
}
trap cleanup EXIT
mount_in() {  # mount_in TARGET MOUNT-ARGS...
  local target="$root$1"
  shift
  mkdir -p "$target"
  mount "$@" "$target"
  mounts+=("$target")
}
mount_in /proc -t proc proc
mount_in /sys -t sysfs sysfs
mount_in /dev --rbind /dev
mount --make-rslave "$root/dev"
mount_in /src/descentlab --bind "$repo"
# The host's name resolution and CA certificates (a machine behind a TLS-inspecting proxy needs its own CA).
cp -L /etc/resolv.conf "$root/etc/resolv.conf"
if [ -d /usr/local/share/ca-certificates ]; then
  mkdir -p "$root/usr/local/share/ca-certificates"
  cp -a /usr/local/share/ca-certificates/. "$root/usr/local/share/ca-certificates/"
fi
[ -f /etc/ssl/certs/ca-certificates.crt ] && mkdir -p "$root/etc/ssl/certs" &&
  cp /etc/ssl/certs/ca-certificates.crt "$root/etc/ssl/certs/ca-certificates.crt"

registry=$(npm_registry 2>/dev/null) || registry=  # none: the chroot's npm keeps its own default
say "Running: $* (in /src/descentlab)"
set +e
chroot "$root" /usr/bin/env -i \
  HOME=/root LANG=C.UTF-8 TERM="${TERM:-dumb}" CI="${CI:-}" \
  PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
  DESCENTLAB_BUILD_DIR=/var/cache/descentlab/build \
  ${DESCENTLAB_JOBS:+DESCENTLAB_JOBS=$DESCENTLAB_JOBS} \
  ${registry:+npm_config_registry=$registry} \
  bash -c 'cd /src/descentlab && exec "$@"' bash "$@"
status=$?
set -e
stage_done "the command"
exit $status
