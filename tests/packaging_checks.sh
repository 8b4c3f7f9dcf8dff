#!/usr/bin/env bash
# What the package installs besides the programs (packaging/CMakeLists.txt): the menu entry and the AppStream
# metainfo validate, the metainfo's newest release is this version, and the man pages and the bash completion made
# from the programs' --help (build/manual) hold every command and complete as a user types. The licence,
# GPL-3.0-or-later, is what the copyright file, the metainfo and COPYING say. The CI scripts' Debian mirror is read
# from apt sources as apt writes them (scripts/common.sh, debian_mirror; checked on sample sources).
#   bash tests/packaging_checks.sh SOURCE_DIR MANUAL_DIR VERSION
set -euo pipefail
source_dir=$1 manual=$2 version=$3
desktop="$source_dir/resources/desktop"
# shellcheck source=scripts/common.sh
. "$source_dir/scripts/common.sh"  # check_copyright, debian_mirror (fail: this script's own, below)
fail() { echo "FAIL: $*" >&2; exit 1; }
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

# Every error and warning fails, but one: the project has no homepage yet (url-homepage-missing, a warning of
# AppStream 1.0 on Debian 13; packaging/lintian-overrides says the same to lintian).
report=$(appstreamcli validate --no-net "$desktop/io.github.descentlab.DescentLab.metainfo.xml" 2>&1) || true
echo "$report"
if grep -E '^(E|W): ' <<<"$report" | grep -v ': url-homepage-missing$' | grep -q .; then
  fail "appstreamcli validate reported errors or warnings"
fi
desktop-file-validate "$desktop/io.github.descentlab.DescentLab.desktop" || fail "desktop-file-validate refused the menu entry"
newest=$(grep -o '<release version="[^"]*"' "$desktop/io.github.descentlab.DescentLab.metainfo.xml" | head -1 | cut -d'"' -f2)
[ "$newest" = "$version" ] || fail "the metainfo's newest release is $newest, the project is $version (add a <release>)"

page=$(zcat "$manual/descentlab-cli.1.gz")
for command in "data info" "data fetch" "data check" "data export" inspect pack train sweep compare prune probe; do
  grep -q "descentlab\\\\-cli ${command//-/\\\\-}\"" <<<"$page" || fail "descentlab-cli.1 has no section for '$command'"
done
grep -q '^\.SH EXIT STATUS' <<<"$page" || fail "descentlab-cli.1 has no EXIT STATUS"
zcat "$manual/descentlab.1.gz" | grep -q '^\.SH REPORT' || fail "descentlab.1 has no REPORT section"

# shellcheck source=/dev/null
source "$manual/descentlab-cli.bash-completion"
complete_line() { COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMPREPLY=(); _descentlab_cli; echo "${COMPREPLY[*]}"; }
[ "$(complete_line descentlab-cli tr)" = train ] || fail "'descentlab-cli tr' does not complete to train"
[ "$(complete_line descentlab-cli train --pre)" = --preset ] || fail "'train --pre' does not complete to --preset"
[ "$(complete_line descentlab-cli train --preset video-c)" = video-constrained ] || fail "--preset values"
[ "$(complete_line descentlab-cli --threads 2 data "")" = "info fetch check export" ] ||
  fail "'data' does not offer info, fetch, check and export"
[ "$(complete_line descentlab-cli data fetch m)" = "mnist moby-dick" ] || fail "'data fetch' does not offer the datasets"
[ "$(complete_line descentlab-cli sweep run.h5 --noise uni)" = uniform ] || fail "--noise values"

# The licence: GPL-3+ in the copyright file the package installs (lintian checks its format), GPL-3.0-or-later in the
# metainfo, the GPL's text in COPYING; a copyright file licensing anything otherwise is refused (shown once).
check_copyright "$source_dir/packaging/copyright"
sed 's/^License: GPL-3+$/License: LicenseRef-proprietary/' "$source_dir/packaging/copyright" >"$scratch/copyright"
if (check_copyright "$scratch/copyright") >/dev/null 2>&1; then fail "check_copyright accepted a licence other than GPL-3+"; fi
licence=$(grep -o '<project_license>[^<]*' "$desktop/io.github.descentlab.DescentLab.metainfo.xml" | cut -d'>' -f2)
[ "$licence" = GPL-3.0-or-later ] || fail "the metainfo's project_license is '$licence', not GPL-3.0-or-later"
if [ -f /usr/share/common-licenses/GPL-3 ]; then
  cmp -s "$source_dir/COPYING" /usr/share/common-licenses/GPL-3 || fail "COPYING is not the GPL-3 text Debian ships"
fi

# The Debian mirror from apt sources: one-line and deb822, Debian's main archive of this release only (not its
# security archive, a source entry, another vendor's suite or a disabled stanza); none is an error naming what to set.
apt="$scratch/apt"
mkdir -p "$apt/sources.list.d"
{
  echo '# deb http://commented.example.invalid/debian trixie main'
  echo 'deb [arch=amd64 signed-by=/usr/share/keyrings/v.gpg] https://vendor.example.invalid/apt cloud-trixie main'
  echo 'deb http://security.example.invalid/debian-security trixie-security main'
  echo 'deb-src http://source.example.invalid/debian trixie main'
} >"$apt/sources.list"
printf 'Types: deb\nURIs: http://off.example.invalid/debian\nSuites: trixie\nComponents: main\nEnabled: no\n' \
  >"$apt/sources.list.d/a-disabled.sources"
printf 'Types: deb deb-src\nURIs: http://main.example.invalid/debian/\nSuites: trixie trixie-updates\nComponents: contrib\n main\n' \
  >"$apt/sources.list.d/debian.sources"
[ "$(DESCENTLAB_DEBIAN_MIRROR='' debian_mirror "$apt" trixie)" = http://main.example.invalid/debian ] ||
  fail "debian_mirror did not find the deb822 entry of Debian's archive"
echo 'deb [ arch=amd64 ] http://list.example.invalid/debian/ bookworm main contrib' >>"$apt/sources.list"
[ "$(DESCENTLAB_DEBIAN_MIRROR='' debian_mirror "$apt" bookworm)" = http://list.example.invalid/debian ] ||
  fail "debian_mirror did not find the one-line entry of Debian's archive"
if (DESCENTLAB_DEBIAN_MIRROR='' debian_mirror "$apt" forky) >/dev/null 2>"$scratch/err"; then
  fail "debian_mirror found a mirror for a release the sources do not have"
fi
grep -q DESCENTLAB_DEBIAN_MIRROR "$scratch/err" || fail "debian_mirror's error does not name DESCENTLAB_DEBIAN_MIRROR"
echo "menu entry, metainfo ($version), man pages, completion, licence and mirror lookup checked"
