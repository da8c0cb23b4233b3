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
[ "$fail" -eq 0 ]
