#!/usr/bin/env bash
# tfjobctl completion bash|zsh|fish: the bash script is sourced and its function called as bash
# calls it (COMP_WORDS, COMP_CWORD); what it offers is checked against tfjobctl's own help (every
# documented flag of every command, and nothing else) and against the commands (every -o value it
# offers is accepted). The zsh and fish scripts are parsed by their shells and asked for
# completions: zsh's through compinit in an interactive zsh on a pseudo-terminal (zpty), fish's
# with complete -C. Usage: tests/cli/test_tfjobctl_completion.sh [PATH/TO/tfjobctl]
set -u
# shellcheck source=tests/cli/common.bash
. "$(dirname "$0")/common.bash"
CTL=$(cd "$(dirname "$CTL")" && pwd)/$(basename "$CTL")

run 0 "completion bash" -- completion bash
cp "$TMP/out" "$TMP/tfjobctl.bash"
bash -n "$TMP/tfjobctl.bash" && ok || bad "the bash script does not parse"
run 2 "completion without a shell" --  completion
contains "completion without a shell" "$TMP/err" "expected one shell"
run 2 "completion ksh" -- completion ksh
contains "completion ksh" "$TMP/err" "unknown shell 'ksh'"
run 2 "completion two shells" -- completion bash zsh
run 0 "completion --help" -- completion --help
contains "completion --help" "$TMP/out" "usage: tfjobctl completion"

# comp WORD...: what the completion offers for the command line WORD... (the last word is the one
# being completed), one a line, sorted, from a fresh bash that sourced the script.
comp() {
  bash -c '
    source "$1"; shift
    complete -p tfjobctl | grep -q -- "-F _tfjobctl" || { echo "not registered" >&2; exit 1; }
    COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}
    _tfjobctl tfjobctl "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
    printf "%s\n" "${COMPREPLY[@]}" | sort' _ "$TMP/tfjobctl.bash" "$@"
}
# offers LABEL WANT WORD...: the completion of WORD... is exactly WANT (words, any order)
offers() {
  local label="$1" want got; want=$(printf '%s\n' $2 | sort); shift 2
  got=$(comp "$@")
  if [ "$got" = "$want" ]; then ok; else bad "$label: offered [$(echo $got)], want [$(echo $want)]"; fi
}

# Commands: those of tfjobctl --help, and help, --help, --version.
commands=$("$CTL" --help | sed -n '/^Commands:/,/^$/p' | awk 'NF > 1 {print $1}')
offers "commands" "$commands help --help --version" tfjobctl ""
offers "a command by its prefix" "validate" tfjobctl val
offers "commands starting with d" "default delete describe" tfjobctl de
grep -qx completion <<<"$commands" && ok || bad "tfjobctl --help does not list completion"

# Every command: the flags offered after '-' are those its --help documents, no more, no less.
for cmd in $commands; do
  help=$("$CTL" "$cmd" --help)
  [ "$cmd" = get ] && help+=$'\n'$("$CTL" get --run-dir x --help)
  # the flags of the usage lines (up to the first blank line) and of the option lines ("  -x ...")
  documented=$(printf '%s\n' "$help" | awk '/^usage:/ {u = 1} /^$/ {u = 0} u || /^  -/' |
    grep -oE '(^|[ [,|])--?[a-zA-Z][a-z-]*=?' | sed -E 's/^[ [,|]//' | grep -vx -- --help | sort -u)
  offered=$(comp tfjobctl "$cmd" - | grep -vx -- --help)
  # a flag written --name=VALUE is offered as --name= (its value follows the '=')
  missing=$(comm -23 <(printf '%s\n' "$documented" | sed -E 's/^(--[a-z-]+)=$/\1=/' | sort -u) <(printf '%s\n' "$offered" | sort -u))
  extra=$(comm -13 <(printf '%s\n' "$documented" | sort -u) <(printf '%s\n' "$offered" | sort -u))
  # a flag documented both as --name VALUE and --name=VALUE in prose is offered once
  missing=$(for f in $missing; do grep -qx -- "$f=" <<<"$offered" || grep -qx -- "${f%=}" <<<"$offered" || echo "$f"; done)
  extra=$(for f in $extra; do grep -qx -- "${f%=}" <<<"$documented" || grep -qx -- "$f=" <<<"$documented" || echo "$f"; done)
  [ -z "$missing" ] && ok || bad "$cmd: documented flags not offered: $(echo $missing)"
  [ -z "$extra" ] && ok || bad "$cmd: offered flags not documented: $(echo $extra)"
  # every -o value offered is one the command takes
  if grep -qx -- -o <<<"$offered"; then
    formats=$(comp tfjobctl "$cmd" -o "")
    [ -n "$formats" ] && ok || bad "$cmd: no -o value offered"
    for f in $formats; do
      case $cmd in
        get) args=(--kubeconfig "$TMP/nope.kubeconfig") ;;
        plan) args=(--job "$TMP/nope.yaml") ;;
        watch) args=(x --kubeconfig "$TMP/nope.kubeconfig") ;;
        *) args=("$TMP/nope.yaml") ;;
      esac
      "$CTL" "$cmd" -o "$f" "${args[@]}" >/dev/null 2>"$TMP/err" </dev/null
      grep -q "unknown output format" "$TMP/err" && bad "$cmd -o $f (offered): $(cat "$TMP/err")" || ok
    done
  fi
done

# Values: -o, the flags with a fixed set of values, --name=VALUE as bash splits it at '='.
offers "validate -o" "text json" tfjobctl validate -o ""
offers "get -o" "json yaml wide name" tfjobctl get -o ""
offers "render --output" "yaml list json name wide" tfjobctl render --output ""
offers "render -o j" "json" tfjobctl render -o j
offers "--compat" "documented training-operator-1.9" tfjobctl tf-config --compat ""
offers "--compat=" "documented training-operator-1.9" tfjobctl default --compat = ""
offers "--compat=t" "training-operator-1.9" tfjobctl default --compat = t
offers "--strict=" "true false" tfjobctl validate --strict = ""
offers "--str" "--strict=" tfjobctl validate --str
offers "apply --validate=" "strict warn ignore" tfjobctl apply --validate = ""
offers "delete --cascade" "background foreground orphan" tfjobctl delete --cascade ""
offers "plan --gang-scheduler" "volcano scheduler-plugins" tfjobctl plan --gang-scheduler ""
offers "completion SHELL" "bash zsh fish" tfjobctl completion ""
offers "a free value: nothing" "" tfjobctl render --cluster-domain ""
offers "exit-code CODE: nothing" "" tfjobctl exit-code ""

# Files: after -f and the flags that read one, and for FILE; directories for --run-dir and RUN.
mkdir -p "$TMP/files/runs/r1" && touch "$TMP/files/job.yaml" "$TMP/files/jobs.json" "$TMP/files/other.txt"
cd "$TMP/files" || exit 2
offers "validate -f" "job.yaml jobs.json other.txt runs" tfjobctl validate -f ""
offers "validate -f jo" "job.yaml jobs.json" tfjobctl validate -f jo
offers "apply --filename" "job.yaml jobs.json" tfjobctl apply --filename j
offers "plan --pods" "job.yaml jobs.json" tfjobctl plan --job job.yaml --pods j
offers "render FILE" "job.yaml jobs.json" tfjobctl render --pretty j
offers "--kubeconfig" "other.txt" tfjobctl get --kubeconfig o
offers "get --run-dir" "runs" tfjobctl get --run-dir ""
offers "run --run-dir=" "runs/r1" tfjobctl run --run-dir = runs/
offers "logs RUN" "runs" tfjobctl logs ""
offers "logs -f is --follow: RUN follows" "runs" tfjobctl logs -f ""
offers "get NAME: nothing" "" tfjobctl get ""
offers "diagnose JOB: nothing" "" tfjobctl diagnose ""
cd - >/dev/null || exit 2

# zsh: the script parses, and loads as a completion function in compinit.
run 0 "completion zsh" -- completion zsh
if command -v zsh >/dev/null; then
  head -n 1 "$TMP/out" | grep -qx '#compdef tfjobctl' && ok || bad "zsh: no #compdef line"
  zsh -n "$TMP/out" && ok || bad "the zsh script does not parse"
  mkdir -p "$TMP/zfunc" && cp "$TMP/out" "$TMP/zfunc/_tfjobctl"
  out=$(HOME=$TMP zsh -f -c 'fpath=("$1" $fpath); autoload -Uz compinit; compinit -u -d "$2"; print -r -- ${_comps[tfjobctl]}' _ "$TMP/zfunc" "$TMP/zcompdump" 2>&1)
  [ "$out" = _tfjobctl ] && ok || bad "zsh: compinit does not bind _tfjobctl to tfjobctl: $out"
  # zsh_comp LINE: the matches zsh's completion system adds for LINE + Tab, in an interactive zsh
  # on a pseudo-terminal (zpty) whose compadd also prints what it adds.
  cat >"$TMP/zcap.zsh" <<'ZSH'
zmodload zsh/zpty
zpty z zsh -f -i
zpty -w z "PROMPT=; RPROMPT=; fpath=($1 \$fpath); autoload -Uz compinit; compinit -u -d $2"
zpty -w z 'compadd () {
  [[ ${@[1,(i)(-a|-k|-d)]} == *-(O|A|D)\ * ]] && { builtin compadd "$@"; return $?; }
  typeset -a __hits; builtin compadd -A __hits "$@"; local r=$?
  (( $#__hits )) && print -l -- "<<${^__hits}>>"
  return $r
}'
zpty -w z "bindkey '^I' complete-word; print -- '{{setup''-done}}'"
zpty -r z line '*{{setup-done}}*' >/dev/null
zpty -w -n z "$3"$'\t'
all= quiet=0
for i in {1..200}; do
  if zpty -r -t z chunk; then all+=$chunk; quiet=0; else (( quiet++ )); fi
  [[ $all == *'>>'* && $quiet -ge 5 ]] && break
  sleep 0.05
done
print -r -- "$all" | grep -ao '<<[^>]*>>' | sed 's/^<<//; s/>>$//'
zpty -d z
ZSH
  zsh_offers() {
    local want got; want=$(printf '%s\n' $2 | sort)
    got=$(cd "$TMP/files" && HOME=$TMP zsh -f "$TMP/zcap.zsh" "$TMP/zfunc" "$TMP/zcompdump2" "$3" | tr ' ' '\n' | grep . | sort -u)
    [ "$got" = "$want" ] && ok || bad "zsh: $1: offered [$(echo $got)], want [$(echo $want)]"
  }
  zsh_offers "commands" "$(grep -x 'de.*' <<<"$commands")" "tfjobctl de"
  zsh_offers "validate -o" "text json" "tfjobctl validate -o "
  zsh_offers "render --compat" "documented training-operator-1.9" "tfjobctl render --compat "
  zsh_offers "validate -f" "job.yaml jobs.json" "tfjobctl validate -f jo"
  zsh_offers "delete --cas" "--cascade" "tfjobctl delete --cas"
else
  bad "zsh is not installed (scripts/setup.sh installs it)"
fi

# fish: the script parses, and fish completes from it.
run 0 "completion fish" -- completion fish
if command -v fish >/dev/null; then
  cp "$TMP/out" "$TMP/tfjobctl.fish"
  fish -n "$TMP/tfjobctl.fish" && ok || bad "the fish script does not parse"
  fcomp() { (cd "$TMP/files" && HOME=$TMP fish --no-config -c 'source $argv[1]; complete -C $argv[2]' "$TMP/tfjobctl.fish" "$1") | cut -f1 | sort; }
  fish_offers() {
    local want got; want=$(printf '%s\n' $2 | sort); got=$(fcomp "$3")
    [ "$got" = "$want" ] && ok || bad "fish: $1: offered [$(echo $got)], want [$(echo $want)]"
  }
  fish_offers "commands" "$(grep -x 'de.*' <<<"$commands")" "tfjobctl de"
  fish_offers "validate -o" "text json" "tfjobctl validate -o "
  fish_offers "--compat=" "--compat=documented --compat=training-operator-1.9" "tfjobctl render --compat="
  fish_offers "validate -f" "job.yaml jobs.json" "tfjobctl validate -f jo"
  fish_offers "delete --cascade" "background foreground orphan" "tfjobctl delete --cascade "
  fish_offers "apply --server" "--server-side" "tfjobctl apply --server"
else
  bad "fish is not installed (scripts/setup.sh installs it)"
fi

echo "tfjobctl completion: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
