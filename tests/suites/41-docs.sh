#!/usr/bin/env bash
# Documentation coverage of the public API: every function declared with TFJOB_EXTERN in
# include/tfjob/*.h has a comment block right above its declaration and is named in docs/*.md.
set -uo pipefail
cd "$(dirname "$0")/../.."
fail=0
count=0
for h in include/tfjob/*.h include/tfjob/sys/*.h; do
  [ -f "$h" ] || continue
  # "name<TAB>line<TAB>previous line" for each declaration (the name is on the TFJOB_EXTERN line).
  while IFS=$'\t' read -r name line prev; do
    count=$((count + 1))
    case "$prev" in
      *'*/') ;;
      *) echo "FAIL: $h:$line: $name has no comment block right above its declaration" >&2; fail=1 ;;
    esac
    if ! grep -qE "(^|[^A-Za-z0-9_])$name([^A-Za-z0-9_]|$)" docs/*.md 2>/dev/null; then
      echo "FAIL: $h:$line: $name is not documented in docs/*.md" >&2
      fail=1
    fi
  done < <(awk '
    /^[[:space:]]*TFJOB_EXTERN[[:space:]]/ {
      if (match($0, /tfjob_[A-Za-z0-9_]+[[:space:]]*\(/)) {
        name = substr($0, RSTART, RLENGTH); sub(/[[:space:]]*\($/, "", name)
        p = prev; sub(/[[:space:]]+$/, "", p)
        printf "%s\t%d\t%s\n", name, NR, p
      }
    }
    { prev = $0 }' "$h")
done
echo "docs coverage: $count public functions checked"
[ "$count" -gt 0 ] || { echo "FAIL: no TFJOB_EXTERN declarations found" >&2; exit 1; }

# The docs stand on their own: nothing in docs/, the READMEs or the examples' comments names a
# file outside the repository (the design notes the project started from are not part of it),
# and every relative Markdown link points at a file of the repository.
outside=$(grep -nE '(^|[^A-Za-z_])(DESIGN|SEMANTICS)\.md|\.\./shared|/work/(shared|prompts|main)' \
  docs/*.md README.md bindings/*/README.md examples/*.md examples/*/*.md examples/*.yaml examples/*/*.yaml 2>/dev/null)
if [ -n "$outside" ]; then
  echo "FAIL: the docs cite files outside the repository:" >&2
  echo "$outside" >&2
  fail=1
fi
root=$(pwd -P)
for doc in docs/*.md README.md bindings/*/README.md; do
  [ -f "$doc" ] || continue
  dir=$(dirname "$doc")
  while IFS= read -r target; do
    target=${target%%#*}
    [ -n "$target" ] || continue
    resolved=$(realpath -m "$dir/$target")
    case "$resolved" in
      "$root"/*) [ -e "$resolved" ] || { echo "FAIL: $doc links to $target, which does not exist" >&2; fail=1; } ;;
      *) echo "FAIL: $doc links to $target, outside the repository" >&2; fail=1 ;;
    esac
  done < <(grep -oE '\]\([^)[:space:]]+\)' "$doc" | sed -E 's/^\]\(//; s/\)$//' | grep -vE '^(https?:|mailto:|#)')
done
[ "$fail" -eq 0 ] && echo "docs: no citation of files outside the repository"
[ "$fail" -eq 0 ]
