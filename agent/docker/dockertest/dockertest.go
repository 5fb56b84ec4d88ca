// Package dockertest builds what Docker tests need on a machine that
// cannot pull images: static Go binaries, and images FROM scratch with
// Debian's static busybox. Everything is labelled with a per-test
// instance and removed at cleanup.
package dockertest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/helixml/helix-org/agent/docker"
	"github.com/helixml/helix-org/domain"
)

// BusyboxPath is where Debian's busybox-static installs its binary.
const BusyboxPath = "/bin/busybox"

// NewEngine connects to the real daemon under a fresh instance label.
// Pair it with Remove; tests use Engine, which does both.
func NewEngine() (*docker.Engine, error) {
	eng, err := docker.NewEngine("t"+domain.RandomSlug(10), nil)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := eng.Ping(ctx); err != nil {
		return nil, fmt.Errorf("these tests need the Docker Engine: %w", err)
	}
	return eng, nil
}

// Remove deletes every container, image and network of eng's instance.
func Remove(eng *docker.Engine) error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	defer eng.Close()
	return eng.RemoveAll(ctx)
}

// Engine is NewEngine with Remove at cleanup.
func Engine(t testing.TB) *docker.Engine {
	t.Helper()
	eng, err := NewEngine()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := Remove(eng); err != nil {
			t.Errorf("clean up docker objects: %v", err)
		}
	})
	return eng
}

// StaticBinary builds a main package into the test's temp dir; see BuildStatic.
func StaticBinary(t testing.TB, pkg string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), filepath.Base(pkg))
	if err := BuildStatic(pkg, out); err != nil {
		t.Fatal(err)
	}
	return out
}

// BuildStatic builds a main package (./relative to the module root) with
// CGO_ENABLED=0, so it runs in an image FROM scratch.
func BuildStatic(pkg, out string) error {
	root, err := moduleRoot()
	if err != nil {
		return err
	}
	// No -trimpath: it is in every package's build-cache key, std's too, so
	// it would compile the whole tree once more instead of reusing what the
	// suite's other non-race builds left in the cache (all but cgo's few).
	cmd := exec.Command(goTool(), "build", "-o", out, pkg)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=-buildvcs=false")
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s: %w\n%s", pkg, err, b)
	}
	return nil
}

func goTool() string {
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	return "/usr/local/go/bin/go" // where CI installs it (.ci/run)
}

func moduleRoot() (string, error) {
	out, err := exec.Command(goTool(), "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	return filepath.Dir(strings.TrimSpace(string(out))), nil
}

// Image is BuildImage failing the test on error.
func Image(t testing.TB, eng *docker.Engine, files map[string]string) string {
	t.Helper()
	tag, err := BuildImage(eng, files)
	if err != nil {
		t.Fatal(err)
	}
	return tag
}

// BuildImage builds an image FROM scratch with busybox's applets in /bin
// and the given extra files (path in the image → host path), labelled for
// eng so Remove deletes it.
func BuildImage(eng *docker.Engine, files map[string]string) (string, error) {
	bb, err := os.ReadFile(BusyboxPath)
	if err != nil {
		return "", fmt.Errorf("these tests need Debian's busybox-static (apt-get install busybox-static): %w", err)
	}
	// The instance label first keeps this build's layers out of other test
	// instances' build cache: their clean-up could otherwise delete a
	// cached parent while this build stands on it.
	dockerfile := fmt.Sprintf("FROM scratch\nLABEL helix-org.instance=%q\nCOPY busybox /bin/busybox\nRUN [\"/bin/busybox\", \"--install\", \"-s\", \"/bin\"]\n", eng.Instance())
	ctxFiles := []docker.File{{Name: "busybox", Mode: 0o755, Data: bb}}
	i := 0
	for dst, src := range files {
		data, err := os.ReadFile(src)
		if err != nil {
			return "", err
		}
		name := fmt.Sprintf("f%d", i)
		i++
		ctxFiles = append(ctxFiles, docker.File{Name: name, Mode: 0o755, Data: data})
		dockerfile += fmt.Sprintf("COPY %s %s\n", name, dst)
	}
	ctxFiles = append(ctxFiles, docker.File{Name: "Dockerfile", Data: []byte(dockerfile)})
	tag := eng.Name("test") + ":" + domain.RandomSlug(6)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if _, log, err := eng.Build(ctx, ctxFiles, docker.BuildOptions{Tag: tag, Labels: eng.Labels("test")}); err != nil {
		return "", fmt.Errorf("build test image: %w\n%s", err, log)
	}
	return tag, nil
}
