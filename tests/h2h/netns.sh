#!/usr/bin/env bash
# tests/h2h/netns.sh COMMAND...: runs COMMAND in a new network namespace (only its own loopback
# up) and mount namespace with a private /tmp/k8s-webhook-server, so that training-operator
# v1.9's webhook server (:9443 on every interface, fixed certificate directory) is reachable from
# loopback only and shares nothing with another run. Needs root (or unprivileged user namespaces).
set -euo pipefail
if [ "${H2H_IN_NETNS:-}" != 1 ]; then
  mkdir -p /tmp/k8s-webhook-server
  exec unshare --net --mount --propagation private env H2H_IN_NETNS=1 bash "$0" "$@"
fi
ip link set lo up 2>/dev/null || python3 - <<'EOF'
import fcntl, socket, struct
s = socket.socket()
req = struct.pack("16sH", b"lo", 0)
flags = struct.unpack("16sH", fcntl.ioctl(s, 0x8913, req))[1]            # SIOCGIFFLAGS
fcntl.ioctl(s, 0x8914, struct.pack("16sH", b"lo", flags | 1))              # SIOCSIFFLAGS, IFF_UP
EOF
mount -t tmpfs -o size=1m tmpfs /tmp/k8s-webhook-server
exec "$@"
