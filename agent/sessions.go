package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/helixml/helix-org/domain"
)

// Session settings: which workers' runs continue their last session on
// the same runtime, and when a session is too old or too big to go on.
var (
	PreserveContextSetting = domain.SettingSpec{Key: "agent.preserve_context", Type: domain.SettingJSON, Default: "{}", Validate: validPreserve,
		Description: `Workers whose next run resumes their previous session of the same runtime (the CLI's own resume): {"w-x":true,"w-y":false}. ` +
			"A worker not named takes its role's front matter (`preserve_context: true`); else each run starts fresh."}
	SessionMaxAgeSetting = domain.SettingSpec{Key: "agent.session_max_age", Type: domain.SettingDuration, Default: "24h",
		Description: "A preserved session older than this (since its first run) is not resumed: the run starts fresh and its log says why."}
	SessionMaxBytesSetting = domain.SettingSpec{Key: "agent.session_max_bytes", Type: domain.SettingInt, Default: "8388608",
		Description: "A preserved session whose prompts would pass this many bytes is not resumed: the run starts fresh and its log says why; 0 for no limit."}
)

func validPreserve(s string) error { _, err := parsePreserve(s); return err }

func parsePreserve(s string) (map[string]bool, error) {
	m := map[string]bool{}
	if s == "" {
		return m, nil
	}
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		return nil, fmt.Errorf(`want {"w-…":true|false,…}: %w`, err)
	}
	return m, nil
}

// SessionKeeper keeps the session each worker's runs on each runtime
// continue, and the labels of the runs that carry it; *store.Store
// satisfies it.
type SessionKeeper interface {
	AgentSession(ctx context.Context, worker, runtime string) (domain.AgentSession, error)
	PutAgentSession(ctx context.Context, s domain.AgentSession) error
	ActivationLabel(ctx context.Context, activation string) (domain.Label, error)
	RaiseLabel(ctx context.Context, activation string, l domain.Label) (domain.Label, error)
}

// preserves reports whether a worker's runs continue their session: the
// operator's word for the worker, else its role's front matter.
func (env RuntimeEnv) preserves(ctx context.Context, worker string) (bool, error) {
	m, err := parsePreserve(env.get(ctx, PreserveContextSetting))
	if err != nil {
		return false, fmt.Errorf("%s: %w", PreserveContextSetting.Key, err)
	}
	if on, ok := m[worker]; ok {
		return on, nil
	}
	if env.RoleOf == nil {
		return false, nil
	}
	role, err := env.RoleOf(ctx, worker)
	if err != nil {
		return false, err
	}
	return roleFrontMatter(role.Content, "preserve_context") == "true", nil
}

func (env RuntimeEnv) now() time.Time {
	if env.Now != nil {
		return env.Now()
	}
	return time.Now()
}

// resume sets run.Session to the worker's session on runtime when it
// preserves its context and the session is within the caps, saying on the
// run's log which session it continues or why it starts fresh. It returns
// the session as it stands before the run, zero when the run starts fresh.
func (env RuntimeEnv) resume(ctx context.Context, runtime string, run *domain.Run) (domain.AgentSession, error) {
	if env.Sessions == nil {
		return domain.AgentSession{}, nil
	}
	prev, err := env.Sessions.AgentSession(ctx, run.WorkerID, runtime)
	if errors.Is(err, domain.ErrNotFound) {
		return domain.AgentSession{}, nil
	}
	if err != nil {
		return domain.AgentSession{}, err
	}
	maxAge, _ := time.ParseDuration(env.get(ctx, SessionMaxAgeSetting))
	maxBytes := env.Settings.IntSetting(ctx, SessionMaxBytesSetting)
	why := ""
	switch age := env.now().Sub(prev.StartedAt); {
	case maxAge > 0 && age > maxAge:
		why = fmt.Sprintf("it began %s ago, past %s %s", age.Round(time.Second), SessionMaxAgeSetting.Key, maxAge)
	case maxBytes > 0 && prev.Bytes+int64(len(run.Prompt)) > maxBytes:
		why = fmt.Sprintf("its prompts would reach %d bytes, past %s %d", prev.Bytes+int64(len(run.Prompt)), SessionMaxBytesSetting.Key, maxBytes)
	}
	if why != "" {
		note(run, fmt.Sprintf("starting a fresh %s session: the previous one (%s) is not resumed: %s", runtime, prev.SessionID, why))
		return domain.AgentSession{}, nil
	}
	// What the session read before reaches this run: its label rises
	// by it, or private or untrusted text would go on unlabelled.
	if !prev.Label.IsZero() && run.ActivationID != "" {
		if _, err := env.Sessions.RaiseLabel(ctx, run.ActivationID, prev.Label); err != nil {
			return domain.AgentSession{}, fmt.Errorf("raise the label of %s by its session's: %w", run.ActivationID, err)
		}
	}
	run.Session, run.History = prev.SessionID, prev.History
	note(run, fmt.Sprintf("continuing %s session %s (begun %s, %d runs before this)", runtime, prev.SessionID, prev.StartedAt.UTC().Format(time.RFC3339), prev.Runs))
	return prev, nil
}

// keep records the session a run had, for the next to continue, with
// the run's label as it ended. A kept conversation (the built-in agent's)
// counts its own size; one past agent.session_max_bytes is not kept, so
// the next run starts fresh and says why.
func (env RuntimeEnv) keep(ctx context.Context, runtime string, run domain.Run, prev domain.AgentSession, res domain.RunResult) error {
	id := res.Session
	if env.Sessions == nil || id == "" {
		return nil
	}
	label, err := env.Sessions.ActivationLabel(ctx, run.ActivationID)
	if err != nil && !errors.Is(err, domain.ErrNotFound) {
		return err
	}
	now := env.now()
	next := domain.AgentSession{WorkerID: run.WorkerID, Runtime: runtime, SessionID: id, StartedAt: now, UpdatedAt: now,
		Bytes: int64(len(run.Prompt)), Runs: 1, Label: label}
	if prev.SessionID == id {
		next.StartedAt, next.Bytes, next.Runs, next.Label = prev.StartedAt, prev.Bytes+next.Bytes, prev.Runs+1, prev.Label.Join(label)
	}
	if res.History != nil {
		next.Bytes, next.History = int64(len(res.History)), res.History
		if maxBytes := env.Settings.IntSetting(ctx, SessionMaxBytesSetting); maxBytes > 0 && next.Bytes > maxBytes {
			next.History = nil
			note(&run, fmt.Sprintf("not keeping the conversation of %s session %s: %d bytes, past %s %d; the next run starts fresh",
				runtime, id, next.Bytes, SessionMaxBytesSetting.Key, maxBytes))
		}
	}
	return env.Sessions.PutAgentSession(ctx, next)
}

func note(run *domain.Run, text string) {
	if run.Log != nil {
		run.Log(domain.LogEntry{Kind: domain.LogNote, Text: text})
	}
}

// roleFrontMatter is the value of key in a role's YAML front matter, ""
// when it has none.
func roleFrontMatter(role, key string) string {
	rest, ok := strings.CutPrefix(strings.TrimLeft(role, "\ufeff"), "---\n")
	if !ok {
		return ""
	}
	for line := range strings.SplitSeq(rest, "\n") {
		line = strings.TrimSpace(line)
		if line == "---" {
			return ""
		}
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == key {
			return strings.TrimSpace(v)
		}
	}
	return ""
}
