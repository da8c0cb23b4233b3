#!/usr/bin/env bash
# The man pages tfjobctl(1) and tfjob-operator(8) that the build makes from the programs' --help
# (scripts/gen-man.py): groff reads them without a warning, and the rendered pages hold every
# command, every usage line and every flag of the help texts.
# Usage: tests/cli/test_man.sh [BUILD_DIR]   (run from the source root)
set -u
BUILD="${1:-build}"
CTL="$BUILD/src/tfjobctl/tfjobctl"
OP="$BUILD/src/tfjob-operator/tfjob-operator"
# shellcheck source=tests/cli/common.bash
. "$(dirname "$0")/common.bash" "$CTL"

# render PAGE: the page as man shows it, wide, plain text, with the hyphens man may turn into
# other characters made plain again.
render() { LC_ALL=C MANWIDTH=250 man -l "$1" 2>&1 | col -b; }
# has_all LABEL RENDERED WORDS...: each word (a flag, a usage line) is in the rendered page
has_all() {
  local label="$1" text="$2" w; shift 2
  for w in "$@"; do
    if grep -qF -- "$w" <<<"$text"; then ok; else bad "$label: '$w' not in the page"; fi
  done
}
flags_of() { grep -oE '(^|[ [,|])--?[a-zA-Z][a-z-]*' | sed -E 's/^[ [,|]//' | sort -u; }

for page in "$BUILD/src/tfjobctl/tfjobctl.1" "$BUILD/src/tfjob-operator/tfjob-operator.8"; do
  [ -s "$page" ] && ok || { bad "$page was not built"; continue; }
  warnings=$(groff -man -ww -z "$page" 2>&1)
  [ -z "$warnings" ] && ok || bad "groff warns about $page: $warnings"
done

page=$(render "$BUILD/src/tfjobctl/tfjobctl.1")
has_all "tfjobctl.1" "$page" "TFJOBCTL(1)" "NAME" "SYNOPSIS" "COMMANDS" "EXIT STATUS" "tfjob-operator(8)"
has_all "tfjobctl.1 version" "$page" "libtfjob $("$CTL" --version | awk '{print $2}')"
commands=$("$CTL" --help | sed -n '/^Commands:/,/^$/p' | awk 'NF > 1 {print $1}')
[ "$(echo "$commands" | wc -w)" -ge 15 ] && ok || bad "tfjobctl --help lists only: $commands"
for cmd in $commands; do
  help=$("$CTL" "$cmd" --help)
  has_all "tfjobctl.1: $cmd" "$page" "tfjobctl $cmd" "$(head -n 1 <<<"$help" | sed 's/^usage: //')"
  # shellcheck disable=SC2046
  has_all "tfjobctl.1: $cmd's flags" "$page" $(flags_of <<<"$help")
  # the summary of --help
  has_all "tfjobctl.1: $cmd's summary" "$page" "$("$CTL" --help | awk -v c="$cmd" '$1 == c {sub(/^ *[^ ]+ +/, ""); print}')"
done

if [ -x "$OP" ]; then
  page=$(render "$BUILD/src/tfjob-operator/tfjob-operator.8")
  has_all "tfjob-operator.8" "$page" "TFJOB-OPERATOR(8)" "NAME" "OPTIONS" "tfjobctl(1)"
  # shellcheck disable=SC2046
  has_all "tfjob-operator.8 flags" "$page" $("$OP" --help | flags_of)
fi

echo "man pages: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
