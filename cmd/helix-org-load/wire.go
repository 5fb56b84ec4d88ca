package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
)

// wireClient calls tools by posting JSON-RPC requests itself, as a thin
// MCP client does on a stateless server: no session, no SDK. The load
// then costs the machine little beyond the server's own work, so its
// rate is the server's (the SDK client's CPU shares the cores with it).
type wireClient struct {
	url, token string
	http       *http.Client
	next       int
}

func newWireClient(url, token string) *wireClient {
	return &wireClient{url: url, token: token, http: &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}}
}

// call makes one tools/call and fails on any answer but a result that is
// not a tool error.
func (c *wireClient) call(ctx context.Context, name string, args map[string]any) error {
	c.next++
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": c.next, "method": "tools/call",
		"params": map[string]any{"name": name, "arguments": args}})
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	resp, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: HTTP %d: %s", name, resp.StatusCode, bytes.TrimSpace(answer))
	}
	var rpc struct {
		ID     json.RawMessage `json:"id"`
		Result *struct {
			IsError bool `json:"isError"`
		} `json:"result"`
		Error *struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(answer, &rpc); err != nil {
		return fmt.Errorf("%s: answer is not JSON-RPC: %w", name, err)
	}
	switch {
	case rpc.Error != nil:
		return fmt.Errorf("%s: %s", name, rpc.Error.Message)
	case rpc.Result == nil || string(rpc.ID) != strconv.Itoa(c.next):
		return fmt.Errorf("%s: no result for request %d: %s", name, c.next, answer)
	case rpc.Result.IsError:
		return fmt.Errorf("%s: tool error: %s", name, answer)
	}
	return nil
}
