package domain

import "strings"

// RelayPath is where the server relays model calls for activations, so no
// agent holds the provider key: RelayPath+"/anthropic/v1/messages" speaks
// the Anthropic Messages API, RelayPath+"/openai/v1/chat/completions" and
// "/openai/v1/responses" OpenAI Chat Completions and Responses, and
// RelayPath+"/gemini/v1beta/models/{model}:generateContent" the Gemini
// API, each authenticated by the run's own token.
const RelayPath = "/relay"

// Relay providers, as agent.provider spells them.
const (
	RelayAnthropic = "anthropic"
	RelayOpenAI    = "openai"
	// RelayGemini is not an agent.provider: the Gemini API is relayed to
	// its own upstream (agent.gemini.*) for Gemini CLI.
	RelayGemini = "gemini"
)

// RelayURL is the base URL an agent's client library takes for provider's
// wire format, on the server at base: the host for Anthropic SDKs (which
// append /v1/messages) and Google's (which append /v1beta/models/…), the
// /v1 path for OpenAI ones (which append /chat/completions or /responses).
func RelayURL(base, provider string) string {
	base = strings.TrimRight(base, "/") + RelayPath + "/" + provider
	if provider == RelayOpenAI {
		return base + "/v1"
	}
	return base
}
