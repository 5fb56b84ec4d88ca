package agent

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/helixml/helix-org/agent/llm"
	"github.com/helixml/helix-org/domain"
)

// The built-in agent keeps its conversation across runs (preserve_context)
// through one file in the worker's directory: the runtime writes the kept
// conversation there before the child starts, the child continues it and
// writes it back as the run leaves it, and the runtime reads it into the
// store and removes it, so no later run finds it unlabelled.
const (
	// EnvHistory names that file to the child; unset, the run neither
	// reads nor writes one.
	EnvHistory  = "HELIX_ORG_HISTORY"
	historyFile = ".helix-history.json"
)

// newBuiltinSession names a fresh built-in agent session.
func newBuiltinSession() string { return "bs-" + domain.RandomSlug(12) }

// readHistory is the conversation a run continues: none when the file
// is absent.
func readHistory(path string) ([]llm.Message, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the kept conversation: %w", err)
	}
	var msgs []llm.Message
	if err := json.Unmarshal(data, &msgs); err != nil {
		return nil, fmt.Errorf("the kept conversation %s is not a JSON list of messages: %w", path, err)
	}
	return msgs, nil
}

func writeHistory(path string, msgs []llm.Message) error {
	data, err := json.Marshal(msgs)
	if err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o600)
}

// handHistory puts the conversation run continues in its directory, or
// clears what an earlier run may have left there, before the child starts.
func handHistory(run domain.Run) error {
	path := filepath.Join(run.EnvDir, historyFile)
	if len(run.History) > 0 && run.Session != "" {
		return os.WriteFile(path, run.History, 0o600)
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("clear the kept conversation: %w", err)
	}
	return nil
}

// takeHistory reads back the conversation as the run left it and removes
// the file; nil when there is none.
func takeHistory(run domain.Run) ([]byte, error) {
	path := filepath.Join(run.EnvDir, historyFile)
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if rerr := os.Remove(path); err == nil && rerr != nil {
		err = rerr
	}
	if err != nil {
		return nil, fmt.Errorf("take the kept conversation: %w", err)
	}
	return data, nil
}

// continueWith adds the run's prompt to a kept conversation; one that
// ended on the user's turn (its run failed before the model answered)
// takes the prompt into that turn, as models want turns to alternate.
func continueWith(msgs []llm.Message, prompt string) []llm.Message {
	if n := len(msgs); n > 0 && msgs[n-1].Role == llm.RoleUser {
		last := msgs[n-1]
		last.Text = strings.TrimLeft(last.Text+"\n\n"+prompt, "\n")
		return append(msgs[:n-1:n-1], last)
	}
	return append(msgs, llm.Message{Role: llm.RoleUser, Text: prompt})
}
