#!/usr/bin/env bash
# Builds the binaries the tests need from the Go module proxy (no binary can be downloaded on the
# machines this project runs on; see docs/development.md) and caches them by version.
#
#   tools/go-binaries.sh [COMPONENT...]
#       default: kube-apiserver kubectl kube-controller-manager etcd prometheus-crds helm promtool
#                kube-scheduler kubelet kube-proxy coredns (the last four for e2e/cluster/cluster.sh)
#                prometheus prometheus-operator prometheus-config-reloader (the cluster tier's
#                monitoring: e2e/cluster/tool-images.py makes images of them)
#                kube-router (e2e/cluster/cluster.sh's NetworkPolicy enforcement)
#
# COMPONENT is any k8s.io/kubernetes/cmd/<name> (kube-apiserver, kubectl, kubelet, kube-proxy,
# kube-controller-manager, kube-scheduler), etcd, helm, promtool, coredns, kube-router, or
# prometheus-crds (the Prometheus Operator's CRDs, from its module, into
# $PALLAS_CACHE/prometheus-operator/<version>/crds).
# Binaries land in $PALLAS_CACHE/kube/<kubernetes version>/bin (helm and promtool carry their own
# version in their cache key: bin/helm-<version>, linked as bin/helm; so do coredns and kube-router). Stripped binaries land in
# $PALLAS_CACHE/kube/<version>/bin (default ~/.cache/pallas); what is there already is reused.
# Afterwards kube-api-test's cache layout (~/.kubeapitest/k8s/<version>-linux-amd64) is filled so
# the operator's integration tests find a real kube-apiserver, etcd and kubectl without a download.
set -euo pipefail

KUBE_VERSION=${KUBE_VERSION:-v1.35.4}
ETCD_VERSION=${ETCD_VERSION:-v3.6.5}
PROMETHEUS_OPERATOR_VERSION=${PROMETHEUS_OPERATOR_VERSION:-v0.85.0}
HELM_VERSION=${HELM_VERSION:-v3.22.0}
PROMETHEUS_VERSION=${PROMETHEUS_VERSION:-v0.315.0}
COREDNS_VERSION=${COREDNS_VERSION:-v1.12.4}
# the newest release the module proxy serves (later tags are not published as /v2 modules there)
KUBE_ROUTER_VERSION=${KUBE_ROUTER_VERSION:-v2.1.0}
CACHE=${PALLAS_CACHE:-$HOME/.cache/pallas}
BIN=$CACHE/kube/$KUBE_VERSION/bin
API_TEST_DIR=${KUBE_API_TEST_DIR:-$HOME/.kubeapitest}/k8s/${KUBE_VERSION#v}-linux-amd64
components=("$@")
[ ${#components[@]} -gt 0 ] || components=(kube-apiserver kubectl kube-controller-manager etcd prometheus-crds helm promtool
  kube-scheduler kubelet kube-proxy coredns prometheus prometheus-operator prometheus-config-reloader
  kube-router)

[ -x /usr/local/go/bin/go ] && PATH=$PATH:/usr/local/go/bin
command -v go >/dev/null || { echo "go-binaries: Go is required (/usr/local/go or Debian's golang-go)" >&2; exit 1; }
mkdir -p "$BIN"
export GOFLAGS=-mod=mod
# Kubernetes 1.35 needs Go >= 1.25; an older go fetches that toolchain from the module proxy
go_minor=$(go env GOVERSION | sed -E 's/^go1\.([0-9]+).*/\1/')
[ "${go_minor:-0}" -ge 25 ] || export GOTOOLCHAIN=go1.25.0+auto

build_kube() {
  local dir=$CACHE/kube/$KUBE_VERSION/src minor=${KUBE_VERSION#v1.}
  minor=${minor%%.*}
  if [ ! -f "$dir/go.sum" ]; then
    mkdir -p "$dir"
    (
      cd "$dir"
      cat >go.mod <<MOD
module pallas.local/kubebuild

go 1.25.0

require k8s.io/kubernetes $KUBE_VERSION
MOD
      # k8s.io/kubernetes replaces every staging module with ./staging/...: point each at its release
      local gomod
      gomod=$(go mod download -json "k8s.io/kubernetes@$KUBE_VERSION" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')
      grep -o 'k8s.io/[a-z0-9-]* => ./staging' "$gomod" | cut -d' ' -f1 | while read -r m; do
        echo "replace $m => $m v0.${KUBE_VERSION#v1.}" >>go.mod
      done
      printf 'package kubebuild\n\nimport _ "k8s.io/kubernetes/cmd/kube-apiserver/app"\n' >tools.go
      go mod tidy >/dev/null
    )
  fi
  local ld=""
  for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ld="$ld -X $p.gitVersion=$KUBE_VERSION -X $p.gitMajor=1 -X $p.gitMinor=$minor"
    ld="$ld -X $p.gitCommit=0000000000000000000000000000000000000000 -X $p.gitTreeState=clean"
    ld="$ld -X $p.buildDate=2026-01-01T00:00:00Z"
  done
  (cd "$dir" && go build -trimpath -ldflags "-s -w $ld" -o "$BIN/$1.tmp" "k8s.io/kubernetes/cmd/$1")
  mv "$BIN/$1.tmp" "$BIN/$1"
}

build_etcd() {
  local dir=$CACHE/kube/etcd-$ETCD_VERSION/src
  mkdir -p "$dir"
  (
    cd "$dir"
    [ -f go.mod ] || printf 'module pallas.local/etcdbuild\n\ngo 1.25.0\n' >go.mod
    printf 'package etcdbuild\n\nimport _ "go.etcd.io/etcd/server/v3/embed"\n' >tools.go
    go get "go.etcd.io/etcd/server/v3@$ETCD_VERSION" >/dev/null 2>&1
    go mod tidy >/dev/null
    go build -trimpath -ldflags "-s -w" -o "$BIN/etcd.tmp" go.etcd.io/etcd/server/v3
  )
  mv "$BIN/etcd.tmp" "$BIN/etcd"
}

# A command of another module, built in a throwaway module and kept under its own version.
build_tool() { # name module version package
  local name=$1 module=$2 version=$3 package=$4 dir=$CACHE/tools/$1-$3
  if [ ! -x "$BIN/$name-$version" ]; then
    mkdir -p "$dir"
    (
      cd "$dir"
      [ -f go.mod ] || printf 'module pallas.local/%sbuild\n\ngo 1.25.0\n' "$name" >go.mod
      printf 'package %sbuild\n\nimport _ "%s"\n' "$name" "$package" >tools.go
      go get "$module@$version" >/dev/null 2>&1
      go mod tidy >/dev/null
      go build -trimpath -ldflags "-s -w" -o "$BIN/$name-$version.tmp" "$package"
    )
    mv "$BIN/$name-$version.tmp" "$BIN/$name-$version"
  fi
  ln -sf "$name-$version" "$BIN/$name"
}

prometheus_crds() {
  local out=$CACHE/prometheus-operator/$PROMETHEUS_OPERATOR_VERSION/crds dir
  [ -f "$out/monitoring.coreos.com_servicemonitors.yaml" ] && return
  dir=$(go mod download -json "github.com/prometheus-operator/prometheus-operator@$PROMETHEUS_OPERATOR_VERSION" \
    | sed -n 's/.*"Dir": "\(.*\)".*/\1/p')
  mkdir -p "$out"
  cp "$dir"/example/prometheus-operator-crd/monitoring.coreos.com_*.yaml "$out/"
  chmod u+w "$out"/*.yaml
  echo "go-binaries: Prometheus Operator $PROMETHEUS_OPERATOR_VERSION CRDs in $out"
}

for c in "${components[@]}"; do
  start=$SECONDS
  case "$c" in
    prometheus-crds) prometheus_crds; continue ;;
    helm) build_tool helm helm.sh/helm/v3 "$HELM_VERSION" helm.sh/helm/v3/cmd/helm ;;
    coredns) build_tool coredns github.com/coredns/coredns "$COREDNS_VERSION" github.com/coredns/coredns ;;
    kube-router)
      build_tool kube-router github.com/cloudnativelabs/kube-router/v2 "$KUBE_ROUTER_VERSION" \
        github.com/cloudnativelabs/kube-router/v2/cmd/kube-router ;;
    promtool | prometheus)
      build_tool "$c" github.com/prometheus/prometheus "$PROMETHEUS_VERSION" \
        "github.com/prometheus/prometheus/cmd/$c" ;;
    prometheus-operator)
      build_tool prometheus-operator github.com/prometheus-operator/prometheus-operator \
        "$PROMETHEUS_OPERATOR_VERSION" github.com/prometheus-operator/prometheus-operator/cmd/operator ;;
    prometheus-config-reloader)
      build_tool prometheus-config-reloader github.com/prometheus-operator/prometheus-operator \
        "$PROMETHEUS_OPERATOR_VERSION" \
        github.com/prometheus-operator/prometheus-operator/cmd/prometheus-config-reloader ;;
  esac
  case "$c" in
    helm | promtool | coredns | kube-router | prometheus | prometheus-operator | prometheus-config-reloader)
      [ $((SECONDS - start)) -lt 2 ] || echo "go-binaries: $c built in $((SECONDS - start)) s"
      continue ;;
  esac
  if [ -x "$BIN/$c" ]; then
    continue
  fi
  start=$SECONDS
  echo "go-binaries: building $c ($( [ "$c" = etcd ] && echo "$ETCD_VERSION" || echo "$KUBE_VERSION"))"
  if [ "$c" = etcd ]; then build_etcd; else build_kube "$c"; fi
  echo "go-binaries: $c built in $((SECONDS - start)) s"
done

# kube-api-test starts etcd and kube-apiserver listening on 0.0.0.0; these wrappers keep both on
# loopback, the only address this project's tests may use, and give Services a range that fits a
# benchmark of 50 fleets and cannot be mistaken for a real network.
if [ -x "$BIN/kube-apiserver" ] && [ -x "$BIN/etcd" ] && [ -x "$BIN/kubectl" ]; then
  mkdir -p "$API_TEST_DIR"
  ln -sf "$BIN/kubectl" "$API_TEST_DIR/kubectl"
  cat >"$API_TEST_DIR/etcd" <<WRAP
#!/usr/bin/env bash
args=(); for a in "\$@"; do args+=("\${a//\/\/0.0.0.0:/\/\/127.0.0.1:}"); done
exec "$BIN/etcd" "\${args[@]}"
WRAP
  cat >"$API_TEST_DIR/kube-apiserver" <<WRAP
#!/usr/bin/env bash
args=(); for a in "\$@"; do args+=("\${a//\/\/0.0.0.0:/\/\/127.0.0.1:}"); done
# last wins: Services get ClusterIPs from the benchmarking range (room for thousands), not 10.0.0.0/24
exec "$BIN/kube-apiserver" --bind-address=127.0.0.1 "\${args[@]}" --service-cluster-ip-range=198.18.0.0/16
WRAP
  chmod +x "$API_TEST_DIR/etcd" "$API_TEST_DIR/kube-apiserver"
fi
