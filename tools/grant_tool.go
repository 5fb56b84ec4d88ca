package tools

import (
	"context"
	"strings"
	"time"

	"github.com/helixml/helix-org/domain"
)

type grantToolIn struct {
	Worker    string `json:"worker"`
	Tool      string `json:"tool"`
	ExpiresAt string `json:"expiresAt,omitempty"`
	ExpiresIn string `json:"expiresIn,omitempty"`
	Approval  string `json:"approval,omitempty"`
}

func grantTool() Tool {
	return define("grant_tool", "Grant a tool you hold to a Worker below you.",
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
