package main

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/helixml/helix-org/agent/llm"
	"github.com/helixml/helix-org/agent/llm/llmtest"
	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/server/servertest"
)

// TestProviderEmbeddings: with memory.embeddings=provider, the server
// embeds through the provider it relays to (agent.base_url, agent.api_key)
// and a run about "rollback broken deploy" is given the advice "revert
// failed release", which shares no word with it; the key goes to the
// provider and nowhere the agent reads (no prompt, message or tool
// result the model was sent holds it). With the provider down the next
// run still starts, given what BM25 finds (here nothing).
func TestProviderEmbeddings(t *testing.T) {
	t.Parallel()
	o := newBuiltinOrg(t, llm.OpenAI, "When a message arrives, reply `echo: <body>` on the same stream.", llmtest.FollowRole)
	o.fake.Concepts(map[string]string{"rollback": "undo", "revert": "undo", "broken": "bad", "failed": "bad", "deploy": "ship", "release": "ship"})
	for spec, v := range map[*domain.SettingSpec]string{&domain.EmbeddingsSetting: domain.EmbeddingsProvider, &domain.EmbeddingModelSetting: "emb-test"} {
		if err := o.st.SetSetting(t.Context(), *spec, v); err != nil {
			t.Fatal(err)
		}
	}
	servertest.Call[map[string]any](t, o.owner, "store_insight", map[string]any{"trigger": "revert failed release", "resolution": "restore the previous build", "type": "pattern", "scope": "org"})
	advice := "restore the previous build"

	// seen is everything the model was sent from turn n on, as the agent
	// sent it (the key header, which the relay adds, left out).
	seen := func(n int) string {
		var b strings.Builder
		for _, turn := range o.fake.Turns()[n:] {
			turn.APIKey = ""
			raw, _ := json.Marshal(turn)
			b.Write(raw)
		}
		return b.String()
	}
	ask := func(body string) string {
		t.Helper()
		n := len(o.fake.Turns())
		ev := servertest.Call[domain.Event](t, o.owner, "publish", map[string]any{"stream": "s-inbox", "body": body})
		if reply := waitForReply(t, o.owner, "s-inbox", "w-echo", ev.Seq); reply.Message.Body != "echo: "+body {
			t.Errorf("reply %q; want echo: %s", reply.Message.Body, body)
		}
		waitIdle(t, o.st)
		return seen(n)
	}

	if got := ask("rollback broken deploy"); !strings.Contains(got, advice) {
		t.Errorf("the run was not given the paraphrased advice %q; the model was sent:\n%s", advice, got)
	}
	calls := o.fake.EmbeddingsCalls()
	if len(calls) == 0 {
		t.Fatal("the provider was never asked for embeddings")
	}
	for _, c := range calls {
		if c.APIKey != llmtest.APIKey || c.Model != "emb-test" {
			t.Errorf("embeddings call %+v; want model emb-test with the server's key", c)
		}
	}
	if all := seen(0); strings.Contains(all, llmtest.APIKey) {
		t.Errorf("the provider key reached the agent: %s", all)
	}

	o.fake.FailEmbeddings(http.StatusServiceUnavailable)
	if got := ask("rollback broken deploy again"); strings.Contains(got, advice) {
		t.Errorf("provider down: the run was given %q, which only embeddings find", advice)
	}
	acts := o.activations(t)
	if len(acts) != 3 {
		t.Errorf("%d runs; want 3 (hire and two messages)", len(acts))
	}
	for _, a := range acts {
		if a.Status != domain.ActivationSucceeded {
			t.Errorf("run %s ended %s; want every run to go ahead, embeddings or not", a.ID, a.Status)
		}
	}
}
