package docker

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/docker/docker/api/types/build"

	"github.com/helixml/helix-org/domain"
)

// File is one file of a build context, or a symbolic link when Link is set.
type File struct {
	Name string
	Mode int64
	Data []byte
	Link string
}

// BuildOptions shape one image build.
type BuildOptions struct {
	Tag    string
	Labels map[string]string
	// Memory caps each build step's container, in bytes; 0 is no cap.
	Memory int64
}

// BuildError is a failed build with the end of its log, which is what a
// caller needs to fix its Dockerfile.
type BuildError struct {
	Msg  string
	Tail string
}

func (e *BuildError) Error() string {
	if e.Tail == "" {
		return "image build failed: " + e.Msg
	}
	return "image build failed: " + e.Msg + "\n--- build log (last lines) ---\n" + e.Tail
}

// tailLines is how much of a log an error carries.
const tailLines = 40

// Build builds an image from files with the classic builder, with no
// network (so RUN steps cannot fetch anything), no build arguments, and
// intermediate containers removed even on failure. ctx bounds it: the
// daemon abandons the build when the request is cancelled. It returns the
// image ID and the tail of the build log.
func (e *Engine) Build(ctx context.Context, files []File, opts BuildOptions) (string, string, error) {
	tarball, err := tarOf(withLabels(files, opts.Labels))
	if err != nil {
		return "", "", err
	}
	resp, err := e.cli.ImageBuild(ctx, tarball, build.ImageBuildOptions{
		Tags: []string{opts.Tag}, Dockerfile: "Dockerfile", NetworkMode: "none",
		Remove: true, ForceRemove: true, PullParent: false, Version: build.BuilderV1,
		Memory: opts.Memory, MemorySwap: opts.Memory,
	})
	if err != nil {
		// The daemon may answer only once the build is under way, so the
		// time cap can end the request before a line of log arrives.
		if ctx.Err() != nil {
			return "", "", &BuildError{Msg: "timed out: " + ctx.Err().Error()}
		}
		return "", "", fmt.Errorf("start image build: %w", err)
	}
	defer resp.Body.Close()
	tail, buildErr := readBuildLog(resp.Body)
	if ctx.Err() != nil {
		return "", tail, &BuildError{Msg: "timed out: " + ctx.Err().Error(), Tail: tail}
	}
	if buildErr != nil {
		return "", tail, &BuildError{Msg: buildErr.Error(), Tail: tail}
	}
	insp, err := e.cli.ImageInspect(ctx, opts.Tag)
	if err != nil {
		return "", tail, fmt.Errorf("inspect built image %s: %w", opts.Tag, err)
	}
	return insp.ID, tail, nil
}

// withLabels appends the labels to the Dockerfile as one LABEL step: the
// build option would add a step, and so a container, per label.
func withLabels(files []File, labels map[string]string) []File {
	if len(labels) == 0 {
		return files
	}
	var b strings.Builder
	b.WriteString("\nLABEL")
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		fmt.Fprintf(&b, " %s=%q", k, labels[k])
	}
	b.WriteString("\n")
	out := slices.Clone(files)
	for i, f := range out {
		if f.Name == "Dockerfile" {
			out[i].Data = append(slices.Clone(f.Data), b.String()...)
		}
	}
	return out
}

// ansi matches terminal colour codes, which RUN steps' stderr carries.
var ansi = domain.LazyRegexp("\x1b\\[[0-9;]*m")

// readBuildLog reads the daemon's JSON message stream, keeping the last
// lines of output and the error, if any.
func readBuildLog(r io.Reader) (string, error) {
	var lines []string
	add := func(s string) {
		s = ansi().ReplaceAllString(s, "")
		for _, l := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
			if strings.TrimSpace(l) == "" {
				continue
			}
			lines = append(lines, l)
			if len(lines) > tailLines {
				lines = lines[1:]
			}
		}
	}
	dec := json.NewDecoder(r)
	var failure error
	for {
		var m struct {
			Stream string `json:"stream"`
			Error  string `json:"error"`
		}
		if err := dec.Decode(&m); err != nil {
			if !errors.Is(err, io.EOF) && failure == nil {
				failure = fmt.Errorf("read build output: %w", err)
			}
			break
		}
		if m.Stream != "" {
			add(m.Stream)
		}
		if m.Error != "" {
			add(m.Error)
			failure = errors.New(strings.TrimSpace(m.Error))
		}
	}
	return strings.Join(lines, "\n"), failure
}

func tarOf(files []File) (io.Reader, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, f := range files {
		mode := f.Mode
		if mode == 0 {
			mode = 0o644
		}
		hdr := &tar.Header{Name: f.Name, Mode: mode, Size: int64(len(f.Data))}
		if f.Link != "" {
			hdr = &tar.Header{Name: f.Name, Mode: 0o777, Typeflag: tar.TypeSymlink, Linkname: f.Link}
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return nil, fmt.Errorf("build context %s: %w", f.Name, err)
		}
		if _, err := tw.Write(f.Data); err != nil {
			return nil, fmt.Errorf("build context %s: %w", f.Name, err)
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return &buf, nil
}
