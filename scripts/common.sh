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
