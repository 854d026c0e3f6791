// Package image tests make image as a user runs it: the archive it writes is an OCI image layout
// whose binary runs and reports the project's version.
package image

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	imgspec "github.com/opencontainers/image-spec/specs-go/v1"
)

// TestImageRunsItsVersion builds the image for this machine's platform with make image, unpacks
// the archive (index, manifest, config, layer) and runs the binary from the layer with --version.
func TestImageRunsItsVersion(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	platform := "linux/" + runtime.GOARCH
	make := exec.Command("make", "-C", root, "image", "IMAGE_PLATFORMS="+platform, "IMAGE_OUT="+out, "IMAGE=queue-scheduler:test")
	if output, err := make.CombinedOutput(); err != nil {
		t.Fatalf("make image: %v\n%s", err, output)
	}
	files := readArchive(t, filepath.Join(out, "queue-scheduler.oci.tar"))

	var layout imgspec.ImageLayout
	unmarshal(t, files, "oci-layout", &layout)
	if layout.Version != imgspec.ImageLayoutVersion {
		t.Errorf("oci-layout version %q", layout.Version)
	}
	var index, inner imgspec.Index
	unmarshal(t, files, "index.json", &index)
	if len(index.Manifests) != 1 || index.Manifests[0].Annotations[imgspec.AnnotationRefName] != "queue-scheduler:test" {
		t.Fatalf("index.json: %+v, want one entry named queue-scheduler:test", index.Manifests)
	}
	unmarshal(t, files, blob(index.Manifests[0]), &inner)
	if len(inner.Manifests) != 1 || inner.Manifests[0].Platform == nil ||
		inner.Manifests[0].Platform.OS+"/"+inner.Manifests[0].Platform.Architecture != platform {
		t.Fatalf("image index: %+v, want one manifest for %s", inner.Manifests, platform)
	}
	var manifest imgspec.Manifest
	unmarshal(t, files, blob(inner.Manifests[0]), &manifest)
	var config imgspec.Image
	unmarshal(t, files, blob(manifest.Config), &config)
	if config.Config.User != "65532:65532" || strings.Join(config.Config.Entrypoint, " ") != "/queue-scheduler" {
		t.Errorf("config: user %q, entrypoint %v; want a non-root user and /queue-scheduler", config.Config.User, config.Config.Entrypoint)
	}
	if len(manifest.Layers) != 1 {
		t.Fatalf("%d layers, want the binary's alone", len(manifest.Layers))
	}
	if manifest.Layers[0].MediaType != imgspec.MediaTypeImageLayerGzip {
		t.Fatalf("layer media type %q", manifest.Layers[0].MediaType)
	}
	compressed, err := gzip.NewReader(bytes.NewReader(files[blob(manifest.Layers[0])]))
	if err != nil {
		t.Fatal(err)
	}
	layer := readTar(t, compressed)
	binary := filepath.Join(t.TempDir(), "queue-scheduler")
	if err := os.WriteFile(binary, layer["queue-scheduler"], 0o755); err != nil {
		t.Fatal(err)
	}
	output, err := exec.Command(binary, "--version").CombinedOutput()
	if err != nil {
		t.Fatalf("queue-scheduler --version: %v\n%s", err, output)
	}
	version, err := os.ReadFile(filepath.Join(root, "VERSION"))
	if err != nil {
		t.Fatal(err)
	}
	want := "queue-scheduler " + strings.TrimSpace(string(version)) + " (commit "
	if !strings.HasPrefix(string(output), want) {
		t.Errorf("--version printed %q, want it to start with %q", output, want)
	}
	if config.Config.Labels["org.opencontainers.image.version"] != strings.TrimSpace(string(version)) {
		t.Errorf("image version label %q", config.Config.Labels["org.opencontainers.image.version"])
	}
}

// blob is where an OCI layout keeps the content a descriptor names.
func blob(d imgspec.Descriptor) string {
	return filepath.Join("blobs", d.Digest.Algorithm().String(), d.Digest.Encoded())
}

func readArchive(t *testing.T, path string) map[string][]byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	return readTar(t, f)
}

// readTar returns the regular files of a tar by name.
func readTar(t *testing.T, r io.Reader) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	tr := tar.NewReader(r)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return files
		}
		if err != nil {
			t.Fatal(err)
		}
		if hdr.Typeflag != tar.TypeReg {
			continue
		}
		content, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		files[hdr.Name] = content
	}
}

func unmarshal(t *testing.T, files map[string][]byte, name string, into any) {
	t.Helper()
	raw, ok := files[name]
	if !ok {
		t.Fatalf("no %s in the archive; it holds %v", name, keys(files))
	}
	if err := json.Unmarshal(raw, into); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

func keys(m map[string][]byte) string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return fmt.Sprint(out)
}
