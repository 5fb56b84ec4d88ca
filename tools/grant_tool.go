package tools

import (
	"context"
	"strings"
	"time"

	"github.com/helixml/helix-org/domain"
)

type grantToolIn struct {
	Worker    string `json:"worker" jsonschema:"the worker to grant it to (w-…), below you"`
	Tool      string `json:"tool" jsonschema:"the tool's name, one you hold, e.g. publish or skill_<name>"`
	ExpiresAt string `json:"expiresAt,omitempty" jsonschema:"when the grant ends, an RFC 3339 time such as 2026-01-02T15:04:05Z; by default never"`
	ExpiresIn string `json:"expiresIn,omitempty" jsonschema:"when the grant ends, a duration from now such as 30m or 24h; instead of expiresAt"`
	Approval  string `json:"approval,omitempty" jsonschema:"required: each call waits for a person to approve it; none (default): calls run at once"`
}

func grantTool() Tool {
	return define("grant_tool", "Grant a Worker below you a tool you hold, optionally until an expiry or only with a person's approval per call.",
		func(ctx context.Context, env *Env, in grantToolIn) (domain.Grant, error) {
			if in.Worker == "" {
				return domain.Grant{}, domain.Required("worker")
			}
			if in.Tool == "" {
				return domain.Grant{}, domain.Required("tool")
			}
			if err := checkGrantable(ctx, env, "tool", in.Tool); err != nil {
				return domain.Grant{}, err
			}
			approval := domain.GrantApproval(in.Approval)
			if err := approval.Validate("approval"); err != nil {
				return domain.Grant{}, err
			}
			if approval == domain.ApprovalRequired {
				if strings.HasPrefix(in.Tool, domain.SkillToolPrefix) {
					return domain.Grant{}, domain.Invalid("approval", "applies to built-in tools only, not %q", in.Tool)
				}
			}
			exp, err := parseExpiry(env.Store.Now(), in.ExpiresAt, in.ExpiresIn)
			if err != nil {
				return domain.Grant{}, err
			}
			return env.Store.GrantTool(ctx, env.Caller, domain.Grant{WorkerID: in.Worker, Tool: in.Tool, ExpiresAt: exp, Approval: approval})
		}, enum("approval", domain.GrantApprovals)).annotated("Grant tool", idempotent)
}

func parseExpiry(now time.Time, at, in string) (*time.Time, error) {
	switch {
	case at != "" && in != "":
		return nil, domain.Invalid("expiresAt", "give expiresAt or expiresIn, not both")
	case at != "":
		t, err := time.Parse(time.RFC3339, at)
		if err != nil {
			return nil, domain.Invalid("expiresAt", "%q is not an RFC 3339 time such as 2026-01-02T15:04:05Z", at)
		}
		if !t.After(now) {
			return nil, domain.Invalid("expiresAt", "%s is in the past", at)
		}
		return &t, nil
	case in != "":
		d, err := time.ParseDuration(in)
		if err != nil || d <= 0 {
			return nil, domain.Invalid("expiresIn", "%q is not a positive duration such as 30m or 24h", in)
		}
		t := now.Add(d)
		return &t, nil
	}
	return nil, nil
}
