package github

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/helixml/helix-org/domain"
)

// Delivery is one webhook delivery turned into the canonical envelope.
type Delivery struct {
	// Repo is repository.full_name, "" for events about no repository.
	Repo    string
	Message domain.Message
}

// payload is the part of GitHub's event payloads the envelope is built
// from; everything else travels untouched in Extra.
type payload struct {
	Action     string `json:"action"`
	Repository *struct {
		FullName string `json:"full_name"`
	} `json:"repository"`
	Sender *struct {
		Login string `json:"login"`
	} `json:"sender"`
	Issue       *item `json:"issue"`
	PullRequest *item `json:"pull_request"`
	Discussion  *item `json:"discussion"`
	Comment     *text `json:"comment"`
	Review      *text `json:"review"`
	Release     *struct {
		Name    string `json:"name"`
		TagName string `json:"tag_name"`
		Body    string `json:"body"`
	} `json:"release"`
	Ref        string `json:"ref"`
	HeadCommit *text  `json:"head_commit"`
}

// item is an issue, pull request or discussion.
type item struct {
	Number int64  `json:"number"`
	Title  string `json:"title"`
	Body   string `json:"body"`
}

type text struct {
	Body    string `json:"body"`
	Message string `json:"message"`
}

// Parse maps a delivery's JSON payload to the envelope: subject = the
// issue, pull request or discussion title, body = the comment or review
// when there is one and otherwise the item's own body, threadId = "#<number>",
// messageId = the delivery id, from = the sender's login, extra = the
// payload plus "event".
func Parse(event, delivery string, body []byte) (Delivery, error) {
	if !validEvent(event) {
		return Delivery{}, fmt.Errorf("X-GitHub-Event %q is not an event name", event)
	}
	var p payload
	if err := json.Unmarshal(body, &p); err != nil {
		return Delivery{}, fmt.Errorf("payload is not a JSON object: %w", err)
	}
	extra, err := withEvent(body, event)
	if err != nil {
		return Delivery{}, err
	}
	m := domain.Message{MessageID: delivery, BodyContentType: "text/markdown", Extra: extra}
	if p.Sender != nil {
		m.From = p.Sender.Login
	}
	m.Subject, m.Body, m.ThreadID = describe(event, p)
	d := Delivery{Message: m}
	if p.Repository != nil {
		d.Repo = p.Repository.FullName
	}
	return d, nil
}

// describe picks subject, body and thread for the kinds of events a
// github stream may select.
func describe(event string, p payload) (subject, body, thread string) {
	var it *item
	for _, c := range []*item{p.Issue, p.PullRequest, p.Discussion} {
		if c != nil {
			it = c
			break
		}
	}
	switch {
	case it != nil:
		subject, body = it.Title, it.Body
		if it.Number > 0 {
			thread = fmt.Sprintf("#%d", it.Number)
		}
	case p.Release != nil:
		subject, body = p.Release.Name, p.Release.Body
		if subject == "" {
			subject = p.Release.TagName
		}
	case event == "push":
		subject = "push to " + p.Ref
		if p.HeadCommit != nil {
			body = p.HeadCommit.Message
		}
	default:
		subject = strings.TrimSpace(event + " " + p.Action)
	}
	switch {
	case p.Comment != nil:
		body = p.Comment.Body
	case p.Review != nil:
		body = p.Review.Body
	}
	return subject, body, thread
}

// withEvent returns the payload object with "event" added, so a role
// reading extra sees which event it was without the HTTP headers.
func withEvent(body []byte, event string) (json.RawMessage, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(body, &obj); err != nil || obj == nil {
		return nil, errors.New("payload is not a JSON object")
	}
	ev, _ := json.Marshal(event)
	obj["event"] = ev
	return json.Marshal(obj)
}

// validEvent accepts GitHub's event names: lowercase words joined by "_".
func validEvent(e string) bool {
	if e == "" || len(e) > 64 {
		return false
	}
	for _, r := range e {
		if !(r >= 'a' && r <= 'z' || r == '_') {
			return false
		}
	}
	return true
}
