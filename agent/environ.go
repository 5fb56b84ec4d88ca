package agent

import (
	"os"

	"github.com/helixml/helix-org/domain"
)

// passThrough is the allow-list of the server's environment an agent
// process inherits. Everything else — API keys, HELIX_ORG_* settings, cloud
// credentials — stays with the server.
var passThrough = []string{"PATH", "HOME", "USER", "LOGNAME", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "TMPDIR", "TERM"}

// Environ builds an agent process's environment: the allow-list plus the
// run's own variables (RunEnv).
func Environ(run domain.Run) []string {
	var env []string
	for _, k := range passThrough {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	return append(env, RunEnv(run)...)
}

// RunEnv is what tells an agent who and where it is, and how it reaches
// the server: its MCP endpoint, and the model relay through which the
// usual SDK variables point any Anthropic or OpenAI client (Claude Code
// included). The only credential in it is the run's own token, which is
// also the relay's "API key"; the provider key stays in the server.
func RunEnv(run domain.Run) []string {
	env := []string{
		domain.MCPURLEnv + "=" + run.MCPURL,
		domain.TokenEnv + "=" + run.Token,
		"HELIX_ORG_WORKER=" + run.WorkerID,
		"HELIX_ORG_ENV_DIR=" + run.EnvDir,
		domain.WorkspaceEnv + "=" + domain.WorkspaceDir(run.EnvDir),
		"HELIX_ORG_ACTIVATION=" + run.ActivationID,
	}
	if run.BaseURL == "" {
		return env
	}
	return append(env,
		"ANTHROPIC_BASE_URL="+domain.RelayURL(run.BaseURL, domain.RelayAnthropic),
		"ANTHROPIC_API_KEY="+run.Token,
		"OPENAI_BASE_URL="+domain.RelayURL(run.BaseURL, domain.RelayOpenAI),
		"OPENAI_API_KEY="+run.Token,
	)
}
