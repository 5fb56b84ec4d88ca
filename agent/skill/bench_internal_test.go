package skill

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/helixml/helix-org/agent/docker"
	"github.com/helixml/helix-org/agent/docker/dockertest"
	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store/storetest"
)

// benchFactory is a factory on its own instance, with the shim built and
// the base image in place, so each benchmark times only its own step.
func benchFactory(b *testing.B) *Factory {
	b.Helper()
	eng := dockertest.Engine(b)
	st := storetest.New(b)
	if _, err := st.Bootstrap(b.Context(), nil); err != nil {
		b.Fatal(err)
	}
	shim := filepath.Join(b.TempDir(), ShimName)
	if err := dockertest.BuildStatic("./agent/skill/shim", shim); err != nil {
		b.Fatal(err)
	}
	if err := st.SetSetting(b.Context(), ShimSetting, shim); err != nil {
		b.Fatal(err)
	}
	f := New(eng, st, nil)
	if _, err := f.base(b.Context()); err != nil {
		b.Fatal(err)
	}
	return f
}

func benchFiles(b *testing.B, i int) []docker.File {
	files, err := validate(domain.SkillSpec{Name: "bench", Description: "d", Template: TemplateShell, Handler: fmt.Sprintf("echo '{\"n\":%d}'\n", i)})
	if err != nil {
		b.Fatal(err)
	}
	return files
}

// BenchmarkSkillBuild builds a new version of a shell-template skill each
// time (its handler differs, so the build cache cannot answer).
func BenchmarkSkillBuild(b *testing.B) {
	f := benchFactory(b)
	i := 0
	for b.Loop() {
		i++
		if _, _, err := f.buildImage(b.Context(), "bench", i, benchFiles(b, i), nil); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/build")
}

// BenchmarkSkillColdStart creates and starts a container until it answers
// /health; BenchmarkSkillRestart starts a stopped one (an idle skill's
// next call) the same way.
func BenchmarkSkillColdStart(b *testing.B) {
	f := benchFactory(b)
	img, _, err := f.buildImage(b.Context(), "bench", 1, benchFiles(b, 1), nil)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		id, err := f.createContainer(b.Context(), "bench", 1, img)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := f.start(b.Context(), id); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		f.eng.RemoveContainer(id)
		b.StartTimer()
	}
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/healthy")
}

func BenchmarkSkillRestart(b *testing.B) {
	f := benchFactory(b)
	img, _, err := f.buildImage(b.Context(), "bench", 1, benchFiles(b, 1), nil)
	if err != nil {
		b.Fatal(err)
	}
	id, err := f.createContainer(b.Context(), "bench", 1, img)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := f.start(b.Context(), id); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		f.stop(b.Context(), id)
		b.StartTimer()
	}
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/healthy")
}

// BenchmarkSkillWarmCall is one POST /execute to a running skill: the
// shim runs the busybox sh handler once per call.
func BenchmarkSkillWarmCall(b *testing.B) {
	f := benchFactory(b)
	img, _, err := f.buildImage(b.Context(), "bench", 1, benchFiles(b, 1), nil)
	if err != nil {
		b.Fatal(err)
	}
	id, err := f.createContainer(b.Context(), "bench", 1, img)
	if err != nil {
		b.Fatal(err)
	}
	addr, err := f.start(b.Context(), id)
	if err != nil {
		b.Fatal(err)
	}
	var lat []time.Duration
	for b.Loop() {
		start := time.Now()
		out, err := f.execute(context.Background(), addr, json.RawMessage(`{}`))
		if err != nil || string(out) != `{"n":1}` {
			b.Fatalf("call: %s %v", out, err)
		}
		lat = append(lat, time.Since(start))
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50_ms")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99_ms")
}

// BenchmarkPythonBase builds the python template's base image from the
// host's python3 (the first python skill's extra wait), and then a python
// skill on it; the base is removed between iterations so each builds it.
func BenchmarkPythonBase(b *testing.B) {
	f := benchFactory(b)
	files, err := validate(domain.SkillSpec{Name: "bench_py", Description: "d", Template: TemplatePython, Handler: "def handle(input):\n    return input\n"})
	if err != nil {
		b.Fatal(err)
	}
	var base, skill time.Duration
	i := 0
	for b.Loop() {
		i++
		start := time.Now()
		tag, err := f.pythonBase(b.Context(), nil)
		if err != nil {
			b.Fatal(err)
		}
		base += time.Since(start)
		start = time.Now()
		if _, _, err := f.buildImage(b.Context(), "bench_py", i, files, nil); err != nil {
			b.Fatal(err)
		}
		skill += time.Since(start)
		b.StopTimer()
		f.removeImage(f.imageTag("bench_py", i))
		f.removeImage(tag)
		b.StartTimer()
	}
	b.ReportMetric(float64(base.Milliseconds())/float64(b.N), "ms/base")
	b.ReportMetric(float64(skill.Milliseconds())/float64(b.N), "ms/skill")
}
