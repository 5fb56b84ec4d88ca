package domain

import (
	"context"
	"encoding/binary"
	"hash/fnv"
	"math"
	"strconv"
)

// Embedder turns texts into vectors whose cosine says how alike they
// read. Hybrid recall blends that cosine with BM25, so advice worded
// differently from the query (a plural, another form of a word) still
// reads as relevant. The store keeps each insight's vector with the
// model that made it and compares only vectors of one model, so a
// provider's embeddings can replace the local ones.
type Embedder interface {
	// Model names the vectors it makes.
	Model() string
	// Embed returns one vector per text, in order.
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// HybridWeight is the share of relevance the embedding's cosine takes
// in a hybrid recall; BM25 (divided by the best match's) keeps the rest.
const HybridWeight = 0.3

// HashEmbedder is the local embedding, with no model and no network:
// feature hashing of each term's character trigrams (with the word's
// edges marked) and of the term itself into Dim signed buckets, counts
// damped by a logarithm, normalised to length 1. Words that share most
// of their letters share most of their trigrams: "deploys" and
// "deployment" read alike, "deploy" and "refund" do not.
type HashEmbedder struct{ Dim int }

// LocalEmbedder is the embedder a store uses unless told otherwise.
var LocalEmbedder = HashEmbedder{Dim: 128}

// Model names the vectors by their kind and size.
func (h HashEmbedder) Model() string { return "local-trigram-" + strconv.Itoa(h.Dim) }

// Embed hashes each text; it never fails.
func (h HashEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = h.embed(t)
	}
	return out, nil
}

func (h HashEmbedder) embed(text string) []float32 {
	counts := make([]float64, h.Dim)
	add := func(feature string) {
		f := fnv.New64a()
		_, _ = f.Write([]byte(feature))
		sum := f.Sum64()
		sign := 1.0
		if sum>>63 == 1 {
			sign = -1
		}
		counts[sum%uint64(h.Dim)] += sign
	}
	for _, t := range Terms(text) {
		add("w:" + t)
		r := []rune("^" + t + "$")
		for i := 0; i+3 <= len(r); i++ {
			add(string(r[i : i+3]))
		}
	}
	v := make([]float32, h.Dim)
	norm := 0.0
	for i, c := range counts {
		// Damped counts: a word repeated does not drown the rest.
		d := math.Copysign(math.Log1p(math.Abs(c)), c)
		v[i] = float32(d)
		norm += d * d
	}
	if norm > 0 {
		n := float32(math.Sqrt(norm))
		for i := range v {
			v[i] /= n
		}
	}
	return v
}

// Cosine of two vectors, clamped at 0 (unlike texts are as irrelevant
// as unrelated ones); 0 when their sizes differ or either is zero.
func Cosine(a, b []float32) float64 {
	if len(a) != len(b) || len(a) == 0 {
		return 0
	}
	var dot, na, nb float64
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return max(0, dot/math.Sqrt(na*nb))
}

// EncodeVector and DecodeVector store a vector as little-endian float32s.
func EncodeVector(v []float32) []byte {
	out := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(out[4*i:], math.Float32bits(x))
	}
	return out
}

// DecodeVector reads what EncodeVector wrote into dst (reused when large
// enough); nil for a blob that is not whole float32s.
func DecodeVector(dst []float32, b []byte) []float32 {
	if len(b)%4 != 0 {
		return nil
	}
	dst = dst[:0]
	for i := 0; i+4 <= len(b); i += 4 {
		dst = append(dst, math.Float32frombits(binary.LittleEndian.Uint32(b[i:])))
	}
	return dst
}

// Embedders memory.embeddings names.
const (
	EmbeddingsLocal    = "local"
	EmbeddingsProvider = "provider"
)

// EmbeddingsSetting picks the embedder hybrid recall uses.
var EmbeddingsSetting = SettingSpec{Key: "memory.embeddings", Type: SettingString, Default: EmbeddingsLocal,
	Enum:        []string{EmbeddingsLocal, EmbeddingsProvider},
	Description: "Embeddings hybrid recall compares: local (hashed character trigrams, no network) or provider (the model provider's OpenAI-compatible /embeddings endpoint, agent.base_url and agent.api_key, model memory.embedding_model; a recall whose embedding fails ranks by BM25 alone)."}

// EmbeddingModelSetting is the provider's embedding model.
var EmbeddingModelSetting = SettingSpec{Key: "memory.embedding_model", Type: SettingString, Default: "text-embedding-3-small",
	Description: "Embedding model asked of the provider when memory.embeddings is provider; changing it re-embeds the insights, a batch per recall."}

// NearestMinCosine is the least cosine at which a provider's embedding
// brings an insight into a recall that shares no word with the query.
const NearestMinCosine = 0.5
