#!/usr/bin/env bash
# tools/image builds a reproducible image that runs: two builds from the same
# binary give the same bytes and digest; the config runs as 65532 and carries
# the version label; the layer alone (no host libraries) runs the controller
# as user 65532.
source "$(dirname "$0")/../lib.sh"
: "${DRASHIFT_CONTROLLER:?DRASHIFT_CONTROLLER names the built drashift-controller}"
TEST_DIR=$(mktemp -d "${TMPDIR:-/tmp}/drashift-$TEST_NAME.XXXXXX")
trap 'rm -rf "$TEST_DIR"' EXIT

version=$(awk -F"'" '/^ *version *:/ { print $2; exit }' "$DRASHIFT_ROOT/meson.build")
first=$("$DRASHIFT_ROOT/tools/image" "$TEST_DIR/a.tar")
second=$("$DRASHIFT_ROOT/tools/image" "$TEST_DIR/b.tar")
log "first build: $first; second build: $second; archive $(stat -c %s "$TEST_DIR/a.tar") bytes"
expect_eq "$second" "$first" "reference and digest of a second build from the same inputs"
cmp -s "$TEST_DIR/a.tar" "$TEST_DIR/b.tar" || fail "two builds from the same inputs differ in their bytes"
expect_eq "${first% *}" "docker.io/drashift/controller:$version" "image reference"

mkdir "$TEST_DIR/oci" "$TEST_DIR/rootfs"
tar -xf "$TEST_DIR/a.tar" -C "$TEST_DIR/oci"
blob() { printf '%s/oci/blobs/sha256/%s' "$TEST_DIR" "${1#sha256:}"; }
manifest=$(jq -r '.manifests[0].digest' "$TEST_DIR/oci/index.json")
expect_eq "$manifest" "${first#* }" "manifest digest in index.json"
expect_eq "$(sha256sum <"$(blob "$manifest")" | cut -d' ' -f1)" "${manifest#sha256:}" "manifest blob's own digest"
config=$(blob "$(jq -r '.config.digest' "$(blob "$manifest")")")
layer=$(blob "$(jq -r '.layers[0].digest' "$(blob "$manifest")")")
expect_eq "$(jq -r '.config.User' "$config")" 65532:65532 "user the image runs as"
expect_eq "$(jq -r '.config.Labels["org.opencontainers.image.version"]' "$config")" "$version" "version label"
expect_eq "sha256:$(gzip -dc "$layer" | sha256sum | cut -d' ' -f1)" "$(jq -r '.rootfs.diff_ids[0]' "$config")" "layer diff_id"
expect_eq "$(gzip -dc "$layer" | tar -tv | awk '$4 != "1970-01-01" || $2 != "0/0"' | head -n 3)" "" "layer entries not owned by 0/0 at time 0"

tar -xzf "$layer" -C "$TEST_DIR/rootfs"
grep -qx 'nonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin' "$TEST_DIR/rootfs/etc/passwd" || fail "no user 65532 in /etc/passwd"
[ -s "$TEST_DIR/rootfs/etc/ssl/certs/ca-certificates.crt" ] || fail "no CA bundle in the image"
# Maintenance windows look their zones up there: real files and tzdata's aliases alike.
for zone in Europe/Berlin America/New_York UTC US/Eastern; do
	expect_eq "$(head -c 4 "$TEST_DIR/rootfs/usr/share/zoneinfo/$zone" 2>/dev/null)" TZif "time zone $zone in the image"
done
# The image's own files, nothing of the host: a missing library fails here.
root=()
[ "$(id -u)" -eq 0 ] || root=(unshare --map-root-user)
out=$("${root[@]}" chroot --userspec=65532:65532 "$TEST_DIR/rootfs" /usr/local/bin/drashift-controller --version 2>&1) ||
	fail "the controller does not run from the image's files alone: $out"
expect_eq "$out" "drashift-controller $version" "--version inside the image"
log "image $first: $(stat -c %s "$layer") bytes compressed, $(gzip -dc "$layer" | wc -c) uncompressed"
# The shipped manifests run this image.
expect_eq "$(awk '$1 == "newTag:" { print $2 }' "$DRASHIFT_ROOT/manifests/kustomization.yaml")" "$version" "the kustomization's image tag"
