package skill_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/image"
	"github.com/google/go-cmp/cmp"

	"github.com/helixml/helix-org/agent/docker"
	"github.com/helixml/helix-org/agent/docker/dockertest"
	"github.com/helixml/helix-org/agent/skill"
	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/store/storetest"
)

// shared is one engine instance for the tests that do not reason about
// everything an instance owns; each uses its own skill names.
var shared struct {
	eng  *docker.Engine
	shim string
}

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "skill-shim")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	shared.shim = filepath.Join(dir, skill.ShimName)
	if err := dockertest.BuildStatic("./agent/skill/shim", shared.shim); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	eng, err := dockertest.NewEngine()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() {
		if err := dockertest.Remove(eng); err != nil {
			fmt.Fprintln(os.Stderr, "clean up:", err)
		}
	}()
	shared.eng = eng
	return m.Run()
}

// csvSum sums each column of a CSV given as {"csv": "..."}.
const csvSum = `printf '%s\n' "$INPUT_CSV" | awk -F, 'NR==1{n=NF; for(i=1;i<=NF;i++) h[i]=$i; next}
  {for(i=1;i<=NF;i++) s[i]+=$i}
  END{printf "{"; for(i=1;i<=n;i++) printf "%s\"%s\":%s", (i>1?",":""), h[i], s[i]+0; print "}"}'
`

const csvSchema = `{"type":"object","properties":{"csv":{"type":"string","description":"CSV text with a header row"}},"required":["csv"]}`

// fixture is a factory over a fresh store, with the test shim configured.
type fixture struct {
	f     *skill.Factory
	st    *store.Store
	clock *storetest.Clock
	eng   *docker.Engine
}

func newFixture(t *testing.T, eng *docker.Engine) fixture {
	t.Helper()
	clock := storetest.NewClock(time.Now())
	st := storetest.NewWithClock(t, clock.Now)
	if _, err := st.Bootstrap(t.Context(), []string{"create_skill"}); err != nil {
		t.Fatal(err)
	}
	set(t, st, skill.ShimSetting, shared.shim)
	set(t, st, skill.HealthTimeoutSetting, "20s")
	return fixture{f: skill.New(eng, st, nil), st: st, clock: clock, eng: eng}
}

func set(t *testing.T, st *store.Store, spec domain.SettingSpec, v string) {
	t.Helper()
	if err := st.SetSetting(t.Context(), spec, v); err != nil {
		t.Fatal(err)
	}
}

func csvSpec(name, handler string) domain.SkillSpec {
	return domain.SkillSpec{Name: name, Description: "Sum each CSV column", InputSchema: json.RawMessage(csvSchema),
		Template: skill.TemplateShell, Handler: handler, CreatedBy: "w-owner"}
}

func (fx fixture) call(t *testing.T, name string, input string) string {
	t.Helper()
	out, err := fx.f.Call(t.Context(), name, json.RawMessage(input), nil)
	if err != nil {
		t.Fatalf("call %s: %v", name, err)
	}
	return string(out)
}

func (fx fixture) skill(t *testing.T, name string) domain.Skill {
	t.Helper()
	sk, err := fx.st.GetSkill(t.Context(), name)
	if err != nil {
		t.Fatal(err)
	}
	return sk
}

func (fx fixture) running(t *testing.T, id string) bool {
	t.Helper()
	insp, err := fx.eng.Client().ContainerInspect(t.Context(), id)
	if err != nil {
		t.Fatalf("inspect %s: %v", id, err)
	}
	return insp.State.Running
}

func TestCreateAndCallCSVSums(t *testing.T) {
	t.Parallel()
	fx := newFixture(t, shared.eng)
	sk, err := fx.f.Create(t.Context(), csvSpec("csv_sum", csvSum), nil)
	if err != nil {
		t.Fatal(err)
	}
	if sk.Status != domain.SkillReady || sk.Version != 1 || sk.CreatedBy != "w-owner" || sk.Image == "" || sk.Container == "" {
		t.Errorf("created %+v", sk)
	}
	if got := fx.call(t, "csv_sum", `{"csv":"a,b\n1,2\n3,4\n"}`); got != `{"a":4,"b":6}` {
		t.Errorf("first call = %s", got)
	}
	if got := fx.call(t, "csv_sum", `{"csv":"x,y,z\n1,1,1\n2,2,2\n3,3,3"}`); got != `{"x":6,"y":6,"z":6}` {
		t.Errorf("second call = %s", got)
	}
	again := fx.skill(t, "csv_sum")
	if again.Container != sk.Container || again.Version != 1 || again.LastUsedAt == nil {
		t.Errorf("a call rebuilt or replaced the skill: %+v", again)
	}
	insp, err := fx.eng.Client().ContainerInspect(t.Context(), sk.Container)
	if err != nil {
		t.Fatal(err)
	}
	hc := insp.HostConfig
	if !hc.ReadonlyRootfs || hc.CapDrop[0] != "ALL" || insp.Config.User != "65534:65534" || *hc.PidsLimit != 128 || hc.Memory != 256<<20 {
		t.Errorf("skill container is not hardened: %+v user %s", hc, insp.Config.User)
	}
	if nets := insp.NetworkSettings.Networks; len(nets) != 1 || nets[fx.eng.Name(docker.NetSkills)] == nil {
		t.Errorf("skill networks = %v, want only the internal skills network", nets)
	}
}

func TestBrokenCodeIsReportedThenFixed(t *testing.T) {
	t.Parallel()
	fx := newFixture(t, shared.eng)
	logs := &bytes.Buffer{} // Create writes it before it returns
	fx.f = skill.New(shared.eng, fx.st, slog.New(slog.NewTextHandler(logs, nil)))
	ctx := t.Context()
	_, err := fx.f.Create(ctx, csvSpec("csv_fix", "for x in; do echo $x\n"), nil)
	if err == nil || !strings.Contains(err.Error(), "syntax error") || !strings.Contains(err.Error(), "build log") {
		t.Fatalf("broken handler: err = %v, want the build log with the shell's syntax error", err)
	}
	failed := fx.skill(t, "csv_fix")
	if failed.Status != domain.SkillFailed || failed.Version != 1 || !strings.Contains(failed.Error, "syntax error") {
		t.Errorf("failed record = %+v", failed)
	}
	if _, err := fx.f.Call(ctx, "csv_fix", json.RawMessage(`{"csv":"a\n1"}`), nil); err == nil || !strings.Contains(err.Error(), "no working version") {
		t.Errorf("call of a failed skill: %v", err)
	}
	sk, err := fx.f.Create(ctx, csvSpec("csv_fix", csvSum), nil)
	if err != nil {
		t.Fatal(err)
	}
	if sk.Version != 2 || sk.Status != domain.SkillReady {
		t.Errorf("fixed = %+v", sk)
	}
	if got := fx.call(t, "csv_fix", `{"csv":"a\n1\n2"}`); got != `{"a":3}` {
		t.Errorf("call = %s", got)
	}

	// A service that never gets healthy: its own output is the error, and
	// the working version keeps serving.
	crash := domain.SkillSpec{Name: "csv_fix", Description: "crashes", CreatedBy: "w-owner", Files: map[string]string{
		"Dockerfile": "FROM skill-base\nENTRYPOINT [\"/bin/sh\", \"-c\", \"echo config file missing >&2; exit 4\"]\n"}}
	_, err = fx.f.Create(ctx, crash, nil)
	for _, want := range []string{"exited with status 4", "config file missing", "version 2 keeps serving"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("crashing service: err = %v, want %q", err, want)
		}
	}
	if got := fx.call(t, "csv_fix", `{"csv":"a\n5"}`); got != `{"a":5}` {
		t.Errorf("after a failed rebuild, call = %s", got)
	}
	for _, want := range []string{
		`level=WARN msg="skill build" component=skill skill=csv_fix version=1 by=w-owner outcome=failed duration=`,
		`reason="build: `,
		`level=INFO msg="skill build" component=skill skill=csv_fix version=2 by=w-owner outcome=ok duration=`,
		`msg="skill build" component=skill skill=csv_fix version=3 by=w-owner outcome=failed`,
	} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("server log lacks %s:\n%s", want, logs.String())
		}
	}
}

func TestIdleSkillStopsAndStartsOnTheNextCall(t *testing.T) {
	t.Parallel()
	fx := newFixture(t, shared.eng)
	ctx := t.Context()
	set(t, fx.st, skill.IdleTimeoutSetting, "10m")
	sk, err := fx.f.Create(ctx, csvSpec("csv_idle", csvSum), nil)
	if err != nil {
		t.Fatal(err)
	}
	fx.call(t, "csv_idle", `{"csv":"a\n1"}`)
	fx.clock.Advance(9 * time.Minute)
	if n, err := fx.f.StopIdle(ctx); err != nil || n != 0 {
		t.Fatalf("stopped %d, %v before the idle timeout", n, err)
	}
	fx.clock.Advance(2 * time.Minute)
	if n, err := fx.f.StopIdle(ctx); err != nil || n != 1 {
		t.Fatalf("stopped %d, %v; want 1", n, err)
	}
	if got := fx.skill(t, "csv_idle"); got.Status != domain.SkillStopped || fx.running(t, sk.Container) {
		t.Fatalf("after idle stop: %s, running %v", got.Status, fx.running(t, sk.Container))
	}
	if got := fx.call(t, "csv_idle", `{"csv":"a\n7"}`); got != `{"a":7}` {
		t.Errorf("call after idle stop = %s", got)
	}
	if got := fx.skill(t, "csv_idle"); got.Status != domain.SkillReady || !fx.running(t, got.Container) {
		t.Errorf("after the call: %+v", got)
	}
}

// TestSkillsSurviveARestart: a new factory over the same store (the
// server restarted) finds the skill running; after its container was
// killed it restarts it; with its image gone it marks it failed.
func TestSkillsSurviveARestart(t *testing.T) {
	t.Parallel()
	eng := dockertest.Engine(t)
	fx := newFixture(t, eng)
	ctx := t.Context()
	sk, err := fx.f.Create(ctx, csvSpec("csv_restart", csvSum), nil)
	if err != nil {
		t.Fatal(err)
	}
	restart := func() *skill.Factory {
		f := skill.New(eng, fx.st, nil)
		if err := f.Recover(ctx); err != nil {
			t.Logf("recover: %v", err)
		}
		return f
	}
	f2 := restart()
	if out, err := f2.Call(ctx, "csv_restart", json.RawMessage(`{"csv":"a\n2"}`), nil); err != nil || string(out) != `{"a":2}` {
		t.Errorf("after restart: %s, %v", out, err)
	}
	if got := fx.skill(t, "csv_restart"); got.Container != sk.Container {
		t.Errorf("a healthy container was replaced on restart")
	}

	if err := eng.Client().ContainerKill(ctx, sk.Container, "KILL"); err != nil {
		t.Fatal(err)
	}
	f3 := restart()
	if got := fx.skill(t, "csv_restart"); got.Status != domain.SkillReady || !fx.running(t, got.Container) {
		t.Errorf("killed container not restarted on recover: %+v", got)
	}
	if out, err := f3.Call(ctx, "csv_restart", json.RawMessage(`{"csv":"a\n3"}`), nil); err != nil || string(out) != `{"a":3}` {
		t.Errorf("after recover: %s, %v", out, err)
	}

	// Gone entirely: the container and its image. Recover marks it failed.
	eng.Client().ContainerRemove(ctx, sk.Container, container.RemoveOptions{Force: true})
	eng.Client().ImageRemove(ctx, sk.Image, image.RemoveOptions{Force: true})
	restart()
	if got := fx.skill(t, "csv_restart"); got.Status != domain.SkillFailed || !strings.Contains(got.Error, "did not come back") {
		t.Errorf("unrecoverable skill: %+v", got)
	}
}

// TestSkillReachesNothing: from inside a skill container neither the
// server's listener for agents nor the metadata address answers, unless
// skill.networks joins the skill to a network that leads there.
func TestSkillReachesNothing(t *testing.T) {
	t.Parallel()
	fx := newFixture(t, shared.eng)
	ctx := t.Context()
	agents, err := shared.eng.Network(ctx, docker.NetAgents)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := agents.Listen(ctx)
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, "reached-the-server") })}
	go hs.Serve(ln)
	t.Cleanup(func() { hs.Close() })
	// Not wget -T: busybox 1.35's static wget crashes with it, which would
	// pass for "blocked". The allowed case below proves the probe can reach.
	probe := `for url in "$INPUT_SERVER" http://169.254.169.254/; do
  if out=$(timeout 3 wget -q -O - "$url" 2>&1); then echo "REACHED $url: $out"; else echo "blocked $url: $out"; fi
done`
	if _, err := fx.f.Create(ctx, domain.SkillSpec{Name: "net_probe", Description: "probe", Template: skill.TemplateShell, Handler: probe, CreatedBy: "w-owner"}, nil); err != nil {
		t.Fatal(err)
	}
	out := fx.call(t, "net_probe", fmt.Sprintf(`{"server":"http://%s/"}`, ln.Addr()))
	if strings.Contains(out, "REACHED") || strings.Count(out, "blocked") != 2 {
		t.Errorf("probe = %s", out)
	}

	// Allowed: an operator names a network in skill.networks, and the
	// skill reaches what is on it (here a listener on its gateway) — and
	// still nothing else.
	egress, err := shared.eng.Network(ctx, "egress-test")
	if err != nil {
		t.Fatal(err)
	}
	eln, err := egress.Listen(ctx)
	if err != nil {
		t.Fatal(err)
	}
	es := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, "reached-egress") })}
	go es.Serve(eln)
	t.Cleanup(func() { es.Close() })
	set(t, fx.st, skill.NetworksSetting, fmt.Sprintf(`{"net_probe_allowed":[%q]}`, egress.Name))
	if _, err := fx.f.Create(ctx, domain.SkillSpec{Name: "net_probe_allowed", Description: "probe", Template: skill.TemplateShell,
		Handler: strings.Replace(probe, `"$INPUT_SERVER"`, `"$INPUT_SERVER" "$INPUT_EGRESS"`, 1), CreatedBy: "w-owner"}, nil); err != nil {
		t.Fatal(err)
	}
	out = fx.call(t, "net_probe_allowed", fmt.Sprintf(`{"server":"http://%s/","egress":"http://%s/"}`, ln.Addr(), eln.Addr()))
	if !strings.Contains(out, "REACHED http://"+eln.Addr().String()+"/: reached-egress") || strings.Count(out, "blocked") != 2 {
		t.Errorf("probe with an egress network = %s", out)
	}
}

// TestSecretsComeFromConfigOnly: a skill's secret reaches its process as
// an environment variable and appears nowhere in its image.
func TestSecretsComeFromConfigOnly(t *testing.T) {
	t.Parallel()
	fx := newFixture(t, shared.eng)
	ctx := t.Context()
	set(t, fx.st, skill.EnvSetting, `{"env_probe":{"API_KEY":"s3cret-canary"}}`)
	sk, err := fx.f.Create(ctx, domain.SkillSpec{Name: "env_probe", Description: "probe", Template: skill.TemplateShell,
		Handler: `echo "key=$API_KEY"`, CreatedBy: "w-owner"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := fx.call(t, "env_probe", `{}`); got != `"key=s3cret-canary"` {
		t.Errorf("call = %s", got)
	}
	hist, err := fx.eng.Client().ImageHistory(ctx, sk.Image)
	if err != nil {
		t.Fatal(err)
	}
	insp, err := fx.eng.Client().ImageInspect(ctx, sk.Image)
	if err != nil {
		t.Fatal(err)
	}
	all := fmt.Sprintf("%+v %+v", hist, insp.Config)
	if strings.Contains(all, "s3cret") {
		t.Errorf("the secret is in the image: %s", all)
	}
}

func TestBuildsAreConfined(t *testing.T) {
	t.Parallel()
	fx := newFixture(t, shared.eng)
	ctx := t.Context()
	noNet := domain.SkillSpec{Name: "no_net", Description: "d", CreatedBy: "w-owner", Files: map[string]string{
		"Dockerfile": "FROM skill-base\nRUN [\"/bin/sh\", \"-c\", \"ip -o addr | grep -q ' lo ' || exit 2; if ip -o addr | grep -v ' lo ' | grep -q inet; then echo BUILD-HAS-NETWORK; exit 1; fi\"]\nCOPY h.sh /skill/handler.sh\n",
		"h.sh":       "echo ok\n"}}
	// The step fails (2) if ip cannot list even loopback, so passing it
	// means it looked and saw no other interface.
	if _, err := fx.f.Create(ctx, noNet, nil); err != nil {
		t.Errorf("a build step saw a network interface, or could not look: %v", err)
	}

	tests := []struct {
		name    string
		setting domain.SettingSpec
		value   string
		spec    domain.SkillSpec
		want    []string
	}{
		{"build over the time cap", skill.BuildTimeoutSetting, "2s",
			domain.SkillSpec{Files: map[string]string{"Dockerfile": "FROM skill-base\nRUN [\"/bin/sleep\", \"60\"]\n"}},
			[]string{"timed out"}},
		{"image over the size cap", skill.MaxImageSetting, "1k",
			domain.SkillSpec{Template: skill.TemplateShell, Handler: "echo hi"},
			[]string{"the limit (skill.max_image_size)"}},
		{"base image not in the daemon", skill.MaxImageSetting, "1g",
			domain.SkillSpec{Files: map[string]string{"Dockerfile": "FROM python:3-slim\nCOPY h.py /h.py\n", "h.py": "x"}},
			[]string{`base image "python:3-slim" is not in the Docker daemon`, "never pull"}},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fx := newFixture(t, shared.eng)
			set(t, fx.st, tc.setting, tc.value)
			tc.spec.Name, tc.spec.Description, tc.spec.CreatedBy = fmt.Sprintf("confined_%d", i), "d", "w-owner"
			start := time.Now()
			_, err := fx.f.Create(ctx, tc.spec, nil)
			for _, w := range tc.want {
				if err == nil || !strings.Contains(err.Error(), w) {
					t.Errorf("err = %v, want %q", err, w)
				}
			}
			if time.Since(start) > 30*time.Second {
				t.Errorf("took %s", time.Since(start))
			}
		})
	}
}

func TestDeleteRemovesEverything(t *testing.T) {
	t.Parallel()
	fx := newFixture(t, shared.eng)
	ctx := t.Context()
	sk, err := fx.f.Create(ctx, csvSpec("csv_delete", csvSum), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := fx.f.Delete(ctx, "w-owner", "csv_delete"); err != nil {
		t.Fatal(err)
	}
	if _, err := fx.eng.Client().ContainerInspect(ctx, sk.Container); err == nil {
		t.Error("container left after delete")
	}
	if _, err := fx.eng.Client().ImageInspect(ctx, sk.Image); err == nil {
		t.Error("image left after delete")
	}
	if _, err := fx.f.Call(ctx, "csv_delete", nil, nil); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Errorf("call after delete: %v", err)
	}
}

func TestCreateRefusesBadSpecs(t *testing.T) {
	t.Parallel()
	fx := newFixture(t, shared.eng)
	ok := domain.SkillSpec{Name: "ok_name", Description: "d", Template: skill.TemplateShell, Handler: "echo"}
	tests := []struct {
		name string
		edit func(s *domain.SkillSpec)
		want string
	}{
		{"bad name", func(s *domain.SkillSpec) { s.Name = "Bad-Name" }, `name: "Bad-Name" must be`},
		{"no description", func(s *domain.SkillSpec) { s.Description = " " }, "description: is required"},
		{"unknown template", func(s *domain.SkillSpec) { s.Template = "ruby" }, `unknown template "ruby" (valid: "shell", "python")`},
		{"template without handler", func(s *domain.SkillSpec) { s.Handler = "" }, "handler: is required with a template"},
		{"handler without template", func(s *domain.SkillSpec) { s.Template = "" }, "handler: needs a template"},
		{"nothing to build", func(s *domain.SkillSpec) { s.Template, s.Handler = "", "" }, "files: give a template and handler, or files including a Dockerfile"},
		{"schema not an object", func(s *domain.SkillSpec) { s.InputSchema = json.RawMessage(`{"type":"string"}`) }, `inputSchema: must have "type": "object"`},
		{"schema not JSON", func(s *domain.SkillSpec) { s.InputSchema = json.RawMessage(`{`) }, "inputSchema: must be a JSON Schema object"},
		{"path escapes the context", func(s *domain.SkillSpec) { s.Files = map[string]string{"../x": "y"} }, `files: "../x" is not a clean relative path`},
		{"absolute path", func(s *domain.SkillSpec) { s.Files = map[string]string{"/etc/x": "y"} }, `files: "/etc/x" is not a clean relative path`},
		{"syntax directive", func(s *domain.SkillSpec) {
			s.Template, s.Handler, s.Files = "", "", map[string]string{"Dockerfile": "  # Syntax = docker/dockerfile:1\nFROM skill-base\n"}
		}, "Dockerfile line 1: `# syntax=` directives are refused"},
		{"ADD from a URL", func(s *domain.SkillSpec) {
			s.Template, s.Handler, s.Files = "", "", map[string]string{"Dockerfile": "FROM skill-base\nADD https://example.com/x /x\n"}
		}, "Dockerfile line 2: ADD from a URL or git repository is refused"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			spec := ok
			tc.edit(&spec)
			_, err := fx.f.Create(t.Context(), spec, nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want %q", err, tc.want)
			}
		})
	}
	all, _ := fx.st.ListSkills(t.Context())
	if diff := cmp.Diff(0, len(all)); diff != "" {
		t.Errorf("refused specs were recorded: %+v", all)
	}
}
