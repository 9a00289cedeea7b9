#!/usr/bin/env bash
# A real single-node Kubernetes cluster on this machine, from nothing (e2e/cluster/README.md):
# etcd, kube-apiserver, kube-controller-manager, kube-scheduler, a kubelet on containerd,
# kube-proxy and CoreDNS, all built from the Go module proxy and cached by version, pods on a
# bridge this script creates, images imported from local tarballs (no registry); optionally
# kube-router's firewall, which enforces NetworkPolicies.
#
#   e2e/cluster/cluster.sh check            what is missing to run here (exit 3 if anything)
#   e2e/cluster/cluster.sh prepare          install the node's Debian packages and build its
#                                           binaries (what up needs), changing nothing else
#   e2e/cluster/cluster.sh up [--network-policy] [IMAGE.tar...]
#                                           prepare, start the node and wait until it is Ready;
#                                           --network-policy: NetworkPolicies enforced (kube-router)
#   e2e/cluster/cluster.sh load IMAGE.tar... import more images into the running node
#   e2e/cluster/cluster.sh down             stop what up started and restore the host
#
# Everything stays on this machine: the control plane listens on 127.0.0.1 and on the bridge's
# address (pods reach the API server there), pods and Services get addresses from the
# benchmarking range 198.18.0.0/15, which cannot be a real network, and nothing on the bridge is
# forwarded anywhere else.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
KUBE_VERSION=${KUBE_VERSION:-v1.35.4}
CACHE=${PALLAS_CACHE:-$HOME/.cache/pallas}
BIN=$CACHE/kube/$KUBE_VERSION/bin
DIR=${PALLAS_CLUSTER_DIR:-/tmp/pallas-cluster}
NODE=pallas-node
BRIDGE=pallas0
NODE_IP=198.19.0.1
POD_CIDR=198.19.0.0/24
SERVICE_CIDR=198.18.0.0/24
API_SERVICE_IP=198.18.0.1
PAUSE_IMAGE=registry.k8s.io/pause:3.10
COMPONENTS=(etcd kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy kubectl coredns helm
  kube-router)
# settings the kubelet and kube-proxy change on the host; down puts the recorded values back
SYSCTLS=(net.ipv4.ip_forward net.bridge.bridge-nf-call-iptables net.ipv4.conf.all.route_localnet
  vm.overcommit_memory kernel.panic kernel.panic_on_oops kernel.keys.root_maxkeys
  kernel.keys.root_maxbytes)
# host directories the container runtime or CNI may create outside $DIR
HOST_DIRS=(/run/containerd /var/lib/cni /var/lib/kubelet /opt/containerd /var/run/netns /etc/cni)

T0=$(date +%s%N)
elapsed() { awk -v t0="$T0" -v t1="$(date +%s%N)" 'BEGIN { printf "%.1f", (t1 - t0) / 1e9 }'; }
step() { printf '[%6s s] %s\n' "$(elapsed)" "$*" >&2; }
log() { echo "cluster: $*" >&2; }
die() { log "$*"; exit 1; }

# waits up to $1 seconds for the command after it to succeed
wait_for() {
  local timeout=$1 what=$2
  shift 2
  local deadline=$((SECONDS + timeout))
  until "$@" >/dev/null 2>&1; do
    [ $SECONDS -lt $deadline ] || die "$what: not after ${timeout} s (logs in $DIR/logs)"
    sleep 0.2
  done
}

missing() {
  local m=()
  [ "$(id -u)" = 0 ] || m+=("root (the kubelet and containerd need it)")
  [ -d /sys/fs/cgroup/memory ] || [ -f /sys/fs/cgroup/cgroup.controllers ] || m+=("cgroups (/sys/fs/cgroup)")
  [ -e /dev/kmsg ] || m+=("/dev/kmsg (the kubelet's OOM watcher)")
  [ -d /proc/sys/net/bridge ] || m+=("bridge netfilter (/proc/sys/net/bridge; modprobe br_netfilter where it is a module)")
  command -v go >/dev/null || [ -x /usr/local/go/bin/go ] || m+=("Go (to build Kubernetes from the module proxy)")
  command -v apt-get >/dev/null || command -v containerd >/dev/null || m+=("apt-get or containerd")
  printf '%s\n' "${m[@]}"
}

cmd_check() {
  local m
  m=$(missing)
  if [ -n "$m" ]; then
    echo "cluster: cannot run here; missing:" >&2
    echo "$m" | sed 's/^/  - /' >&2
    exit 3
  fi
  echo "cluster: this machine can run the node"
}

install_packages() {
  local need=()
  command -v containerd >/dev/null || need+=(containerd)
  command -v runc >/dev/null || need+=(runc)
  [ -x /usr/lib/cni/bridge ] || need+=(containernetworking-plugins)
  command -v iptables >/dev/null || need+=(iptables)
  command -v nft >/dev/null || need+=(nftables)
  command -v conntrack >/dev/null || need+=(conntrack)
  command -v gcc >/dev/null || need+=(gcc)
  [ -f /usr/lib/x86_64-linux-gnu/libc.a ] || [ -f /usr/lib/libc.a ] || need+=(libc6-dev)
  command -v openssl >/dev/null || need+=(openssl)
  # the fleet store's image (tool-images.py) is made of Debian's PostgreSQL server
  compgen -G '/usr/lib/postgresql/*/bin/postgres' >/dev/null || need+=(postgresql)
  # ... which runs under any UID, as OpenShift assigns them, through nss_wrapper
  compgen -G '/usr/lib/*/libnss_wrapper.so' >/dev/null || need+=(libnss-wrapper)
  # kube-router's NetworkPolicy firewall keeps pods' addresses in IP sets
  command -v ipset >/dev/null || need+=(ipset)
  if [ ${#need[@]} -gt 0 ]; then
    log "installing ${need[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
  fi
}

pause_image() {
  local key out
  key=$(cat "$ROOT/e2e/cluster/pause.c" "$ROOT/e2e/cluster/pause-image.py" | sha256sum | cut -c1-16)
  out=$CACHE/images/pause-$key.tar
  if [ ! -f "$out" ]; then
    mkdir -p "$CACHE/images"
    python3 "$ROOT/e2e/cluster/pause-image.py" "$out" "$PAUSE_IMAGE"
  fi
  echo "$out"
}

pki() {
  local p=$DIR/pki
  mkdir -p "$p"
  (
    cd "$p"
    ssl() { openssl "$@" 2>/dev/null; }
    # P-256 keys: generated in milliseconds where RSA takes seconds on a busy machine
    ssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout ca.key -out ca.crt -days 30 -subj /CN=pallas-cluster-ca
    sign() { # name subject extensions
      ssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "$1.key" -out "$1.csr" -subj "$2"
      printf '%s\n' "$3" >"$1.ext"
      ssl x509 -req -in "$1.csr" -CA ca.crt -CAkey ca.key -CAcreateserial -out "$1.crt" -days 30 -extfile "$1.ext"
    }
    sign apiserver /CN=kube-apiserver "subjectAltName=DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local,IP:127.0.0.1,IP:$NODE_IP,IP:$API_SERVICE_IP
extendedKeyUsage=serverAuth"
    sign kubelet "/CN=$NODE" "subjectAltName=DNS:$NODE,IP:$NODE_IP
extendedKeyUsage=serverAuth"
    # the API server's client certificate for kubelet logs, exec and port-forward
    sign kubelet-client "/O=system:masters/CN=kube-apiserver-kubelet-client" "extendedKeyUsage=clientAuth"
    ssl ecparam -name prime256v1 -genkey -noout -out sa.key
    ssl ec -in sa.key -pubout -out sa.pub
    local admin node
    admin=$(openssl rand -hex 24)
    node=$(openssl rand -hex 24)
    printf '%s,admin,admin,system:masters\n%s,system:node:%s,node,system:nodes\n' "$admin" "$node" "$NODE" >tokens.csv
    echo "$admin" >admin.token
    echo "$node" >node.token
    chmod 600 ./*.key ./*.token tokens.csv
  )
  kubeconfig "$DIR/kubeconfig" "$(cat "$p/admin.token")"
  kubeconfig "$DIR/kubelet.kubeconfig" "$(cat "$p/node.token")"
}

kubeconfig() { # file token
  cat >"$1" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: pallas
  cluster: {server: "https://$NODE_IP:6443", certificate-authority: $DIR/pki/ca.crt}
users:
- name: pallas
  user: {token: $2}
contexts:
- name: pallas
  context: {cluster: pallas, user: pallas}
current-context: pallas
EOF
  chmod 600 "$1"
}

configs() {
  mkdir -p "$DIR/containerd" "$DIR/cni/net.d"
  cat >"$DIR/containerd/config.toml" <<EOF
version = 2
root = "$DIR/containerd/root"
state = "$DIR/containerd/state"
[grpc]
  address = "$DIR/containerd/containerd.sock"
[ttrpc]
  address = "$DIR/containerd/containerd.sock.ttrpc"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$PAUSE_IMAGE"
  disable_apparmor = true
  # this kind of VM has no CAP_SYS_RESOURCE: the default oom_score_adj -998 makes runc fail
  restrict_oom_score_adj = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$DIR/cni/net.d"
EOF
  cat >"$DIR/cni/net.d/10-pallas.conflist" <<EOF
{"cniVersion": "0.4.0", "name": "pallas", "plugins": [
  {"type": "bridge", "bridge": "$BRIDGE", "isGateway": true, "ipMasq": false, "hairpinMode": true,
   "ipam": {"type": "host-local", "ranges": [[{"subnet": "$POD_CIDR", "gateway": "$NODE_IP"}]],
            "routes": [{"dst": "$SERVICE_CIDR", "gw": "$NODE_IP"}], "dataDir": "$DIR/cni/ipam"}},
  {"type": "loopback"}]}
EOF
  cat >"$DIR/kubelet.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
failCgroupV1: false
cgroupDriver: cgroupfs
containerRuntimeEndpoint: unix://$DIR/containerd/containerd.sock
address: $NODE_IP
healthzBindAddress: 127.0.0.1
readOnlyPort: 0
# only the API server (its client certificate) may call the kubelet
authentication: {anonymous: {enabled: false}, webhook: {enabled: false}, x509: {clientCAFile: $DIR/pki/ca.crt}}
authorization: {mode: AlwaysAllow}
tlsCertFile: $DIR/pki/kubelet.crt
tlsPrivateKeyFile: $DIR/pki/kubelet.key
podLogsDir: $DIR/pod-logs
resolvConf: ""
failSwapOn: false
evictionHard: {memory.available: 100Mi, nodefs.available: 1%, imagefs.available: 1%, nodefs.inodesFree: 1%}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
clusterDomain: cluster.local
clusterDNS: [$NODE_IP]
EOF
  cat >"$DIR/kube-proxy.yaml" <<EOF
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection: {kubeconfig: $DIR/kubeconfig}
hostnameOverride: $NODE
mode: iptables
clusterCIDR: $POD_CIDR
bindAddress: 127.0.0.1
healthzBindAddress: 127.0.0.1:10256
metricsBindAddress: 127.0.0.1:10249
nodePortAddresses: ["$NODE_IP/32"]
conntrack: {maxPerCore: 0, min: 0, tcpEstablishedTimeout: 0s, tcpCloseWaitTimeout: 0s}
EOF
  cat >"$DIR/Corefile" <<EOF
cluster.local:53 in-addr.arpa:53 {
    bind $NODE_IP
    errors
    kubernetes cluster.local in-addr.arpa {
        kubeconfig $DIR/kubeconfig pallas
        pods insecure
    }
    cache 5
    ready 127.0.0.1:8181
}
.:53 {
    bind $NODE_IP
    errors
    # names outside the cluster do not resolve: nothing here may reach another network
    template ANY ANY {
        rcode NXDOMAIN
    }
}
EOF
}

# Records every host setting this script or the components change, so down can put it back.
record_host() {
  local h=$DIR/host
  mkdir -p "$h"
  for s in "${SYSCTLS[@]}"; do
    printf '%s=%s\n' "$s" "$(sysctl -n "$s")"
  done >"$h/sysctl"
  nft list tables >"$h/nft-tables" 2>/dev/null || true
  iptables-save >"$h/iptables" 2>/dev/null || true
  ip6tables-save >"$h/ip6tables" 2>/dev/null || true
  for d in "${HOST_DIRS[@]}"; do [ -e "$d" ] && echo "$d"; done >"$h/dirs" || true
  ls /var/run/netns 2>/dev/null >"$h/netns" || true
  ipset list -n >"$h/ipsets" 2>/dev/null || true
}

network() {
  ip link add "$BRIDGE" type bridge
  ip addr add "$NODE_IP/24" dev "$BRIDGE"
  ip link set "$BRIDGE" up
  # Service addresses without an endpoint go nowhere but the bridge
  ip route add "$SERVICE_CIDR" dev "$BRIDGE"
  # nothing from the bridge is forwarded to any other interface, nor from any other to it: in the
  # mangle table, which a forwarded packet meets before the filter table, where kube-router
  # (--network-policy) accepts what a policy admits ahead of any rule of ours
  iptables -t mangle -I FORWARD 1 -i "$BRIDGE" ! -o "$BRIDGE" -j DROP
  iptables -t mangle -I FORWARD 1 -o "$BRIDGE" ! -i "$BRIDGE" -j DROP
  sysctl -qw net.ipv4.ip_forward=1 net.bridge.bridge-nf-call-iptables=1
}

start() { # name command...
  local name=$1
  shift
  setsid "$@" >"$DIR/logs/$name.log" 2>&1 </dev/null &
  echo $! >"$DIR/pids/$name"
}

running() { [ -f "$DIR/pids/$1" ] && kill -0 "$(cat "$DIR/pids/$1")" 2>/dev/null; }

kubectl_() { "$BIN/kubectl" --kubeconfig "$DIR/kubeconfig" "$@"; }

import_images() {
  local tar
  for tar in "$@"; do
    ctr --address "$DIR/containerd/containerd.sock" -n k8s.io images import --no-unpack=false "$tar" >/dev/null \
      || die "could not import $tar"
  done
}

# Everything up needs that outlives a run: the Debian packages, the binaries, the pause image.
# A first run differs from later ones only here, so whoever snapshots the host (RealClusterIT)
# runs this first and finds the same host before up as after down (e2e/cluster/README.md).
cmd_prepare() {
  cmd_check >/dev/null
  install_packages
  step "packages"
  local need=() t
  for t in "${COMPONENTS[@]}"; do [ -x "$BIN/$t" ] || need+=("$t"); done
  [ ${#need[@]} -eq 0 ] || KUBE_VERSION=$KUBE_VERSION "$ROOT/tools/go-binaries.sh" "${need[@]}" >&2
  step "binaries (${#need[@]} built)"
  pause_image >/dev/null
}

# A cluster whose processes are all gone (its test JVM was killed before down) left its bridge
# and its changes to the host behind: put them back from that cluster's own record, as its down
# would have, so that the next up on this machine starts (a cold CI run found one, issues ci).
recover_stale() {
  local d p alive
  for d in /tmp/pallas-cluster*/ "$DIR/"; do
    d=${d%/}
    [ -d "$d/pids" ] && [ -d "$d/host" ] || continue
    alive=
    for p in "$d"/pids/*; do
      [ -f "$p" ] && kill -0 "$(cat "$p")" 2>/dev/null && alive=$d
    done
    [ -z "$alive" ] || die "a cluster is up in $alive (run down there first)"
    log "the cluster in $d stopped without down: putting the host back from its record"
    PALLAS_CLUSTER_DIR=$d "$0" down
  done
}

cmd_up() {
  local network_policy=false
  if [ "${1:-}" = --network-policy ]; then
    network_policy=true
    shift
  fi
  local images=("$@") t
  for t in "${images[@]}"; do [ -f "$t" ] || die "no image tarball $t"; done
  cmd_check >/dev/null
  recover_stale
  [ ! -e "$DIR/pids" ] || die "a cluster is already up in $DIR (run down first)"
  ip link show "$BRIDGE" >/dev/null 2>&1 && die "bridge $BRIDGE exists already: another cluster is up"
  cmd_prepare
  local pause
  pause=$(pause_image)
  rm -rf "$DIR"
  mkdir -p "$DIR/logs" "$DIR/pids" "$DIR/etcd" "$DIR/kubelet" "$DIR/pod-logs"
  record_host
  pki
  configs
  network
  step "certificates, configuration, bridge $BRIDGE ($NODE_IP)"

  start containerd containerd --config "$DIR/containerd/config.toml"
  start etcd "$BIN/etcd" --data-dir "$DIR/etcd" --unsafe-no-fsync \
    --listen-client-urls http://127.0.0.1:2379 --advertise-client-urls http://127.0.0.1:2379 \
    --listen-peer-urls http://127.0.0.1:2380 --initial-advertise-peer-urls http://127.0.0.1:2380 \
    --initial-cluster default=http://127.0.0.1:2380 --listen-metrics-urls http://127.0.0.1:2381
  wait_for 30 containerd test -S "$DIR/containerd/containerd.sock"
  import_images "$pause" "${images[@]}"
  step "containerd; ${#images[@]} images and the pause image imported"
  wait_for 30 etcd curl -sf http://127.0.0.1:2379/health
  local p=$DIR/pki
  start kube-apiserver "$BIN/kube-apiserver" --etcd-servers=http://127.0.0.1:2379 \
    --bind-address="$NODE_IP" --advertise-address="$NODE_IP" --secure-port=6443 \
    --tls-cert-file="$p/apiserver.crt" --tls-private-key-file="$p/apiserver.key" \
    --client-ca-file="$p/ca.crt" --token-auth-file="$p/tokens.csv" --authorization-mode=Node,RBAC \
    --service-account-issuer=https://kubernetes.default.svc.cluster.local \
    --service-account-key-file="$p/sa.pub" --service-account-signing-key-file="$p/sa.key" \
    --service-cluster-ip-range="$SERVICE_CIDR" --kubelet-client-certificate="$p/kubelet-client.crt" \
    --kubelet-client-key="$p/kubelet-client.key" --kubelet-preferred-address-types=InternalIP \
    --kubelet-certificate-authority="$p/ca.crt" --profiling=false
  wait_for 60 "kube-apiserver" curl -sf --cacert "$p/ca.crt" -H "Authorization: Bearer $(cat "$p/admin.token")" \
    "https://$NODE_IP:6443/readyz"
  step "kube-apiserver ready"
  start kube-controller-manager "$BIN/kube-controller-manager" --kubeconfig="$DIR/kubeconfig" \
    --authentication-kubeconfig="$DIR/kubeconfig" --authorization-kubeconfig="$DIR/kubeconfig" \
    --bind-address=127.0.0.1 --leader-elect=false --service-account-private-key-file="$p/sa.key" \
    --root-ca-file="$p/ca.crt" --cluster-signing-cert-file="$p/ca.crt" --cluster-signing-key-file="$p/ca.key" \
    --service-cluster-ip-range="$SERVICE_CIDR" --use-service-account-credentials=true --profiling=false
  start kube-scheduler "$BIN/kube-scheduler" --kubeconfig="$DIR/kubeconfig" \
    --authentication-kubeconfig="$DIR/kubeconfig" --authorization-kubeconfig="$DIR/kubeconfig" \
    --bind-address=127.0.0.1 --leader-elect=false --profiling=false
  start kubelet "$BIN/kubelet" --config="$DIR/kubelet.yaml" --kubeconfig="$DIR/kubelet.kubeconfig" \
    --root-dir="$DIR/kubelet" --hostname-override="$NODE" --node-ip="$NODE_IP"
  start kube-proxy "$BIN/kube-proxy" --config="$DIR/kube-proxy.yaml"
  start coredns "$BIN/coredns" -conf "$DIR/Corefile"
  wait_for 90 "node $NODE Ready" sh -c "'$BIN/kubectl' --kubeconfig '$DIR/kubeconfig' get node $NODE \
    -o jsonpath='{.status.conditions[?(@.type==\"Ready\")].status}' | grep -qx True"
  step "node $NODE Ready"
  if $network_policy; then
    # NetworkPolicy only: the bridge stays the pod network and kube-proxy the Service proxy; no
    # health or metrics port (they would listen on every address). It reads its node's address
    # from the Node object, so it starts once the kubelet has registered it.
    start kube-router "$BIN/kube-router" --kubeconfig="$DIR/kubeconfig" --hostname-override="$NODE" \
      --run-firewall=true --run-router=false --run-service-proxy=false --run-loadbalancer=false \
      --service-cluster-ip-range="$SERVICE_CIDR" --health-port=0 --metrics-port=0
  fi
  wait_for 60 "default ServiceAccount" kubectl_ get serviceaccount default -n default
  wait_for 60 "CoreDNS" curl -sf http://127.0.0.1:8181/ready
  step "default ServiceAccount and DNS"
  if $network_policy; then
    wait_for 60 "kube-router's firewall" iptables -S KUBE-ROUTER-FORWARD
    step "NetworkPolicies enforced (kube-router)"
  fi
  echo "$(elapsed)" >"$DIR/up-seconds"
  log "up in $(elapsed) s; KUBECONFIG=$DIR/kubeconfig"
}

cmd_load() {
  [ -S "$DIR/containerd/containerd.sock" ] || die "no cluster is up in $DIR"
  import_images "$@"
}

stop_pid() { # name [seconds]
  local pid
  [ -f "$DIR/pids/$1" ] || return 0
  pid=$(cat "$DIR/pids/$1")
  if kill -0 "$pid" 2>/dev/null; then
    kill "$pid" 2>/dev/null || true
    local deadline=$((SECONDS + ${2:-15}))
    while kill -0 "$pid" 2>/dev/null && [ $SECONDS -lt $deadline ]; do sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
  fi
  rm -f "$DIR/pids/$1"
}

cmd_down() {
  [ -d "$DIR" ] || { log "nothing to stop in $DIR"; return 0; }
  local ctr=(ctr --address "$DIR/containerd/containerd.sock" -n k8s.io) t
  # reverse order of start: the kubelet first so nothing restarts containers, etcd after the API server
  for t in kubelet kube-router kube-proxy coredns kube-scheduler kube-controller-manager kube-apiserver etcd; do
    stop_pid "$t"
  done
  if running containerd; then
    for t in $("${ctr[@]}" tasks ls -q 2>/dev/null); do "${ctr[@]}" tasks kill -s KILL "$t" >/dev/null 2>&1 || true; done
    local deadline=$((SECONDS + 20))
    while [ -n "$("${ctr[@]}" tasks ls -q 2>/dev/null | while read -r t; do
      "${ctr[@]}" tasks rm -f "$t" >/dev/null 2>&1 || echo "$t"; done)" ] && [ $SECONDS -lt $deadline ]; do
      sleep 0.2
    done
  fi
  stop_pid containerd
  # the shims of this containerd (found by its socket, never another's)
  pkill -9 -f "containerd-shim.* -address $DIR/containerd/containerd.sock" 2>/dev/null || true
  findmnt -rn -o TARGET | grep -E "^$DIR/|^/run/containerd/|^/var/run/netns/|^/run/netns/" | sort -r \
    | xargs -r -n1 umount -l 2>/dev/null || true
  restore_host
  rm -rf "$DIR/containerd" "$DIR/kubelet" "$DIR/etcd" "$DIR/pids" "$DIR/pki" "$DIR/kubeconfig" \
    "$DIR/kubelet.kubeconfig" "$DIR/cni"
  log "down; logs kept in $DIR/logs"
}

restore_host() {
  local h=$DIR/host d n
  [ -d "$h" ] || return 0
  # new network namespaces (the pods'), then the bridge and its route
  for n in $(ls /var/run/netns 2>/dev/null); do
    grep -qx "$n" "$h/netns" 2>/dev/null || ip netns del "$n" 2>/dev/null || true
  done
  ip route del "$SERVICE_CIDR" dev "$BRIDGE" 2>/dev/null || true
  ip link del "$BRIDGE" 2>/dev/null || true
  # iptables: tables that existed before get their saved rules back, new ones are removed
  nft list tables 2>/dev/null | while read -r _ family name; do
    grep -qx "table $family $name" "$h/nft-tables" || nft delete table "$family" "$name"
  done
  if [ -s "$h/nft-tables" ]; then
    iptables-restore <"$h/iptables" 2>/dev/null || log "could not restore iptables"
    ip6tables-restore <"$h/ip6tables" 2>/dev/null || log "could not restore ip6tables"
  fi
  # kube-router's IP sets, once no rule refers to them
  for n in $(ipset list -n 2>/dev/null); do
    grep -qx "$n" "$h/ipsets" 2>/dev/null || ipset destroy "$n" 2>/dev/null || log "could not destroy ipset $n"
  done
  # the kubelet's cgroups (pods' processes are gone by now)
  for d in /sys/fs/cgroup/*/kubepods /sys/fs/cgroup/kubepods; do
    [ -d "$d" ] && find "$d" -depth -type d -exec rmdir {} \; 2>/dev/null
  done
  while IFS='=' read -r n d; do sysctl -qw "$n=$d" 2>/dev/null || true; done <"$h/sysctl"
  for d in "${HOST_DIRS[@]}"; do
    [ -e "$d" ] && ! grep -qx "$d" "$h/dirs" && rm -rf "$d"
  done
  rm -rf "$h"
}

case "${1:-}" in
  check) cmd_check ;;
  prepare) cmd_prepare ;;
  up) shift; cmd_up "$@" ;;
  load) shift; cmd_load "$@" ;;
  down) cmd_down ;;
  *) sed -n '2,/^set -e/p' "$0" | sed 's/^# \{0,1\}//;$d' >&2; exit 2 ;;
esac
