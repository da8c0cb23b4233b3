#!/usr/bin/env bash
# A real Kubernetes API server (kube-apiserver + etcd) on loopback, for the test suites.
# No kubelet, no controller-manager, no kubectl; nothing needs to be running beforehand.
#
#   tests/kube/harness.sh build        build kube-apiserver, etcd and kubectl from the Go module
#                                      proxy (tests/kube/tools/*/go.mod) unless cached; prints
#                                      the paths
#   tests/kube/harness.sh start DIR    certificates, etcd, kube-apiserver, the TFJob CRD; returns
#                                      when /readyz is ok and the CRD is Established and in
#                                      API discovery; writes DIR/env, DIR/admin.kubeconfig,
#                                      DIR/user.kubeconfig
#   tests/kube/harness.sh stop DIR     stop both, wait for them, remove the state (logs stay)
#   tests/kube/harness.sh stop-apiserver DIR
#                                      stop kube-apiserver alone (SIGTERM, wait; SIGKILL after
#                                      15 s); etcd keeps running with its data
#   tests/kube/harness.sh start-apiserver DIR
#                                      start it again: same port, certificates, tokens and etcd;
#                                      returns when /readyz is ok (DIR/env gets the new PID)
#   tests/kube/harness.sh restart-apiserver DIR [DOWN_SECONDS]
#                                      both, with DOWN_SECONDS (default 0) in between
#
# Processes: `start` leaves a supervisor (this script, `_supervise`) that owns etcd and
# kube-apiserver. It stops them on `stop`, and by itself when the shell that ran `start`
# exits or is killed (it polls that shell's PID; TFJOB_KUBE_OWNER_PID overrides it, 0 means
# "only on stop"). Both servers run under `setpriv --pdeathsig KILL`, so they die with the
# supervisor even if it is killed with SIGKILL.
#
# Environment:
#   TFJOB_KUBE_CACHE        binary cache (default: ~/.cache/libtfjob/kube, shared by every
#                           checkout on the machine; entries are keyed by version and recipe)
#   TFJOB_KUBE_BUILD_JOBS   go build -p (default 2)
#   TFJOB_KUBE_APISERVER_ARGS  extra kube-apiserver flags (word-split)
#   TFJOB_KUBE_START_TIMEOUT   seconds to wait for readiness (default 120)
#   TFJOB_KUBE_CRD          the TFJob CRD `start` installs (default examples/deploy/crd-tfjob.yaml;
#                           tests/suites/66-official-crd.sh gives training-operator v1.9.2's own)
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
SELF="$HERE/$(basename "${BASH_SOURCE[0]}")"
TOOLS="$HERE/tools"
CACHE="${TFJOB_KUBE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/libtfjob/kube}"
CRD="${TFJOB_KUBE_CRD:-$ROOT/examples/deploy/crd-tfjob.yaml}"
SERVICE_CIDR="10.0.0.0/24"
SERVICE_IP="10.0.0.1"

log() { echo "harness: $*" >&2; }
die() { echo "harness: error: $*" >&2; exit 1; }

# The pinned versions are the ones in the go.mod files (single source of truth).
mod_version() {  # MODFILE MODULE
  awk -v m="$2" '$1 == m && $2 ~ /^v/ { print $2; exit } $1 == "require" && $2 == m { print $3; exit }' "$1"
}
KUBE_VERSION="$(mod_version "$TOOLS/kube-apiserver/go.mod" k8s.io/kubernetes)"
ETCD_VERSION="$(mod_version "$TOOLS/etcd/go.mod" go.etcd.io/etcd/server/v3)"
KUBECTL_VERSION="$(mod_version "$TOOLS/kubectl/go.mod" k8s.io/kubernetes)"

# ---------------------------------------------------------------------------------- build

need_go() {
  command -v go >/dev/null 2>&1 || { [ -x /usr/local/go/bin/go ] && PATH="/usr/local/go/bin:$PATH"; }
  command -v go >/dev/null 2>&1 ||
    die "'go' not found: kube-apiserver and etcd are built from the Go module proxy (Go >= 1.21, which fetches the toolchain go.mod asks for)"
}

# recipe_key DIR: a short hash of what determines the binary (go.mod, go.sum, main.go).
recipe_key() {
  cat "$1"/go.mod "$1"/go.sum "$1"/*.go 2>/dev/null | sha256sum | cut -c1-12
}

# build_one NAME TOOLDIR PACKAGE VERSION LDFLAGS: prints the cached binary's path.
build_one() {
  local name="$1" dir="$2" pkg="$3" version="$4" ldflags="$5"
  local out="$CACHE/bin/$name-$version-$(recipe_key "$dir")"
  if [ ! -x "$out/$name" ]; then
    need_go
    mkdir -p "$out"
    local start=$SECONDS
    log "building $name $version (first time only; several minutes) ..."
    ( cd "$dir" &&
      CGO_ENABLED=0 GOFLAGS="-p=${TFJOB_KUBE_BUILD_JOBS:-2} -buildvcs=false -mod=readonly" \
        go build -trimpath -ldflags "-s -w $ldflags" -o "$out/$name.tmp" "$pkg" ) >&2 ||
      die "building $name failed"
    mv -f "$out/$name.tmp" "$out/$name"
    log "built $name in $((SECONDS - start)) s: $out/$name"
  fi
  echo "$out/$name"
}

cmd_build() {
  mkdir -p "$CACHE"
  # One build at a time (parallel suites share the cache).
  exec 9>"$CACHE/.build.lock"
  flock 9
  local minor="${KUBE_VERSION#v1.}"; minor="${minor%%.*}"
  local ld="" p
  for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ld+=" -X $p.gitVersion=$KUBE_VERSION -X $p.gitMajor=1 -X $p.gitMinor=$minor"
    ld+=" -X $p.gitTreeState=clean -X $p.buildDate=1970-01-01T00:00:00Z"
  done
  KUBE_APISERVER_BIN="$(build_one kube-apiserver "$TOOLS/kube-apiserver" \
    k8s.io/kubernetes/cmd/kube-apiserver "$KUBE_VERSION" "$ld")"
  ETCD_BIN="$(build_one etcd "$TOOLS/etcd" . "$ETCD_VERSION" \
    "-X go.etcd.io/etcd/api/v3/version.GitSHA=$ETCD_VERSION")"
  # kubectl (the suites that apply manifests, tests/suites/46-deploy.sh): the same Kubernetes
  # version as kube-apiserver, from its own recipe so that kube-apiserver's cache key stays.
  [ "$KUBECTL_VERSION" = "$KUBE_VERSION" ] ||
    die "tests/kube/tools/kubectl/go.mod pins k8s.io/kubernetes $KUBECTL_VERSION, kube-apiserver $KUBE_VERSION"
  KUBECTL_BIN="$(build_one kubectl "$TOOLS/kubectl" k8s.io/kubernetes/cmd/kubectl "$KUBE_VERSION" "$ld")"
  exec 9>&-
  echo "KUBE_APISERVER_BIN=$KUBE_APISERVER_BIN"
  echo "ETCD_BIN=$ETCD_BIN"
  echo "KUBECTL_BIN=$KUBECTL_BIN"
}

# ---------------------------------------------------------------------------------- certificates

# sign NAME SUBJECT EXTENSIONS: a P-256 key and a certificate signed by the test CA.
sign() {
  local name="$1" subj="$2" ext="$3"
  openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
    -keyout "$PKI/$name.key" -out "$PKI/$name.csr" -subj "$subj" 2>/dev/null
  printf '%s\n' "$ext" >"$PKI/$name.ext"
  openssl x509 -req -in "$PKI/$name.csr" -CA "$PKI/ca.crt" -CAkey "$PKI/ca.key" \
    -CAcreateserial -days 30 -sha256 -extfile "$PKI/$name.ext" -out "$PKI/$name.crt" 2>/dev/null
  rm -f "$PKI/$name.csr" "$PKI/$name.ext"
}

make_pki() {
  PKI="$DIR/pki"
  mkdir -p "$PKI"
  chmod 700 "$PKI"
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 30 -sha256 \
    -keyout "$PKI/ca.key" -out "$PKI/ca.crt" -subj "/CN=libtfjob-test-ca" \
    -addext "basicConstraints=critical,CA:TRUE" \
    -addext "keyUsage=critical,keyCertSign,cRLSign" 2>/dev/null
  sign apiserver "/CN=kube-apiserver" "basicConstraints=CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=serverAuth
subjectAltName=IP:127.0.0.1,DNS:localhost,IP:$SERVICE_IP,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local"
  local client="basicConstraints=CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=clientAuth"
  # The administrator: group system:masters (cluster-admin, and RBAC is bypassed).
  sign admin "/O=system:masters/CN=libtfjob-admin" "$client"
  # A user with no role bindings at all: every request on a resource gets 403.
  sign user "/O=libtfjob:unprivileged/CN=libtfjob-user" "$client"
  # The same kind of user, authenticated by a bearer token (static token file).
  openssl rand -hex 16 >"$PKI/user.token"
  printf '%s,libtfjob-token-user,libtfjob-token-user-uid,"libtfjob:unprivileged"\n' \
    "$(cat "$PKI/user.token")" >"$PKI/tokens.csv"
  # Service-account token signing key.
  openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$PKI/sa.key" 2>/dev/null
  openssl pkey -in "$PKI/sa.key" -pubout -out "$PKI/sa.pub" 2>/dev/null
  rm -f "$PKI/ca.srl"
}

b64() { base64 -w0 <"$1"; }

# kubeconfig FILE USER CERT KEY
write_kubeconfig() {
  cat >"$1" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: libtfjob-test
  cluster:
    server: $APISERVER_URL
    certificate-authority-data: $(b64 "$PKI/ca.crt")
users:
- name: $2
  user:
    client-certificate-data: $(b64 "$3")
    client-key-data: $(b64 "$4")
contexts:
- name: $2@libtfjob-test
  context:
    cluster: libtfjob-test
    user: $2
    namespace: default
current-context: $2@libtfjob-test
EOF
  chmod 600 "$1"
}

# ---------------------------------------------------------------------------------- start

free_port() {
  python3 -c 'import socket
s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

# curl as the administrator.
acurl() {
  curl -sS --max-time 10 --cacert "$DIR/pki/ca.crt" --cert "$DIR/pki/admin.crt" \
    --key "$DIR/pki/admin.key" "$@"
}

start_failed() {
  log "$1"
  local f
  for f in "$DIR"/etcd.log "$DIR"/kube-apiserver.log; do
    [ -f "$f" ] && { log "--- last lines of $f"; tail -n 30 "$f" >&2; }
  done
  cmd_stop "$DIR" >/dev/null 2>&1 || true
  exit 1
}

cmd_start() {
  [ $# -eq 1 ] || die "usage: harness.sh start DIR"
  mkdir -p "$1"
  DIR="$(cd "$1" && pwd)"
  [ ! -f "$DIR/run/supervisor.pid" ] || die "$DIR already has a server (harness.sh stop $DIR)"
  local owner="${TFJOB_KUBE_OWNER_PID:-$PPID}"
  local timeout="${TFJOB_KUBE_START_TIMEOUT:-120}"
  for tool in openssl curl python3 setpriv flock base64; do
    command -v "$tool" >/dev/null || die "'$tool' is missing (scripts/setup.sh installs it)"
  done
  local bins
  bins="$(cmd_build)"
  eval "$bins"

  make_pki
  mkdir -p "$DIR/run"
  local etcd_port etcd_peer_port api_port
  etcd_port="$(free_port)"; etcd_peer_port="$(free_port)"; api_port="$(free_port)"
  while [ "$etcd_peer_port" = "$etcd_port" ]; do etcd_peer_port="$(free_port)"; done
  while [ "$api_port" = "$etcd_port" ] || [ "$api_port" = "$etcd_peer_port" ]; do api_port="$(free_port)"; done
  ETCD_URL="http://127.0.0.1:$etcd_port"
  APISERVER_URL="https://127.0.0.1:$api_port"

  cat >"$DIR/run/etcd.args" <<EOF
$ETCD_BIN
--name=libtfjob-test
--data-dir=$DIR/etcd-data
--listen-client-urls=$ETCD_URL
--advertise-client-urls=$ETCD_URL
--listen-peer-urls=http://127.0.0.1:$etcd_peer_port
--initial-advertise-peer-urls=http://127.0.0.1:$etcd_peer_port
--initial-cluster=libtfjob-test=http://127.0.0.1:$etcd_peer_port
--initial-cluster-state=new
--unsafe-no-fsync=true
--log-level=warn
EOF
  # --shutdown-watch-termination-grace-period: on SIGTERM, end open watches and wait for them
  # (at most 5 s). Without it kube-apiserver stops listening at once but does not exit while a
  # watch is open (stop-apiserver with an operator watching took the full 15 s, then SIGKILL).
  {
    cat <<EOF
$KUBE_APISERVER_BIN
--bind-address=127.0.0.1
--advertise-address=127.0.0.1
--secure-port=$api_port
--tls-cert-file=$DIR/pki/apiserver.crt
--tls-private-key-file=$DIR/pki/apiserver.key
--client-ca-file=$DIR/pki/ca.crt
--token-auth-file=$DIR/pki/tokens.csv
--etcd-servers=$ETCD_URL
--authorization-mode=Node,RBAC
--service-account-issuer=https://kubernetes.default.svc.cluster.local
--service-account-key-file=$DIR/pki/sa.pub
--service-account-signing-key-file=$DIR/pki/sa.key
--service-cluster-ip-range=$SERVICE_CIDR
--endpoint-reconciler-type=none
--disable-admission-plugins=ServiceAccount
--profiling=false
--shutdown-watch-termination-grace-period=5s
EOF
    # shellcheck disable=SC2086
    [ -z "${TFJOB_KUBE_APISERVER_ARGS:-}" ] || printf '%s\n' ${TFJOB_KUBE_APISERVER_ARGS}
  } >"$DIR/run/kube-apiserver.args"

  # The supervisor runs in its own session so that the caller's terminal signals don't reach
  # the servers half-way; it is the one that stops them.
  trap 'start_failed "interrupted"' INT TERM HUP
  setsid bash "$SELF" _supervise "$DIR" "$owner" </dev/null >>"$DIR/supervisor.log" 2>&1 &
  echo $! >"$DIR/run/supervisor.pid"

  local deadline=$((SECONDS + timeout)) ready=""
  while [ $SECONDS -lt $deadline ]; do
    kill -0 "$(cat "$DIR/run/supervisor.pid")" 2>/dev/null || start_failed "the servers exited during start-up"
    if [ -f "$DIR/run/kube-apiserver.pid" ] &&
       [ "$(acurl "$APISERVER_URL/readyz" 2>/dev/null)" = "ok" ]; then ready=1; break; fi
    sleep 0.5
  done
  [ -n "$ready" ] || start_failed "kube-apiserver not ready after ${timeout} s"

  install_crd || start_failed "the TFJob CRD was not established"

  write_kubeconfig "$DIR/admin.kubeconfig" libtfjob-admin "$DIR/pki/admin.crt" "$DIR/pki/admin.key"
  write_kubeconfig "$DIR/user.kubeconfig" libtfjob-user "$DIR/pki/user.crt" "$DIR/pki/user.key"
  cat >"$DIR/env" <<EOF
KUBE_VERSION=$KUBE_VERSION
ETCD_VERSION=$ETCD_VERSION
KUBE_APISERVER_URL=$APISERVER_URL
KUBE_APISERVER_PID=$(cat "$DIR/run/kube-apiserver.pid")
KUBE_APISERVER_BIN=$KUBE_APISERVER_BIN
ETCD_URL=$ETCD_URL
ETCD_PID=$(cat "$DIR/run/etcd.pid")
ETCD_BIN=$ETCD_BIN
KUBECTL_BIN=$KUBECTL_BIN
KUBE_SUPERVISOR_PID=$(cat "$DIR/run/supervisor.pid")
KUBE_OWNER_PID=$owner
KUBE_ADMIN_KUBECONFIG=$DIR/admin.kubeconfig
KUBE_USER_KUBECONFIG=$DIR/user.kubeconfig
KUBE_CA_CERT=$DIR/pki/ca.crt
KUBE_ADMIN_CERT=$DIR/pki/admin.crt
KUBE_ADMIN_KEY=$DIR/pki/admin.key
KUBE_USER_CERT=$DIR/pki/user.crt
KUBE_USER_KEY=$DIR/pki/user.key
KUBE_USER_TOKEN=$(cat "$DIR/pki/user.token")
EOF
  trap - INT TERM HUP
  log "kube-apiserver $KUBE_VERSION ready at $APISERVER_URL (etcd $ETCD_VERSION at $ETCD_URL); $DIR/env"
}

# Create the CRD (the server reads YAML) and wait until it is Established, served and in API
# discovery (published apart from Established; a controller-runtime manager that starts before
# it is there fails with "no matches for kind").
install_crd() {
  local base="$APISERVER_URL/apis/apiextensions.k8s.io/v1/customresourcedefinitions" code
  code="$(acurl -o "$DIR/run/crd-create.json" -w '%{http_code}' -X POST \
    -H 'Content-Type: application/yaml' --data-binary "@$CRD" "$base")"
  case "$code" in
    201|409) ;;
    *) log "creating the CRD: HTTP $code: $(cat "$DIR/run/crd-create.json")"; return 1 ;;
  esac
  local deadline=$((SECONDS + 60))
  while [ $SECONDS -lt $deadline ]; do
    if acurl "$base/tfjobs.kubeflow.org" 2>/dev/null | python3 -c '
import json, sys
conds = (json.load(sys.stdin).get("status") or {}).get("conditions") or []
sys.exit(0 if any(c["type"] == "Established" and c["status"] == "True" for c in conds) else 1)' &&
       [ "$(acurl -o /dev/null -w '%{http_code}' "$APISERVER_URL/apis/kubeflow.org/v1/tfjobs")" = 200 ] &&
       acurl "$APISERVER_URL/apis/kubeflow.org/v1" 2>/dev/null | python3 -c '
import json, sys
sys.exit(0 if any(r.get("name") == "tfjobs" for r in json.load(sys.stdin).get("resources") or []) else 1)'; then
      return 0
    fi
    sleep 0.2
  done
  return 1
}

# ---------------------------------------------------------------------------------- supervisor

# _supervise DIR OWNER: start etcd, then kube-apiserver; stop both on TERM/INT/HUP, when the
# owner process is gone, or when either server exits.
cmd_supervise() {
  local dir="$1" owner="$2" etcd_pid="" api_pid="" stopping=""
  stop_servers() {
    [ -n "$stopping" ] && return; stopping=1
    # kube-apiserver first: it still talks to etcd while it shuts down (about 1 s; with etcd
    # gone it waits for etcd timeouts instead). Each gets 15 s, then SIGKILL.
    local p i
    for p in $api_pid $etcd_pid; do
      kill -TERM "$p" 2>/dev/null || continue
      for i in $(seq 1 150); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
      kill -KILL "$p" 2>/dev/null || true
    done
    wait 2>/dev/null || true
    rm -f "$dir/run/etcd.pid" "$dir/run/kube-apiserver.pid"
    echo "supervisor: servers stopped ($(date -u +%FT%TZ))"
    exit 0
  }
  trap stop_servers TERM INT HUP
  launch() {  # NAME: the server's argument file holds the binary then one flag per line
    local args=()
    mapfile -t args <"$dir/run/$1.args"
    setpriv --pdeathsig KILL -- "${args[@]}" >>"$dir/$1.log" 2>&1 </dev/null &
  }
  echo "supervisor: started ($(date -u +%FT%TZ)), owner pid $owner"
  launch etcd; etcd_pid=$!; echo "$etcd_pid" >"$dir/run/etcd.pid"
  local url; url="$(sed -n 's/^--listen-client-urls=//p' "$dir/run/etcd.args")"
  local i
  for i in $(seq 1 150); do
    curl -s --max-time 2 "$url/health" 2>/dev/null | grep -q '"health":"true"' && break
    kill -0 "$etcd_pid" 2>/dev/null || { echo "supervisor: etcd exited"; stop_servers; }
    sleep 0.2
  done
  launch kube-apiserver; api_pid=$!; echo "$api_pid" >"$dir/run/kube-apiserver.pid"
  local want
  while :; do
    if [ "$owner" != 0 ] && ! kill -0 "$owner" 2>/dev/null; then
      echo "supervisor: owner $owner is gone"; stop_servers
    fi
    kill -0 "$etcd_pid" 2>/dev/null || { echo "supervisor: etcd exited"; stop_servers; }
    want="$(cat "$dir/run/apiserver.want" 2>/dev/null || echo up)"
    if [ "$want" = down ]; then
      if [ -n "$api_pid" ]; then
        # Asked to stop kube-apiserver alone: as in stop_servers, SIGTERM, 15 s, SIGKILL.
        kill -TERM "$api_pid" 2>/dev/null || true
        for i in $(seq 1 150); do kill -0 "$api_pid" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$api_pid" 2>/dev/null || true
        wait "$api_pid" 2>/dev/null || true
        api_pid=""
        rm -f "$dir/run/kube-apiserver.pid"
        echo "supervisor: kube-apiserver stopped on request, etcd keeps running ($(date -u +%FT%TZ))"
      fi
    elif [ -z "$api_pid" ]; then
      launch kube-apiserver; api_pid=$!; echo "$api_pid" >"$dir/run/kube-apiserver.pid"
      echo "supervisor: kube-apiserver started again, pid $api_pid ($(date -u +%FT%TZ))"
    else
      kill -0 "$api_pid" 2>/dev/null || { echo "supervisor: kube-apiserver exited"; stop_servers; }
    fi
    sleep 0.2 & wait $! || true
  done
}

# ---------------------------------------------------------------------------------- restart

# running_dir DIR: sets DIR (absolute) and loads DIR/env; dies unless its supervisor runs.
running_dir() {
  [ -d "$1" ] || die "no such directory: $1"
  DIR="$(cd "$1" && pwd)"
  [ -f "$DIR/env" ] && [ -f "$DIR/run/supervisor.pid" ] || die "$DIR has no server (harness.sh start $DIR)"
  kill -0 "$(cat "$DIR/run/supervisor.pid")" 2>/dev/null || die "the supervisor of $DIR is not running"
  APISERVER_URL="$(sed -n 's/^KUBE_APISERVER_URL=//p' "$DIR/env")"
}

want_apiserver() {  # up | down
  echo "$1" >"$DIR/run/apiserver.want.tmp"
  mv -f "$DIR/run/apiserver.want.tmp" "$DIR/run/apiserver.want"
}

cmd_stop_apiserver() {
  [ $# -eq 1 ] || die "usage: harness.sh stop-apiserver DIR"
  running_dir "$1"
  local pid="" start=$SECONDS
  [ -f "$DIR/run/kube-apiserver.pid" ] && pid="$(cat "$DIR/run/kube-apiserver.pid")"
  want_apiserver down
  local deadline=$((SECONDS + 30))
  while [ $SECONDS -lt $deadline ]; do
    if [ ! -f "$DIR/run/kube-apiserver.pid" ] && { [ -z "$pid" ] || ! kill -0 "$pid" 2>/dev/null; }; then
      log "kube-apiserver stopped in $((SECONDS - start)) s (pid ${pid:-none}); etcd keeps running"
      return 0
    fi
    kill -0 "$(cat "$DIR/run/supervisor.pid")" 2>/dev/null || die "the supervisor exited"
    sleep 0.1
  done
  die "kube-apiserver (pid $pid) did not stop within 30 s"
}

cmd_start_apiserver() {
  [ $# -eq 1 ] || die "usage: harness.sh start-apiserver DIR"
  running_dir "$1"
  local timeout="${TFJOB_KUBE_START_TIMEOUT:-120}" start=$SECONDS
  want_apiserver up
  local deadline=$((SECONDS + timeout)) pid=""
  while [ $SECONDS -lt $deadline ]; do
    kill -0 "$(cat "$DIR/run/supervisor.pid" 2>/dev/null || echo 0)" 2>/dev/null ||
      { log "--- last lines of $DIR/kube-apiserver.log"; tail -n 30 "$DIR/kube-apiserver.log" >&2; die "the servers exited while kube-apiserver was starting"; }
    [ -f "$DIR/run/kube-apiserver.pid" ] && pid="$(cat "$DIR/run/kube-apiserver.pid")"
    if [ -n "$pid" ] && [ "$(acurl "$APISERVER_URL/readyz" 2>/dev/null)" = "ok" ]; then
      sed -i "s/^KUBE_APISERVER_PID=.*/KUBE_APISERVER_PID=$pid/" "$DIR/env"
      log "kube-apiserver ready again at $APISERVER_URL in $((SECONDS - start)) s (pid $pid)"
      return 0
    fi
    sleep 0.2
  done
  die "kube-apiserver not ready after ${timeout} s"
}

cmd_restart_apiserver() {
  [ $# -ge 1 ] && [ $# -le 2 ] || die "usage: harness.sh restart-apiserver DIR [DOWN_SECONDS]"
  local down="${2:-0}"
  case "$down" in ''|*[!0-9.]*) die "DOWN_SECONDS must be a number: $down" ;; esac
  cmd_stop_apiserver "$1"
  sleep "$down"
  cmd_start_apiserver "$1"
}

# ---------------------------------------------------------------------------------- stop

cmd_stop() {
  [ $# -eq 1 ] || die "usage: harness.sh stop DIR"
  [ -d "$1" ] || die "no such directory: $1"
  local dir; dir="$(cd "$1" && pwd)"
  local sup="" p
  [ -f "$dir/run/supervisor.pid" ] && sup="$(cat "$dir/run/supervisor.pid")"
  if [ -n "$sup" ] && kill -0 "$sup" 2>/dev/null; then
    kill -TERM "$sup" 2>/dev/null || true
    for _ in $(seq 1 150); do kill -0 "$sup" 2>/dev/null || break; sleep 0.2; done
    kill -KILL "$sup" 2>/dev/null || true   # the servers follow it (pdeathsig)
  fi
  # Whatever is still there (only our own PIDs, checked against their command line).
  for name in kube-apiserver etcd; do
    [ -f "$dir/run/$name.pid" ] || continue
    p="$(cat "$dir/run/$name.pid")"
    if [ -r "/proc/$p/cmdline" ] && tr '\0' ' ' <"/proc/$p/cmdline" | grep -q -- "$dir"; then
      kill -KILL "$p" 2>/dev/null || true
      for _ in $(seq 1 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    fi
  done
  rm -rf "$dir/run" "$dir/etcd-data" "$dir/env"
  log "stopped ($dir)"
}

case "${1:-}" in
  build) shift; cmd_build "$@" ;;
  start) shift; cmd_start "$@" ;;
  stop) shift; cmd_stop "$@" ;;
  stop-apiserver) shift; cmd_stop_apiserver "$@" ;;
  start-apiserver) shift; cmd_start_apiserver "$@" ;;
  restart-apiserver) shift; cmd_restart_apiserver "$@" ;;
  _supervise) shift; cmd_supervise "$@" ;;
  *) echo "usage: $0 build | start DIR | stop DIR | stop-apiserver DIR | start-apiserver DIR | restart-apiserver DIR [DOWN_SECONDS]" >&2; exit 2 ;;
esac
