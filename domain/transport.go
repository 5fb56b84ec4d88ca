package domain

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
)

// TransportKind names how a Stream connects to the outside world. The
// kinds a binary serves are its Transports; the core knows only local.
type TransportKind string

// TransportLocal is a stream inside the organisation only.
const TransportLocal TransportKind = "local"

// TransportSchedule is a clock's stream (transports/schedule): the store
// knows it so a recurring spec task can make one and follow its ticks.
const TransportSchedule TransportKind = "schedule"

// Transport is a stream's connection: a kind plus kind-specific config.
type Transport struct {
	Kind   TransportKind   `json:"kind" jsonschema:"the transport kind: local, or the outside system it connects (webhook, email, …)"`
	Config json.RawMessage `json:"config,omitempty" jsonschema:"the kind's settings, as an object"`
}

// TransportSpec is what the core knows of one transport kind. Its package
// (transports/<kind>) fills it in, as part of its descriptor; cmd lists
// the descriptors once. Everything that offers, validates, stores, shows
// or refuses a kind reads it from here.
type TransportSpec struct {
	Kind TransportKind
	// About says in a line what the kind connects, for create_stream's
	// schema and for refusals.
	About string
	// Config describes the stream config's keys, for create_stream.
	Config string
	// Check decodes a stream config strictly and validates it, naming the
	// field at fault ("transport.config.secret"). It is the code the
	// kind's receiver and sender decode the config with, so a config it
	// accepts is one they work with. Nil accepts only an empty config.
	Check func(config json.RawMessage) error
	// Secrets are the config keys that hold secrets: encrypted at rest,
	// shown as Redacted, decrypted only for the kind's own code.
	Secrets []string
	// Publish says workers may publish on streams of the kind (local, and
	// a kind that sends what is published); false refuses publish on a
	// kind that only receives.
	Publish bool
	// Trusted says what arrives on the kind's streams comes from the
	// server itself (the schedule's clock), not the outside world. Events
	// from any other kind's inbound routes taint the runs they trigger.
	Trusted bool
	// Contact, when set, lets a human worker be reached on the kind
	// (set_contact).
	Contact *ContactSpec
	// Admit, when set, bounds what one worker may make of the kind, by
	// count or by what the settings in force allow (a schedule's rate, a
	// webhook's private addresses): the store asks it in the transaction
	// that creates a stream, with the config, how many streams of the kind
	// the creator made before, and a reader of settings; its error names
	// the setting that sets the bound. An update of a stream's config asks
	// it too, with made 0: an update makes no new stream.
	Admit func(config json.RawMessage, made int, setting func(SettingSpec) string) error
}

// ContactSpec is how a human worker is reached on a transport kind: what
// its address is and the contact stream that address makes.
type ContactSpec struct {
	// Address says what an address is, for set_contact's errors.
	Address string
	// Stream checks address and returns the config of worker's contact
	// stream; its errors name the field "address".
	Stream func(worker, address string) (json.RawMessage, error)
	// Mail says the channel shows a subject and needs a recipient: a
	// relayed message keeps its subject and is addressed to the address.
	// A chat shows the subject at the head of the text instead.
	Mail bool
	// Ready, when set, says whether the kind can send now, from the
	// settings in force (setting reads one): nil, or an error naming
	// what is missing. Nil Ready: always.
	Ready func(setting func(SettingSpec) string) error
}

var localSpec = TransportSpec{Kind: TransportLocal, About: "a stream inside the organisation only", Config: "none", Publish: true, Trusted: true}

// Transports is the registry of the transport kinds a binary serves, in
// the order listed, local first. A nil *Transports knows only local.
type Transports struct{ specs []TransportSpec }

// NewTransports builds the registry. A kind listed twice is a
// programming error.
func NewTransports(specs ...TransportSpec) *Transports {
	all := []TransportSpec{localSpec}
	for _, s := range specs {
		if slices.ContainsFunc(all, func(o TransportSpec) bool { return o.Kind == s.Kind }) {
			panic(fmt.Sprintf("transport kind %q listed twice", s.Kind))
		}
		all = append(all, s)
	}
	return &Transports{specs: all}
}

// All returns every spec, local first.
func (r *Transports) All() []TransportSpec {
	if r == nil {
		return []TransportSpec{localSpec}
	}
	return r.specs
}

// Kinds lists the valid kinds.
func (r *Transports) Kinds() []TransportKind {
	var ks []TransportKind
	for _, s := range r.All() {
		ks = append(ks, s.Kind)
	}
	return ks
}

// Spec returns a kind's spec, or an error naming field and the valid kinds.
func (r *Transports) Spec(field string, kind TransportKind) (TransportSpec, error) {
	for _, s := range r.All() {
		if s.Kind == kind {
			return s, nil
		}
	}
	return TransportSpec{}, EnumError(field, "transport kind", kind, r.Kinds())
}

// ContactKinds lists the kinds a human worker can be reached on.
func (r *Transports) ContactKinds() []TransportKind {
	var ks []TransportKind
	for _, s := range r.All() {
		if s.Contact != nil {
			ks = append(ks, s.Kind)
		}
	}
	return ks
}

// Contact returns how a human is reached on kind, or an error naming
// field and the kinds it can be reached on.
func (r *Transports) Contact(field string, kind TransportKind) (ContactSpec, error) {
	spec, err := r.Spec(field, kind)
	if err != nil || spec.Contact == nil {
		return ContactSpec{}, EnumError(field, "contact channel", kind, r.ContactKinds())
	}
	return *spec.Contact, nil
}

// Validate checks the kind and its config.
func (r *Transports) Validate(t Transport) error {
	spec, err := r.Spec("transport.kind", t.Kind)
	if err != nil {
		return err
	}
	if spec.Check == nil {
		var none struct{}
		return DecodeConfig(t.Config, &none)
	}
	return spec.Check(t.Config)
}

// Untrusted reports whether what arrives from outside on a stream of kind
// is untrusted input: every kind but local and those marked Trusted, so a
// kind added later is untrusted until it says otherwise.
func (r *Transports) Untrusted(kind TransportKind) bool {
	spec, err := r.Spec("", kind)
	return err != nil || !spec.Trusted
}

// Outbound reports whether publishing on a stream of kind sends outside.
func (r *Transports) Outbound(kind TransportKind) bool {
	spec, err := r.Spec("", kind)
	return err == nil && spec.Publish && kind != TransportLocal
}

// Secrets are the config keys of kind that hold secrets.
func (r *Transports) Secrets(kind TransportKind) []string {
	spec, _ := r.Spec("", kind)
	return spec.Secrets
}

// Redact returns the transport with every secret of its config replaced by
// Redacted, for display. A config that is not a JSON object is hidden
// whole when the kind has secrets: it cannot be shown safely.
func (r *Transports) Redact(t Transport) Transport {
	fields := r.Secrets(t.Kind)
	if len(fields) == 0 || len(t.Config) == 0 {
		return t
	}
	var m map[string]any
	if json.Unmarshal(t.Config, &m) != nil || m == nil {
		t.Config = json.RawMessage(`"` + Redacted + `"`)
		return t
	}
	hidden := false
	for _, f := range fields {
		if v, ok := m[f]; ok && v != "" {
			m[f], hidden = Redacted, true
		}
	}
	if hidden {
		t.Config, _ = json.Marshal(m)
	}
	return t
}

// DecodeConfig decodes a stream's transport config into v, refusing
// unknown keys so a typo ("secert") is an error, not a silently ignored
// setting. An absent config decodes as {}.
func DecodeConfig(raw json.RawMessage, v any) error {
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		raw = json.RawMessage("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return Invalid("transport.config", "%v", err)
	}
	return nil
}

// ConfigField names a key of a stream's transport config in errors.
func ConfigField(key string) string { return "transport.config." + key }
