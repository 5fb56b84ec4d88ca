package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Retry bounds how a call is retried on 408, 429, 5xx and network errors.
// Zero fields take the defaults.
type Retry struct {
	// Attempts is the most tries in all (default 5).
	Attempts int
	// Base is the first backoff, doubled on each retry (default 1s), with
	// up to a quarter added at random so workers do not retry in step.
	Base time.Duration
	// Max caps one backoff (default 30s).
	Max time.Duration
	// MaxRetryAfter is the longest Retry-After honoured (default 2m); a
	// provider asking for longer ends the call with an error instead.
	MaxRetryAfter time.Duration
}

func (r Retry) withDefaults() Retry {
	if r.Attempts <= 0 {
		r.Attempts = 5
	}
	if r.Base <= 0 {
		r.Base = time.Second
	}
	if r.Max <= 0 {
		r.Max = 30 * time.Second
	}
	if r.MaxRetryAfter <= 0 {
		r.MaxRetryAfter = 2 * time.Minute
	}
	return r
}

// backoff is the wait before retry n (n ≥ 1).
func (r Retry) backoff(n int) time.Duration {
	d := r.Base << (n - 1)
	if d <= 0 || d > r.Max {
		d = r.Max
	}
	return d + time.Duration(rand.Int64N(int64(d)/4+1))
}

// StatusError is a provider's non-2xx reply.
type StatusError struct {
	Provider string
	Status   int
	// Message is the provider's error message, or the start of the body.
	Message string
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("%s: HTTP %d %s: %s", e.Provider, e.Status, http.StatusText(e.Status), e.Message)
}

func retryable(status int) bool {
	return status == http.StatusRequestTimeout || status == http.StatusTooManyRequests || status >= 500
}

// maxReply bounds a provider reply read into memory.
const maxReply = 32 << 20

// postJSON posts body to url and returns the 2xx reply, retrying as r says.
func postJSON(ctx context.Context, c *http.Client, provider, url string, header http.Header, body []byte, r Retry) ([]byte, error) {
	r = r.withDefaults()
	for n := 1; ; n++ {
		try := postOnce(ctx, c, provider, url, header, body)
		if try.err == nil {
			return try.reply, nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if !try.retry {
			return nil, try.err
		}
		if n >= r.Attempts {
			return nil, fmt.Errorf("%w (gave up after %d attempts)", try.err, n)
		}
		wait := r.backoff(n)
		if try.hasAfter {
			wait = try.after
		}
		if wait > r.MaxRetryAfter {
			return nil, fmt.Errorf("%w (the provider asked to retry after %s, longer than %s; giving up)", try.err, wait, r.MaxRetryAfter)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			// Keep the provider's answer: "deadline exceeded" alone hides
			// that the run spent its time waiting out a 429 or 5xx.
			return nil, fmt.Errorf("%w (while waiting to retry after: %v)", ctx.Err(), try.err)
		case <-t.C:
		}
	}
}

// attempt is how one try went.
type attempt struct {
	reply []byte
	err   error
	// retry says the error is worth another try: after, when hasAfter
	// (the provider's Retry-After), else after a backoff.
	retry    bool
	after    time.Duration
	hasAfter bool
}

func postOnce(ctx context.Context, c *http.Client, provider, url string, header http.Header, body []byte) attempt {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return attempt{err: fmt.Errorf("%s: %w", provider, err)}
	}
	req.Header = header.Clone()
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return attempt{err: fmt.Errorf("%s: %w", provider, err), retry: true}
	}
	defer resp.Body.Close()
	reply, err := io.ReadAll(io.LimitReader(resp.Body, maxReply))
	if err != nil {
		return attempt{err: fmt.Errorf("%s: read reply: %w", provider, err), retry: true}
	}
	if resp.StatusCode/100 == 2 {
		return attempt{reply: reply}
	}
	try := attempt{err: &StatusError{Provider: provider, Status: resp.StatusCode, Message: errorMessage(reply)}, retry: retryable(resp.StatusCode)}
	try.after, try.hasAfter = RetryAfter(resp.Header.Get("Retry-After"), time.Now())
	return try
}

// RetryAfter parses a Retry-After header: delay-seconds or an HTTP date
// (RFC 9110 §10.2.3). A date in the past is a wait of zero.
func RetryAfter(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil {
		if secs < 0 {
			return 0, false
		}
		return time.Duration(secs) * time.Second, true
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	return max(t.Sub(now), 0), true
}

// errorMessage pulls error.message out of an error body (both providers
// use that shape), or returns the start of the body.
func errorMessage(body []byte) string {
	var e struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(body, &e) == nil && e.Error != nil {
		var inner struct {
			Message string `json:"message"`
		}
		if json.Unmarshal(e.Error, &inner) == nil && inner.Message != "" {
			return inner.Message
		}
		var s string
		if json.Unmarshal(e.Error, &s) == nil && s != "" {
			return s
		}
	}
	s := strings.TrimSpace(string(body))
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	if s == "" {
		return "(empty body)"
	}
	return s
}
