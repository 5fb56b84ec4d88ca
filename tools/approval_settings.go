package tools

import (
	"encoding/json"
	"strings"

	"github.com/helixml/helix-org/domain"
)

// Config keys of approval gates and labels.
var (
	ApprovalTTLSetting = domain.SettingSpec{Key: "approvals.ttl", Type: domain.SettingDuration, Default: "24h",
		Description: "How long an approval request waits for a decision before it expires."}
	HighRiskSetting = domain.SettingSpec{Key: "approvals.high_risk", Type: domain.SettingString,
		Default: "grant_tool,revoke_tool,hire_worker,dismiss_worker,update_role,create_skill,delete_skill,set_budget,publish,update_stream,archive_stream,merge_pull_request",
		Description: "Comma-separated tools that wait for approval during a run that has read untrusted data (outside input, or what it led to), " +
			"whatever the grant says; publish counts only on streams whose transport sends outside, other than those that woke the run.",
		Validate: func(v string) error {
			for _, name := range splitList(v) {
				if !isBuiltinName(name) {
					return domain.Invalid("approvals.high_risk", "unknown tool %q", name)
				}
			}
			return nil
		}}
	AIRequiresSetting = domain.SettingSpec{Key: "approvals.ai_requires", Type: domain.SettingString, Default: `["merge_pull_request"]`,
		Description: "JSON list of tools that wait for the caller's nearest human manager whenever an AI worker calls them, " +
			"whatever its grant says and even in a trusted run; [] for none.",
		Validate: func(v string) error { _, err := parseToolList("approvals.ai_requires", v); return err }}
)

// parseToolList reads a JSON list of built-in tool names.
func parseToolList(key, v string) ([]string, error) {
	var names []string
	if err := json.Unmarshal([]byte(v), &names); err != nil {
		return nil, domain.Invalid(key, `want a JSON list of tool names, e.g. ["merge_pull_request"]: %v`, err)
	}
	for _, name := range names {
		if !isBuiltinName(name) {
			return nil, domain.Invalid(key, "unknown tool %q", name)
		}
	}
	return names, nil
}

func splitList(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

func isBuiltinName(name string) bool {
	_, ok := builtin(name)
	return ok
}
