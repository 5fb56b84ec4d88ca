package ui

import (
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/helixml/helix-org/domain"
)

type settingsPage struct {
	// Groups are the keys by their first part (agent, auth, dispatch…),
	// so a long registry reads as sections with a contents line.
	Groups []settingGroup
	// ReadOnly says why the values cannot be changed from this session.
	ReadOnly string
}

// tokenOnly is why a session that began with a token alone sees settings
// but cannot change them: a token may sit in an agent's MCP config, and
// config such as agent.command runs on the server, so changing it needs
// more — access to the database, which minting a sign-in link proves, or
// the identity provider vouching for the person.
const tokenOnly = "this session began with a token, so settings are read-only here: operational config changes run on the server, " +
	"and a token alone may sit in an agent's MCP config. Sign in with your identity provider or a one-time link (helix-org bootstrap or helix-org token create prints one) to change them, or use helix-org config"

// settingGroup is the keys that share a first part; Set counts the ones
// with a stored value.
type settingGroup struct {
	Name     string
	Settings []settingRow
	Set      int
}

// settingRow is one config key as the owner may see it: secrets redacted.
type settingRow struct {
	Spec domain.SettingSpec
	// Shown is the stored value as it may be displayed; Set says whether
	// one is stored at all (else the default applies).
	Shown string
	Set   bool
	// Edit is what the form starts with: never a secret.
	Edit      string
	Multiline bool
	// Err is why a save of this key just failed; the page opens at it,
	// with what was typed.
	Err string
}

// handleSettings shows operational config to the owner: every key of the
// registry with its value (secrets redacted), to set or clear.
func (u *UI) handleSettings(w http.ResponseWriter, r *http.Request, v *viewer) {
	if err := v.Role.MayAdminister("see operational settings"); err != nil {
		u.renderError(w, r, v, http.StatusForbidden, err.Error())
		return
	}
	specs := slices.SortedFunc(slices.Values(u.cfg.Settings), func(a, b domain.SettingSpec) int { return strings.Compare(a.Key, b.Key) })
	var p settingsPage
	failed := flashFrom(r.Context())
	if failed != nil && failed.Tool != "config" {
		failed = nil
	}
	if !v.Session.Strong() {
		p.ReadOnly = tokenOnly
	}
	for _, spec := range specs {
		value, set, err := u.st.Setting(r.Context(), spec.Key)
		if err != nil {
			u.fail(w, r, v, err)
			return
		}
		row := settingRow{Spec: spec, Set: set, Multiline: spec.Type == domain.SettingJSON || strings.Contains(value+spec.Default, "\n")}
		if set {
			row.Shown = shownValue(spec, value)
			if !spec.Secret {
				row.Edit = row.Shown
			}
		}
		if failed != nil && failed.Form.Get("key") == spec.Key {
			row.Err = failed.Err
			if !spec.Secret {
				row.Edit = failed.Form.Get("value")
			}
		}
		group, _, _ := strings.Cut(spec.Key, ".")
		if n := len(p.Groups); n == 0 || p.Groups[n-1].Name != group {
			p.Groups = append(p.Groups, settingGroup{Name: group})
		}
		g := &p.Groups[len(p.Groups)-1]
		g.Settings = append(g.Settings, row)
		if set {
			g.Set++
		}
	}
	u.render(w, r, http.StatusOK, "settings", pageData{Title: "Settings", Nav: "settings", V: v, Body: p})
}

// handleSetSetting sets or clears one key through the same code path as
// `helix-org config set` and `config delete`: the registry's spec checks
// the value, the store encrypts secrets.
func (u *UI) handleSetSetting(w http.ResponseWriter, r *http.Request, v *viewer) {
	if err := v.Role.MayAdminister("change settings"); err != nil {
		u.renderError(w, r, v, http.StatusForbidden, err.Error())
		return
	}
	if !v.Session.Strong() {
		u.renderError(w, r, v, http.StatusForbidden, tokenOnly)
		return
	}
	key := r.PostFormValue("key")
	err := u.changeSetting(r, key, r.PostFormValue("op"), r.PostFormValue("value"))
	if err != nil {
		u.showFailure(w, r, v, "config", "/ui/settings", err)
		return
	}
	http.Redirect(w, r, "/ui/settings#"+url.PathEscape(key), http.StatusSeeOther)
}

func (u *UI) changeSetting(r *http.Request, key, op, value string) error {
	spec, err := u.cfg.Settings.Lookup(key)
	if err != nil {
		return err
	}
	switch op {
	case "clear":
		return u.st.DeleteSetting(r.Context(), spec.Key)
	case "set":
		if spec.HasSecret() && strings.Contains(value, domain.Redacted) {
			return domain.Invalid(spec.Key, "the value still holds the mask %s; type the real secret (to remove it, clear the key)", domain.Redacted)
		}
		if err := spec.Check(value); err != nil {
			return err
		}
		return u.st.SetSetting(r.Context(), spec, value)
	}
	return domain.Invalid("op", "unknown operation %q (valid: set, clear)", op)
}

// shownValue is config's rule: secrets redacted, and an empty value shown
// as empty, since redacting it would suggest a secret is set.
func shownValue(spec domain.SettingSpec, value string) string {
	if value == "" {
		return ""
	}
	return spec.Redact(value)
}
