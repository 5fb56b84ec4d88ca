package gitlab

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/transports/inbound"
)

// Delivery is one webhook turned into the canonical envelope.
type Delivery struct {
	Project project
	Message domain.Message
	// Contents holds the whole payload when it is too large for extra
	// (PayloadAttachment).
	Contents [][]byte
	// MergeRequest is the iid of the merge request a note or pipeline is
	// about, else 0.
	MergeRequest int
}

// PayloadAttachment carries a payload larger than domain.MaxExtra.
const PayloadAttachment = "payload.json"

// project is the project a payload is about: project.id and
// path_with_namespace, or project_id alone.
type project struct {
	ID   int64  `json:"id"`
	Path string `json:"path_with_namespace"`
}

func (p project) String() string {
	if p.Path != "" {
		return p.Path
	}
	return strconv.FormatInt(p.ID, 10)
}

// payload is the part of GitLab's payloads the envelope is built from;
// the rest travels untouched in extra.
type payload struct {
	ObjectKind string   `json:"object_kind"`
	EventType  string   `json:"event_type"`
	Project    *project `json:"project"`
	ProjectID  int64    `json:"project_id"`
	User       *struct {
		Username string `json:"username"`
	} `json:"user"`
	UserUsername string `json:"user_username"`
	Attrs        *attrs `json:"object_attributes"`
	Issue        *item  `json:"issue"`
	MergeRequest *item  `json:"merge_request"`
	Ref          string `json:"ref"`
	After        string `json:"after"`
	Commits      []struct {
		ID      string `json:"id"`
		Message string `json:"message"`
	} `json:"commits"`
}

// attrs are object_attributes: the issue or merge request itself, or the
// note, with its target's type.
type attrs struct {
	IID          int64  `json:"iid"`
	Title        string `json:"title"`
	Description  string `json:"description"`
	Action       string `json:"action"`
	Note         string `json:"note"`
	NoteableType string `json:"noteable_type"`
	Status       string `json:"status"`
}

type item struct {
	IID   int64  `json:"iid"`
	Title string `json:"title"`
}

// Parse maps a webhook's JSON payload to the envelope, as the github
// transport does: subject = the issue or merge request title, body = the
// note when there is one and otherwise the item's description — or, for an
// event without text, a one-line summary ("pipeline success by root in
// group/name"); threadId = "#<iid>" for an issue, "!<iid>" for a merge
// request (GitLab's own references), so a reply lands as a note there;
// from = the user's username; extra = the payload plus "event". A payload
// over domain.MaxExtra travels whole as the attachment payload.json.
func Parse(event string, body []byte) (Delivery, error) {
	var p payload
	if err := json.Unmarshal(body, &p); err != nil {
		return Delivery{}, fmt.Errorf("payload is not a GitLab webhook JSON object: %w", err)
	}
	extra, err := inbound.WithEvent(body, event)
	if err != nil {
		return Delivery{}, err
	}
	d := Delivery{Project: project{ID: p.ProjectID}}
	if p.Project != nil {
		d.Project = *p.Project
		if d.Project.ID == 0 {
			d.Project.ID = p.ProjectID
		}
	}
	m := domain.Message{BodyContentType: "text/markdown", Extra: extra, From: p.UserUsername}
	if p.User != nil && p.User.Username != "" {
		m.From = p.User.Username
	}
	m.Subject, m.Body, m.ThreadID = describe(event, p)
	if (event == "note" || event == "pipeline") && p.MergeRequest != nil {
		d.MergeRequest = int(p.MergeRequest.IID)
	}
	if strings.TrimSpace(m.Body) == "" {
		m.Body = summary(event, p, m.From, d.Project.String())
	}
	if len(extra) > domain.MaxExtra {
		m.Extra, _ = json.Marshal(map[string]any{"event": event, "object_kind": p.ObjectKind, "project": d.Project, "user": m.From,
			"payload": fmt.Sprintf("%d bytes, too large for extra: read the attachment %s", len(body), PayloadAttachment)})
		m.Attachments = []domain.Attachment{{Name: PayloadAttachment, ContentType: "application/json"}}
		d.Contents = [][]byte{body}
	}
	d.Message = m
	return d, nil
}

// describe picks subject, body and thread.
func describe(event string, p payload) (subject, body, thread string) {
	a := p.Attrs
	if a == nil {
		a = &attrs{}
	}
	switch {
	case event == "note" && p.MergeRequest != nil:
		return p.MergeRequest.Title, a.Note, ref("!", p.MergeRequest.IID)
	case event == "note" && p.Issue != nil:
		return p.Issue.Title, a.Note, ref("#", p.Issue.IID)
	case event == "note":
		return "comment on " + strings.ToLower(a.NoteableType), a.Note, ""
	case event == "merge_request":
		return a.Title, a.Description, ref("!", a.IID)
	case event == "issue":
		return a.Title, a.Description, ref("#", a.IID)
	case event == "push" || event == "tag_push":
		return strings.ReplaceAll(event, "_", " ") + " to " + p.Ref, headCommit(p), ""
	}
	return strings.TrimSpace(event + " " + a.Action + " " + a.Status), a.Description, ""
}

func ref(sigil string, iid int64) string {
	if iid <= 0 {
		return ""
	}
	return sigil + strconv.FormatInt(iid, 10)
}

// headCommit is the message of the commit the push moved the ref to.
func headCommit(p payload) string {
	for _, c := range p.Commits {
		if c.ID == p.After {
			return c.Message
		}
	}
	if n := len(p.Commits); n > 0 {
		return p.Commits[n-1].Message
	}
	return ""
}

// summary is the body of an event that carries no text of its own.
func summary(event string, p payload, user, project string) string {
	s := event
	if p.Attrs != nil {
		s = strings.TrimSpace(s + " " + p.Attrs.Action + " " + p.Attrs.Status)
	}
	if user != "" {
		s += " by " + user
	}
	return s + " in " + project
}
