package store_test

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/helixml/helix-org/agent/llm"
	"github.com/helixml/helix-org/agent/llm/llmtest"
	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
)

// paraphraseConcepts is the fake provider's sense of meaning: the query
// "rollback broken deploy" and the advice "revert failed release" share
// no word (nor stem) but read as the same three concepts.
var paraphraseConcepts = map[string]string{"rollback": "undo", "revert": "undo", "broken": "bad", "failed": "bad", "deploy": "ship", "release": "ship"}

// providerStore is an insight org whose recall embeds through a fake
// OpenAI-compatible provider, with advice: a paraphrase of the query, a
// lexical match (shares "deploy") and one unrelated.
func providerStore(t *testing.T) (st *store.Store, fake *llmtest.Server, paraphrase, lexical, unrelated domain.Insight) {
	t.Helper()
	st, _ = insightOrg(t)
	fake = llmtest.New(t, llm.OpenAI, func(llmtest.Turn) llmtest.Reply { return llmtest.Reply{Text: "unused"} }).Concepts(paraphraseConcepts)
	st.SetProviderEmbedder(func(_ context.Context, model string) (domain.Embedder, error) {
		return llm.Embeddings{BaseURL: fake.BaseURL(), APIKey: llmtest.APIKey, Name: model}, nil
	})
	paraphrase = storeInsight(t, st, "w-owner", domain.Insight{Trigger: "revert failed release", Resolution: "restore previous build", Scope: domain.ScopeOrg})
	lexical = storeInsight(t, st, "w-owner", domain.Insight{Trigger: "deploy documentation site", Resolution: "run make docs", Scope: domain.ScopeOrg})
	unrelated = storeInsight(t, st, "w-owner", domain.Insight{Trigger: "refund customer invoice", Resolution: "ask finance", Scope: domain.ScopeOrg})
	for spec, v := range map[*domain.SettingSpec]string{&domain.EmbeddingsSetting: domain.EmbeddingsProvider, &domain.EmbeddingModelSetting: "emb-a"} {
		if err := st.SetSetting(t.Context(), *spec, v); err != nil {
			t.Fatal(err)
		}
	}
	return st, fake, paraphrase, lexical, unrelated
}

func providerRecall(t *testing.T, st *store.Store, hybrid bool) ([]string, map[string]float64) {
	t.Helper()
	res, err := st.Recall(t.Context(), "w-bot", store.RecallQuery{Query: "rollback broken deploy", Hybrid: hybrid})
	if err != nil {
		t.Fatalf("recall: %v", err)
	}
	var ids []string
	rel := map[string]float64{}
	for _, r := range res {
		ids, rel[r.Insight.ID] = append(ids, r.Insight.ID), r.Relevance
	}
	return ids, rel
}

// TestProviderEmbeddingsRecall: with memory.embeddings=provider a recall
// finds the paraphrase that shares no word with the query (the nearest by
// the provider's cosine join the lexical matches) and leaves unrelated
// advice out; the provider gets the key, the results never hold it; a
// provider that fails leaves the recall lexical, with no error; a new
// embedding model re-embeds the insights before it is compared.
func TestProviderEmbeddingsRecall(t *testing.T) {
	// Not parallel: its subtests change maxIDParams, which other tests read.
	for _, chunk := range []int{0, 1} {
		name := "one statement"
		if chunk > 0 {
			name = "vectors loaded one id at a time"
		}
		t.Run(name, func(t *testing.T) {
			if chunk > 0 {
				t.Cleanup(store.SetMaxIDParams(chunk))
			}
			st, fake, paraphrase, lexical, unrelated := providerStore(t)
			lexIDs, _ := providerRecall(t, st, false)
			if !slices.Equal(lexIDs, []string{lexical.ID}) {
				t.Fatalf("lexical recall %v; want only the advice sharing \"deploy\" (%s)", lexIDs, lexical.ID)
			}
			ids, rel := providerRecall(t, st, true)
			if !slices.Contains(ids, paraphrase.ID) || rel[paraphrase.ID] <= 0 {
				t.Errorf("provider recall %v (relevance %v); want the paraphrase %s in it", ids, rel, paraphrase.ID)
			}
			if slices.Contains(ids, unrelated.ID) {
				t.Errorf("provider recall %v holds the unrelated advice %s", ids, unrelated.ID)
			}
			if !slices.Contains(ids, lexical.ID) {
				t.Errorf("provider recall %v lost the lexical match %s", ids, lexical.ID)
			}
			calls := fake.EmbeddingsCalls()
			if len(calls) < 2 || calls[0].Model != "emb-a" || len(calls[0].Input) != 3 || calls[0].APIKey != llmtest.APIKey {
				t.Fatalf("embeddings calls %+v; want the three insights re-embedded with emb-a and the key, then the query", calls)
			}
			res, err := st.Recall(t.Context(), "w-bot", store.RecallQuery{Query: "rollback broken deploy", Hybrid: true})
			if err != nil {
				t.Fatal(err)
			}
			if raw, _ := json.Marshal(res); strings.Contains(string(raw), llmtest.APIKey) {
				t.Errorf("recall results hold the provider key: %s", raw)
			}
			if n := len(fake.EmbeddingsCalls()); n != len(calls)+1 {
				t.Errorf("a second recall made %d embeddings calls; want 1 (the query; the insights are embedded)", n-len(calls))
			}

			fake.FailEmbeddings(http.StatusServiceUnavailable)
			down, downRel := providerRecall(t, st, true)
			_, lexRel := providerRecall(t, st, false)
			if !slices.Equal(down, lexIDs) || downRel[lexical.ID] != lexRel[lexical.ID] {
				t.Errorf("provider down: recall %v %v; want the lexical %v %v", down, downRel, lexIDs, lexRel)
			}

			fake.FailEmbeddings(0)
			if err := st.SetSetting(t.Context(), domain.EmbeddingModelSetting, "emb-b"); err != nil {
				t.Fatal(err)
			}
			n := len(fake.EmbeddingsCalls())
			ids, _ = providerRecall(t, st, true)
			after := fake.EmbeddingsCalls()[n:]
			if len(after) != 2 || after[0].Model != "emb-b" || len(after[0].Input) != 3 {
				t.Errorf("after the model changed: embeddings calls %+v; want the three insights re-embedded with emb-b, then the query", after)
			}
			if !slices.Contains(ids, paraphrase.ID) {
				t.Errorf("after the model changed: recall %v; want the paraphrase %s", ids, paraphrase.ID)
			}
		})
	}
}
