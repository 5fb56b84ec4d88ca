package domain

import "strings"

// RelayPath is where the server relays model calls for activations, so no
// agent holds the provider key: RelayPath+"/anthropic/v1/messages" speaks
// the Anthropic Messages API and RelayPath+"/openai/v1/chat/completions"
// OpenAI Chat Completions, each authenticated by the run's own token.
const RelayPath = "/relay"

// Relay providers, as agent.provider spells them.
const (
	RelayAnthropic = "anthropic"
	RelayOpenAI    = "openai"
)

// RelayURL is the base URL an agent's client library takes for provider's
// wire format, on the server at base: the host for Anthropic SDKs (which
// append /v1/messages), the /v1 path for OpenAI ones (which append
// /chat/completions).
func RelayURL(base, provider string) string {
	base = strings.TrimRight(base, "/") + RelayPath + "/" + provider
	if provider == RelayOpenAI {
		return base + "/v1"
	}
	return base
}
