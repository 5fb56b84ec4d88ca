package orgdir

import (
	"bytes"
	"errors"
	"fmt"

	"go.yaml.in/yaml/v3"
)

// withFrontMatter is markdown with its metadata above it, between "---"
// lines. The body follows byte for byte, front matter of its own and all.
func withFrontMatter(meta any, body string) ([]byte, error) {
	y, err := marshalYAML(meta)
	if err != nil {
		return nil, err
	}
	return []byte("---\n" + string(y) + "---\n" + body), nil
}

// splitFrontMatter decodes the front matter into meta and returns the body.
func splitFrontMatter(data []byte, meta any) (string, error) {
	rest, ok := bytes.CutPrefix(data, []byte("---\n"))
	if !ok {
		return "", errors.New("does not start with front matter (a --- line)")
	}
	head, body, ok := bytes.Cut(rest, []byte("\n---\n"))
	if !ok {
		return "", errors.New("front matter has no closing --- line")
	}
	dec := yaml.NewDecoder(bytes.NewReader(head))
	dec.KnownFields(true)
	if err := dec.Decode(meta); err != nil {
		return "", fmt.Errorf("front matter: %w", err)
	}
	return string(body), nil
}
