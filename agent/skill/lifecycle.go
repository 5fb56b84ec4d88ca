package skill

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/image"

	"github.com/helixml/helix-org/agent/docker"
	"github.com/helixml/helix-org/domain"
)

// Recover runs at start-up: it removes skill containers no record points
// at (an interrupted create), then health-checks every ready skill,
// restarting its container if needed, and marks it failed if it cannot
// be brought back.
func (f *Factory) Recover(ctx context.Context) error {
	skills, err := f.st.ListSkills(ctx)
	if err != nil {
		return err
	}
	current := map[string]string{}
	for _, sk := range skills {
		current[sk.Name] = sk.Container
	}
	list, err := f.eng.Client().ContainerList(ctx, container.ListOptions{All: true, Filters: f.eng.Filter(docker.LabelKind, docker.KindSkill)})
	if err != nil {
		return fmt.Errorf("list skill containers: %w", err)
	}
	for _, c := range list {
		if current[c.Labels[docker.LabelSkill]] != c.ID {
			f.eng.RemoveContainer(c.ID)
		}
	}
	var errs []error
	for _, sk := range skills {
		if sk.Status != domain.SkillReady {
			continue
		}
		if err := f.recover(ctx, sk); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func (f *Factory) recover(ctx context.Context, sk domain.Skill) error {
	defer f.lock(sk.Name)()
	if _, err := f.running(ctx, sk); err != nil {
		f.log.Warn("skill did not come back after restart", "skill", sk.Name, "err", err)
		return f.st.SetSkillState(ctx, sk.Name, domain.SkillFailed, sk.Container, "did not come back after a restart: "+err.Error())
	}
	f.log.Info("skill ready", "skill", sk.Name, "version", sk.Version)
	return nil
}

// StopIdle stops every ready skill not called for skill.idle_timeout and
// returns how many it stopped. A stopped skill starts on its next call.
func (f *Factory) StopIdle(ctx context.Context) (int, error) {
	idle := f.st.DurationSetting(ctx, IdleTimeoutSetting)
	if idle <= 0 {
		return 0, nil
	}
	skills, err := f.st.ListSkills(ctx)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, sk := range skills {
		stopped, err := f.stopIfIdle(ctx, sk.Name, idle)
		if err != nil {
			return n, err
		}
		if stopped {
			n++
		}
	}
	return n, nil
}

func (f *Factory) stopIfIdle(ctx context.Context, name string, idle time.Duration) (bool, error) {
	defer f.lock(name)()
	sk, err := f.st.GetSkill(ctx, name)
	if err != nil || sk.Status != domain.SkillReady || f.busy(name) {
		return false, nil
	}
	last := sk.UpdatedAt
	if sk.LastUsedAt != nil && sk.LastUsedAt.After(last) {
		last = *sk.LastUsedAt
	}
	if f.st.Now().Sub(last) < idle {
		return false, nil
	}
	if err := f.park(ctx, sk); err != nil {
		return false, err
	}
	f.log.Info("stopped idle skill", "skill", name, "idle", f.st.Now().Sub(last).Round(time.Second))
	return true, nil
}

// park stops a skill's container and records it as stopped. The caller
// holds the skill's lock.
func (f *Factory) park(ctx context.Context, sk domain.Skill) error {
	f.setAddr(sk.Name, "")
	if err := f.stop(ctx, sk.Container); err != nil {
		return err
	}
	return f.st.SetSkillState(ctx, sk.Name, domain.SkillStopped, sk.Container, "")
}

// Run stops idle skills every tick until ctx ends.
func (f *Factory) Run(ctx context.Context, tick time.Duration) {
	t := time.NewTicker(tick)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if _, err := f.StopIdle(ctx); err != nil && ctx.Err() == nil {
				f.log.Error("stop idle skills", "err", err)
			}
		}
	}
}

// Shutdown stops every running skill, so a stopped server leaves no
// container running; each starts again on its first call after restart.
func (f *Factory) Shutdown(ctx context.Context) error {
	skills, err := f.st.ListSkills(ctx)
	if err != nil {
		return err
	}
	var errs []error
	for _, sk := range skills {
		if sk.Status != domain.SkillReady {
			continue
		}
		unlock := f.lock(sk.Name)
		errs = append(errs, f.park(ctx, sk))
		unlock()
	}
	return errors.Join(errs...)
}

// Delete removes a skill: its containers, its images and its record
// (with every grant of its tool).
func (f *Factory) Delete(ctx context.Context, actor, name string) error {
	defer f.lock(createKey(name))()
	defer f.lock(name)()
	if _, err := f.st.GetSkill(ctx, name); err != nil {
		return err
	}
	f.setAddr(name, "")
	cs, err := f.eng.Client().ContainerList(ctx, container.ListOptions{All: true, Filters: f.eng.Filter(docker.LabelKind, docker.KindSkill, docker.LabelSkill, name)})
	if err != nil {
		return fmt.Errorf("list containers of skill %s: %w", name, err)
	}
	for _, c := range cs {
		f.eng.RemoveContainer(c.ID)
	}
	imgs, err := f.eng.Client().ImageList(ctx, image.ListOptions{Filters: f.eng.Filter(docker.LabelKind, docker.KindSkill, docker.LabelSkill, name)})
	if err != nil {
		return fmt.Errorf("list images of skill %s: %w", name, err)
	}
	for _, im := range imgs {
		f.removeImage(im.ID)
	}
	return f.st.DeleteSkill(ctx, actor, name)
}
