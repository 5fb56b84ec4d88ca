package discord

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/helixml/helix-org/transports/delivery"
)

// api is Discord's REST API as the bot: its token in Authorization, JSON
// both ways.
type api struct {
	base, token string
	client      *http.Client
}

// apiError is a REST answer other than 2xx: Discord's JSON error code
// (10003 Unknown Channel, 50001 Missing Access…) and, on 429, when to
// come back.
type apiError struct {
	Status     int
	Code       int
	Message    string
	RetryAfter time.Duration
}

func (e *apiError) Error() string {
	if e.Code != 0 {
		return fmt.Sprintf("answered %d: %s (code %d)", e.Status, e.Message, e.Code)
	}
	return fmt.Sprintf("answered %d: %s", e.Status, e.Message)
}

// Discord's JSON error codes the transport acts on.
const (
	codeUnknownChannel = 10003
	codeThreadExists   = 160004
)

// do sends one request; out, when set, receives a 2xx answer.
func (a api) do(ctx context.Context, method, path string, in, out any) error {
	var raw json.RawMessage
	resp, o := delivery.Do(ctx, a.client, delivery.Call{Name: "discord " + method + " " + path, Method: method, URL: strings.TrimRight(a.base, "/") + path,
		Header: map[string]string{"Authorization": "Bot " + a.token, "User-Agent": "DiscordBot (https://github.com/helixml/helix-org, 1)"}, Body: in}, &raw)
	switch {
	case resp == nil:
		return o.Err
	case resp.StatusCode/100 != 2:
		return answerError(resp, raw)
	case out != nil:
		return json.Unmarshal(raw, out)
	}
	return nil
}

func answerError(resp *http.Response, raw []byte) *apiError {
	var ans struct {
		Message    string  `json:"message"`
		Code       int     `json:"code"`
		RetryAfter float64 `json:"retry_after"`
	}
	json.Unmarshal(raw, &ans)
	e := &apiError{Status: resp.StatusCode, Code: ans.Code, Message: ans.Message}
	if e.Message == "" {
		e.Message = resp.Status
	}
	if resp.StatusCode == http.StatusTooManyRequests {
		secs := ans.RetryAfter
		if h, err := strconv.ParseFloat(resp.Header.Get("Retry-After"), 64); err == nil && h > secs {
			secs = h
		}
		e.RetryAfter = time.Duration(math.Ceil(secs*1000)) * time.Millisecond
	}
	return e
}

// gatewayURL asks where to connect (GET /gateway/bot), which also proves
// the token before a connection is tried.
func (a api) gatewayURL(ctx context.Context) (string, error) {
	var ans struct {
		URL string `json:"url"`
	}
	if err := a.do(ctx, http.MethodGet, "/gateway/bot", nil, &ans); err != nil {
		return "", fmt.Errorf("discord GET /gateway/bot: %w", err)
	}
	if ans.URL == "" {
		return "", errors.New("discord GET /gateway/bot answered no url")
	}
	return ans.URL, nil
}

// channel is the part of a channel object the transport reads.
type channel struct {
	ID       string `json:"id"`
	Type     int    `json:"type"`
	ParentID string `json:"parent_id"`
}

// threadTypes are the channel types of threads (announcement, public,
// private).
func (c channel) isThread() bool { return c.Type == 10 || c.Type == 11 || c.Type == 12 }
