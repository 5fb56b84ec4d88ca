package store

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"gorm.io/gorm"

	"github.com/helixml/helix-org/domain"
)

// A stream's transport secrets (the fields its kind's TransportSpec names) are stored encrypted with the same key file and
// AES-GCM as secret settings, one field at a time, so the rest of the
// config stays readable and queryable. The row holds
// {"secret":"enc:v1:…","outbound_url":"https://…"}.

// sealConfig encrypts the plaintext secret fields of a kind's config.
// Fields already encrypted are left as they are; changed reports whether
// anything was encrypted.
func (s *Store) sealConfig(kind domain.TransportKind, raw string) (sealed string, changed bool, err error) {
	return s.mapSecrets(kind, raw, func(v string) (string, error) {
		if strings.HasPrefix(v, encPrefix) {
			return v, nil
		}
		return s.encrypt(v)
	})
}

// openConfig decrypts the secret fields of a kind's stored config. A
// plaintext value (a row not yet sealed) is returned as it is.
func (s *Store) openConfig(kind domain.TransportKind, raw string) (string, error) {
	opened, _, err := s.mapSecrets(kind, raw, func(v string) (string, error) {
		if !strings.HasPrefix(v, encPrefix) {
			return v, nil
		}
		return s.decrypt(v)
	})
	return opened, err
}

// mapSecrets applies fn to every non-empty string secret field of the
// config, keeping every other field byte for byte.
func (s *Store) mapSecrets(kind domain.TransportKind, raw string, fn func(string) (string, error)) (string, bool, error) {
	fields := s.transports.Secrets(kind)
	if len(fields) == 0 {
		return raw, false, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(raw), &m); err != nil {
		return "", false, fmt.Errorf("%s transport config is not a JSON object", kind)
	}
	changed := false
	for _, f := range fields {
		var v string
		if json.Unmarshal(m[f], &v) != nil || v == "" {
			continue
		}
		nv, err := fn(v)
		if err != nil {
			return "", false, fmt.Errorf("%s transport config field %q: %w", kind, f, err)
		}
		if nv != v {
			m[f], _ = json.Marshal(nv)
			changed = true
		}
	}
	if !changed {
		return raw, false, nil
	}
	b, err := json.Marshal(m)
	return string(b), true, err
}

// sealStreamSecrets encrypts any transport secret still stored in plain
// text: rows written before secrets were encrypted, or by an older binary.
// It runs on every open and costs one query when there is nothing to do.
func (s *Store) sealStreamSecrets(ctx context.Context) error {
	var kinds []domain.TransportKind
	for _, spec := range s.transports.All() {
		if len(spec.Secrets) > 0 {
			kinds = append(kinds, spec.Kind)
		}
	}
	if len(kinds) == 0 {
		return nil
	}
	var rows []streamRow
	if err := s.read(ctx).Where("transport_kind IN ?", kinds).Find(&rows).Error; err != nil {
		return fmt.Errorf("read stream configs: %w", err)
	}
	var sealed []streamRow
	for _, r := range rows {
		cfg, changed, err := s.sealConfig(domain.TransportKind(r.TransportKind), r.TransportConfig)
		if err != nil {
			return fmt.Errorf("stream %s: %w", r.ID, err)
		}
		if changed {
			r.TransportConfig = cfg
			sealed = append(sealed, r)
		}
	}
	if len(sealed) == 0 {
		return nil
	}
	err := s.write(ctx, func(tx *gorm.DB) error {
		for _, r := range sealed {
			if err := tx.Model(&streamRow{}).Where("id = ?", r.ID).Update("transport_config", r.TransportConfig).Error; err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("encrypt stream secrets: %w", err)
	}
	s.log.Info("encrypted transport secrets stored in plain text", "streams", len(sealed))
	return nil
}
