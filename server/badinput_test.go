package server_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/server"
	"github.com/helixml/helix-org/server/servertest"
	"github.com/helixml/helix-org/tools"
	"github.com/helixml/helix-org/transports/schedule"
)

// orgSnapshot is what a bad call must leave exactly as it was.
type orgSnapshot struct {
	LastSeq   int64
	Roles     int
	Positions int
	Workers   int
	Streams   int
}

func snapshot(t *testing.T, h *servertest.Harness, owner *mcp.ClientSession) orgSnapshot {
	t.Helper()
	seq, err := h.Store.LastSeq(t.Context())
	if err != nil {
		t.Fatalf("last seq: %v", err)
	}
	return orgSnapshot{
		LastSeq:   seq,
		Roles:     len(servertest.Call[struct{ Roles []any }](t, owner, "list_roles", nil).Roles),
		Positions: len(servertest.Call[struct{ Positions []any }](t, owner, "list_positions", nil).Positions),
		Workers:   len(servertest.Call[struct{ Workers []any }](t, owner, "list_workers", map[string]any{"includeDismissed": true}).Workers),
		Streams:   len(servertest.Call[struct{ Streams []any }](t, owner, "list_streams", nil).Streams),
	}
}

// TestBadInput sends every tool at least one bad input over a real server
// and client, and checks the error a client sees names the problem and
// that nothing in the org changed.
func TestBadInput(t *testing.T) {
	cases := []struct {
		name string
		tool string
		args map[string]any
		want []string
	}{
		{"missing title", "create_role", map[string]any{"content": "x"}, []string{"title: is required: "}},
		{"duplicate id", "create_role", map[string]any{"id": "r-support", "title": "Support", "content": "x"}, []string{`role "r-support" already exists`}},
		{"bad id", "create_role", map[string]any{"id": "support", "title": "Support", "content": "x"}, []string{"id: ", `must start with "r-"`}},
		{"title too long", "create_role", map[string]any{"title": long(domain.MaxName), "content": "x"}, []string{"title: is 257 bytes; the limit is 256"}},
		{"title too long", "update_role", map[string]any{"id": "r-support", "title": long(domain.MaxName)}, []string{"title: is 257 bytes; the limit is 256"}},
		{"unknown id", "update_role", map[string]any{"id": "r-nope", "content": "x"}, []string{`role "r-nope": not found`}},
		{"nothing to change", "update_role", map[string]any{"id": "r-support"}, []string{"give title, content or both"}},
		{"unexpected argument", "list_roles", map[string]any{"verbose": true}, []string{"verbose: unknown argument"}},
		{"unknown id", "get_role", map[string]any{"id": "r-nope"}, []string{`role "r-nope": not found`}},
		{"missing id", "get_role", map[string]any{}, []string{"id: is required: "}},
		{"unknown role", "create_position", map[string]any{"role": "r-nope", "title": "Ghost"}, []string{`role "r-nope": not found`}},
		{"reports to itself", "create_position", map[string]any{"id": "p-loop", "role": "r-support", "title": "Loop", "reportsTo": "p-loop"}, []string{"reportsTo: a position cannot report to itself"}},
		{"title too long", "create_position", map[string]any{"role": "r-support", "title": long(domain.MaxName)}, []string{"title: is 257 bytes; the limit is 256"}},
		{"role of the wrong type", "list_positions", map[string]any{"role": 5}, []string{"role: must be a string, got "}},
		{"bad kind lists the valid kinds", "hire_worker", map[string]any{"position": "p-support", "kind": "robot", "name": "R2"}, []string{`kind: must be one of "human", "ai"; got "robot"`}},
		{"name too long", "hire_worker", map[string]any{"position": "p-support", "kind": "human", "name": long(domain.MaxName)}, []string{"name: is 257 bytes; the limit is 256"}},
		{"unknown position", "hire_worker", map[string]any{"position": "p-nope", "kind": "human", "name": "Sam"}, []string{`position "p-nope": not found`}},
		{"duplicate id", "hire_worker", map[string]any{"id": "w-maya", "position": "p-support", "kind": "human", "name": "Maya"}, []string{`worker "w-maya" already exists`}},
		{"unknown tool in grants", "hire_worker", map[string]any{"position": "p-support", "kind": "ai", "name": "Bot", "grants": []string{"fly"}}, []string{`grants: unknown tool "fly"`}},
		{"into the owner's seat", "hire_worker", map[string]any{"position": "p-owner", "kind": "human", "name": "Co-owner"}, []string{"p-owner is the owner's seat; only w-owner holds it"}},
		{"self-dismiss", "dismiss_worker", map[string]any{"id": "w-owner"}, []string{"id: you cannot dismiss yourself"}},
		{"unknown id", "dismiss_worker", map[string]any{"id": "w-nope"}, []string{`worker "w-nope": not found`}},
		{"missing activation", "cancel_activation", map[string]any{}, []string{"activation: is required: "}},
		{"unknown activation", "cancel_activation", map[string]any{"activation": "a-nope"}, []string{`activation "a-nope": not found`}},
		{"drop not a boolean", "cancel_activation", map[string]any{"activation": "a-nope", "drop": "yes"}, []string{"drop: must be a boolean, got "}},
		{"missing body", "message_activation", map[string]any{"activation": "a-nope"}, []string{"body: is required: "}},
		{"unknown activation to steer", "message_activation", map[string]any{"activation": "a-nope", "body": "stop and summarise"}, []string{`activation "a-nope": not found`}},
		{"missing identity", "update_identity", map[string]any{"id": "w-maya"}, []string{"identity: is required: "}},
		{"unknown id", "update_identity", map[string]any{"id": "w-nope", "identity": "x"}, []string{`worker "w-nope": not found`}},
		{"an AI worker's contact", "set_contact", map[string]any{"worker": "w-echo", "channel": "email", "address": "echo@example.com"}, []string{"worker: w-echo is an AI worker"}},
		{"not an email address", "set_contact", map[string]any{"worker": "w-maya", "channel": "email", "address": "maya"}, []string{`address: "maya" is not an email address`}},
		{"an unknown contact channel", "set_contact", map[string]any{"worker": "w-maya", "channel": "sms", "address": "+4420"}, []string{`channel: unknown contact channel "sms" (valid: "email")`}},
		{"bad kind", "list_workers", map[string]any{"kind": "robot"}, []string{`kind: must be one of "human", "ai"; got "robot"`}},
		{"unknown id", "get_worker", map[string]any{"id": "w-nope"}, []string{`worker "w-nope": not found`}},
		{"expiresIn not a duration", "grant_tool", map[string]any{"worker": "w-maya", "tool": "publish", "expiresIn": "soon"}, []string{`expiresIn: "soon" is not a positive duration`}},
		{"expiresAt not a time", "grant_tool", map[string]any{"worker": "w-maya", "tool": "publish", "expiresAt": "tomorrow"}, []string{`expiresAt: "tomorrow" is not an RFC 3339 time`}},
		{"unknown tool", "grant_tool", map[string]any{"worker": "w-maya", "tool": "fly"}, []string{`tool: unknown tool "fly"`}},
		{"unknown worker", "grant_tool", map[string]any{"worker": "w-nope", "tool": "publish"}, []string{`worker "w-nope": not found`}},
		{"to yourself", "grant_tool", map[string]any{"worker": "w-owner", "tool": "publish", "expiresIn": "1s"}, []string{"w-owner cannot grant to itself; a worker above it can"}},
		{"no such grant", "revoke_tool", map[string]any{"worker": "w-maya", "tool": "publish"}, []string{`worker "w-maya" holds no grant for "publish"`}},
		{"missing tool", "revoke_tool", map[string]any{"worker": "w-maya"}, []string{"tool: is required: "}},
		{"unknown worker", "list_grants", map[string]any{"worker": "w-nope"}, []string{`worker "w-nope": not found`}},
		{"bad transport kind lists the valid kinds", "create_stream", map[string]any{"name": "x", "transport": "smtp"}, []string{`transport.kind: unknown transport kind "smtp" (valid: "local", "webhook", "email", "github", "schedule")`}},
		{"bad transport config shows the kind's format", "create_stream", map[string]any{"name": "x", "transport": map[string]any{"kind": "webhook", "config": map[string]any{"secrets": "x"}}}, []string{"secrets", `webhook (any HTTP client in (Standard Webhooks), and out to a URL) takes config {"secret":"whsec_`}},
		{"bad kind in a transport object", "create_stream", map[string]any{"name": "x", "transport": map[string]any{"kind": "smtp"}}, []string{`transport.kind: unknown transport kind "smtp" (valid: "local", "webhook", "email", "github", "schedule")`}},
		{"unknown config field", "create_stream", map[string]any{"name": "x", "transport": map[string]any{"kind": "webhook", "config": map[string]any{"secert": "x"}}}, []string{"transport.config: ", `unknown field "secert"`}},
		{"bad email alias", "create_stream", map[string]any{"name": "x", "transport": map[string]any{"kind": "email", "config": map[string]any{"alias": "Sam!"}}}, []string{`transport.config.alias: "Sam!" may contain only`}},
		{"github repo without a slash", "create_stream", map[string]any{"name": "x", "transport": map[string]any{"kind": "github", "config": map[string]any{"repo": "helix", "events": []string{"issues"}}}}, []string{`transport.config.repo: "helix" must be "owner/name"`}},
		{"unknown github event", "create_stream", map[string]any{"name": "x", "transport": map[string]any{"kind": "github", "config": map[string]any{"repo": "a/b", "events": []string{"star"}}}}, []string{`transport.config.events: unknown GitHub event "star" (valid: "issues"`}},
		{"webhook secret without whsec_", "create_stream", map[string]any{"name": "x", "transport": map[string]any{"kind": "webhook", "config": map[string]any{"secret": "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}}}, []string{`transport.config.secret: `, `must start with "whsec_"`}},
		{"name too long", "create_stream", map[string]any{"name": long(domain.MaxName)}, []string{"name: is 257 bytes; the limit is 256"}},
		{"bad CEL names its position", "create_processor", map[string]any{"input": "s-inbox", "kind": "filter", "config": map[string]any{"expr": "message.subjct == 'x'"}, "outputs": []string{"s-x"}}, []string{"config.expr:1:8: undefined field 'subjct'"}},
		{"unknown processor kind", "create_processor", map[string]any{"input": "s-inbox", "kind": "js", "config": map[string]any{}}, []string{`kind: must be one of "filter", "route", "transform", "template", "truncate"; got "js"`}},
		{"missing input", "create_processor", map[string]any{"kind": "filter", "config": map[string]any{"expr": "true"}}, []string{"input: is required: "}},
		{"neither id nor spec", "preview_processor", map[string]any{}, []string{"id: give either id, a stored processor, or spec"}},
		{"unknown id", "delete_processor", map[string]any{"id": "proc-nope"}, []string{`processor "proc-nope": not found`}},
		{"stream of the wrong type", "list_processors", map[string]any{"stream": 5}, []string{"stream: must be a string, got "}},
		{"description too long", "create_stream", map[string]any{"name": "x", "description": long(domain.MaxDescription)}, []string{"description: is 4097 bytes; the limit is 4096"}},
		{"reserved dm id", "create_stream", map[string]any{"id": "s-dm-w-maya-w-owner", "name": "spoof"}, []string{`id: "s-dm-w-maya-w-owner" is reserved`}},
		{"missing id", "update_stream", map[string]any{"name": "x"}, []string{"id: is required: a string"}},
		{"a stream's kind cannot change", "update_stream", map[string]any{"id": "s-gh", "transport": map[string]any{"kind": "webhook", "config": map[string]any{"outbound_url": "https://example.com/in"}}},
			[]string{`transport.kind: s-gh is a "github" stream and a stream's kind cannot change (valid: "github")`}},
		{"a config key the kind does not take shows its format", "update_stream", map[string]any{"id": "s-gh", "transport": map[string]any{"config": map[string]any{"branch": "main"}}},
			[]string{`transport.config: json: unknown field "branch"`, `github (`, `takes config {"repo":"owner/name"`}},
		{"a DM is the system's", "update_stream", map[string]any{"id": "s-dm-w-maya-w-owner", "description": "ours"}, []string{"id: s-dm-w-maya-w-owner is a DM stream", "cannot be updated"}},
		{"private cannot change", "update_stream", map[string]any{"id": "s-inbox", "private": true}, []string{`private: unknown argument (valid: "description", "id", "name", "transport")`}},
		{"missing id", "archive_stream", map[string]any{}, []string{"id: is required: a string"}},
		{"the audit trail is the system's", "archive_stream", map[string]any{"id": "s-org"}, []string{"id: s-org is the org's audit trail, which the system keeps; it cannot be archived"}},
		{"a DM is the system's", "archive_stream", map[string]any{"id": "s-dm-w-maya-w-owner"}, []string{"id: s-dm-w-maya-w-owner is a DM stream", "cannot be archived"}},
		{"archived not a boolean", "list_streams", map[string]any{"archived": "yes"}, []string{"archived: must be a boolean, got "}},
		{"a schedule ticking more often than schedule.min_interval", "create_stream", map[string]any{"name": "x", "transport": map[string]any{"kind": "schedule", "config": map[string]any{"cron": "* * * * *"}}},
			[]string{`transport.config.cron: "* * * * *" ticks as often as every 1m0s; a schedule may tick at most every 5m0s (the setting schedule.min_interval)`}},
		{"a schedule past schedule.max_per_worker", "create_stream", map[string]any{"name": "x", "transport": map[string]any{"kind": "schedule", "config": map[string]any{"cron": "0 9 * * *"}}},
			[]string{"you have made 1 schedule streams, the most one worker may (the setting schedule.max_per_worker)"}},
		{"reserved contact id", "create_stream", map[string]any{"id": "s-contact-w-maya", "name": "squat"}, []string{`id: "s-contact-w-maya" is reserved: ids starting "s-contact-" belong to streams the system creates`}},
		{"reserved task id", "create_stream", map[string]any{"id": "s-task-login", "name": "squat"}, []string{`id: "s-task-login" is reserved: ids starting "s-task-"`}},
		{"reserved org id", "create_stream", map[string]any{"id": "s-org", "name": "squat"}, []string{`id: "s-org" is reserved: it is the system's own stream`}},
		{"duplicate id", "create_stream", map[string]any{"id": "s-inbox", "name": "inbox"}, []string{`stream "s-inbox" already exists`}},
		{"bad kind", "list_streams", map[string]any{"kind": "smtp"}, []string{`kind: unknown transport kind "smtp" (valid: "local", "webhook", "email", "github", "schedule")`}},
		{"unknown id", "get_stream", map[string]any{"id": "s-nope"}, []string{`stream "s-nope": not found`}},
		{"someone else's DM", "get_stream", map[string]any{"id": "s-dm-w-echo-w-maya"}, []string{"s-dm-w-echo-w-maya is a direct-message stream; only its two members read it"}},
		{"unknown stream", "subscribe", map[string]any{"stream": "s-nope"}, []string{`stream "s-nope": not found`}},
		{"unknown worker", "subscribe", map[string]any{"stream": "s-inbox", "worker": "w-nope"}, []string{`worker "w-nope": not found`}},
		{"another worker to s-org", "subscribe", map[string]any{"stream": "s-org", "worker": "w-maya"}, []string{"s-org is the org's audit trail; only w-owner reads it"}},
		{"yourself to someone else's DM", "subscribe", map[string]any{"stream": "s-dm-w-echo-w-maya"}, []string{"only its two members read it"}},
		{"not a member", "unsubscribe", map[string]any{"stream": "s-inbox", "worker": "w-maya"}, []string{`worker "w-maya" is not subscribed to "s-inbox"`}},
		{"a member from someone else's DM", "unsubscribe", map[string]any{"stream": "s-dm-w-echo-w-maya", "worker": "w-maya"}, []string{"s-dm-w-echo-w-maya is a direct-message stream; only its members join or leave it, each for itself"}},
		{"missing email", "invite", map[string]any{"position": "p-support"}, []string{"email: is required: "}},
		{"not an email address", "invite", map[string]any{"email": "lee", "position": "p-support"}, []string{`email: "lee" is not an email address`}},
		{"an unknown org role", "invite", map[string]any{"email": "lee@example.com", "position": "p-support", "role": "boss"}, []string{`role`, `boss`}},
		{"unexpected argument", "list_invitations", map[string]any{"status": "pending"}, []string{"status: unknown argument"}},
		{"unknown invitation", "revoke_invitation", map[string]any{"id": "inv-nope"}, []string{`invitation "inv-nope": not found`}},
		{"an AI worker has no org role", "set_org_role", map[string]any{"worker": "w-echo", "role": "viewer"}, []string{"w-echo is an AI worker"}},
		{"an unknown org role", "set_org_role", map[string]any{"worker": "w-maya", "role": "boss"}, []string{`role`, `boss`}},
		{"one unknown worker adds nobody", "invite_workers", map[string]any{"stream": "s-inbox", "workers": []string{"w-maya", "w-nope"}}, []string{`worker "w-nope": not found`}},
		{"missing workers", "invite_workers", map[string]any{"stream": "s-inbox"}, []string{"workers: is required: "}},
		{"unknown stream", "stream_members", map[string]any{"stream": "s-nope"}, []string{`stream "s-nope": not found`}},
		{"someone else's DM", "stream_members", map[string]any{"stream": "s-dm-w-echo-w-maya"}, []string{"only its two members read it"}},
		{"body over the configured limit", "publish", map[string]any{"stream": "s-inbox", "body": strings.Repeat("x", 101)}, []string{"body: is 101 bytes; the limit is 100"}},
		{"missing body", "publish", map[string]any{"stream": "s-inbox"}, []string{"body: is required: "}},
		{"the audit trail", "publish", map[string]any{"stream": "s-org", "body": "forged"}, []string{"stream: s-org is the org's audit trail"}},
		{"an activation log", "publish", map[string]any{"stream": "s-activations-w-echo", "body": "forged"}, []string{"stream: s-activations-w-echo is an activation log"}},
		{"unknown stream", "publish", map[string]any{"stream": "s-nope", "body": "hello"}, []string{`stream "s-nope": not found`}},
		{"someone else's DM", "publish", map[string]any{"stream": "s-dm-w-echo-w-maya", "body": "hello"}, []string{"only its two members read it"}},
		{"extra over the limit", "publish", map[string]any{"stream": "s-inbox", "body": "hi", "extra": map[string]any{"k": long(domain.MaxExtra)}},
			[]string{fmt.Sprintf("extra: is %d bytes; the limit is %d", domain.MaxExtra+9, domain.MaxExtra)}},
		{"extra nested too deep", "publish", map[string]any{"stream": "s-inbox", "body": "hi", "extra": map[string]any{"k": nested(150)}},
			[]string{"request: is JSON nested more than 100 levels deep; the limit is 100"}},
		{"too many recipients", "publish", map[string]any{"stream": "s-inbox", "body": "hi", "to": make([]string, domain.MaxRecipients+1)},
			[]string{"to: has 1001 entries; the limit is 1000"}},
		{"recipient too long", "publish", map[string]any{"stream": "s-inbox", "body": "hi", "to": []string{"w-maya", long(domain.MaxAddress)}},
			[]string{"to[1]: is 321 bytes; the limit is 320"}},
		{"subject too long", "publish", map[string]any{"stream": "s-inbox", "body": "hi", "subject": long(domain.MaxSubject)},
			[]string{"subject: is 2049 bytes; the limit is 2048"}},
		{"threadId too long", "publish", map[string]any{"stream": "s-inbox", "body": "hi", "threadId": long(domain.MaxMessageRef)},
			[]string{"threadId: is 1025 bytes; the limit is 1024"}},
		{"inReplyTo too long", "publish", map[string]any{"stream": "s-inbox", "body": "hi", "inReplyTo": long(domain.MaxMessageRef)},
			[]string{"inReplyTo: is 1025 bytes; the limit is 1024"}},
		{"messageId too long", "publish", map[string]any{"stream": "s-inbox", "body": "hi", "messageId": long(domain.MaxMessageRef)},
			[]string{"messageId: is 1025 bytes; the limit is 1024"}},
		{"bodyContentType too long", "publish", map[string]any{"stream": "s-inbox", "body": "hi", "bodyContentType": long(domain.MaxContentType)},
			[]string{"bodyContentType: is 256 bytes; the limit is 255"}},
		{"too many attachments", "publish", map[string]any{"stream": "s-inbox", "body": "hi", "attachments": attachments(domain.MaxAttachments + 1)},
			[]string{"attachments: has 101 entries; the limit is 100"}},
		{"attachment name too long", "publish", map[string]any{"stream": "s-inbox", "body": "hi", "attachments": []map[string]any{{"name": long(domain.MaxAttachmentName)}}},
			[]string{"attachments[0].name: is 256 bytes; the limit is 255"}},
		{"attachment contentType too long", "publish", map[string]any{"stream": "s-inbox", "body": "hi", "attachments": []map[string]any{{"name": "a", "contentType": long(domain.MaxContentType)}}},
			[]string{"attachments[0].contentType: is 256 bytes; the limit is 255"}},
		{"attachment ref too long", "publish", map[string]any{"stream": "s-inbox", "body": "hi", "attachments": []map[string]any{{"name": "a", "ref": long(domain.MaxAttachmentRef)}}},
			[]string{"attachments[0].ref: is 129 bytes; the limit is 128"}},
		{"wait over the cap", "read_events", map[string]any{"wait": 100}, []string{"wait: must be between 0 and 60 seconds"}},
		{"unknown stream", "read_events", map[string]any{"streams": []string{"s-nope"}}, []string{`stream "s-nope": not found`}},
		{"a stream you do not follow", "read_events", map[string]any{"streams": []string{"s-inbox"}}, []string{"w-owner is not subscribed to s-inbox; subscribe to it first"}},
		{"to yourself", "dm", map[string]any{"to": "w-owner", "body": "note"}, []string{"to: cannot send a direct message to yourself"}},
		{"blank body creates no stream", "dm", map[string]any{"to": "w-maya", "body": " "}, []string{"body: is required"}},
		{"body over the limit creates no stream", "dm", map[string]any{"to": "w-maya", "body": strings.Repeat("x", 101)}, []string{"body: is 101 bytes; the limit is 100"}},
		{"subject too long creates no stream", "dm", map[string]any{"to": "w-maya", "body": "hi", "subject": long(domain.MaxSubject)},
			[]string{"subject: is 2049 bytes; the limit is 2048"}},
		{"extra over the limit creates no stream", "dm", map[string]any{"to": "w-maya", "body": "hi", "extra": map[string]any{"k": long(domain.MaxExtra)}},
			[]string{fmt.Sprintf("extra: is %d bytes; the limit is %d", domain.MaxExtra+9, domain.MaxExtra)}},
		{"unknown recipient", "dm", map[string]any{"to": "w-nope", "body": "hello"}, []string{`worker "w-nope": not found`}},
		{"not an attachment ref", "get_attachment", map[string]any{"ref": "e-123"}, []string{`ref: "e-123" is not an attachment ref`}},
		{"unknown attachment", "get_attachment", map[string]any{"ref": "att-nope"}, []string{`attachment "att-nope": not found`}},
		{"a human has no activation log", "worker_log", map[string]any{"worker": "w-maya"}, []string{"worker: w-maya is a human worker"}},
		{"missing worker", "worker_log", map[string]any{}, []string{"worker: is required: "}},
		{"unknown stream", "list_deliveries", map[string]any{"stream": "s-nope"}, []string{`stream "s-nope": not found`}},
		{"missing stream", "enable_endpoint", map[string]any{}, []string{"stream: is required: "}},
		{"endpoint not disabled", "enable_endpoint", map[string]any{"stream": "s-inbox"}, []string{`stream "s-inbox" has no disabled endpoint`}},
		{"neither a delivery nor a stream", "retry_delivery", map[string]any{}, []string{"delivery: is required"}},
		{"delivery id of the wrong type", "retry_delivery", map[string]any{"delivery": "d-1"}, []string{"delivery: must be an integer, got "}},
		{"unknown delivery", "retry_delivery", map[string]any{"delivery": 999}, []string{"delivery 999: not found"}},
		{"missing name", "create_skill", map[string]any{"description": "d", "template": "shell", "handler": "echo"}, []string{"name: is required: "}},
		{"unknown template lists the valid ones", "create_skill", map[string]any{"name": "x_y", "description": "d", "template": "ruby"}, []string{`template: must be one of "shell", "python"; got "ruby"`}},
		{"no Docker on this server", "create_skill", map[string]any{"name": "x_y", "description": "d", "template": "shell", "handler": "echo"}, []string{"skills are not available on this server"}},
		{"unexpected argument", "list_skills", map[string]any{"verbose": true}, []string{"verbose: unknown argument"}},
		{"missing name", "call_skill", map[string]any{"input": map[string]any{}}, []string{"name: is required: "}},
		{"missing name", "delete_skill", map[string]any{}, []string{"name: is required: "}},
		{"example of the wrong shape", "create_skill", map[string]any{"name": "x_y", "description": "d", "template": "shell", "handler": "echo", "examples": []any{"x"}}, []string{"examples[0]: must be an object, got "}},
		{"unknown skill", "get_skill", map[string]any{"name": "nope"}, []string{`skill "nope": not found`}},
		{"version of the wrong type", "get_skill", map[string]any{"name": "x_y", "version": "latest"}, []string{"version: must be an integer, got "}},
		{"missing name", "rollback_skill", map[string]any{}, []string{"name: is required: "}},
		{"url and command", "add_mcp_server", map[string]any{"name": "x", "url": "http://127.0.0.1:1/", "command": "/bin/true"}, []string{"url: give url (Streamable HTTP) or command (stdio), not both"}},
		{"a name with __", "add_mcp_server", map[string]any{"name": "a__b", "url": "http://127.0.0.1:1/"}, []string{"name:", "without \"__\""}},
		{"an auth type that does not exist", "add_mcp_server", map[string]any{"name": "x", "url": "http://127.0.0.1:1/", "auth": map[string]any{"type": "basic"}}, []string{"auth", "basic"}},
		{"unexpected argument", "list_mcp_servers", map[string]any{"all": true}, []string{"all: unknown argument"}},
		{"unknown server", "remove_mcp_server", map[string]any{"name": "nope"}, []string{`mcp server "nope": not found`}},
		{"no Docker on this server", "rollback_skill", map[string]any{"name": "x_y"}, []string{"skills are not available on this server"}},
		{"bad scope lists the valid scopes", "set_budget", map[string]any{"scope": "team", "window": "day", "tokens": 1}, []string{`scope: must be one of "worker", "stream", "org"; got "team"`}},
		{"bad window lists the valid windows", "set_budget", map[string]any{"scope": "org", "window": "week", "tokens": 1}, []string{`window: must be one of "day", "month", "total"; got "week"`}},
		{"negative limit", "set_budget", map[string]any{"scope": "org", "window": "day", "tokens": -1}, []string{"tokens: must be positive"}},
		{"soft above hard", "set_budget", map[string]any{"scope": "org", "window": "day", "tokens": 10, "softTokens": 20}, []string{"softTokens: the soft threshold (20) must be below the hard limit tokens (10)"}},
		{"unknown worker", "set_budget", map[string]any{"scope": "worker", "target": "w-nope", "window": "day", "tokens": 1}, []string{`worker "w-nope": not found`}},
		{"unknown stream", "set_budget", map[string]any{"scope": "stream", "target": "s-nope", "window": "day", "tokens": 1}, []string{`stream "s-nope": not found`}},
		{"bad scope lists the valid scopes", "list_budgets", map[string]any{"scope": "team"}, []string{`scope: must be one of "worker", "stream", "org"; got "team"`}},
		{"bad state lists the valid states", "list_approvals", map[string]any{"state": "done"}, []string{`state: must be one of "pending", "approved", "denied", "expired", "executed"; got "done"`}},
		{"bad decision lists the valid decisions", "decide_approval", map[string]any{"id": "ap-x", "decision": "ok"}, []string{`decision: must be one of "approve", "deny"; got "ok"`}},
		{"missing id", "decide_approval", map[string]any{"decision": "deny"}, []string{"id: is required: "}},
		{"unknown approval", "decide_approval", map[string]any{"id": "ap-nope", "decision": "deny"}, []string{`approval "ap-nope": not found`}},
		{"missing question", "ask_human", map[string]any{"person": "w-owner"}, []string{"question: is required: "}},
		{"an unknown person", "ask_human", map[string]any{"person": "w-nope", "question": "q?"}, []string{`worker "w-nope": not found`}},
		{"missing ids", "dismiss_inbox", map[string]any{}, []string{"ids: is required: "}},
		{"not an inbox item", "dismiss_inbox", map[string]any{"ids": []string{"w-owner"}}, []string{`"w-owner" is no inbox item`}},
		{"bad approval lists the valid values", "grant_tool", map[string]any{"worker": "w-owner", "tool": "publish", "approval": "yes"}, []string{`approval: must be one of "required", "none"; got "yes"`}},
		{"repository path does not exist", "create_spec_task", map[string]any{"title": "T", "prompt": "p", "planner": "w-echo", "builders": []string{"w-echo"}, "repo": "/nonexistent/repo"}, []string{`repo: "/nonexistent/repo" does not exist`}},
		{"local repository without spec_tasks.repo_roots", "create_spec_task", map[string]any{"title": "T", "prompt": "p", "planner": "w-echo", "builders": []string{"w-echo"}, "repo": "/"}, []string{`repo: "/": local repositories are refused until an operator lists where they may be in the setting spec_tasks.repo_roots`}},
		{"file URL without spec_tasks.repo_roots", "create_spec_task", map[string]any{"title": "T", "prompt": "p", "planner": "w-echo", "builders": []string{"w-echo"}, "repo": "file:///srv/app.git"}, []string{`repo: "/srv/app.git": local repositories are refused until an operator lists`}},
		{"unexpected argument", "list_spec_tasks", map[string]any{"state": "done"}, []string{"state: unknown argument"}},
		{"unknown task", "get_spec_task", map[string]any{"task": "t-nope"}, []string{`spec task "t-nope": not found`}},
		{"unknown task", "submit_spec", map[string]any{"task": "t-nope", "design": "d", "items": []any{}}, []string{`spec task "t-nope": not found`}},
		{"missing approve", "review_spec", map[string]any{"task": "t-nope"}, []string{"approve: is required: "}},
		{"unknown task", "claim_item", map[string]any{"task": "t-nope", "item": 1}, []string{`spec task "t-nope": not found`}},
		{"bad outcome lists the valid outcomes", "report_item", map[string]any{"task": "t-nope", "item": 1, "outcome": "done", "summary": "s"}, []string{`outcome: must be one of "delivered", "partial", "blocked"; got "done"`}},
		{"unknown task", "cancel_spec_task", map[string]any{"task": "t-nope"}, []string{`spec task "t-nope": not found`}},
		{"unknown task", "skip_item", map[string]any{"task": "t-nope", "item": 1, "reason": "r"}, []string{`spec task "t-nope": not found`}},
		{"missing reason", "skip_item", map[string]any{"task": "t-nope", "item": 1}, []string{"reason: is required: "}},
		{"unknown task", "report_exploration", map[string]any{"task": "t-nope", "part": 1, "summary": "s"}, []string{`spec task "t-nope": not found`}},
		{"a clarifying question for an unknown task", "ask_human", map[string]any{"person": "w-owner", "question": "q?", "expectsReply": true, "task": "t-nope"}, []string{`spec task "t-nope": not found`}},
		{"missing url", "attach_repository", map[string]any{"worker": "w-echo"}, []string{"url: is required: "}},
		{"ssh URL", "attach_repository", map[string]any{"worker": "w-echo", "url": "git@github.com:o/r.git"}, []string{"ssh repositories are not supported; give an https:// or file:// URL"}},
		{"nothing attached", "detach_repository", map[string]any{"worker": "w-echo"}, []string{"worker: w-echo has no repository attached"}},
		{"unexpected argument", "list_repositories", map[string]any{"url": "x"}, []string{"url: unknown argument"}},
		{"missing title", "open_pull_request", map[string]any{"body": "b"}, []string{"title: is required: "}},
		{"no repository attached", "open_pull_request", map[string]any{"title": "t"}, []string{"workspace: w-owner has no repository attached"}},
		{"no number", "merge_pull_request", map[string]any{"number": 0}, []string{"number: give the pull request's number"}},
		{"bad type lists the valid types", "store_insight", map[string]any{"trigger": "x", "resolution": "y", "type": "tip"}, []string{`type: must be one of "pattern", "failure", "preference", "fact"; got "tip"`}},
		{"blank trigger", "store_insight", map[string]any{"trigger": " ", "resolution": "y", "type": "fact", "scope": "org"}, []string{"trigger: is required"}},
		{"no words to search", "recall", map[string]any{"query": "the"}, []string{"query: has no words to search for"}},
		{"bad outcome lists the valid ones", "insight_feedback", map[string]any{"ids": []string{"i-x"}, "outcome": "great"}, []string{`outcome: must be one of "utilized", "helped", "failed"; got "great"`}},
		{"unknown insight", "insight_feedback", map[string]any{"ids": []string{"i-nope"}, "outcome": "helped"}, []string{`insight "i-nope": not found`}},
		{"bad rating lists the valid ones", "rate_activation", map[string]any{"activation": "a-x", "outcome": "great"}, []string{`outcome: must be one of "succeeded", "failed"; got "great"`}},
		{"unknown run", "rate_activation", map[string]any{"activation": "a-nope", "outcome": "failed"}, []string{`activation "a-nope": not found`}},
		{"no reason", "correct_insight", map[string]any{"id": "i-nope", "resolution": "x"}, []string{"reason: is required: "}},
		{"unknown insight", "correct_insight", map[string]any{"id": "i-nope", "resolution": "x", "reason": "r"}, []string{`insight "i-nope": not found`}},
		{"unknown insight", "endorse_insight", map[string]any{"id": "i-nope"}, []string{`insight "i-nope": not found`}},
		{"bad scope lists the valid scopes", "list_insights", map[string]any{"scope": "team"}, []string{`scope: must be one of "org", "role", "position", "worker"; got "team"`}},
		{"bad kind lists the valid kinds", "link_insights", map[string]any{"from": "i-a", "to": "i-b", "kind": "causes"}, []string{`kind: must be one of "similar", "led_to"; got "causes"`}},
		{"unexpected argument", "consolidate_insights", map[string]any{"threshold": 0.5}, []string{"threshold: unknown argument"}},
		{"unknown worker", "learn", map[string]any{"worker": "w-nope"}, []string{`worker "w-nope": not found`}},
		{"unknown task", "learn", map[string]any{"task": "t-nope"}, []string{`spec task "t-nope": not found`}},
		{"unknown question", "store_insight", map[string]any{"question": "q-nope", "resolution": "y", "type": "fact"}, []string{`question "q-nope": not found`}},
		// The owner holds more tools than the context budget shows.
		{"no words to search for", "find_tools", map[string]any{"query": "the a"}, []string{"query: has no words to search for"}},
		{"a limit over 20", "find_tools", map[string]any{"query": "worker", "limit": 50}, []string{"limit: must be between 1 and 20; got 50"}},
		{"missing query", "find_tools", map[string]any{}, []string{"query: is required: "}},
	}

	covered := map[string]bool{}
	for _, tc := range cases {
		covered[tc.tool] = true
	}
	for _, name := range append(tools.Names(), tools.FindTools().Name) {
		if !covered[name] {
			t.Errorf("tool %s has no bad-input row: add one to TestBadInput", name)
		}
	}

	h := servertest.Start(t, server.Config{})
	owner := h.Owner(t)
	seedOrg(t, h, owner)
	// A DM between two other workers, which the owner may neither read nor touch.
	if _, err := h.Store.EnsureDM(t.Context(), "w-maya", "w-echo"); err != nil {
		t.Fatal(err)
	}
	for _, set := range []struct {
		spec domain.SettingSpec
		v    string
	}{{tools.MaxBodySetting, "100"}, {schedule.MinIntervalSetting, "5m"}, {schedule.MaxPerWorkerSetting, "1"}} {
		if err := h.Store.SetSetting(t.Context(), set.spec, set.v); err != nil {
			t.Fatal(err)
		}
	}
	servertest.Call[any](t, owner, "create_stream", map[string]any{"id": "s-tick", "name": "tick",
		"transport": map[string]any{"kind": "schedule", "config": map[string]any{"cron": "0 8 * * *"}}})
	for _, tc := range cases {
		t.Run(tc.tool+"/"+tc.name, func(t *testing.T) {
			before := snapshot(t, h, owner)
			got := servertest.CallErr(t, owner, tc.tool, tc.args)
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("error %q does not contain %q", got, w)
				}
			}
			if diff := cmp.Diff(before, snapshot(t, h, owner)); diff != "" {
				t.Errorf("bad call changed the org (-before +after):\n%s", diff)
			}
		})
	}
}

// long is one byte over limit.
func long(limit int) string { return strings.Repeat("x", limit+1) }

// nested is JSON of n arrays, one inside the other.
func nested(n int) json.RawMessage {
	return json.RawMessage(strings.Repeat("[", n) + strings.Repeat("]", n))
}

// attachments is n named attachment descriptors.
func attachments(n int) []map[string]any {
	out := make([]map[string]any, n)
	for i := range out {
		out[i] = map[string]any{"name": fmt.Sprintf("a%d", i)}
	}
	return out
}

// seedOrg gives the owner a small org through the tools: r-support,
// p-support, human w-maya, ai w-echo, local s-inbox and github s-gh.
func seedOrg(t *testing.T, h *servertest.Harness, owner *mcp.ClientSession) {
	t.Helper()
	servertest.Call[any](t, owner, "create_role", map[string]any{"id": "r-support", "title": "Support", "content": "Answer tickets."})
	servertest.Call[any](t, owner, "create_position", map[string]any{"id": "p-support", "role": "r-support", "title": "Support 1"})
	servertest.Call[any](t, owner, "hire_worker", map[string]any{"id": "w-maya", "position": "p-support", "kind": "human", "name": "Maya"})
	servertest.Call[any](t, owner, "hire_worker", map[string]any{"id": "w-echo", "position": "p-support", "kind": "ai", "name": "Echo"})
	servertest.Call[any](t, owner, "create_stream", map[string]any{"id": "s-inbox", "name": "inbox"})
	servertest.Call[any](t, owner, "create_stream", map[string]any{"id": "s-gh", "name": "gh",
		"transport": map[string]any{"kind": "github", "config": map[string]any{"repo": "helixml/helix", "events": []string{"issues"}}}})
}
