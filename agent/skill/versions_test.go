package skill_test

import (
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/image"

	"github.com/helixml/helix-org/agent/docker"
	"github.com/helixml/helix-org/agent/skill"
	"github.com/helixml/helix-org/domain"
)

// notes collects a skill's narration, as the activation log would.
type notes struct {
	mu    sync.Mutex
	lines []string
}

func (n *notes) add(s string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.lines = append(n.lines, s)
}

func (n *notes) String() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return strings.Join(n.lines, "\n")
}

func echoSpec(name, text string, examples ...domain.SkillExample) domain.SkillSpec {
	return domain.SkillSpec{Name: name, Description: "says " + text, Template: skill.TemplateShell,
		Handler: "echo '" + text + "'\n", Examples: examples, CreatedBy: "w-owner"}
}

func example(in, out string) domain.SkillExample {
	return domain.SkillExample{Input: json.RawMessage(in), Output: json.RawMessage(out)}
}

// containersOf lists a skill's containers by the version they run.
func (fx fixture) containersOf(t *testing.T, name string) []string {
	t.Helper()
	cs, err := fx.eng.Client().ContainerList(t.Context(), container.ListOptions{All: true, Filters: fx.eng.Filter(docker.LabelSkill, name)})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, c := range cs {
		out = append(out, "v"+c.Labels[skill.LabelVersion])
	}
	slices.Sort(out)
	return out
}

func (fx fixture) imagesOf(t *testing.T, name string) []string {
	t.Helper()
	imgs, err := fx.eng.Client().ImageList(t.Context(), image.ListOptions{Filters: fx.eng.Filter(docker.LabelSkill, name)})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, im := range imgs {
		for _, tag := range im.RepoTags {
			out = append(out, tag[strings.LastIndex(tag, ":")+1:])
		}
	}
	slices.Sort(out)
	return out
}

// TestExamplesGateANewVersion: a version goes live only when every
// example passes. A v2 that answers wrongly never serves a call: the
// error shows the failed example, expected against got, and v1 answers.
func TestExamplesGateANewVersion(t *testing.T) {
	t.Parallel()
	fx := newFixture(t, shared.eng)
	ctx := t.Context()
	spec := csvSpec("csv_gate", csvSum)
	spec.Examples = []domain.SkillExample{example(`{"csv":"a,b\n1,2\n3,4"}`, `{"b": 6, "a": 4.0}`)}
	var log notes
	if _, err := fx.f.Create(ctx, spec, log.add); err != nil {
		t.Fatal(err)
	}
	wantAll(t, "v1 narration", log.String(), "building skill csv_gate version 1", "healthy in", "example 1 of 1 passed", "version 1 is live")

	// v2 multiplies instead of adding: it builds and is healthy, but
	// fails its second example.
	wrong := csvSpec("csv_gate", strings.Replace(csvSum, "s[i]+=$i", "s[i]=(s[i]?s[i]:1)*$i", 1))
	wrong.Examples = []domain.SkillExample{example(`{"csv":"a\n1"}`, `{"a":1}`), example(`{"csv":"a,b\n1,2\n3,4"}`, `{"a":4,"b":6}`)}
	log = notes{}
	_, err := fx.f.Create(ctx, wrong, log.add)
	for _, w := range []string{"skill csv_gate version 2 failed: example 2 of 2 failed", `input {"csv":"a,b\n1,2\n3,4"}`,
		`expected: {"a":4,"b":6}`, `got:      {"a":3,"b":8}`, "version 1 keeps serving", "1 of 3 failed builds in a row"} {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("v2 failing an example: err = %v\nwant %q", err, w)
		}
	}
	wantAll(t, "v2 narration", log.String(), "example 1 of 2 passed", "failed an example")
	if got := fx.call(t, "csv_gate", `{"csv":"a,b\n1,2\n3,4"}`); got != `{"a":4,"b":6}` {
		t.Errorf("after v2 failed, call = %s; want v1's sums", got)
	}
	if sk := fx.skill(t, "csv_gate"); sk.Version != 1 || sk.Status != domain.SkillReady {
		t.Errorf("record = %+v", sk)
	}
	if got := fx.containersOf(t, "csv_gate"); !slices.Equal(got, []string{"v1"}) {
		t.Errorf("containers = %v; v2's must be gone", got)
	}
	vs, _ := fx.st.SkillVersions(ctx, "csv_gate")
	if len(vs) != 2 || vs[0].Status != domain.VersionOK || vs[1].Status != domain.VersionFailed || !strings.Contains(vs[1].Error, "example 2 of 2 failed") {
		t.Errorf("versions = %+v", vs)
	}
	src, err := fx.st.GetSkillVersion(ctx, "csv_gate", 2)
	if err != nil || !strings.Contains(src.Files["handler.sh"], "s[i]=(s[i]?s[i]:1)*$i") || !strings.Contains(src.Files["Dockerfile"], "FROM skill-base") ||
		!strings.Contains(src.BuildLog, "Successfully built") {
		t.Errorf("v2 source = %+v, %v", src, err)
	}
}

// TestRollbackRestoresThePreviousVersion: one call puts v1 back and the
// next call answers as v1; a version rolled back from is never a target
// again; an image that was pruned is rebuilt from the stored source.
func TestRollbackRestoresThePreviousVersion(t *testing.T) {
	t.Parallel()
	fx := newFixture(t, shared.eng)
	ctx := t.Context()
	for _, v := range []string{"one", "two", "three"} {
		if _, err := fx.f.Create(ctx, echoSpec("echo_rb", v), nil); err != nil {
			t.Fatal(err)
		}
	}
	if got := fx.call(t, "echo_rb", `{}`); got != `"three"` {
		t.Fatalf("v3 call = %s", got)
	}
	if got := fx.imagesOf(t, "echo_rb"); !slices.Equal(got, []string{"v2", "v3"}) {
		t.Errorf("images = %v; want the serving version's and its rollback target's", got)
	}

	var log notes
	sk, err := fx.f.Rollback(ctx, "w-owner", "echo_rb", log.add)
	if err != nil {
		t.Fatal(err)
	}
	if sk.Version != 2 || sk.Description != "says two" || sk.Status != domain.SkillReady {
		t.Errorf("rolled back to %+v", sk)
	}
	if got := fx.call(t, "echo_rb", `{}`); got != `"two"` {
		t.Errorf("after rollback, call = %s; want v2's answer", got)
	}
	wantAll(t, "rollback narration", log.String(), "rolling skill echo_rb back from version 3 to version 2", "from its kept image", "version 2 is live again")
	if got := fx.containersOf(t, "echo_rb"); !slices.Equal(got, []string{"v2"}) {
		t.Errorf("containers = %v", got)
	}

	// v1's image was pruned when v3 went live: it is rebuilt from source.
	log = notes{}
	if sk, err = fx.f.Rollback(ctx, "w-owner", "echo_rb", log.add); err != nil || sk.Version != 1 {
		t.Fatalf("second rollback: %+v, %v", sk, err)
	}
	wantAll(t, "rebuild narration", log.String(), "the image of version 1 is gone; rebuilding it from its stored source", "building skill echo_rb version 1")
	if got := fx.call(t, "echo_rb", `{}`); got != `"one"` {
		t.Errorf("after the second rollback, call = %s", got)
	}
	if _, err := fx.f.Rollback(ctx, "w-owner", "echo_rb", nil); err == nil || !strings.Contains(err.Error(), "no working version before version 1") {
		t.Errorf("rollback past v1: %v", err)
	}
	vs, _ := fx.st.SkillVersions(ctx, "echo_rb")
	var states []string
	for _, v := range vs {
		states = append(states, string(v.Status))
	}
	if !slices.Equal(states, []string{"ok", "rolled_back", "rolled_back"}) {
		t.Errorf("version states = %v", states)
	}
	// A new build numbers after every earlier one, and rolls back to v1.
	if sk, err := fx.f.Create(ctx, echoSpec("echo_rb", "four"), nil); err != nil || sk.Version != 4 {
		t.Fatalf("v4 = %+v, %v", sk, err)
	}
	if sk, err := fx.f.Rollback(ctx, "w-owner", "echo_rb", nil); err != nil || sk.Version != 1 {
		t.Errorf("rollback from v4 = %+v, %v; want v1 (v2 and v3 were rolled back from)", sk, err)
	}
}

// TestFailedBuildsAreBounded: after skill.max_failed_builds failures in a
// row an AI worker's create_skill is refused at once with "ask a human";
// a human's build goes ahead, and a success resets the count.
func TestFailedBuildsAreBounded(t *testing.T) {
	t.Parallel()
	fx := newFixture(t, shared.eng)
	ctx := t.Context()
	set(t, fx.st, skill.MaxFailedBuildsSetting, "2")
	broken := echoSpec("echo_bound", "x")
	broken.Handler, broken.CreatedBy = "for x in; do\n", "w-ai"
	for i := 1; i <= 2; i++ {
		if _, err := fx.f.Create(ctx, broken, nil); err == nil || !strings.Contains(err.Error(), "syntax error") {
			t.Fatalf("failed build %d: %v", i, err)
		}
	}
	start := time.Now()
	_, err := fx.f.Create(ctx, echoSpec("echo_bound", "fine"), nil)
	for _, w := range []string{"its last 2 builds failed (skill.max_failed_builds is 2)", "stop here and ask a human for help",
		"resets with a successful build", "a human worker's create_skill is never refused"} {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("third build: err = %v, want %q", err, w)
		}
	}
	if el := time.Since(start); el > 5*time.Second {
		t.Errorf("the refusal took %s: it must not build", el)
	}
	if vs, _ := fx.st.SkillVersions(ctx, "echo_bound"); len(vs) != 2 {
		t.Errorf("%d versions recorded; the refused build must not be one", len(vs))
	}
	human := echoSpec("echo_bound", "fine")
	human.ByHuman = true
	if sk, err := fx.f.Create(ctx, human, nil); err != nil || sk.Version != 3 {
		t.Fatalf("a human's build: %+v, %v", sk, err)
	}
	if _, err := fx.f.Create(ctx, broken, nil); err == nil || !strings.Contains(err.Error(), "1 of 2 failed builds in a row") {
		t.Errorf("after a success the count starts again: %v", err)
	}
}

// TestPythonTemplateNeedsNoRegistry: the python base is built from the
// host's python3 on first use, narrated, and a handler using the standard
// library (csv, sqlite3 with its shared library, decimal) works.
func TestPythonTemplateNeedsNoRegistry(t *testing.T) {
	t.Parallel()
	fx := newFixture(t, shared.eng)
	ctx := t.Context()
	handler := `import csv, io, sqlite3
from decimal import Decimal

def handle(input):
    rows = list(csv.DictReader(io.StringIO(input["csv"])))
    db = sqlite3.connect(":memory:")
    db.execute("create table t (k text, v real)")
    db.executemany("insert into t values (?, ?)", [(r["k"], float(r["v"])) for r in rows])
    total = db.execute("select sum(v) from t").fetchone()[0]
    return {"rows": len(rows), "total": total, "exact": str(sum(Decimal(r["v"]) for r in rows))}
`
	var log notes
	sk, err := fx.f.Create(ctx, domain.SkillSpec{Name: "py_sum", Description: "sum v", Template: skill.TemplatePython, Handler: handler,
		Examples: []domain.SkillExample{example(`{"csv":"k,v\na,1"}`, `{"rows":1,"total":1,"exact":"1"}`)}, CreatedBy: "w-owner"}, log.add)
	if err != nil {
		t.Fatalf("python skill: %v\n%s", err, log.String())
	}
	wantAll(t, "narration", log.String(), "building the python base image from /usr/bin/python3", "once, on first use", "python base image", "ready in",
		"example 1 of 1 passed")
	if got := fx.call(t, "py_sum", `{"csv":"k,v\na,0.1\nb,0.2"}`); got != `{"rows": 2, "total": 0.30000000000000004, "exact": "0.3"}` {
		t.Errorf("call = %s", got)
	}
	if sk.Template != skill.TemplatePython {
		t.Errorf("template = %q", sk.Template)
	}
	insp, err := fx.eng.Client().ImageInspect(ctx, sk.Image)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("python skill image: %d MB\n%s", insp.Size>>20, log.String())

	// A syntax error fails the build with python's own message.
	_, err = fx.f.Create(ctx, domain.SkillSpec{Name: "py_sum", Description: "sum v", Template: skill.TemplatePython,
		Handler: "def handle(input)\n    return 1\n", CreatedBy: "w-owner"}, nil)
	if err == nil || !strings.Contains(err.Error(), "SyntaxError") || !strings.Contains(err.Error(), "version 1 keeps serving") {
		t.Errorf("python syntax error: %v", err)
	}
}

func wantAll(t *testing.T, what, text string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(text, w) {
			t.Errorf("%s lacks %q:\n%s", what, w, text)
		}
	}
}
