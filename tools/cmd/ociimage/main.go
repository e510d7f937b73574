// Command ociimage writes a single-layer OCI image from files on this machine,
// with no base image and no daemon, as an OCI image layout in a tar archive
// (an "oci-archive") that `ctr images import` and `skopeo copy oci-archive:`
// read.
//
// tools/image uses it, rather than buildah or umoci, because the image must
// be reproducible: the same input files give the same bytes, hence the same
// digest. Every tar entry here is written with mtime 0, owner 0:0, no user or
// group names and a normalised mode, in sorted order; the config carries no
// creation time and no history; gzip carries no name or time. buildah stamps
// creation times and history (it has --timestamp, but runs as a container
// engine with its own storage, which this machine's tests do not need), and
// umoci unpacks and repacks a base layout with its own metadata. Both would
// be another moving part for what is about 300 lines of the standard library.
//
//	ociimage --out FILE.tar --name REF [--label K=V]... [--env K=V]...
//	         [--user UID:GID] --entrypoint PATH [--arg A]...
//	         [--file SRC:DEST]... [--dir DEST:MODE]... [--symlink DEST:TARGET]...
//
// --file copies SRC (following symlinks) to DEST; a file executable by its
// owner gets mode 0755, any other 0644. Parent directories are created with
// 0755. It prints the manifest digest and the archive size.
package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"
)

type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

// entry is one file system object of the layer.
type entry struct {
	typ    byte
	mode   int64
	src    string // regular files: where the bytes come from
	target string // symlinks
}

type descriptor struct {
	MediaType   string            `json:"mediaType"`
	Digest      string            `json:"digest"`
	Size        int64             `json:"size"`
	Annotations map[string]string `json:"annotations,omitempty"`
	Platform    *platform         `json:"platform,omitempty"`
}

type platform struct {
	Architecture string `json:"architecture"`
	OS           string `json:"os"`
}

var epoch = time.Unix(0, 0)

func die(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "ociimage: "+format+"\n", args...)
	os.Exit(1)
}

func split2(v, what string) (string, string) {
	a, b, ok := strings.Cut(v, ":")
	if !ok || a == "" || b == "" {
		die("%s %q: want A:B", what, v)
	}
	return a, b
}

func clean(dest string) string {
	if !strings.HasPrefix(dest, "/") {
		die("path %q in the image must be absolute", dest)
	}
	return strings.TrimPrefix(path.Clean(dest), "/")
}

// addParents records every missing parent directory of name with mode 0755.
func addParents(entries map[string]entry, name string) {
	for dir := path.Dir(name); dir != "." && dir != "/"; dir = path.Dir(dir) {
		if _, ok := entries[dir]; !ok {
			entries[dir] = entry{typ: tar.TypeDir, mode: 0o755}
		}
	}
}

func collect(files, dirs, symlinks []string) map[string]entry {
	entries := map[string]entry{}
	put := func(name string, e entry) {
		if old, ok := entries[name]; ok && old != e {
			die("/%s is given twice, differently", name)
		}
		entries[name] = e
		addParents(entries, name)
	}
	for _, f := range files {
		src, dest := split2(f, "--file")
		st, err := os.Stat(src)
		if err != nil {
			die("%v", err)
		}
		if !st.Mode().IsRegular() {
			die("--file %s is not a regular file", src)
		}
		mode := int64(0o644)
		if st.Mode().Perm()&0o100 != 0 {
			mode = 0o755
		}
		put(clean(dest), entry{typ: tar.TypeReg, mode: mode, src: src})
	}
	for _, d := range dirs {
		dest, m := split2(d, "--dir")
		mode, err := strconv.ParseInt(m, 8, 32)
		if err != nil || mode < 0 || mode > 0o7777 {
			die("--dir %q: mode must be octal", d)
		}
		put(clean(dest), entry{typ: tar.TypeDir, mode: mode})
	}
	for _, s := range symlinks {
		dest, target := split2(s, "--symlink")
		put(clean(dest), entry{typ: tar.TypeSymlink, mode: 0o777, target: target})
	}
	return entries
}

// layer writes the entries as a tar in name order; parents sort before their
// children because "a" < "a/b".
func layer(entries map[string]entry) []byte {
	names := make([]string, 0, len(entries))
	for name := range entries {
		names = append(names, name)
	}
	sort.Strings(names)
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, name := range names {
		e := entries[name]
		hdr := &tar.Header{Typeflag: e.typ, Name: name, Mode: e.mode, ModTime: epoch, Format: tar.FormatPAX}
		var data []byte
		switch e.typ {
		case tar.TypeDir:
			hdr.Name += "/"
		case tar.TypeSymlink:
			hdr.Linkname = e.target
		case tar.TypeReg:
			var err error
			if data, err = os.ReadFile(e.src); err != nil {
				die("%v", err)
			}
			hdr.Size = int64(len(data))
		}
		if err := tw.WriteHeader(hdr); err != nil {
			die("tar: %v", err)
		}
		if _, err := tw.Write(data); err != nil {
			die("tar: %v", err)
		}
	}
	if err := tw.Close(); err != nil {
		die("tar: %v", err)
	}
	return buf.Bytes()
}

func gzipped(data []byte) []byte {
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		die("gzip: %v", err)
	}
	if _, err := zw.Write(data); err != nil {
		die("gzip: %v", err)
	}
	if err := zw.Close(); err != nil {
		die("gzip: %v", err)
	}
	return buf.Bytes()
}

func digest(data []byte) string { return fmt.Sprintf("sha256:%x", sha256.Sum256(data)) }

func mustJSON(v any) []byte {
	data, err := json.Marshal(v)
	if err != nil {
		die("json: %v", err)
	}
	return data
}

func keyValues(list []string, what string) map[string]string {
	m := map[string]string{}
	for _, kv := range list {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			die("%s %q: want KEY=VALUE", what, kv)
		}
		m[k] = v
	}
	return m
}

func main() {
	var files, dirs, symlinks, labels, env, args listFlag
	out := flag.String("out", "", "the oci-archive to write")
	name := flag.String("name", "", "the image reference, e.g. docker.io/drashift/controller:0.1.0")
	user := flag.String("user", "", "UID:GID the container runs as")
	entrypoint := flag.String("entrypoint", "", "the program the container runs")
	flag.Var(&files, "file", "SRC:DEST, a regular file")
	flag.Var(&dirs, "dir", "DEST:MODE, a directory with an octal mode")
	flag.Var(&symlinks, "symlink", "DEST:TARGET")
	flag.Var(&labels, "label", "KEY=VALUE, an image label")
	flag.Var(&env, "env", "KEY=VALUE, an environment variable")
	flag.Var(&args, "arg", "an argument after the entrypoint")
	flag.Parse()
	if *out == "" || *name == "" || *entrypoint == "" || flag.NArg() != 0 {
		flag.Usage()
		os.Exit(2)
	}
	_, tag, ok := strings.Cut(path.Base(*name), ":")
	if !ok || tag == "" {
		die("--name %q has no tag", *name)
	}

	tarLayer := layer(collect(files, dirs, symlinks))
	gzLayer := gzipped(tarLayer)
	envList := append([]string(nil), env...)
	sort.Strings(envList)
	config := mustJSON(map[string]any{
		"architecture": "amd64",
		"os":           "linux",
		"config": map[string]any{
			"User":       *user,
			"Env":        envList,
			"Entrypoint": []string{*entrypoint},
			"Cmd":        []string(args),
			"WorkingDir": "/",
			"Labels":     keyValues(labels, "--label"),
		},
		"rootfs": map[string]any{"type": "layers", "diff_ids": []string{digest(tarLayer)}},
	})
	manifest := mustJSON(map[string]any{
		"schemaVersion": 2,
		"mediaType":     "application/vnd.oci.image.manifest.v1+json",
		"config":        descriptor{MediaType: "application/vnd.oci.image.config.v1+json", Digest: digest(config), Size: int64(len(config))},
		"layers":        []descriptor{{MediaType: "application/vnd.oci.image.layer.v1.tar+gzip", Digest: digest(gzLayer), Size: int64(len(gzLayer))}},
	})
	index := mustJSON(map[string]any{
		"schemaVersion": 2,
		"mediaType":     "application/vnd.oci.image.index.v1+json",
		"manifests": []descriptor{{
			MediaType: "application/vnd.oci.image.manifest.v1+json",
			Digest:    digest(manifest), Size: int64(len(manifest)),
			Platform: &platform{Architecture: "amd64", OS: "linux"},
			// containerd names the imported image by the first; the OCI
			// spec's ref name is the tag.
			Annotations: map[string]string{
				"io.containerd.image.name":        *name,
				"org.opencontainers.image.ref.name": tag,
			},
		}},
	})

	archive := map[string][]byte{
		"oci-layout": []byte(`{"imageLayoutVersion":"1.0.0"}`),
		"index.json": index,
	}
	for _, blob := range [][]byte{config, manifest, gzLayer} {
		archive["blobs/sha256/"+strings.TrimPrefix(digest(blob), "sha256:")] = blob
	}
	names := make([]string, 0, len(archive))
	for n := range archive {
		names = append(names, n)
	}
	sort.Strings(names)
	f, err := os.Create(*out + ".tmp")
	if err != nil {
		die("%v", err)
	}
	tw := tar.NewWriter(f)
	for _, dir := range []string{"blobs/", "blobs/sha256/"} {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: dir, Mode: 0o755, ModTime: epoch, Format: tar.FormatPAX}); err != nil {
			die("tar: %v", err)
		}
	}
	for _, n := range names {
		data := archive[n]
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: n, Mode: 0o644, Size: int64(len(data)), ModTime: epoch, Format: tar.FormatPAX}); err != nil {
			die("tar: %v", err)
		}
		if _, err := io.Copy(tw, bytes.NewReader(data)); err != nil {
			die("tar: %v", err)
		}
	}
	if err := tw.Close(); err != nil {
		die("tar: %v", err)
	}
	if err := f.Close(); err != nil {
		die("%v", err)
	}
	if err := os.Rename(*out+".tmp", *out); err != nil {
		die("%v", err)
	}
	fmt.Printf("%s %s compressed=%d uncompressed=%d\n", *name, digest(manifest), len(gzLayer), len(tarLayer))
}
