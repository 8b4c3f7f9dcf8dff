#!/usr/bin/env bash
# What the package installs besides the programs (packaging/CMakeLists.txt): the menu entry and the AppStream
# metainfo validate, the metainfo's newest release is this version, and the man pages and the bash completion made
# from the programs' --help (build/manual) hold every command and complete as a user types.
#   bash tests/packaging_checks.sh SOURCE_DIR MANUAL_DIR VERSION
set -euo pipefail
source_dir=$1 manual=$2 version=$3
desktop="$source_dir/resources/desktop"
fail() { echo "FAIL: $*" >&2; exit 1; }

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
for command in "data info" "data fetch" inspect pack train sweep compare prune probe; do
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
[ "$(complete_line descentlab-cli --threads 2 data "")" = "info fetch" ] || fail "'data' does not offer info and fetch"
[ "$(complete_line descentlab-cli data fetch m)" = "mnist moby-dick" ] || fail "'data fetch' does not offer the datasets"
[ "$(complete_line descentlab-cli sweep run.h5 --noise uni)" = uniform ] || fail "--noise values"
echo "menu entry, metainfo ($version), man pages and completion checked"
