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
// variables that tell it who and where it is.
func Environ(run domain.Run) []string {
	var env []string
	for _, k := range passThrough {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	return append(env,
		"HELIX_ORG_MCP_URL="+run.MCPURL,
		"HELIX_ORG_TOKEN="+run.Token,
		"HELIX_ORG_WORKER="+run.WorkerID,
		"HELIX_ORG_ENV_DIR="+run.EnvDir,
		"HELIX_ORG_ACTIVATION="+run.ActivationID,
	)
}
