# Shared by the scripts in tools/: paths, logging, dependencies, the cached
# control-plane binary. Source it; it defines functions and a few variables.

DRASHIFT_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
DRASHIFT_CACHE=${DRASHIFT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/drashift}
export DRASHIFT_ROOT DRASHIFT_CACHE

say() { printf '%s: %s\n' "${0##*/}" "$*" >&2; }
die() { say "error: $*"; exit 1; }

# Debian packages the build and the tests need. Installed only when missing,
# so a warm machine spends no time here.
DRASHIFT_DEBIAN_PACKAGES=(
	meson ninja-build pkg-config gcc clang libclang-rt-14-dev valgrind
	libuv1-dev libcurl4-openssl-dev libcjson-dev libyaml-dev libssl-dev libcmocka-dev
	openssl curl socat prometheus ca-certificates tzdata binutils jq
	runc containernetworking-plugins
	chromium fonts-dejavu-core tmux
)

ensure_debian_packages() {
	local missing=() pkg
	for pkg in "${DRASHIFT_DEBIAN_PACKAGES[@]}"; do
		dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' ||
			missing+=("$pkg")
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	say "installing Debian packages: ${missing[*]}"
	local sudo=
	[ "$(id -u)" -eq 0 ] || sudo=sudo
	$sudo apt-get update -q >/dev/null || die "apt-get update failed"
	# A line per package fetched and set up: a cold install (chromium) takes minutes.
	local log
	log=$(mktemp)
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}" 2>&1 |
		tee "$log" | while IFS= read -r line; do
			case $line in Get:* | "Setting up "*) say "apt: ${line%% \[*}" ;; esac
		done || true # under pipefail a failed install would end the script here, before its errors are shown
	grep -q '^E:' "$log" && { sed -n 's/^E: //p' "$log" >&2; rm -f "$log"; die "apt-get install ${missing[*]} failed"; }
	rm -f "$log"
}

ensure_go() {
	if ! command -v go >/dev/null 2>&1; then
		[ -x /usr/local/go/bin/go ] && export PATH=/usr/local/go/bin:$PATH
	fi
	command -v go >/dev/null 2>&1 || die "Go is needed to build the control plane in tools/ (expected at /usr/local/go)"
}

# Versions pinned in tools/go.mod (see tools/pin-kubernetes).
kube_version() { awk '$1 == "k8s.io/kubernetes" && $2 ~ /^v/ { print $2; exit }' "$DRASHIFT_ROOT/tools/go.mod"; }
etcd_version() { awk '$1 == "go.etcd.io/etcd/server/v3" && $2 ~ /^v/ { print $2; exit }' "$DRASHIFT_ROOT/tools/go.mod"; }

# go build with progress: a line every 15 s with the packages compiled so far,
# instead of minutes of silence on a cold cache. It builds in the module
# tools/, or in the one GO_MODULE_DIR names.
go_build_with_progress() {
	local what=$1 out=$2; shift 2
	local total start log module=${GO_MODULE_DIR:-$DRASHIFT_ROOT/tools}
	total=$(cd "$module" && go list -deps "$what" 2>/dev/null | wc -l)
	start=$(date +%s)
	log=$(mktemp)
	(cd "$module" && go build -v -trimpath "$@" -o "$out" "$what") >"$log" 2>&1 &
	local pid=$! last=0 now
	while kill -0 "$pid" 2>/dev/null; do
		sleep 1
		now=$(date +%s)
		if [ $((now - last)) -ge 15 ]; then
			last=$now
			say "building $what: $(grep -c . "$log") of about $total packages compiled, $((now - start)) s"
		fi
	done
	if ! wait "$pid"; then
		grep -v '^[a-zA-Z0-9_./-]*$' "$log" >&2 || tail -n 40 "$log" >&2
		rm -f "$log"
		die "go build $what failed"
	fi
	rm -f "$log"
	say "built $what in $(($(date +%s) - start)) s"
}

# cached_go_build BIN PACKAGE NOTE [go build flags...]: print BIN, building
# PACKAGE into it first when it is missing (NOTE, if not empty, is said
# before). A lock beside BIN makes parallel callers wait for one build.
# GO_MODULE_PREPARE, if set, is a command run under that lock before the
# build (it generates the module GO_MODULE_DIR names).
cached_go_build() {
	local bin=$1 what=$2 note=$3 lock
	shift 3
	if [ ! -x "$bin" ]; then
		mkdir -p "$(dirname "$bin")"
		exec {lock}>"$(dirname "$bin").lock"
		flock "$lock"
		if [ ! -x "$bin" ]; then
			ensure_go
			[ -z "$note" ] || say "$note"
			[ -z "${GO_MODULE_PREPARE:-}" ] || $GO_MODULE_PREPARE
			go_build_with_progress "$what" "$bin.tmp" "$@"
			mv "$bin.tmp" "$bin"
		fi
		exec {lock}>&-
	fi
	printf '%s\n' "$bin"
}

# pin_kubernetes DIR 1.MINOR.PATCH: pin the Go module in DIR to one Kubernetes
# release. k8s.io/kubernetes refers to its staging modules (k8s.io/api,
# k8s.io/apiserver, ...) as v0.0.0 with local replace directives, so a consumer
# replaces each one with the published v0.<minor>.<patch> tag. This rewrites
# those replace lines from the one version given, pins etcd to the version
# Kubernetes itself lists, and lets `go mod tidy` settle the rest. Used by
# tools/pin-kubernetes (tools/go.mod) and for the other versions' control
# planes (a module generated in the cache, see kcp_binary).
pin_kubernetes() {
	local dir=$1 version=${2#v} staging proxy upstream_mod etcd
	staging="v0.${version#1.}"
	proxy=$(go env GOPROXY); proxy=${proxy%%,*}
	[ -n "$proxy" ] && [ "$proxy" != direct ] || proxy=https://proxy.golang.org
	upstream_mod=$(curl -fsSL "$proxy/k8s.io/kubernetes/@v/v$version.mod") ||
		die "the Go module proxy serves no k8s.io/kubernetes v$version"
	etcd=$(printf '%s\n' "$upstream_mod" | awk '$1 == "go.etcd.io/etcd/server/v3" { print $2 }')
	[ -n "$etcd" ] || die "k8s.io/kubernetes v$version lists no etcd server version"
	(
		cd "$dir"
		# Drop the previous pin, then add one replace per staging module upstream lists.
		go mod edit -json | python3 -c '
import json, sys
for r in json.load(sys.stdin).get("Replace") or []:
    print(r["Old"]["Path"])' | while read -r path; do go mod edit -dropreplace="$path"; done
		printf '%s\n' "$upstream_mod" | awk '$2 == "=>" && $3 ~ /^\.\/staging/ { print $1 }' |
			while read -r module; do go mod edit -replace="$module=$module@$staging"; done
		go mod edit -require="k8s.io/kubernetes@v$version" -require="go.etcd.io/etcd/server/v3@$etcd"
		say "pinned k8s.io/kubernetes v$version, staging $staging, etcd $etcd in $dir; resolving modules..."
		go mod tidy
	)
}

# The Kubernetes versions the control plane can be built at (tools/testenv up
# DIR --version MINOR): the newest patch release of each minor that the Go
# module proxy serves. The default, pinned in tools/go.mod, is the one real
# nodes' kubelets run; the others are built without the kubelet.
KUBE_RELEASES=(1.34.4 1.35.4 1.36.3 1.37.2)

# kube_release MINOR (1.34): print the release KUBE_RELEASES holds for it.
kube_release() {
	local r
	for r in "${KUBE_RELEASES[@]}"; do
		[ "${r%.*}" != "$1" ] || { printf '%s\n' "$r"; return 0; }
	done
	die "no Kubernetes $1 here (one of: ${KUBE_RELEASES[*]%.*})"
}

# The -ldflags that stamp Kubernetes version KV (v1.37.2) into a build, as
# upstream's release builds do (discovery's /version, kubectl version).
kcp_ldflags() {
	local kv=$1 minor pkg flags="-s -w"
	minor=${kv#v1.}
	minor=${minor%%.*}
	for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
		flags+=" -X $pkg.gitVersion=$kv -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor"
		flags+=" -X $pkg.gitTreeState=clean -X $pkg.buildDate=1970-01-01T00:00:00Z"
	done
	printf '%s\n' "$flags"
}

# kcp_binary [MINOR]: print the path of the control-plane binary, building it
# first if this machine has not built it yet. Without MINOR, or with the
# pinned one, it is built in tools/ at the versions tools/go.mod pins; the
# cache key covers the versions and every input of the build, so a changed
# pin or a changed tools/cmd/kcp rebuilds, and an unchanged one starts in
# milliseconds. Another MINOR is built in a module generated in its cache
# entry (go.mod pinned by pin_kubernetes, the sources of tools/cmd/kcp),
# without the kubelet (build tag nokubelet): only the pinned version runs
# real nodes, and leaving the kubelet out makes the extra build shorter.
kcp_binary() {
	local kv ev key dir release
	kv=$(kube_version) ev=$(etcd_version)
	[ -n "$kv" ] && [ -n "$ev" ] || die "tools/go.mod pins no k8s.io/kubernetes or etcd version"
	if [ -n "${1:-}" ]; then
		release=$(kube_release "$1") || exit 1
		if [ "v$release" != "$kv" ]; then
			kcp_other_binary "$release"
			return
		fi
	fi
	key=$(cat "$DRASHIFT_ROOT/tools/go.mod" "$DRASHIFT_ROOT/tools/go.sum" "$DRASHIFT_ROOT"/tools/cmd/kcp/*.go | sha256sum | cut -c1-12)
	dir="$DRASHIFT_CACHE/kcp/k8s-$kv-etcd-$ev-$key"
	cached_go_build "$dir/kcp" ./cmd/kcp \
		"building the control plane (Kubernetes $kv, etcd $ev) once; later runs reuse $dir" -ldflags="$(kcp_ldflags "$kv")"
}

# kcp_other_binary RELEASE: the control plane at a release other than the pin.
kcp_other_binary() {
	local release=$1 key dir
	key=$( (declare -f pin_kubernetes kcp_module; cat "$DRASHIFT_ROOT"/tools/cmd/kcp/*.go) | sha256sum | cut -c1-12)
	dir="$DRASHIFT_CACHE/kcp/k8s-v$release-$key"
	GO_MODULE_DIR=$dir/module GO_MODULE_PREPARE="kcp_module $release $dir/module" \
		cached_go_build "$dir/kcp" . \
		"building the control plane (Kubernetes v$release, no kubelet) once; later runs reuse $dir" \
		-tags=nokubelet -ldflags="$(kcp_ldflags "v$release")"
}

# kcp_module RELEASE DIR: a Go module in DIR holding tools/cmd/kcp's sources,
# pinned to RELEASE. Generated at build time in the cache, never committed.
kcp_module() {
	local release=$1 dir=$2
	rm -rf "$dir"
	mkdir -p "$dir"
	cp "$DRASHIFT_ROOT"/tools/cmd/kcp/*.go "$dir/"
	(cd "$dir" && go mod init drashift.io/kcp >/dev/null 2>&1)
	pin_kubernetes "$dir" "$release"
}

# go_tool_binary NAME: print the path of tools/cmd/NAME, building it when its
# sources changed (cached under $DRASHIFT_CACHE/NAME/<hash of go.mod, go.sum
# and its .go files>). It shares the module and build caches with the control
# plane, so it builds in seconds once those are warm. A tools/cmd/NAME with a
# go.mod of its own is a module of its own (peeroperator, which needs
# controller-runtime: in tools/go.mod it would change the control plane's
# cache key and rebuild it).
go_tool_binary() {
	local name=$1 dir=$DRASHIFT_ROOT/tools/cmd/$1 key
	if [ -f "$dir/go.mod" ]; then
		key=$(cat "$dir/go.mod" "$dir/go.sum" "$dir"/*.go | sha256sum | cut -c1-12)
		GO_MODULE_DIR=$dir cached_go_build "$DRASHIFT_CACHE/$name/$key/$name" . ""
		return
	fi
	key=$(cat "$DRASHIFT_ROOT/tools/go.mod" "$DRASHIFT_ROOT/tools/go.sum" "$dir"/*.go | sha256sum | cut -c1-12)
	cached_go_build "$DRASHIFT_CACHE/$name/$key/$name" "./cmd/$name" ""
}

# go_tool_image NAME REFERENCE USER: tools/cmd/NAME, built static, as the
# single file /NAME of an image; prints the OCI archive's path (built once
# per source, next to the binary).
go_tool_image() {
	local name=$1 ref=$2 user=$3 bin ociimage out
	# One assignment each: in one command the second's status would hide a failed build.
	bin=$(CGO_ENABLED=0 go_tool_binary "$name") || return 1
	ociimage=$(go_tool_binary ociimage) || return 1
	out=$(dirname "$bin")/$name.oci.tar
	if [ ! -s "$out" ]; then
		"$ociimage" --out "$out.$$" --name "$ref" --entrypoint "/$name" --user "$user" --file "$bin:/$name" >/dev/null
		mv "$out.$$" "$out"
	fi
	printf '%s\n' "$out"
}

# helm_binary: print the path of helm, built from helm.sh/helm/v4 at the
# version tools/helm/go.mod pins, building it first if needed (cached under
# $DRASHIFT_CACHE/helm/<version>-<hash of tools/helm/go.mod and go.sum>).
# helm is a module of its own because it needs other Kubernetes library
# versions than the control plane; that keeps tools/go.mod, and so the
# control plane's cache key, out of it.
helm_binary() {
	local module=$DRASHIFT_ROOT/tools/helm version key dir
	version=$(awk '$1 == "helm.sh/helm/v4" { print $2; exit }' "$module/go.mod")
	[ -n "$version" ] || die "tools/helm/go.mod pins no helm.sh/helm/v4 version"
	key=$(cat "$module/go.mod" "$module/go.sum" | sha256sum | cut -c1-12)
	dir="$DRASHIFT_CACHE/helm/$version-$key"
	GO_MODULE_DIR=$module CGO_ENABLED=0 cached_go_build "$dir/helm" helm.sh/helm/v4/cmd/helm \
		"building helm $version once; later runs reuse $dir" \
		-ldflags="-s -w -X helm.sh/helm/v4/internal/version.version=$version -X helm.sh/helm/v4/internal/version.metadata="
}

# containerd_binary [COMMAND]: print the path of containerd 2.x's COMMAND
# (containerd, or containerd-shim-runc-v2), built from
# github.com/containerd/containerd/v2 at the version tools/containerd/go.mod
# pins (cached under $DRASHIFT_CACHE/containerd/<version>-<hash of go.mod and
# go.sum>). Real nodes run it rather than Debian's containerd 1.6, which has
# no CDI support. Built without cgo, so without the btrfs snapshotter; a
# module of its own, as helm is, so its library versions stay out of
# tools/go.mod.
containerd_binary() {
	local command=${1:-containerd} module=$DRASHIFT_ROOT/tools/containerd version key dir pkg=github.com/containerd/containerd/v2
	version=$(awk -v m=$pkg '$1 == m { print $2; exit }' "$module/go.mod")
	[ -n "$version" ] || die "tools/containerd/go.mod pins no $pkg version"
	key=$(cat "$module/go.mod" "$module/go.sum" | sha256sum | cut -c1-12)
	dir="$DRASHIFT_CACHE/containerd/$version-$key"
	GO_MODULE_DIR=$module CGO_ENABLED=0 cached_go_build "$dir/$command" "$pkg/cmd/$command" \
		"building $command $version once; later runs reuse $dir" \
		-ldflags="-s -w -X $pkg/version.Version=$version -X $pkg/version.Revision="
}

# The fleet simulator (tools/cmd/fleetsim).
fleetsim_binary() { go_tool_binary fleetsim; }

# crd_wait_established KUBECTL...: wait up to 60 s until the MigrationPlan CRD
# is Established. `kubectl wait` fails at once while the new CRD has no
# conditions yet, so it is tried again rather than trusted once.
crd_wait_established() {
	local deadline=$((SECONDS + 60))
	until "$@" wait --for=condition=Established --timeout=5s crd/migrationplans.drashift.io >/dev/null 2>&1; do
		[ $SECONDS -lt $deadline ] || die "the MigrationPlan CRD was not Established within 60 s"
		sleep 0.5
	done
}
