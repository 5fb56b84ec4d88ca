package skill

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/helixml/helix-org/agent/docker"
)

// PythonAlias is the image name a Dockerfile uses for the python
// template's base; the factory replaces it with this server's image.
const PythonAlias = "skill-python"

// pythonDockerfile makes the base from the host interpreter's files:
// nothing but python3, its standard library and the shared libraries they
// load, on an empty image. It runs the python template's server, so a
// skill's own build is a COPY and a syntax check: the classic builder
// runs a container for every step. The instance label keeps its layers
// out of other instances' build cache (see baseDockerfile).
const pythonDockerfile = `FROM scratch
LABEL helix-org.instance=%q
COPY rootfs/ /
ENV PATH=/usr/local/bin:/usr/bin:/bin LANG=C.UTF-8 LD_LIBRARY_PATH=%s PORT=8080 PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
CMD ["python3", "/skill/server.py"]
`

// probeScript prints what the base needs to know about an interpreter.
const probeScript = `import json, sys, sysconfig
print(json.dumps({"executable": sys.executable, "version": sys.version.split()[0], "stdlib": sysconfig.get_path("stdlib")}))`

// skippedStdlib are top-level parts of the standard library a skill has no
// use for: the test suite, GUI and packaging tools, the static library.
var skippedStdlib = []string{"test", "idlelib", "tkinter", "turtledemo", "ensurepip", "lib2to3", "site-packages", "dist-packages"}

type pythonInfo struct {
	Executable string `json:"executable"`
	Version    string `json:"version"`
	Stdlib     string `json:"stdlib"`
}

// pythonBase returns this instance's python base image, building it the
// first time from the configured interpreter. Its tag is a hash of every
// file's path, size, mode and modification time, so an upgraded python
// gets a new base and an unchanged one is never rebuilt.
func (f *Factory) pythonBase(ctx context.Context, note Note) (string, error) {
	f.baseMu.Lock()
	defer f.baseMu.Unlock()
	py := f.setting(ctx, PythonSetting)
	info, err := probePython(ctx, py)
	if err != nil {
		return "", err
	}
	root, err := pythonRoot(info)
	if err != nil {
		return "", err
	}
	tag := f.eng.Name(PythonAlias) + ":" + root.hash[:12]
	if _, err := f.eng.Client().ImageInspect(ctx, tag); err == nil {
		return tag, nil
	}
	note.say("building the python base image from %s (Python %s: %d files, %d MB), once, on first use…", info.Executable, info.Version, len(root.entries), root.size>>20)
	start := time.Now()
	files := []docker.File{{Name: "Dockerfile", Data: fmt.Appendf(nil, pythonDockerfile, f.eng.Instance(), strings.Join(root.libDirs, ":"))}}
	for _, e := range root.entries {
		df := docker.File{Name: "rootfs" + e.path, Mode: e.mode, Link: e.link}
		if e.link == "" {
			if df.Data, err = os.ReadFile(e.src); err != nil {
				return "", fmt.Errorf("python base image: %w", err)
			}
		}
		files = append(files, df)
	}
	bctx, cancel := context.WithTimeout(ctx, f.st.DurationSetting(ctx, BuildTimeoutSetting))
	defer cancel()
	if _, _, err := f.eng.Build(bctx, files, docker.BuildOptions{Tag: tag, Labels: f.eng.Labels("skill-base", LabelContent, root.hash)}); err != nil {
		return "", fmt.Errorf("build the python base image: %w", err)
	}
	note.say("python base image %s ready in %s", tag, time.Since(start).Round(100*time.Millisecond))
	return tag, nil
}

// LabelContent carries the content hash a base image was built from.
const LabelContent = "org.helix-org.content"

func probePython(ctx context.Context, py string) (pythonInfo, error) {
	out, err := exec.CommandContext(ctx, py, "-I", "-S", "-c", probeScript).Output()
	if err != nil {
		return pythonInfo{}, fmt.Errorf("the python template needs the host's Debian python3 (apt-get install python3, or set %s): %s: %w", PythonSetting.Key, py, err)
	}
	var info pythonInfo
	if err := json.Unmarshal(out, &info); err != nil || info.Executable == "" || info.Stdlib == "" {
		return pythonInfo{}, fmt.Errorf("%s did not describe itself (%q): %v", py, out, err)
	}
	return info, nil
}

// rootEntry is one file or link of the base image's root file system.
type rootEntry struct {
	path string // inside the image, absolute
	src  string // on the host
	link string
	mode int64
}

type pythonRootFS struct {
	entries []rootEntry
	libDirs []string
	size    int64
	hash    string
}

// pythonRoot lists the files of the base: the interpreter at its own path
// (with python3 beside it), the standard library, and every shared
// library the interpreter and its extension modules load. An extension
// whose libraries the host lacks is left out, as python would fail to
// import it anyway.
func pythonRoot(info pythonInfo) (pythonRootFS, error) {
	exe, err := filepath.EvalSymlinks(info.Executable)
	if err != nil {
		return pythonRootFS{}, fmt.Errorf("python base image: %w", err)
	}
	var r pythonRootFS
	add := func(e rootEntry) error {
		st, err := os.Stat(e.src)
		if e.link == "" && err != nil {
			return err
		}
		if e.link == "" {
			e.mode = int64(st.Mode().Perm())
			r.size += st.Size()
		}
		r.entries = append(r.entries, e)
		return nil
	}
	if err := add(rootEntry{path: exe, src: exe}); err != nil {
		return r, err
	}
	if filepath.Base(exe) != "python3" {
		r.entries = append(r.entries, rootEntry{path: filepath.Join(filepath.Dir(exe), "python3"), link: filepath.Base(exe)})
	}
	libs := newLibResolver()
	objects := []string{exe}
	err = filepath.WalkDir(info.Stdlib, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(info.Stdlib, p)
		if d.IsDir() && (isSkippedStdlib(rel)) {
			return filepath.SkipDir
		}
		if d.IsDir() {
			return nil
		}
		if d.Type()&os.ModeSymlink != 0 {
			return addLink(add, info.Stdlib, p)
		}
		if strings.HasSuffix(p, ".so") {
			if _, err := libs.needs(p); err != nil {
				return nil // its libraries are missing on the host
			}
			objects = append(objects, p)
		}
		return add(rootEntry{path: p, src: p})
	})
	if err != nil {
		return r, fmt.Errorf("python base image: standard library %s: %w", info.Stdlib, err)
	}
	deps, err := libs.closure(objects)
	if err != nil {
		return r, fmt.Errorf("python base image: %w", err)
	}
	for _, d := range deps {
		if err := add(rootEntry{path: d.path, src: d.src}); err != nil {
			return r, err
		}
	}
	r.libDirs = libs.dirs()
	r.hash = manifestHash(r.entries)
	return r, nil
}

func isSkippedStdlib(rel string) bool {
	if strings.Contains(rel, string(filepath.Separator)) {
		return false
	}
	for _, s := range skippedStdlib {
		if rel == s {
			return true
		}
	}
	return strings.HasPrefix(rel, "config-")
}

// addLink keeps a link inside the standard library as a link, and copies
// what a link to elsewhere points at (Debian links sitecustomize.py to
// /etc); a dangling one is left out.
func addLink(add func(rootEntry) error, stdlib, p string) error {
	target, err := filepath.EvalSymlinks(p)
	if err != nil {
		return nil
	}
	if strings.HasPrefix(target, stdlib+string(filepath.Separator)) {
		link, err := os.Readlink(p)
		if err != nil {
			return err
		}
		return add(rootEntry{path: p, link: link})
	}
	if st, err := os.Stat(target); err != nil || !st.Mode().IsRegular() {
		return nil
	}
	return add(rootEntry{path: p, src: target})
}

// manifestHash identifies the base's content by each file's path, size,
// mode and modification time: cheap to compute on every build, and
// changed by any package upgrade.
func manifestHash(entries []rootEntry) string {
	h := sha256.New()
	for _, e := range entries {
		fmt.Fprintf(h, "%s\x00%s\x00%d", e.path, e.link, e.mode)
		if e.link == "" {
			if st, err := os.Stat(e.src); err == nil {
				fmt.Fprintf(h, "\x00%d\x00%d", st.Size(), st.ModTime().UnixNano())
			}
		}
		h.Write([]byte{'\n'})
	}
	return hex.EncodeToString(h.Sum(nil))
}
