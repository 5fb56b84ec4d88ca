package agent

import (
	"encoding/json"
	"slices"

	"github.com/helixml/helix-org/domain"
)

// LogLine logs one stdout line of an agent whose output may be Claude-style
// stream-json (as `claude --output-format stream-json` prints it): known
// messages become assistant, tool-call and tool-result entries and add to
// res's token usage; anything else is logged as plain output. Runtimes in
// sub-packages (the container runtime) use it for whatever entry point
// they run.
func LogLine(line string, log func(domain.LogEntry), res *domain.RunResult) {
	var head struct {
		Type string `json:"type"`
	}
	if json.Unmarshal([]byte(line), &head) == nil && slices.Contains([]string{"system", "assistant", "user", "result"}, head.Type) {
		parseStreamJSON(line, log, res)
		return
	}
	if line = trimCR(line); line != "" {
		log(domain.LogEntry{Kind: domain.LogOutput, Text: line})
	}
}
