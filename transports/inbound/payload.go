package inbound

import (
	"encoding/json"
	"errors"
	"strconv"

	"github.com/helixml/helix-org/domain"
)

// WithEvent returns a webhook's JSON payload object with "event" added
// (GitHub's X-GitHub-Event, GitLab's object kind), so a role reading the
// message's extra sees which event it was without the HTTP headers.
func WithEvent(body []byte, event string) (json.RawMessage, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(body, &obj); err != nil || obj == nil {
		return nil, errors.New("payload is not a JSON object")
	}
	if len(obj) == 0 {
		return nil, domain.Invalid("payload", "is an empty JSON object; there is nothing to store")
	}
	ev, _ := json.Marshal(event)
	obj["event"] = ev
	return json.Marshal(obj)
}

// MaxBodySetting is "<setting>.max_body_bytes", a kind's bound on one
// inbound body in bytes (def by default): a larger one gets 413.
func MaxBodySetting(setting string, def int, description string) domain.SettingSpec {
	return domain.SettingSpec{Key: setting + ".max_body_bytes", Type: domain.SettingInt, Default: strconv.Itoa(def), Description: description}
}
