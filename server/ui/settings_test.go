package ui_test

import (
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/server"
	"github.com/helixml/helix-org/server/servertest"
	"github.com/helixml/helix-org/server/ui/uitest"
	"github.com/helixml/helix-org/transports/slack"
)

// settingsOrg serves a long settings list: padding keys,
// transport.slack (its description an unbroken JSON example), an
// enum with an empty choice, and an integer sorted last.
func settingsOrg(t *testing.T) *org {
	t.Helper()
	specs := domain.Settings{
		slack.ConfigSetting,
		{Key: "test.mode", Type: domain.SettingString, Enum: []string{"", "fast"}, Description: "a mode"},
		{Key: "test.zlimit", Type: domain.SettingInt, Default: "4", Description: "a limit"},
	}
	for i := range 40 {
		specs = append(specs, domain.SettingSpec{Key: fmt.Sprintf("test.pad%02d", i), Type: domain.SettingString, Description: "padding"})
	}
	h := servertest.Start(t, server.Config{Settings: specs})
	return &org{h: h, owner: h.Owner(t), base: h.Server.URL}
}

// TestSettingsFitAndKeepPlace: at 1280 px the settings page does not
// scroll sideways; a refused value brings the page back at that setting,
// with the error beside it and what was typed still in the field.
func TestSettingsFitAndKeepPlace(t *testing.T) {
	t.Parallel()
	o := settingsOrg(t)
	tab := o.tab(t, "w-owner")
	emulate(t, tab, 1280, 800, false)
	uitest.Do(t, tab, chromedp.Navigate(o.base+"/ui/settings"), chromedp.WaitVisible(chromedp.CSS(`[id="test.zlimit"]`)))
	if wide := uitest.Run(t, tab, chromedp.Evaluate[string](widest)); wide != "" {
		t.Errorf("settings at 1280 px: %s", wide)
	}
	row := `[id="test.zlimit"] `
	uitest.Do(t, tab, chromedp.SendKeys(chromedp.CSS(row+`input[name="value"]`), "abc"),
		chromedp.Click(chromedp.CSS(row+`button[value="set"]`)),
		chromedp.WaitVisible(chromedp.CSS(row+`.field-error`)))
	got := uitest.Run(t, tab, chromedp.Evaluate[map[string]any](`(() => {
	  const li = document.getElementById("test.zlimit"), r = li.getBoundingClientRect();
	  return {error: li.querySelector(".field-error").textContent, value: li.querySelector("input[name=value]").value,
	    inView: r.top >= 0 && r.bottom <= innerHeight, scrolled: scrollY > 0};
	})()`))
	if !strings.Contains(fmt.Sprint(got["error"]), `"abc" is not an integer`) || got["value"] != "abc" || got["inView"] != true || got["scrolled"] != true {
		t.Errorf("after a refused value, the setting's row: %v; want the error beside it, abc kept, the row in view", got)
	}
}

// TestSettingsNameTheEmptyChoice: an enum's empty value is named for what
// it means, on the page and in a refusal.
func TestSettingsNameTheEmptyChoice(t *testing.T) {
	t.Parallel()
	o := settingsOrg(t)
	c := o.client(t, "w-owner")
	const want = `Valid: &#34;&#34; (unset: the default), fast.`
	if _, page := c.get(t, "/ui/settings"); !strings.Contains(page, want) {
		t.Errorf("the settings page lacks %q", want)
	}
	_, body := c.post(t, "/ui/settings", url.Values{"csrf": {c.csrf}, "key": {"test.mode"}, "op": {"set"}, "value": {"bogus"}}, nil)
	if !strings.Contains(body, `(valid: &#34;&#34; (unset: the default), fast)`) {
		t.Errorf("refusing bogus does not name the empty choice:\n%s", between(body, `id="test.mode"`, "</li>"))
	}
}

// TestSettingsAreGroupedBySection: the keys are shown in sections by their
// first part, each counted, and the contents line at the top takes the
// reader to one.
func TestSettingsAreGroupedBySection(t *testing.T) {
	t.Parallel()
	o := settingsOrg(t)
	tab := o.tab(t, "w-owner")
	emulate(t, tab, 1280, 800, false)
	uitest.Do(t, tab, chromedp.Navigate(o.base+"/ui/settings"), chromedp.WaitVisible(chromedp.CSS(`nav.toc`)))
	toc := uitest.Run(t, tab, chromedp.Evaluate[string](`[...document.querySelectorAll("nav.toc a")].map(a => a.textContent.replace(/\s+/g, " ").trim()).join(", ")`))
	if toc != "test 42, transport 1" {
		t.Errorf("contents = %q, want %q", toc, "test 42, transport 1")
	}
	uitest.Do(t, tab, chromedp.Click(chromedp.CSS(`nav.toc a[href="#settings-transport"]`)))
	got := uitest.Run(t, tab, chromedp.Evaluate[map[string]any](`(() => {
	  const s = document.getElementById("settings-transport"), r = s.getBoundingClientRect();
	  return {heading: s.querySelector("h2").textContent.replace(/\s+/g, " ").trim(),
	    keys: [...s.querySelectorAll(".settings > li")].map(li => li.id).join(","), inView: r.top >= 0 && r.top < innerHeight && scrollY > 0};
	})()`))
	if got["heading"] != "transport 1 key" || got["keys"] != "transport.slack" || got["inView"] != true {
		t.Errorf("after following the contents to transport: %v; want its section, with transport.slack alone, scrolled into view", got)
	}
}
