package orgdir

import (
	"fmt"
	"strings"
)

// readme is the export's README.txt: what the files are, and the secrets
// that are not among them.
func readme(secrets []string) []byte {
	var b strings.Builder
	b.WriteString(`helix-org export

An organisation as readable files, written by "helix-org export" and read
back by "helix-org import" into a new database:

  roles/<id>.md        a role's job description; its id, title, creator and
                       times in the front matter
  positions.yaml       every position: its role, title and reportsTo
  workers/<id>.md      a worker's identity; its name, kind, position, hirer
                       and times in the front matter (dismissed ones too)
  grants.yaml          which worker may call which tool, by whom, until when
  streams.yaml         every stream with its transport config
  subscriptions.yaml   which worker follows which stream
  skills/<name>/       each skill: skill.yaml (the serving version) and per
                       version v<N>/ its source (files/), input schema and
                       examples. Images are not exported: an imported skill
                       is built again from its source.
  config.yaml          the operational config set in the database
  insights.yaml        the org's memory: every version of every insight,
                       with its counters, and the links between them
  budgets.yaml         every spend budget's limits (spend restarts at zero)
  contacts.yaml        each human worker's contact channel

Not exported: events (the streams' history and the s-org audit trail),
agent runs, triggers, deliveries, approval requests, spec tasks (their
documents are in git), tokens and web sessions.

SECRETS ARE NEVER EXPORTED. Transport secrets in stream configs and secret
settings are left out; each file names the ones it left out ("secrets:").
`)
	if len(secrets) == 0 {
		b.WriteString("\nThis org had none set.\n")
		return []byte(b.String())
	}
	b.WriteString("\nThis export leaves out:\n\n")
	for _, s := range secrets {
		fmt.Fprintf(&b, "  - %s\n", s)
	}
	b.WriteString(`
Give their values on import with --secrets <file>, a JSON file of this form
(keep it somewhere safe, and out of this directory):

  {"streams": {"<stream id>": {"<field>": "<value>"}},
   "config":  {"<key>": "<value>"}}

A secret setting can also be set after the import with
"helix-org config set <key> -"; a stream's transport secret cannot, so an
import without it is refused unless --without-stream-secrets.
`)
	return []byte(b.String())
}
