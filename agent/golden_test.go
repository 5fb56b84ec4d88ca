package agent_test

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/helixml/helix-org/agent"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// TestSystemPromptGolden: the built-in agent's system prompt, with and
// without bash, so any change to it is a reviewed diff (go test ./agent
// -run Golden -update).
func TestSystemPromptGolden(t *testing.T) {
	files := []agent.EnvFile{{Name: "agent.md", Content: "How to act on a trigger."}, {Name: "role.md", Content: "Reply `echo: <body>`.\n"},
		{Name: "identity.md", Content: "# Echo\n\nWorker id: w-echo\n"}}
	for _, tt := range []struct {
		name string
		bash bool
	}{{"system_prompt.golden.txt", false}, {"system_prompt_bash.golden.txt", true}} {
		got := agent.SystemPrompt(tt.bash, files...)
		path := filepath.Join("testdata", tt.name)
		if *update {
			os.MkdirAll("testdata", 0o755)
			if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run go test ./agent -run TestSystemPromptGolden -update)", err)
		}
		if string(want) != got {
			t.Errorf("%s changed; if meant, run go test ./agent -run TestSystemPromptGolden -update and review the diff.\ngot:\n%s", tt.name, got)
		}
	}
}
