package skill

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/docker/docker/api/types/image"

	"github.com/helixml/helix-org/agent/docker"
	"github.com/helixml/helix-org/domain"
)

// Rollback puts the previous working version of a skill back: the newest
// version below the serving one that built, was healthy and passed its
// examples, and was not itself rolled back. Its image is kept for this,
// and rebuilt from its stored source if it is gone. It must come up
// healthy and pass its examples again; until it does, the current version
// keeps serving. The version rolled back from is never a target again.
func (f *Factory) Rollback(ctx context.Context, actor, name string, narrate func(string)) (domain.Skill, error) {
	note := Note(narrate)
	defer f.lock(createKey(name))()
	cur, err := f.st.GetSkill(ctx, name)
	if err != nil {
		return domain.Skill{}, err
	}
	versions, err := f.st.SkillVersions(ctx, name)
	if err != nil {
		return domain.Skill{}, err
	}
	target, ok := rollbackTarget(versions, cur.Version)
	if !ok {
		return domain.Skill{}, domain.Invalid("name", "skill %s has no working version before version %d to roll back to", name, cur.Version)
	}
	ver, err := f.st.GetSkillVersion(ctx, name, target)
	if err != nil {
		return domain.Skill{}, err
	}
	note.say("rolling skill %s back from version %d to version %d…", name, cur.Version, target)
	id, addr, err := f.bringBack(ctx, ver, note)
	if err != nil {
		return domain.Skill{}, fmt.Errorf("roll skill %s back to version %d: %w\n(version %d keeps serving)", name, target, err, cur.Version)
	}
	sk := domain.Skill{Name: name, Description: ver.Description, InputSchema: ver.InputSchema, Template: ver.Template, Version: target,
		Image: f.imageTag(name, target), Container: id, Status: domain.SkillReady, CreatedBy: ver.CreatedBy}
	unlock := f.lock(name)
	saved, err := f.st.RollbackSkill(context.WithoutCancel(ctx), actor, sk, cur.Version)
	if err == nil {
		f.setAddr(name, addr)
	}
	unlock()
	if err != nil {
		f.eng.RemoveContainer(id)
		return domain.Skill{}, err
	}
	f.eng.RemoveContainer(cur.Container)
	keep := []string{sk.Image}
	if next, ok := rollbackTarget(versions, target); ok {
		keep = append(keep, f.imageTag(name, next))
	}
	f.pruneImages(ctx, name, keep...)
	note.say("skill %s version %d is live again", name, target)
	return saved, nil
}

// rollbackTarget is the newest working version below version.
func rollbackTarget(versions []domain.SkillVersion, below int) (int, bool) {
	for i := len(versions) - 1; i >= 0; i-- {
		if v := versions[i]; v.Version < below && v.Status == domain.VersionOK {
			return v.Version, true
		}
	}
	return 0, false
}

// bringBack starts an earlier version from its image, rebuilding the
// image from the version's source if it was pruned.
func (f *Factory) bringBack(ctx context.Context, ver domain.SkillVersion, note Note) (string, string, error) {
	img := f.imageTag(ver.Name, ver.Version)
	if f.hasImage(ctx, img) {
		note.say("starting version %d from its kept image…", ver.Version)
		id, addr, err := f.launch(ctx, ver.Name, ver.Version, img)
		if err != nil {
			return "", "", err
		}
		if err := f.checkExamples(ctx, addr, ver.Examples, note); err != nil {
			f.eng.RemoveContainer(id)
			return "", "", err
		}
		note.say("version %d is healthy", ver.Version)
		return id, addr, nil
	}
	note.say("the image of version %d is gone; rebuilding it from its stored source", ver.Version)
	var files []docker.File
	for _, p := range slices.Sorted(maps.Keys(ver.Files)) {
		files = append(files, docker.File{Name: p, Mode: 0o644, Data: []byte(ver.Files[p])})
	}
	return f.bringUp(ctx, &ver, files, note)
}

// pruneImages removes a skill's images but the ones named: a skill keeps
// the serving version's image and its rollback target's.
func (f *Factory) pruneImages(ctx context.Context, name string, keep ...string) {
	imgs, err := f.eng.Client().ImageList(ctx, image.ListOptions{Filters: f.eng.Filter(docker.LabelKind, docker.KindSkill, docker.LabelSkill, name)})
	if err != nil {
		f.log.Warn("list images of skill", "skill", name, "err", err)
		return
	}
	for _, im := range imgs {
		if len(im.RepoTags) == 0 {
			f.removeImage(im.ID)
		}
		for _, tag := range im.RepoTags {
			if !slices.Contains(keep, tag) {
				f.removeImage(tag)
			}
		}
	}
}
