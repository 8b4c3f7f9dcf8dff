# Shell helpers shared by scripts/lab.sh, scripts/sanitize.sh and scripts/fuzz.sh (sourced, not run).

say() { printf '\n==> %s\n' "$*"; }
fail() { printf '\nERROR: %s\n' "$*" >&2; exit 1; }

# Runs a command as root: directly when root, else through password-less sudo, else stops saying what to run.
as_root() {
  if [ "$(id -u)" = 0 ]; then
    "$@"
  elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
    sudo -n "$@"
  else
    fail "root is needed to run: $*
Run this script as root, or give this user password-less sudo, or run that command yourself first."
  fi
}

# install_missing PACKAGE...: installs with apt-get those of the Debian packages that dpkg does not report installed.
install_missing() {
  local missing=() package
  for package in "$@"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q 'install ok installed' || missing+=("$package")
  done
  if [ ${#missing[@]} -eq 0 ]; then
    echo "all $# packages installed"
    return
  fi
  echo "missing: ${missing[*]}; installing them with apt-get"
  as_root apt-get update -q || fail "apt-get update failed: is Debian's package archive reachable from this machine?"
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}" ||
    fail "apt-get install failed for: ${missing[*]}"
}

# debian_mirror [APT_DIR] [CODENAME]: prints the Debian archive this machine installs from, never one written here:
# $DESCENTLAB_DEBIAN_MIRROR when set, else the URI of the first enabled `deb` entry of the machine's apt sources
# (APT_DIR, default /etc/apt: sources.list, then sources.list.d/*.list and deb822 *.sources in apt's order) whose
# suites hold this release's codename (CODENAME, default VERSION_CODENAME of /etc/os-release) and whose components
# hold main: Debian's main archive, not its security archive nor another vendor's. Fails naming what to set.
debian_mirror() {
  if [ -n "${DESCENTLAB_DEBIAN_MIRROR:-}" ]; then
    printf '%s\n' "${DESCENTLAB_DEBIAN_MIRROR%/}"
    return
  fi
  local apt_dir=${1:-/etc/apt} codename=${2:-} files=() file found
  [ -n "$codename" ] || codename=$(. /etc/os-release 2>/dev/null && printf '%s' "${VERSION_CODENAME:-}")
  [ -f "$apt_dir/sources.list" ] && files+=("$apt_dir/sources.list")
  for file in "$apt_dir"/sources.list.d/*; do
    case "$file" in *.list | *.sources) [ -f "$file" ] && files+=("$file") ;; esac
  done
  if [ -n "$codename" ] && [ ${#files[@]} -gt 0 ]; then
    found=$(awk -v codename="$codename" '
      function has(list, word,   n, i, items) {
        n = split(list, items, /[ \t]+/)
        for (i = 1; i <= n; i++) if (items[i] == word) return 1
        return 0
      }
      function take(uri) {  # the first usable one wins; debootstrap reads http(s), ftp and file
        if (answer == "" && uri ~ /^(https?|ftp|file):/) { sub(/\/+$/, "", uri); answer = uri }
      }
      function stanza(   n, i, items) {  # the deb822 stanza read so far
        if (has(field["types"], "deb") && tolower(field["enabled"]) !~ /^[ \t]*no[ \t]*$/ &&
            has(field["suites"], codename) && has(field["components"], "main")) {
          n = split(field["uris"], items, /[ \t]+/)
          for (i = 1; i <= n; i++) take(items[i])
        }
        split("", field); key = ""
      }
      FNR == 1 { stanza() }
      /^[ \t]*#/ { next }
      FILENAME ~ /\.list$/ {  # one-line: deb [options] URI SUITE COMPONENT...
        line = $0; gsub(/\[[^]]*\]/, " ", line); sub(/^[ \t]+/, "", line); n = split(line, f, /[ \t]+/)
        if (f[1] == "deb" && f[3] == codename) for (i = 4; i <= n; i++) if (f[i] == "main") take(f[2])
        next
      }
      /^[ \t]*$/ { stanza(); next }
      /^[ \t]/ { if (key != "") field[key] = field[key] " " $0; next }
      /^[A-Za-z-]+:/ { key = tolower(substr($0, 1, index($0, ":") - 1)); field[key] = substr($0, index($0, ":") + 1) }
      END { stanza(); print answer }' "${files[@]}")
  fi
  [ -n "${found:-}" ] || fail "no Debian archive found in this machine's apt sources ($apt_dir/sources.list, $apt_dir/sources.list.d/*.list and *.sources): no enabled 'deb' entry for the suite '${codename:-?}' with the component main. Set DESCENTLAB_DEBIAN_MIRROR to a Debian mirror's address."
  printf '%s\n' "$found"
}

# npm_registry: prints the npm registry this machine uses, never one written here: $DESCENTLAB_NPM_REGISTRY when
# set, else npm's own answer (`npm config get registry`: $npm_config_registry, ~/.npmrc, the global npmrc, npm's
# default). Fails naming what to set when neither is there.
npm_registry() {
  local registry=${DESCENTLAB_NPM_REGISTRY:-}
  if [ -z "$registry" ] && command -v npm >/dev/null; then
    registry=$(npm_config_update_notifier=false npm config get registry 2>/dev/null) || registry=
  fi
  case "$registry" in
    *://*) printf '%s\n' "${registry%/}" ;;
    *) fail "no npm registry configured on this machine: set DESCENTLAB_NPM_REGISTRY to its address (or install npm, or set npm's registry in ~/.npmrc)" ;;
  esac
}

# check_copyright FILE: FILE (packaging/copyright, or the package's /usr/share/doc/descentlab/copyright) is in
# Debian's machine-readable format (DEP-5), licenses every Files paragraph under GPL-3+ (GPL-3.0-or-later) and has
# that licence's paragraph pointing at /usr/share/common-licenses/GPL-3. Fails naming FILE and what is wrong.
check_copyright() {
  local file=$1 licences
  [ -f "$file" ] || fail "$file: no such copyright file"
  head -1 "$file" | grep -Eq '^Format: .*/copyright-format/1\.0/?$' ||
    fail "$file: not in Debian's machine-readable copyright format (its first line is no 'Format: .../copyright-format/1.0/')"
  licences=$(awk '/^Files:/ { files = 1 } files && /^License:/ { print $2; files = 0 }' "$file" | sort -u | paste -sd' ')
  [ "$licences" = "GPL-3+" ] ||
    fail "$file: its files are licensed under '${licences:-nothing}', not GPL-3+ (GPL-3.0-or-later, the project's licence)"
  awk '/^License: GPL-3\+[ \t]*$/ { paragraph = 1; next } /^$/ || /^[^ \t]/ { paragraph = 0 }
       paragraph && /\/usr\/share\/common-licenses\/GPL-3/ { found = 1 } END { exit !found }' "$file" ||
    fail "$file: no stand-alone 'License: GPL-3+' paragraph pointing at /usr/share/common-licenses/GPL-3"
  echo "copyright: $file licenses every file under GPL-3+ (GPL-3.0-or-later), machine-readable"
}
