package tools

import (
	"context"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store/designdocs"
)

// The settings for spec tasks whose repository is a URL.
var (
	SpecClonesDirSetting = domain.SettingSpec{Key: "spec_tasks.clones_dir", Type: domain.SettingString, Default: "./clones",
		Description: "Directory where the server clones spec tasks' repositories given as URLs (relative to its working directory)."}
	SpecMaxCloneSetting = domain.SettingSpec{Key: designdocs.MaxBytesKey, Type: domain.SettingInt, Default: "1073741824",
		Description: "Most bytes a clone of a spec task's repository may take on disk; a larger one is stopped, removed and refused. 0 or less: no limit."}
	SpecAllowPrivateSetting = domain.SettingSpec{Key: designdocs.AllowPrivateKey, Type: domain.SettingBool, Default: "false",
		Description: "Let spec tasks' http(s) repository URLs reach loopback, private, link-local and metadata addresses. Off by default."}
	SpecRepoRootsSetting = domain.SettingSpec{Key: designdocs.RepoRootsKey, Type: domain.SettingString,
		Description: "Comma-separated absolute paths under which spec tasks' local repositories (paths and file:// URLs) may be; empty refuses them all.",
		Validate:    func(v string) error { _, err := designdocs.ParseRoots(v); return err }}
)

// remote is how the server reaches spec tasks' repositories, local or
// given as URLs, as the settings say now.
func remote(ctx context.Context, env *Env) designdocs.Remote {
	dir, _ := env.Store.SettingOr(ctx, SpecClonesDirSetting)
	raw, _ := env.Store.SettingOr(ctx, SpecRepoRootsSetting)
	roots, _ := designdocs.ParseRoots(raw) // checked when set; a bad value allows nothing
	return designdocs.Remote{ClonesDir: dir, AllowPrivate: env.Store.BoolSetting(ctx, SpecAllowPrivateSetting),
		MaxBytes: env.Store.IntSetting(ctx, SpecMaxCloneSetting), Roots: roots}
}
