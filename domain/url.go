package domain

import (
	"fmt"
	"net/url"
)

// ValidateHTTPURL checks an http(s) URL with a host and no credentials,
// for URLs a caller gives the server to call.
func ValidateHTTPURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("%q is not a URL: %w", raw, err)
	}
	if u.Scheme != "https" && u.Scheme != "http" {
		return fmt.Errorf("%q must use http or https", raw)
	}
	if u.Host == "" {
		return fmt.Errorf("%q has no host", raw)
	}
	if u.User != nil {
		return fmt.Errorf("%q must not carry credentials", raw)
	}
	return nil
}
