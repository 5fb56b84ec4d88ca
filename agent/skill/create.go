package skill

import (
	"context"
	"errors"
	"fmt"

	"github.com/helixml/helix-org/domain"
)

// Create builds a new version of a skill, starts it and waits for it to
// be healthy; only then does it replace the running version. A failure
// comes back with the build log's tail or the container's output, so the
// agent that wrote the code can fix it and call again.
func (f *Factory) Create(ctx context.Context, spec domain.SkillSpec) (domain.Skill, error) {
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
	sk := domain.Skill{Name: spec.Name, Description: spec.Description, InputSchema: schema, Template: spec.Template,
		Version: 1, Status: domain.SkillReady, CreatedBy: spec.CreatedBy}
	if exists {
		sk.Version = prev.Version + 1
	}
	img, err := f.buildImage(ctx, sk.Name, sk.Version, files)
	if err != nil {
		return f.failed(ctx, prev, exists, sk, fmt.Errorf("build: %w", err))
	}
	id, addr, err := f.launch(ctx, sk.Name, sk.Version, img)
	if err != nil {
		f.removeImage(img)
		return f.failed(ctx, prev, exists, sk, err)
	}
	sk.Image, sk.Container = img, id
	saved, err := f.swap(ctx, sk, addr)
	if err != nil {
		f.eng.RemoveContainer(id)
		f.removeImage(img)
		return domain.Skill{}, err
	}
	if exists {
		f.retire(prev, img)
	}
	return saved, nil
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

// failed reports a version that did not come up. When no working version
// exists the failure is recorded, so list_skills shows why; otherwise the
// old version keeps serving and the record stays as it was.
func (f *Factory) failed(ctx context.Context, prev domain.Skill, exists bool, sk domain.Skill, cause error) (domain.Skill, error) {
	err := fmt.Errorf("skill %s version %d failed: %w", sk.Name, sk.Version, cause)
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

// retire removes the version a new one replaced.
func (f *Factory) retire(prev domain.Skill, newImage string) {
	f.eng.RemoveContainer(prev.Container)
	if prev.Image != "" && prev.Image != newImage {
		f.removeImage(prev.Image)
	}
}
