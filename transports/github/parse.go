package github

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/transports/inbound"
)

// Delivery is one webhook delivery turned into the canonical envelope.
type Delivery struct {
	// Repo is repository.full_name, "" for events about no repository.
	Repo    string
	Message domain.Message
	// Contents holds the attachments' contents: the whole payload, when it
	// is too large for extra (PayloadAttachment).
	Contents [][]byte
	// PullRequest is the number of the pull request a review, review
	// comment or check run is about (ReviewEvents), else 0.
	PullRequest int
}

// ReviewEvents are the events about a pull request that reach the
// builder of the spec-task item the server opened it for.
var ReviewEvents = []string{"pull_request_review", "pull_request_review_comment", "check_run"}

// PayloadAttachment is the attachment that carries a payload larger than
// domain.MaxExtra; extra then holds only its outline.
const PayloadAttachment = "payload.json"

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
	CheckRun   *struct {
		Name         string `json:"name"`
		Conclusion   string `json:"conclusion"`
		PullRequests []struct {
			Number int `json:"number"`
		} `json:"pull_requests"`
	} `json:"check_run"`
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
// when there is one and otherwise the item's own body — or, for an event
// without text (a workflow run, an issue opened without a description), a
// one-line summary such as "workflow_run completed by octocat in a/b" —
// threadId = "#<number>", messageId = the delivery id, from = the sender's
// login, extra = the payload plus "event". A payload over domain.MaxExtra
// travels whole as the attachment payload.json, extra keeping event,
// action, repository.full_name and sender.login. An empty payload ({})
// is refused: it carries nothing.
func Parse(event, delivery string, body []byte) (Delivery, error) {
	if !validEvent(event) {
		return Delivery{}, fmt.Errorf("X-GitHub-Event %q is not an event name", event)
	}
	var p payload
	if err := json.Unmarshal(body, &p); err != nil {
		return Delivery{}, fmt.Errorf("payload is not a JSON object: %w", err)
	}
	extra, err := inbound.WithEvent(body, event)
	if err != nil {
		return Delivery{}, err
	}
	m := domain.Message{MessageID: delivery, BodyContentType: "text/markdown", Extra: extra}
	if p.Sender != nil {
		m.From = p.Sender.Login
	}
	d := Delivery{Message: m}
	if p.Repository != nil {
		d.Repo = p.Repository.FullName
	}
	m.Subject, m.Body, m.ThreadID = describe(event, p)
	d.PullRequest = pullNumber(event, p)
	if strings.TrimSpace(m.Body) == "" {
		m.Body = summary(event, p.Action, m.From, d.Repo)
	}
	if len(extra) > domain.MaxExtra {
		m.Extra, _ = json.Marshal(outline{Event: event, Action: p.Action, Repository: p.Repository, Sender: p.Sender,
			Payload: fmt.Sprintf("%d bytes, too large for extra: read the attachment %s", len(body), PayloadAttachment)})
		m.Attachments = []domain.Attachment{{Name: PayloadAttachment, ContentType: "application/json"}}
		d.Contents = [][]byte{body}
	}
	d.Message = m
	return d, nil
}

// outline is extra for a payload kept as an attachment: the fields a role
// routes on, at the same paths as in the payload.
type outline struct {
	Event      string `json:"event"`
	Action     string `json:"action,omitempty"`
	Repository *struct {
		FullName string `json:"full_name"`
	} `json:"repository,omitempty"`
	Sender *struct {
		Login string `json:"login"`
	} `json:"sender,omitempty"`
	Payload string `json:"payload"`
}

// pullNumber is the pull request a review event is about: the payload's
// pull_request, or a check run's first pull request.
func pullNumber(event string, p payload) int {
	switch {
	case !slices.Contains(ReviewEvents, event):
		return 0
	case p.PullRequest != nil:
		return int(p.PullRequest.Number)
	case p.CheckRun != nil && len(p.CheckRun.PullRequests) > 0:
		return p.CheckRun.PullRequests[0].Number
	}
	return 0
}

// summary is the body of an event that carries no text of its own.
func summary(event, action, sender, repo string) string {
	s := strings.TrimSpace(event + " " + action)
	if sender != "" {
		s += " by " + sender
	}
	if repo != "" {
		s += " in " + repo
	}
	return s
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

// validEvent accepts GitHub's event names: [a-z0-9_]+, lowercase words
// and digits joined by "_" (projects_v2_item).
func validEvent(e string) bool {
	if e == "" || len(e) > 64 {
		return false
	}
	for _, r := range e {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_') {
			return false
		}
	}
	return true
}
