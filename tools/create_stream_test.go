package tools

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/helixml/helix-org/domain"
)

// streamView is a stream as a client reads it, with the config decoded so
// tables compare values rather than bytes.
type streamView struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Transport   struct {
		Kind   string         `json:"kind"`
		Config map[string]any `json:"config"`
	} `json:"transport"`
	CreatedBy string `json:"createdBy,omitempty"`
}

func view(id, name, kind string, config map[string]any) streamView {
	v := streamView{ID: id, Name: name, CreatedBy: "w-owner"}
	v.Transport.Kind = kind
	v.Transport.Config = config
	return v
}

const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

func TestCreateStream(t *testing.T) {
	empty := map[string]any{}
	runTable(t, "create_stream", []toolCase[streamView]{
		{
			name: "local by default, id derived from the name",
			args: map[string]any{"name": "Sales Leads"},
			want: view("s-sales-leads", "Sales Leads", "local", empty),
		},
		{
			name: "derived id taken gets a numeric suffix",
			args: map[string]any{"name": "inbox"},
			want: view("s-inbox-2", "inbox", "local", empty),
		},
		{
			name: "transport as a bare kind",
			args: map[string]any{"id": "s-hook", "name": "hook", "transport": "webhook"},
			want: view("s-hook", "hook", "webhook", empty),
		},
		{
			name: "transport as an object",
			args: map[string]any{"id": "s-mail", "name": "mail", "transport": map[string]any{"kind": "email", "config": map[string]any{"alias": "sam"}}},
			want: view("s-mail", "mail", "email", map[string]any{"alias": "sam"}),
		},
		{
			name: "github repo and events",
			args: map[string]any{"id": "s-gh", "name": "gh", "transport": map[string]any{"kind": "github", "config": map[string]any{"repo": "helixml/helix", "events": []string{"issues", "pull_request"}}}},
			want: view("s-gh", "gh", "github", map[string]any{"repo": "helixml/helix", "events": []any{"issues", "pull_request"}}),
		},
		{
			name: "webhook secret is redacted in the output, get_stream and the audit trail but stored",
			args: map[string]any{"id": "s-hook", "name": "hook", "transport": map[string]any{"kind": "webhook", "config": map[string]any{"secret": secret, "outbound_url": "https://example.com/in"}}},
			want: view("s-hook", "hook", "webhook", map[string]any{"secret": domain.Redacted, "outbound_url": "https://example.com/in"}),
			check: func(t *testing.T, f fixture, _ streamView) {
				st, err := f.env.Store.StreamWithSecrets(t.Context(), "s-hook")
				if err != nil {
					t.Fatal(err)
				}
				if !strings.Contains(string(st.Transport.Config), secret) {
					t.Errorf("stored config %s lost the secret", st.Transport.Config)
				}
				if st, _ := f.env.Store.GetStream(t.Context(), "s-hook"); strings.Contains(string(st.Transport.Config), secret) {
					t.Errorf("GetStream reveals the secret: %s", st.Transport.Config)
				}
				b, _ := json.Marshal(lastOrgChange(t, f.env.Store))
				if strings.Contains(string(b), secret) {
					t.Errorf("s-org change %s reveals the secret", b)
				}
			},
		},
		{
			name:    "caller-chosen id already taken",
			args:    map[string]any{"id": "s-inbox", "name": "inbox"},
			wantErr: []string{`stream "s-inbox" already exists`},
			wantIs:  domain.ErrConflict,
		},
		{
			name:    "missing name",
			args:    map[string]any{"id": "s-x"},
			wantErr: []string{"name: is required"},
		},
		{
			name:    "unknown bare kind lists the valid kinds",
			args:    map[string]any{"name": "x", "transport": "smtp"},
			wantErr: []string{`transport.kind: unknown transport kind "smtp" (valid: "local", "webhook", "email", "github", "chat")`},
		},
		{
			name:    "unknown kind in an object",
			args:    map[string]any{"name": "x", "transport": map[string]any{"kind": "smtp"}},
			wantErr: []string{`transport.kind: unknown transport kind "smtp" (valid: "local", "webhook", "email", "github", "chat")`},
		},
		{
			name:    "transport neither a string nor an object",
			args:    map[string]any{"name": "x", "transport": 5},
			wantErr: []string{"transport: must be a kind string or"},
		},
		{
			name:    "unknown field beside kind",
			args:    map[string]any{"name": "x", "transport": map[string]any{"kind": "local", "cfg": map[string]any{}}},
			wantErr: []string{"transport: must be a kind string or", `unknown field "cfg"`},
		},
		{
			name:    "unknown config field is an error, not ignored",
			args:    map[string]any{"name": "x", "transport": map[string]any{"kind": "webhook", "config": map[string]any{"secert": secret}}},
			wantErr: []string{"transport.config: ", `unknown field "secert"`},
		},
		{
			name:    "local takes no config",
			args:    map[string]any{"name": "x", "transport": map[string]any{"kind": "local", "config": map[string]any{"alias": "sam"}}},
			wantErr: []string{"transport.config: ", `unknown field "alias"`},
		},
		{
			name:    "email without an alias",
			args:    map[string]any{"name": "x", "transport": "email"},
			wantErr: []string{"transport.config.alias: is required"},
		},
		{
			name:    "direct-message ids are reserved",
			args:    map[string]any{"id": "s-dm-w-maya-w-owner", "name": "spoof", "description": "Direct messages between w-maya and w-owner"},
			wantErr: []string{`id: "s-dm-w-maya-w-owner" is reserved`},
		},
		{
			name:    "a name that derives a reserved id",
			args:    map[string]any{"name": "dm w-maya w-owner"},
			wantErr: []string{`id: "s-dm-w-maya-w-owner" is reserved`},
		},
		{
			name:    "activation-log ids are reserved",
			args:    map[string]any{"id": "s-activations-w-next", "name": "squat"},
			wantErr: []string{`id: "s-activations-w-next" is reserved`},
		},
		{
			name:    "inbox ids are reserved",
			args:    map[string]any{"id": "s-inbox-w-next", "name": "squat"},
			wantErr: []string{`id: "s-inbox-w-next" is reserved`},
		},
		{
			name:    "contact-stream ids are reserved",
			args:    map[string]any{"id": "s-contact-w-maya", "name": "contact w-maya", "description": "messages to and from w-maya"},
			wantErr: []string{`id: "s-contact-w-maya" is reserved: ids starting "s-contact-" belong to streams the system creates`},
		},
		{
			name:    "a name that derives a contact-stream id",
			args:    map[string]any{"name": "contact w-maya"},
			wantErr: []string{`id: "s-contact-w-maya" is reserved: ids starting "s-contact-"`},
		},
		{
			name:    "spec-task stream ids are reserved",
			args:    map[string]any{"id": "s-task-login", "name": "squat"},
			wantErr: []string{`id: "s-task-login" is reserved: ids starting "s-task-"`},
		},
		{
			name:    "s-org is reserved",
			args:    map[string]any{"name": "org"},
			wantErr: []string{`id: "s-org" is reserved: it is the system's own stream`},
		},
	})
}
