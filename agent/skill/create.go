package skill

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/helixml/helix-org/agent/docker"
	"github.com/helixml/helix-org/domain"
)

// Create builds a new version of a skill, starts it, waits for it to be
// healthy and checks it against the spec's examples; only then does it
// replace the running version. A failure comes back with the build log's
// tail, the container's output or the example that failed, so the agent
// that wrote the code can fix it and call again — up to
// skill.max_failed_builds times in a row.
func (f *Factory) Create(ctx context.Context, spec domain.SkillSpec, narrate func(string)) (domain.Skill, error) {
	note := Note(narrate)
	files, err := validate(spec)
	if err != nil {
		return domain.Skill{}, err
	}
	schema, _ := InputSchema(spec.InputSchema)
	if err := f.eng.Ping(ctx); err != nil {
		return domain.Skill{}, fmt.Errorf("skills need Docker: %w", err)
	}
	// Builds of one skill queue; calls to its running version go on.
	defer f.lock(createKey(spec.Name))()
	prev, err := f.st.GetSkill(ctx, spec.Name)
	exists := err == nil
	if err != nil && !errors.Is(err, domain.ErrNotFound) {
		return domain.Skill{}, err
	}
	versions, err := f.st.SkillVersions(ctx, spec.Name)
	if err != nil {
		return domain.Skill{}, err
	}
	failures := failedInARow(versions)
	if bound := int(f.st.IntSetting(ctx, MaxFailedBuildsSetting)); !spec.ByHuman && bound > 0 && failures >= bound {
		return domain.Skill{}, fmt.Errorf("skill %s: its last %d builds failed (%s is %d): stop here and ask a human for help. "+
			"The count resets with a successful build, and a human worker's create_skill is never refused; an operator can raise %s",
			spec.Name, failures, MaxFailedBuildsSetting.Key, bound, MaxFailedBuildsSetting.Key)
	}
	sk := domain.Skill{Name: spec.Name, Description: spec.Description, InputSchema: schema, Template: spec.Template,
		Version: nextVersion(prev, versions), Status: domain.SkillReady, CreatedBy: spec.CreatedBy}
	ver := domain.SkillVersion{Name: sk.Name, Version: sk.Version, Status: domain.VersionOK, Description: sk.Description,
		InputSchema: schema, Template: sk.Template, Files: filesMap(files), Examples: spec.Examples, CreatedBy: spec.CreatedBy}
	begin := time.Now()
	id, addr, err := f.bringUp(ctx, &ver, files, note)
	f.logBuild(ver, time.Since(begin), err)
	if err != nil {
		return f.failed(ctx, prev, exists, sk, ver, err, failures+1)
	}
	sk.Image, sk.Container = f.imageTag(sk.Name, sk.Version), id
	if err := f.st.SaveSkillVersion(context.WithoutCancel(ctx), ver); err != nil {
		f.discard(id, sk.Image)
		return domain.Skill{}, err
	}
	saved, err := f.swap(ctx, sk, addr)
	if err != nil {
		f.discard(id, sk.Image)
		return domain.Skill{}, err
	}
	if exists {
		f.eng.RemoveContainer(prev.Container)
	}
	keep := []string{sk.Image}
	if target, ok := rollbackTarget(versions, sk.Version); ok {
		keep = append(keep, f.imageTag(sk.Name, target))
		note.say("skill %s version %d is live; rollback_skill would put version %d back", sk.Name, sk.Version, target)
	} else {
		note.say("skill %s version %d is live as the tool %s", sk.Name, sk.Version, sk.ToolName())
	}
	f.pruneImages(ctx, sk.Name, keep...)
	return saved, nil
}

// bringUp builds a version's image, starts it, waits for it to be
// healthy and checks its examples, narrating each step. On success the
// container is running at addr; on failure nothing of it is left.
func (f *Factory) bringUp(ctx context.Context, ver *domain.SkillVersion, files []docker.File, note Note) (string, string, error) {
	note.say("building skill %s version %d…", ver.Name, ver.Version)
	start := time.Now()
	img, log, err := f.buildImage(ctx, ver.Name, ver.Version, files, note)
	ver.BuildLog = log
	if err != nil {
		note.say("build of %s version %d failed", ver.Name, ver.Version)
		return "", "", fmt.Errorf("build: %w", err)
	}
	note.say("built %s in %s; starting it and waiting for GET /health…", img, time.Since(start).Round(100*time.Millisecond))
	start = time.Now()
	id, addr, err := f.launch(ctx, ver.Name, ver.Version, img)
	if err != nil {
		f.removeImage(img)
		note.say("%s version %d did not become healthy", ver.Name, ver.Version)
		return "", "", err
	}
	note.say("healthy in %s", time.Since(start).Round(10*time.Millisecond))
	if len(ver.Examples) > 0 {
		note.say("checking %d example(s)…", len(ver.Examples))
	}
	if err := f.checkExamples(ctx, addr, ver.Examples, note); err != nil {
		f.discard(id, img)
		note.say("%s version %d failed an example", ver.Name, ver.Version)
		return "", "", err
	}
	return id, addr, nil
}

// logBuild writes the one server-log line of a build — built, started,
// healthy and through its examples, or why not — and reports it.
func (f *Factory) logBuild(ver domain.SkillVersion, took time.Duration, err error) {
	if f.OnBuild != nil {
		f.OnBuild(err == nil, took)
	}
	if err == nil {
		f.log.Info("skill build", "skill", ver.Name, "version", ver.Version, "by", ver.CreatedBy, "outcome", "ok", "duration", took.Round(time.Millisecond))
		return
	}
	reason, _, _ := strings.Cut(err.Error(), "\n")
	f.log.Warn("skill build", "skill", ver.Name, "version", ver.Version, "by", ver.CreatedBy, "outcome", "failed", "duration", took.Round(time.Millisecond), "reason", reason)
}

// discard removes a version that will not serve.
func (f *Factory) discard(container, img string) {
	f.eng.RemoveContainer(container)
	f.removeImage(img)
}

// failedInARow counts the newest versions that failed, back to the last
// one that worked.
func failedInARow(versions []domain.SkillVersion) int {
	n := 0
	for i := len(versions) - 1; i >= 0 && versions[i].Status == domain.VersionFailed; i-- {
		n++
	}
	return n
}

// nextVersion numbers a new build after every earlier one, including
// versions a rollback left behind.
func nextVersion(prev domain.Skill, versions []domain.SkillVersion) int {
	n := prev.Version
	if len(versions) > 0 {
		n = max(n, versions[len(versions)-1].Version)
	}
	return n + 1
}

func filesMap(files []docker.File) map[string]string {
	out := make(map[string]string, len(files))
	for _, f := range files {
		out[f.Name] = string(f.Data)
	}
	return out
}

// createKey is the lock that queues builds of one skill.
func createKey(name string) string { return "create " + name }

// launch creates and starts a version's container and waits for it to be
// healthy, removing it if it is not.
func (f *Factory) launch(ctx context.Context, name string, version int, img string) (string, string, error) {
	id, err := f.createContainer(ctx, name, version, img)
	if err != nil {
		return "", "", err
	}
	addr, err := f.start(ctx, id)
	if err != nil {
		f.eng.RemoveContainer(id)
		return "", "", err
	}
	return id, addr, nil
}

// swap makes a healthy new version the one calls go to.
func (f *Factory) swap(ctx context.Context, sk domain.Skill, addr string) (domain.Skill, error) {
	defer f.lock(sk.Name)()
	saved, err := f.st.SaveSkill(context.WithoutCancel(ctx), sk.CreatedBy, sk)
	if err != nil {
		return domain.Skill{}, err
	}
	f.setAddr(sk.Name, addr)
	return saved, nil
}

// failed records and reports a version that did not come up. When no
// working version exists the skill's record says so too, so list_skills
// shows why; otherwise the old version keeps serving and the record stays
// as it was.
func (f *Factory) failed(ctx context.Context, prev domain.Skill, exists bool, sk domain.Skill, ver domain.SkillVersion, cause error, inARow int) (domain.Skill, error) {
	err := fmt.Errorf("skill %s version %d failed: %w", sk.Name, sk.Version, cause)
	ver.Status, ver.Error = domain.VersionFailed, err.Error()
	if serr := f.st.SaveSkillVersion(context.WithoutCancel(ctx), ver); serr != nil {
		return domain.Skill{}, errors.Join(err, serr)
	}
	if bound := int(f.st.IntSetting(ctx, MaxFailedBuildsSetting)); bound > 0 {
		err = fmt.Errorf("%w\n(%d of %d failed builds in a row allowed before you must ask a human)", err, inARow, bound)
	}
	if exists && prev.Status != domain.SkillFailed {
		return domain.Skill{}, fmt.Errorf("%w\n(version %d keeps serving)", err, prev.Version)
	}
	sk.Status, sk.Error, sk.Image, sk.Container = domain.SkillFailed, err.Error(), "", ""
	if exists {
		sk.Container = prev.Container
	}
	if _, serr := f.st.SaveSkill(context.WithoutCancel(ctx), sk.CreatedBy, sk); serr != nil {
		return domain.Skill{}, errors.Join(err, serr)
	}
	return domain.Skill{}, err
}
