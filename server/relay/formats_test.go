package relay_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/server"
	"github.com/helixml/helix-org/server/relay"
	"github.com/helixml/helix-org/server/servertest"
	"github.com/helixml/helix-org/store"
)

// The two wire formats of the CLI runtimes: Codex's OpenAI Responses API
// and Gemini CLI's Gemini API, each against a fake upstream on loopback
// that speaks it as documented.
const (
	responsesAPI = "responses"
	geminiAPI    = "gemini"
)

// upstream is a fake provider of one wire format. It answers with
// 300/100 tokens by default, refuses any key but the server's, and, when
// release is set, stops after a stream's first event until it is closed.
type upstream struct {
	format  string
	in, out int64
	release chan struct{}

	mu   sync.Mutex
	seen []*http.Request
}

func newUpstream(t *testing.T, format string) (*upstream, string) {
	t.Helper()
	u := &upstream{format: format, in: 300, out: 100}
	srv := httptest.NewServer(u)
	t.Cleanup(srv.Close)
	return u, srv.URL
}

func (u *upstream) calls() []*http.Request {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.seen
}

func (u *upstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var body map[string]any
	json.NewDecoder(r.Body).Decode(&body)
	u.mu.Lock()
	u.seen = append(u.seen, r.Clone(context.Background()))
	u.mu.Unlock()
	if u.format == responsesAPI {
		u.responses(w, r, body)
	} else {
		u.gemini(w, r)
	}
}

// responses answers POST /v1/responses: a response object, or its
// documented stream of semantic events ending in response.completed.
func (u *upstream) responses(w http.ResponseWriter, r *http.Request, body map[string]any) {
	if r.URL.Path != "/v1/responses" || r.Header.Get("Authorization") != "Bearer "+realKey {
		http.Error(w, `{"error":{"message":"bad path or key","type":"invalid_request_error"}}`, http.StatusUnauthorized)
		return
	}
	model := fmt.Sprint(body["model"]) + "-2026-01-01"
	usage := fmt.Sprintf(`{"input_tokens":%d,"input_tokens_details":{"cached_tokens":0},"output_tokens":%d,"total_tokens":%d}`, u.in, u.out, u.in+u.out)
	if body["stream"] != true {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":"resp_1","object":"response","status":"completed","model":%q,"output":[{"type":"message","role":"assistant","content":[{"type":"output_text","text":"streamed reply"}]}],"usage":%s}`, model, usage)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	event := func(typ, data string) {
		fmt.Fprintf(w, "event: %s\ndata: {\"type\":%q,%s}\n\n", typ, typ, data)
		w.(http.Flusher).Flush()
	}
	event("response.created", fmt.Sprintf(`"response":{"id":"resp_1","status":"in_progress","model":%q,"usage":null}`, model))
	event("response.output_text.delta", `"item_id":"msg_1","output_index":0,"content_index":0,"delta":"streame"`)
	u.wait()
	event("response.output_text.delta", `"item_id":"msg_1","output_index":0,"content_index":0,"delta":"d reply"`)
	event("response.completed", fmt.Sprintf(`"response":{"id":"resp_1","status":"completed","model":%q,"usage":%s}`, model, usage))
}

// gemini answers POST /v1beta/models/{model}:generateContent and
// :streamGenerateContent?alt=sse, the key in x-goog-api-key.
func (u *upstream) gemini(w http.ResponseWriter, r *http.Request) {
	if !strings.HasPrefix(r.URL.Path, "/v1beta/models/m-asked:") || r.Header.Get("x-goog-api-key") != realKey || r.URL.Query().Has("key") {
		http.Error(w, `{"error":{"code":401,"message":"bad path or key","status":"UNAUTHENTICATED"}}`, http.StatusUnauthorized)
		return
	}
	chunk := func(text, finish string, out int64) string {
		f := ""
		if finish != "" {
			f = fmt.Sprintf(`,"finishReason":%q`, finish)
		}
		return fmt.Sprintf(`{"candidates":[{"content":{"parts":[{"text":%q}],"role":"model"}%s}],"usageMetadata":{"promptTokenCount":%d,"candidatesTokenCount":%d,"totalTokenCount":%d},"modelVersion":"m-asked-001"}`,
			text, f, u.in, out, u.in+out)
	}
	switch {
	case strings.HasSuffix(r.URL.Path, ":countTokens"):
		io.WriteString(w, `{"totalTokens":12}`)
	case strings.HasSuffix(r.URL.Path, ":generateContent"):
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, chunk("streamed reply", "STOP", u.out))
	case r.URL.Query().Get("alt") == "sse":
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "data: %s\r\n\r\n", chunk("streame", "", 1))
		w.(http.Flusher).Flush()
		u.wait()
		fmt.Fprintf(w, "data: %s\r\n\r\n", chunk("d reply", "STOP", u.out))
	default:
		http.Error(w, "want alt=sse", http.StatusBadRequest)
	}
}

func (u *upstream) wait() {
	if u.release != nil {
		<-u.release
	}
}

// cliOrg is a real server relaying both formats to one fake each, and
// w-bot's running activation a-1.
type cliOrg struct {
	h                 *servertest.Harness
	responses, gemini *upstream
	tok               string
}

func newCLIOrg(t *testing.T, prices domain.Prices) cliOrg {
	t.Helper()
	resp, respURL := newUpstream(t, responsesAPI)
	gem, gemURL := newUpstream(t, geminiAPI)
	openai := relay.Upstream{Provider: domain.RelayOpenAI, BaseURL: respURL + "/v1", APIKey: realKey, Prices: prices}
	google := relay.Upstream{Provider: domain.RelayGemini, BaseURL: gemURL, APIKey: realKey, Prices: prices}
	h := servertest.Start(t, server.Config{
		Upstream: func(context.Context) (relay.Upstream, error) { return openai, nil },
		Gemini:   func(context.Context) (relay.Upstream, error) { return google, nil },
	})
	return cliOrg{h: h, responses: resp, gemini: gem, tok: activation(t, h.Store, "w-bot", "a-1")}
}

func (o cliOrg) fake(format string) *upstream {
	if format == responsesAPI {
		return o.responses
	}
	return o.gemini
}

// send calls the relay as the CLI's client library would: Codex at
// OPENAI_BASE_URL + /responses with a bearer key; Gemini CLI at
// GOOGLE_GEMINI_BASE_URL + /v1beta/models/… with x-goog-api-key (or, as
// some clients do, ?key=).
func (o cliOrg) send(t *testing.T, format string, stream bool, header map[string]string, query string) *http.Response {
	t.Helper()
	url := domain.RelayURL(o.h.Server.URL, domain.RelayOpenAI) + "/responses"
	body := fmt.Sprintf(`{"model":"m-asked","input":[{"role":"user","content":"hi"}],"max_output_tokens":50,"stream":%t}`, stream)
	if format == geminiAPI {
		method := "generateContent"
		if stream {
			method, query = "streamGenerateContent", strings.TrimPrefix(query+"&alt=sse", "&")
		}
		url = domain.RelayURL(o.h.Server.URL, domain.RelayGemini) + "/v1beta/models/m-asked:" + method
		body = `{"contents":[{"role":"user","parts":[{"text":"hi"}]}],"generationConfig":{"maxOutputTokens":50}}`
	}
	return post(t, url, query, body, header)
}

func post(t *testing.T, url, query, body string, header map[string]string) *http.Response {
	t.Helper()
	if query != "" {
		url += "?" + query
	}
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func cliAuth(format, tok string) map[string]string {
	if format == responsesAPI {
		return map[string]string{"Authorization": "Bearer " + tok}
	}
	return map[string]string{"x-goog-api-key": tok}
}

// TestRelayCLIFormats: each format, whole and streamed, reaches its fake
// upstream with the server's key and never the run's token (Gemini's
// token also as ?key=), comes back as the upstream sent it — a stream
// event by event, the first before the upstream has written the next —
// and its usage is on the ledger: the Responses API's input/output_tokens
// under the model that served, Gemini's prompt/candidates token counts
// under the model asked for.
func TestRelayCLIFormats(t *testing.T) {
	tests := []struct {
		name, format string
		stream       bool
		keyInQuery   bool
		model        string
		want         []string
	}{
		{"responses", responsesAPI, false, false, "m-asked-2026-01-01", []string{`"text":"streamed reply"`, `"output_tokens":100`}},
		{"responses stream", responsesAPI, true, false, "m-asked-2026-01-01", []string{"event: response.created", `"delta":"streame"`, `"delta":"d reply"`, "event: response.completed", `"output_tokens":100`}},
		{"gemini", geminiAPI, false, false, "m-asked", []string{`"text":"streamed reply"`, `"candidatesTokenCount":100`}},
		{"gemini stream", geminiAPI, true, false, "m-asked", []string{`"text":"streame"`, `"text":"d reply"`, `"finishReason":"STOP"`, `"candidatesTokenCount":100`}},
		{"gemini stream, key in the query", geminiAPI, true, true, "m-asked", []string{`"text":"d reply"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := newCLIOrg(t, nil)
			fake := o.fake(tt.format)
			header, query := cliAuth(tt.format, o.tok), ""
			if tt.keyInQuery {
				header, query = nil, "key="+o.tok
			}
			if tt.stream {
				fake.release = make(chan struct{})
			}
			resp := o.send(t, tt.format, tt.stream, header, query)
			if resp.StatusCode != 200 {
				b, _ := io.ReadAll(resp.Body)
				t.Fatalf("status %d: %s", resp.StatusCode, b)
			}
			br := bufio.NewReader(resp.Body)
			var got strings.Builder
			if tt.stream {
				// The first text arrives while the upstream still holds the rest.
				for !strings.Contains(got.String(), `streame"`) {
					line, err := br.ReadString('\n')
					got.WriteString(line)
					if err != nil {
						close(fake.release)
						t.Fatalf("stream ended before its first text reached the agent: %q, %v", got.String(), err)
					}
				}
				close(fake.release)
			}
			rest, _ := io.ReadAll(br)
			got.Write(rest)
			for _, w := range tt.want {
				if !strings.Contains(got.String(), w) {
					t.Errorf("reply lacks %q:\n%s", w, got.String())
				}
			}
			seen := fake.calls()
			if len(seen) != 1 {
				t.Fatalf("the upstream saw %d calls, want 1", len(seen))
			}
			if dump := fmt.Sprint(seen[0].URL, seen[0].Header); strings.Contains(dump, o.tok) || !strings.Contains(dump, realKey) {
				t.Errorf("the upstream saw %s; want the server's key and never the run's token", dump)
			}
			want := domain.ModelCall{ActivationID: "a-1", WorkerID: "w-bot", Model: tt.model, InputTokens: 300, OutputTokens: 100}
			if mc := calls(t, o.h.Store, 1); len(mc) != 1 || withoutTime(mc[0]) != want {
				t.Errorf("ledger = %+v, want %+v", mc, want)
			}
		})
	}
}

// TestRelayGeminiCountTokens: Gemini CLI's countTokens is relayed and
// costs nothing on the ledger.
func TestRelayGeminiCountTokens(t *testing.T) {
	o := newCLIOrg(t, nil)
	resp := post(t, domain.RelayURL(o.h.Server.URL, domain.RelayGemini)+"/v1beta/models/m-asked:countTokens", "", `{"contents":[]}`, cliAuth(geminiAPI, o.tok))
	if b, _ := io.ReadAll(resp.Body); resp.StatusCode != 200 || string(b) != `{"totalTokens":12}` {
		t.Fatalf("countTokens = %d %s", resp.StatusCode, b)
	}
	// A metered call after it is the only one on the ledger.
	o.send(t, geminiAPI, false, cliAuth(geminiAPI, o.tok), "")
	if mc := calls(t, o.h.Store, 1); len(mc) != 1 {
		t.Errorf("ledger = %+v, want only the generateContent call", mc)
	}
}

// TestRelayCLIFormatsBudget: under a 1,000-token hard budget at 400
// tokens a call, the third call's answer is replaced by a 402 in the
// format's own error shape naming the budget — or, streamed, its tail by
// the format's error event (response.failed with insufficient_quota;
// Gemini's error chunk) — and a fourth never reaches the upstream.
func TestRelayCLIFormatsBudget(t *testing.T) {
	tests := []struct {
		format string
		stream bool
		want   string // in the third answer
		lacks  string // the tail it replaced
	}{
		{responsesAPI, false, `"type":"insufficient_quota"`, `"output_text"`},
		{responsesAPI, true, `event: response.failed` + "\n" + `data: {"response":{"error":{"code":"insufficient_quota"`, "response.completed"},
		{geminiAPI, false, `"status":"RESOURCE_EXHAUSTED"`, `"candidates"`},
		{geminiAPI, true, `data: {"error":{"code":402`, `"finishReason"`},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s/stream=%t", tt.format, tt.stream), func(t *testing.T) {
			o := newCLIOrg(t, domain.Prices{"m-asked": {Input: 3, Output: 15}})
			if _, err := o.h.Store.SetBudget(t.Context(), store.OwnerWorker, domain.Budget{Scope: domain.BudgetWorker, Target: "w-bot", Window: domain.BudgetTotal, Hard: domain.Limit{Tokens: 1000}}); err != nil {
				t.Fatal(err)
			}
			answer := func() (int, string) {
				resp := o.send(t, tt.format, tt.stream, cliAuth(tt.format, o.tok), "")
				b, _ := io.ReadAll(resp.Body)
				return resp.StatusCode, string(b)
			}
			for i := 1; i <= 2; i++ {
				if status, body := answer(); status != 200 || strings.Contains(body, "budget") {
					t.Fatalf("call %d: %d %s", i, status, body)
				}
			}
			status, body := answer()
			wantStatus := 402
			if tt.stream {
				wantStatus = 200 // the stream had begun; its tail is the error
			}
			if status != wantStatus || !strings.Contains(body, tt.want) || !strings.Contains(body, jsonString(wantStop)) || strings.Contains(body, tt.lacks) {
				t.Errorf("third call: %d %s\nwant %d with %s and the budget stop, without %s", status, body, wantStatus, tt.want, tt.lacks)
			}
			if status, body := answer(); status != 402 || !strings.Contains(body, jsonString(wantStop)) {
				t.Errorf("fourth call: %d %s, want a 402 naming the budget", status, body)
			}
			if n := len(o.fake(tt.format).calls()); n != 3 {
				t.Errorf("the upstream saw %d calls, want 3: the refused fourth never left", n)
			}
			if mc := calls(t, o.h.Store, 3); len(mc) != 3 || mc[2].Cost != domain.USD(0.0024) {
				t.Errorf("ledger = %+v, want 3 calls of $0.0024", mc)
			}
		})
	}
}

// jsonString is s as it appears inside a JSON string.
func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return strings.Trim(string(b), `"`)
}

// TestRelayCLIRefusals: what the new routes refuse, in each format's own
// error shape, without reaching an upstream.
func TestRelayCLIRefusals(t *testing.T) {
	o := newCLIOrg(t, nil)
	gem := domain.RelayURL(o.h.Server.URL, domain.RelayGemini) + "/v1beta/models/"
	resp := domain.RelayURL(o.h.Server.URL, domain.RelayOpenAI) + "/responses"
	tests := []struct {
		name, url, query, body string
		header                 map[string]string
		want                   int
		msg                    string
	}{
		{"gemini: unknown method", gem + "m-asked:embedContent", "", `{}`, cliAuth(geminiAPI, o.tok), 404,
			`"message":"models/m-asked:embedContent: the relay takes models/{model}:{method} with method generateContent, streamGenerateContent or countTokens","status":"NOT_FOUND"`},
		{"gemini: no model", gem + ":generateContent", "", `{}`, cliAuth(geminiAPI, o.tok), 404, `"status":"NOT_FOUND"`},
		{"gemini: no key", gem + "m-asked:generateContent", "", `{}`, nil, 401, `"message":"missing token: send the run's token (HELIX_ORG_TOKEN) as the API key","status":"UNAUTHENTICATED"`},
		{"gemini: the provider key itself", gem + "m-asked:generateContent", "key=" + realKey, `{}`, nil, 401, `invalid or expired token`},
		{"gemini: not JSON", gem + "m-asked:generateContent", "", `hello`, cliAuth(geminiAPI, o.tok), 400, `"code":400,"message":"the request body is not a JSON object","status":"INVALID_ARGUMENT"`},
		{"responses: not JSON", resp, "", `hello`, cliAuth(responsesAPI, o.tok), 400, `"message":"the request body is not a JSON object","type":"invalid_request_error"`},
		{"responses: a Gemini key header is no OpenAI key", resp, "", `{}`, cliAuth(geminiAPI, o.tok), 401, `"message":"missing token`},
	}
	for _, tt := range tests {
		r := post(t, tt.url, tt.query, tt.body, tt.header)
		body, _ := io.ReadAll(r.Body)
		if r.StatusCode != tt.want || !strings.Contains(string(body), tt.msg) {
			t.Errorf("%s: %d %s, want %d with %s", tt.name, r.StatusCode, body, tt.want, tt.msg)
		}
	}
	if n := len(o.gemini.calls()) + len(o.responses.calls()); n != 0 {
		t.Errorf("the upstreams saw %d calls", n)
	}
}

// TestRelayGeminiUnconfigured: with no Gemini key set, a call is a 503
// naming the settings an operator sets.
func TestRelayGeminiUnconfigured(t *testing.T) {
	for _, cfg := range []relay.Config{{}, {Gemini: func(context.Context) (relay.Upstream, error) { return relay.Upstream{}, nil }}} {
		srv, _, tok := direct(t, cfg)
		r := post(t, srv.URL+"/relay/gemini/v1beta/models/m:generateContent", "", `{}`, cliAuth(geminiAPI, tok))
		body, _ := io.ReadAll(r.Body)
		if r.StatusCode != 503 || !strings.Contains(string(body), `"status":"UNAVAILABLE"`) {
			t.Errorf("%d %s, want 503 UNAVAILABLE", r.StatusCode, body)
		}
		if cfg.Gemini != nil && !strings.Contains(string(body), "an operator sets agent.gemini.api_key") {
			t.Errorf("%s does not name agent.gemini.api_key", body)
		}
	}
}
