package skill

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/helixml/helix-org/domain"
)

// maxOutput bounds what a skill may answer.
const maxOutput = 8 << 20

// Call runs a skill on input, starting its container first if it was
// stopped (idle) or is gone, and returns its output as JSON: the skill's
// own JSON, or its text as a JSON string.
func (f *Factory) Call(ctx context.Context, name string, input json.RawMessage, narrate func(string)) (json.RawMessage, error) {
	note := Note(narrate)
	if len(input) == 0 {
		input = json.RawMessage("{}")
	}
	f.begin(name)
	defer f.end(name)
	if f.addr(name) == "" {
		note.say("skill %s is not running; starting it…", name)
	}
	addr, err := f.ensure(ctx, name)
	if err != nil {
		return nil, err
	}
	if err := f.st.TouchSkill(ctx, name); err != nil {
		return nil, err
	}
	note.say("calling skill %s…", name)
	start := time.Now()
	out, err := f.execute(ctx, addr, input)
	var down *unreachableError
	if errors.As(err, &down) && ctx.Err() == nil {
		// The container died under us: bring it back once and retry.
		note.say("skill %s did not answer; restarting it and calling again", name)
		f.setAddr(name, "")
		if addr, err = f.ensure(ctx, name); err != nil {
			return nil, err
		}
		out, err = f.execute(ctx, addr, input)
	}
	if err != nil {
		note.say("skill %s failed after %s", name, time.Since(start).Round(time.Millisecond))
		return nil, fmt.Errorf("skill %s: %w", name, err)
	}
	note.say("skill %s answered in %s (%d bytes)", name, time.Since(start).Round(time.Millisecond), len(out))
	return out, nil
}

// ensure returns the address of the skill's running container.
func (f *Factory) ensure(ctx context.Context, name string) (string, error) {
	defer f.lock(name)()
	sk, err := f.st.GetSkill(ctx, name)
	if err != nil {
		return "", err
	}
	if sk.Status == domain.SkillFailed {
		return "", fmt.Errorf("skill %s has no working version: %s\nfix it with create_skill", name, sk.Error)
	}
	addr, err := f.running(ctx, sk)
	if err != nil {
		return "", fmt.Errorf("start skill %s: %w", name, err)
	}
	return addr, nil
}

type unreachableError struct{ err error }

func (e *unreachableError) Error() string { return "unreachable: " + e.err.Error() }
func (e *unreachableError) Unwrap() error { return e.err }

func (f *Factory) execute(ctx context.Context, addr string, input json.RawMessage) (json.RawMessage, error) {
	cctx, cancel := context.WithTimeout(ctx, f.st.DurationSetting(ctx, CallTimeoutSetting))
	defer cancel()
	req, err := http.NewRequestWithContext(cctx, http.MethodPost, "http://"+addr+"/execute", bytes.NewReader(input))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := f.http.Do(req)
	if err != nil {
		if cctx.Err() != nil {
			return nil, fmt.Errorf("no answer within %s (%s)", f.st.DurationSetting(ctx, CallTimeoutSetting), CallTimeoutSetting.Key)
		}
		return nil, &unreachableError{err}
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxOutput+1))
	if err != nil {
		return nil, fmt.Errorf("read output: %w", err)
	}
	if len(body) > maxOutput {
		return nil, fmt.Errorf("output is over %d bytes", maxOutput)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("POST /execute answered %d:\n%s", resp.StatusCode, tail(strings.TrimSpace(string(body)), 4000))
	}
	if trimmed := bytes.TrimSpace(body); json.Valid(trimmed) {
		return trimmed, nil
	}
	return json.Marshal(strings.TrimRight(string(body), "\n"))
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}

func (f *Factory) begin(name string) {
	f.mu.Lock()
	f.inflight[name]++
	f.mu.Unlock()
}

func (f *Factory) end(name string) {
	f.mu.Lock()
	if f.inflight[name]--; f.inflight[name] <= 0 {
		delete(f.inflight, name)
	}
	f.mu.Unlock()
}

func (f *Factory) busy(name string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.inflight[name] > 0
}

// Networks are the networks skill.networks has the skill join beyond its
// own: a skill with egress answers with what it found outside.
func (f *Factory) Networks(ctx context.Context, name string) ([]string, error) {
	return perSkill[[]string](ctx, f, NetworksSetting, name)
}
