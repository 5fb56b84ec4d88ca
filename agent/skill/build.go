package skill

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/client"

	"github.com/helixml/helix-org/agent/docker"
	"github.com/helixml/helix-org/domain"
)

// baseDockerfile is the shell template's base: busybox with its applets
// and the shim on an empty image. It has as few steps as it can, because
// the classic builder runs a container for each; the port, handler and
// user are the shim's defaults and the factory's container settings.
const baseDockerfile = `FROM scratch
COPY bin /bin
ENTRYPOINT ["/bin/skill-shim"]
`

// ShimName is the shim's file name beside the helix-org binary or on PATH.
const ShimName = "helix-org-skill-shim"

// base returns this instance's base image, building it the first time
// from the configured shim and busybox. Its tag carries a hash of both,
// so a new shim gets a new base.
func (f *Factory) base(ctx context.Context) (string, error) {
	f.baseMu.Lock()
	defer f.baseMu.Unlock()
	shimPath, err := f.shimPath(ctx)
	if err != nil {
		return "", err
	}
	shim, err := os.ReadFile(shimPath)
	if err != nil {
		return "", fmt.Errorf("read skill shim: %w", err)
	}
	bbPath := f.setting(ctx, BusyboxSetting)
	bb, err := os.ReadFile(bbPath)
	if err != nil {
		return "", fmt.Errorf("the shell template needs a static busybox (apt-get install busybox-static, or set %s): %w", BusyboxSetting.Key, err)
	}
	sum := sha256.New()
	sum.Write(shim)
	sum.Write(bb)
	tag := f.eng.Name("skill-base") + ":" + hex.EncodeToString(sum.Sum(nil))[:12]
	if _, err := f.eng.Client().ImageInspect(ctx, tag); err == nil {
		return tag, nil
	}
	applets, err := exec.CommandContext(ctx, bbPath, "--list").Output()
	if err != nil {
		return "", fmt.Errorf("list busybox applets: %w", err)
	}
	files := []docker.File{{Name: "Dockerfile", Data: []byte(baseDockerfile)},
		{Name: "bin/busybox", Mode: 0o755, Data: bb}, {Name: "bin/skill-shim", Mode: 0o755, Data: shim}}
	for _, a := range strings.Fields(string(applets)) {
		if a != "busybox" && a != "skill-shim" && !strings.Contains(a, "/") {
			files = append(files, docker.File{Name: "bin/" + a, Link: "busybox"})
		}
	}
	if _, _, err := f.eng.Build(ctx, files, docker.BuildOptions{Tag: tag, Labels: f.eng.Labels("skill-base")}); err != nil {
		return "", fmt.Errorf("build skill base image: %w", err)
	}
	return tag, nil
}

func (f *Factory) shimPath(ctx context.Context) (string, error) {
	if p := f.setting(ctx, ShimSetting); p != "" {
		return p, nil
	}
	if exe, err := os.Executable(); err == nil {
		if p := filepath.Join(filepath.Dir(exe), ShimName); fileExists(p) {
			return p, nil
		}
	}
	if p, err := exec.LookPath(ShimName); err == nil {
		return p, nil
	}
	return "", fmt.Errorf("the skill shim is not installed: build it with `CGO_ENABLED=0 go build -o %s ./agent/skill/shim` (make build does) "+
		"and put it beside helix-org, or set %s", ShimName, ShimSetting.Key)
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// buildImage builds one version of a skill from its validated context.
// Every base image must already be in the daemon: a build never pulls.
func (f *Factory) buildImage(ctx context.Context, name string, version int, files []docker.File) (string, error) {
	df := slices.IndexFunc(files, func(f docker.File) bool { return f.Name == "Dockerfile" })
	rewritten, images, alias := baseImages(string(files[df].Data), "")
	if alias {
		base, err := f.base(ctx)
		if err != nil {
			return "", err
		}
		rewritten, images, _ = baseImages(string(files[df].Data), base)
	}
	files[df].Data = []byte(rewritten)
	for _, im := range images {
		if _, err := f.eng.Client().ImageInspect(ctx, im); client.IsErrNotFound(err) {
			return "", domain.Invalid("files", "base image %q is not in the Docker daemon, and skill builds never pull: "+
				"use the %s template (FROM %s), or ask an operator to load it", im, TemplateShell, BaseAlias)
		} else if err != nil {
			return "", fmt.Errorf("inspect base image %s: %w", im, err)
		}
	}
	tag := fmt.Sprintf("%s:v%d", f.eng.Name("skill", name), version)
	bctx, cancel := context.WithTimeout(ctx, f.st.DurationSetting(ctx, BuildTimeoutSetting))
	defer cancel()
	id, _, err := f.eng.Build(bctx, files, docker.BuildOptions{Tag: tag, Memory: f.bytes(ctx, BuildMemorySetting),
		Labels: f.eng.Labels(docker.KindSkill, docker.LabelSkill, name)})
	if err != nil {
		return "", err
	}
	insp, err := f.eng.Client().ImageInspect(ctx, id)
	if err != nil {
		return "", fmt.Errorf("inspect %s: %w", tag, err)
	}
	if max := f.bytes(ctx, MaxImageSetting); insp.Size > max {
		f.removeImage(tag)
		return "", fmt.Errorf("image is %d MB; the limit (%s) is %d MB", insp.Size>>20, MaxImageSetting.Key, max>>20)
	}
	return tag, nil
}

// removeImage deletes an image, ignoring one that is already gone.
func (f *Factory) removeImage(ref string) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := f.eng.Client().ImageRemove(ctx, ref, image.RemoveOptions{Force: true, PruneChildren: true}); err != nil && !client.IsErrNotFound(err) {
		f.log.Warn("remove image", "image", ref, "err", errors.Unwrap(err))
	}
}
