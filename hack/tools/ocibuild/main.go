// Command ocibuild writes an OCI image archive of a static binary without a container engine: one
// layer holding the binary at /<name>, no base image, a non-root user, one manifest per platform under
// one index. The archive is a tar of an OCI image layout, as `podman load`, `skopeo copy oci-archive:`
// and `crane push` read it.
//
//	ocibuild --name queue-scheduler --version v0.1.0 --out image.oci.tar \
//	    --binary linux/amd64=out/linux_amd64/queue-scheduler --binary linux/arm64=...
package main

import (
	"archive/tar"
	"bytes"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// nonRoot is the user and group the image runs as: distroless's "nonroot".
const nonRoot = "65532:65532"

type binaries map[string]string // platform (os/arch) → path

func (b binaries) String() string { return fmt.Sprint(map[string]string(b)) }

func (b binaries) Set(s string) error {
	platform, path, ok := strings.Cut(s, "=")
	if !ok || strings.Count(platform, "/") != 1 || path == "" {
		return fmt.Errorf("--binary %q: want os/arch=path", s)
	}
	b[platform] = path
	return nil
}

func main() {
	bins := binaries{}
	name := flag.String("name", "", "the binary's name in the image, its entrypoint /<name>")
	version := flag.String("version", "", "the image's version label")
	source := flag.String("source", "", "the image's source label (a repository URL)")
	ref := flag.String("ref", "", "the reference name recorded in the layout's index (e.g. queue-scheduler:v0.1.0)")
	out := flag.String("out", "", "the OCI archive to write")
	flag.Var(bins, "binary", "os/arch=path of a static binary; repeat per platform")
	flag.Parse()
	if *name == "" || *out == "" || len(bins) == 0 {
		fmt.Fprintln(os.Stderr, "ocibuild: --name, --out and at least one --binary are required")
		os.Exit(2)
	}
	if err := build(*name, *version, *source, *ref, *out, bins); err != nil {
		fmt.Fprintf(os.Stderr, "ocibuild: %v\n", err)
		os.Exit(1)
	}
}

func build(name, version, source, ref, out string, bins binaries) error {
	index := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	for platform, path := range bins {
		img, err := image(name, version, source, platform, path)
		if err != nil {
			return fmt.Errorf("%s: %w", platform, err)
		}
		goos, arch, _ := strings.Cut(platform, "/")
		index = mutate.AppendManifests(index, mutate.IndexAddendum{
			Add: img, Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: goos, Architecture: arch}},
		})
	}
	dir, err := os.MkdirTemp("", "ocibuild-")
	if err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(dir) }()
	var annotations map[string]string
	if ref != "" {
		annotations = map[string]string{"org.opencontainers.image.ref.name": ref}
	}
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return err
	}
	if err := p.AppendIndex(index, layout.WithAnnotations(annotations)); err != nil {
		return err
	}
	return tarDir(dir, out)
}

// image is one platform's image: the binary alone, run as a non-root user.
func image(name, version, source, platform, path string) (v1.Image, error) {
	binary, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerTar(name, binary))), nil
	}, tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, err
	}
	img := mutate.MediaType(mutate.ConfigMediaType(empty.Image, types.OCIConfigJSON), types.OCIManifestSchema1)
	if img, err = mutate.AppendLayers(img, layer); err != nil {
		return nil, err
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cfg = cfg.DeepCopy()
	cfg.OS, cfg.Architecture, _ = strings.Cut(platform, "/")
	cfg.Config.Entrypoint = []string{"/" + name}
	cfg.Config.User = nonRoot
	cfg.Config.Labels = map[string]string{
		"org.opencontainers.image.title":    name,
		"org.opencontainers.image.version":  version,
		"org.opencontainers.image.source":   source,
		"org.opencontainers.image.licenses": "Apache-2.0",
	}
	return mutate.ConfigFile(img, cfg)
}

// layerTar is a tar holding the binary at /name, executable by anyone, owned by root: the non-root
// user runs it but cannot change it. Times are zero, so that the same binary gives the same layer.
func layerTar(name string, binary []byte) []byte {
	var buf bytes.Buffer
	w := tar.NewWriter(&buf)
	_ = w.WriteHeader(&tar.Header{Name: name, Mode: 0o755, Size: int64(len(binary)), Typeflag: tar.TypeReg, ModTime: time.Unix(0, 0)})
	_, _ = w.Write(binary)
	_ = w.Close()
	return buf.Bytes()
}

// tarDir writes the files under dir into the tar archive out, with paths relative to dir.
func tarDir(dir, out string) error {
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	w := tar.NewWriter(f)
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || path == dir {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		hdr, err := tar.FileInfoHeader(info, "")
		if err != nil {
			return err
		}
		// Owned by root, readable by all, dated at zero: the same content gives the same archive.
		hdr.Name, hdr.ModTime, hdr.Uid, hdr.Gid, hdr.Uname, hdr.Gname = filepath.ToSlash(rel), time.Unix(0, 0), 0, 0, "", ""
		hdr.Mode = 0o644
		if d.IsDir() {
			hdr.Mode = 0o755
		}
		if err := w.WriteHeader(hdr); err != nil || d.IsDir() {
			return err
		}
		content, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		_, err = w.Write(content)
		return err
	})
	if err == nil {
		err = w.Close()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
