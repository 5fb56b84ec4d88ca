package webhook_test

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/safedial"
	"github.com/helixml/helix-org/transports/delivery"
	"github.com/helixml/helix-org/transports/webhook"
	"github.com/helixml/helix-org/transports/webhook/webhooktest"
)

func hookStream(url, secret string) domain.Stream {
	cfg, _ := json.Marshal(webhook.Config{OutboundURL: url, Secret: secret})
	return domain.Stream{ID: "s-out", Name: "out", Transport: domain.Transport{Kind: webhook.Kind, Config: cfg}}
}

var published = domain.Event{ID: "e-abc123", Seq: 7, StreamID: "s-out", Source: "w-maya", SourceKind: domain.SourceHuman,
	CreatedAt: time.Date(2026, 3, 4, 10, 0, 0, 0, time.UTC), Message: domain.Message{Body: "summary: all good", Subject: "Daily"}}

// allowAll is a safedial client that may reach loopback, where the fakes are.
func allowAll() *http.Client {
	return safedial.NewClient(safedial.Options{AllowPrivate: func(context.Context) bool { return true }})
}

func TestSenderDelivers(t *testing.T) {
	rcv := webhooktest.NewReceiver(t, secret)
	s := webhook.NewSender(allowAll(), webhook.SenderOptions{UserAgent: "helix-org/test"})
	st := hookStream(rcv.URL+"/in", secret)
	for attempt := 1; attempt <= 2; attempt++ {
		if out := s.Send(t.Context(), st, published, attempt); out.Failed() || out.Status != 204 {
			t.Fatalf("attempt %d: %+v", attempt, out)
		}
	}
	reqs := rcv.Requests()
	for i, r := range reqs {
		if r.Err != nil {
			t.Errorf("request %d fails the reference verification: %v", i, r.Err)
		}
		if got := r.Header.Get("webhook-id"); got != published.ID {
			t.Errorf("request %d webhook-id = %q, want the event id on every attempt", i, got)
		}
		if ct, ua := r.Header.Get("Content-Type"), r.Header.Get("User-Agent"); ct != "application/json" || ua != "helix-org/test" {
			t.Errorf("request %d content type %q, user agent %q", i, ct, ua)
		}
		var p webhook.Payload
		if err := json.Unmarshal(r.Body, &p); err != nil {
			t.Fatal(err)
		}
		want := webhook.Payload{Type: "message.published", Timestamp: published.CreatedAt, Data: published}
		if diff := cmp.Diff(want, p); diff != "" {
			t.Errorf("payload (-want +got):\n%s", diff)
		}
	}
}

func TestSenderWithoutSecretSendsUnsigned(t *testing.T) {
	rcv := webhooktest.NewReceiver(t, "")
	s := webhook.NewSender(allowAll(), webhook.SenderOptions{})
	if out := s.Send(t.Context(), hookStream(rcv.URL, ""), published, 1); out.Failed() {
		t.Fatal(out.Err)
	}
	h := rcv.Requests()[0].Header
	if h.Get("webhook-id") != published.ID || h.Get("webhook-timestamp") == "" || h.Get("webhook-signature") != "" {
		t.Errorf("headers = %v, want id and timestamp, no signature", h)
	}
}

func TestSenderOutcomes(t *testing.T) {
	now := time.Date(2026, 3, 4, 10, 0, 0, 0, time.UTC)
	tests := []struct {
		name     string
		resp     webhooktest.Response
		want     delivery.Outcome
		wantErrs []string
	}{
		{"200 delivers", webhooktest.Response{Status: 200}, delivery.Outcome{Status: 200}, nil},
		{"202 delivers", webhooktest.Response{Status: 202}, delivery.Outcome{Status: 202}, nil},
		{"500 is retried", webhooktest.Response{Status: 500, Body: "boom"}, delivery.Outcome{Status: 500}, []string{"remote answered 500", `"boom"`}},
		{"404 is retried", webhooktest.Response{Status: 404}, delivery.Outcome{Status: 404}, []string{"remote answered 404"}},
		{"503 with Retry-After seconds", webhooktest.Response{Status: 503, Header: map[string]string{"Retry-After": "7"}},
			delivery.Outcome{Status: 503, RetryAfter: 7 * time.Second}, []string{"503"}},
		{"429 with Retry-After date", webhooktest.Response{Status: 429, Header: map[string]string{"Retry-After": now.Add(90 * time.Second).Format(http.TimeFormat)}},
			delivery.Outcome{Status: 429, RetryAfter: 90 * time.Second}, []string{"429"}},
		{"unparseable Retry-After is ignored", webhooktest.Response{Status: 503, Header: map[string]string{"Retry-After": "soon"}},
			delivery.Outcome{Status: 503}, []string{"503"}},
		{"410 disables the endpoint", webhooktest.Response{Status: 410}, delivery.Outcome{Status: 410, Disable: true}, []string{"410 Gone"}},
		{"302 is not followed", webhooktest.Response{Status: 302, Header: map[string]string{"Location": "http://169.254.169.254/"}},
			delivery.Outcome{Status: 302}, []string{"redirects are not followed"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rcv := webhooktest.NewReceiver(t, secret, tt.resp)
			s := webhook.NewSender(allowAll(), webhook.SenderOptions{Now: func() time.Time { return now }})
			got := s.Send(t.Context(), hookStream(rcv.URL, secret), published, 1)
			for _, w := range tt.wantErrs {
				if got.Err == nil || !strings.Contains(got.Err.Error(), w) {
					t.Errorf("err = %v, want it to contain %q", got.Err, w)
				}
			}
			if len(tt.wantErrs) == 0 && got.Err != nil {
				t.Errorf("err = %v, want none", got.Err)
			}
			got.Err = nil
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("outcome (-want +got):\n%s", diff)
			}
			if n := len(rcv.Requests()); n != 1 {
				t.Errorf("receiver got %d requests, want 1", n)
			}
		})
	}
}

// TestSenderTimeout: an attempt is cut off at the timeout and retried.
func TestSenderTimeout(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(srv.Close)
	defer close(release)
	s := webhook.NewSender(allowAll(), webhook.SenderOptions{Timeout: 100 * time.Millisecond})
	out := s.Send(t.Context(), hookStream(srv.URL, secret), published, 1)
	if !errors.Is(out.Err, context.DeadlineExceeded) || out.Permanent {
		t.Errorf("outcome = %+v, want a retryable deadline error", out)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// countingBody is an endless answer that counts what is read of it.
type countingBody struct{ n atomic.Int64 }

func (c *countingBody) Read(p []byte) (int, error) {
	c.n.Add(int64(len(p)))
	for i := range p {
		p[i] = 'x'
	}
	return len(p), nil
}
func (c *countingBody) Close() error { return nil }

// TestSenderReadsAtMost64KiB: a huge answer is read only up to the limit.
func TestSenderReadsAtMost64KiB(t *testing.T) {
	for _, code := range []int{200, 500} {
		body := &countingBody{}
		client := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
			return &http.Response{StatusCode: code, Header: http.Header{}, Body: body, Request: r}, nil
		})}
		s := webhook.NewSender(client, webhook.SenderOptions{})
		out := s.Send(t.Context(), hookStream("https://example.com/hook", secret), published, 1)
		if n := body.n.Load(); n > 64<<10+32<<10 {
			t.Errorf("status %d: read %d bytes of the answer, want at most about 64 KiB", code, n)
		}
		if code == 500 && (out.Err == nil || len(out.Err.Error()) > 400) {
			t.Errorf("status 500: error %v should quote a short snippet", out.Err)
		}
	}
}

// TestSenderRefusesPrivate: by default the sender never reaches loopback,
// and a refusal is permanent.
func TestSenderRefusesPrivate(t *testing.T) {
	var conns atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	s := webhook.NewSender(safedial.NewClient(safedial.Options{}), webhook.SenderOptions{})
	out := s.Send(t.Context(), hookStream(srv.URL, secret), published, 1)
	if !errors.Is(out.Err, safedial.ErrBlocked) || !out.Permanent {
		t.Errorf("outcome = %+v, want a permanent ErrBlocked", out)
	}
	// The operator reads how to allow it.
	if want := "run `helix-org config set transport.webhook.allow_private true`"; !strings.Contains(out.Err.Error(), want) {
		t.Errorf("error %q does not say %q", out.Err, want)
	}
	if conns.Load() != 0 {
		t.Errorf("loopback listener accepted %d connections", conns.Load())
	}
}

func TestSenderWants(t *testing.T) {
	s := webhook.NewSender(http.DefaultClient, webhook.SenderOptions{})
	tests := []struct {
		cfg  string
		want bool
	}{
		{`{"outbound_url":"https://example.com/x"}`, true},
		{`{"secret":"` + secret + `"}`, false},
		{`{}`, false},
		{``, false},
	}
	for _, tt := range tests {
		st := domain.Stream{ID: "s-x", Transport: domain.Transport{Kind: webhook.Kind, Config: json.RawMessage(tt.cfg)}}
		if got := s.Wants(st); got != tt.want {
			t.Errorf("Wants(%s) = %v, want %v", tt.cfg, got, tt.want)
		}
	}
}
