package skill

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/docker/docker/api/types/image"

	"github.com/helixml/helix-org/agent/docker"
	"github.com/helixml/helix-org/agent/docker/engineapi"
	"github.com/helixml/helix-org/domain"
)

// baseDockerfile is the shell template's base: busybox with its applets
// and the shim on an empty image. It has as few steps as it can, because
// the classic builder runs a container for each; the port, handler and
// user are the shim's defaults and the factory's container settings. The
// instance label comes first so no other instance shares its layers from
// the build cache: removing that instance's images could otherwise delete
// a cached parent this one is being built on.
const baseDockerfile = `FROM scratch
LABEL helix-org.instance=%q
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
	files := []docker.File{{Name: "Dockerfile", Data: fmt.Appendf(nil, baseDockerfile, f.eng.Instance())},
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

// buildImage builds one version of a skill from its validated context and
// returns its tag and the end of its build log. Every base image must
// already be in the daemon (the factory's own are built here on first
// use): a build never pulls.
func (f *Factory) buildImage(ctx context.Context, name string, version int, files []docker.File, note Note) (string, string, error) {
	files = slices.Clone(files)
	df := slices.IndexFunc(files, func(f docker.File) bool { return f.Name == "Dockerfile" })
	_, _, used := baseImages(string(files[df].Data), nil)
	bases := map[string]string{}
	for _, alias := range used {
		var err error
		if alias == PythonAlias {
			bases[alias], err = f.pythonBase(ctx, note)
		} else {
			bases[alias], err = f.base(ctx)
		}
		if err != nil {
			return "", "", err
		}
	}
	rewritten, images, _ := baseImages(string(files[df].Data), bases)
	files[df].Data = []byte(rewritten)
	for _, im := range images {
		if _, err := f.eng.Client().ImageInspect(ctx, im); engineapi.IsNotFound(err) {
			return "", "", domain.Invalid("files", "base image %q is not in the Docker daemon, and skill builds never pull: "+
				"use a template, or FROM %s (busybox) or FROM %s (python3), or ask an operator to load it", im, BaseAlias, PythonAlias)
		} else if err != nil {
			return "", "", fmt.Errorf("inspect base image %s: %w", im, err)
		}
	}
	tag := f.imageTag(name, version)
	bctx, cancel := context.WithTimeout(ctx, f.st.DurationSetting(ctx, BuildTimeoutSetting))
	defer cancel()
	id, log, err := f.eng.Build(bctx, files, docker.BuildOptions{Tag: tag, Memory: f.bytes(ctx, BuildMemorySetting),
		Labels: f.eng.Labels(docker.KindSkill, docker.LabelSkill, name)})
	if err != nil {
		return "", log, err
	}
	insp, err := f.eng.Client().ImageInspect(ctx, id)
	if err != nil {
		return "", log, fmt.Errorf("inspect %s: %w", tag, err)
	}
	if max := f.bytes(ctx, MaxImageSetting); insp.Size > max {
		f.removeImage(tag)
		return "", log, fmt.Errorf("image is %d MB; the limit (%s) is %d MB", insp.Size>>20, MaxImageSetting.Key, max>>20)
	}
	return tag, log, nil
}

// imageTag is the tag of one version's image.
func (f *Factory) imageTag(name string, version int) string {
	return fmt.Sprintf("%s:v%d", f.eng.Name("skill", name), version)
}

// hasImage reports whether an image is in the daemon.
func (f *Factory) hasImage(ctx context.Context, ref string) bool {
	_, err := f.eng.Client().ImageInspect(ctx, ref)
	return err == nil
}

// removeImage deletes an image, ignoring one that is already gone.
func (f *Factory) removeImage(ref string) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := f.eng.Client().ImageRemove(ctx, ref, image.RemoveOptions{Force: true, PruneChildren: true}); err != nil && !engineapi.IsNotFound(err) {
		f.log.Warn("remove image", "image", ref, "err", err)
	}
}
