# Helpers of the tfjobctl test scripts (sourced, with the script's arguments): CTL is the binary
# ($1, else the build's), TMP a scratch directory removed at exit; counters and checks over CTL's
# output, kept in $TMP/out and $TMP/err. The script prints "$pass passed, $fail failed".
CTL="${1:-build/src/tfjobctl/tfjobctl}"
[ -x "$CTL" ] || { echo "tfjobctl not found at $CTL" >&2; exit 2; }
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
pass=0
fail=0

ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*" >&2; }

# run EXPECTED_RC LABEL -- ARGS...: run tfjobctl (standard input: $STDIN, else /dev/null).
run() {
  local want="$1" label="$2"; shift 3
  "$CTL" "$@" >"$TMP/out" 2>"$TMP/err" <"${STDIN:-/dev/null}"
  local rc=$?
  if [ "$rc" -eq "$want" ]; then ok; else bad "$label: exit $rc, want $want (stderr: $(head -c 300 "$TMP/err"))"; fi
}
contains() { # contains LABEL FILE TEXT
  if grep -qF -- "$3" "$2"; then ok; else bad "$1: '$3' not in $(basename "$2"): $(head -c 400 "$2")"; fi
}
empty() { # empty LABEL FILE
  if [ ! -s "$2" ]; then ok; else bad "$1: $(basename "$2") not empty: $(head -c 300 "$2")"; fi
}
same() { # same LABEL FILE EXPECTED-TEXT: the whole file
  if [ "$(cat "$2")" = "$3" ]; then ok; else bad "$1: got:"$'\n'"$(cat "$2")"$'\n'"want:"$'\n'"$3"; fi
}
pycheck() { # pycheck LABEL PYTHON-CODE [ARGS...] (reads $TMP/out; exit status 0 = pass)
  if python3 -c "$2" "${@:3}" <"$TMP/out" 2>"$TMP/pyerr"; then ok; else bad "$1: $(cat "$TMP/pyerr") -- output: $(head -c 400 "$TMP/out")"; fi
}
