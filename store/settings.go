package store

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/helixml/helix-org/domain"
)

type settingRow struct {
	Key       string `gorm:"primaryKey"`
	Value     string `gorm:"not null"`
	UpdatedAt time.Time
}

func (settingRow) TableName() string { return "settings" }

// encPrefix marks a value encrypted with the key file.
const encPrefix = "enc:v1:"

// SetSetting stores an operational config value, encrypting it when the
// spec holds a secret. The value must already satisfy spec.Check.
func (s *Store) SetSetting(ctx context.Context, spec domain.SettingSpec, value string) error {
	if err := spec.Check(value); err != nil {
		return err
	}
	stored := value
	if spec.HasSecret() {
		enc, err := s.encrypt(value)
		if err != nil {
			return err
		}
		stored = enc
	}
	err := s.write(ctx, func(tx *gorm.DB) error {
		return tx.Clauses(clause.OnConflict{UpdateAll: true}).Create(&settingRow{Key: spec.Key, Value: stored, UpdatedAt: s.Now()}).Error
	})
	s.settings.clear()
	if err != nil {
		return fmt.Errorf("set %s: %w", spec.Key, err)
	}
	return nil
}

// Setting returns a stored value (decrypted) and whether one is set.
func (s *Store) Setting(ctx context.Context, key string) (string, bool, error) {
	stored, ok, err := s.storedSetting(ctx, key)
	if err != nil || !ok {
		return "", false, err
	}
	if strings.HasPrefix(stored, encPrefix) {
		v, err := s.decrypt(stored)
		if err != nil {
			return "", false, fmt.Errorf("decrypt setting %s: %w", key, err)
		}
		return v, true, nil
	}
	return stored, true, nil
}

// cachedSetting is a setting as stored; ok false caches its absence.
type cachedSetting struct {
	stored string
	ok     bool
}

// storedSetting is key's value as stored, from the cache when it is fresh
// (epoch_cache.go).
func (s *Store) storedSetting(ctx context.Context, key string) (string, bool, error) {
	epoch, err := s.epoch(ctx, epochSettings)
	if err != nil {
		return "", false, fmt.Errorf("get setting %s: %w", key, err)
	}
	cached, gen, hit := s.settings.get(key, epoch)
	if hit {
		return cached.stored, cached.ok, nil
	}
	var row settingRow
	err = s.read(ctx).Where("key = ?", key).Take(&row).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		s.settings.put(key, gen, cachedSetting{})
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("get setting %s: %w", key, err)
	}
	s.settings.put(key, gen, cachedSetting{stored: row.Value, ok: true})
	return row.Value, true, nil
}

// SettingKeys lists the keys that have a stored value.
func (s *Store) SettingKeys(ctx context.Context) ([]string, error) {
	var keys []string
	if err := s.read(ctx).Model(&settingRow{}).Order("key").Pluck("key", &keys).Error; err != nil {
		return nil, fmt.Errorf("list settings: %w", err)
	}
	return keys, nil
}

// DeleteSetting removes a stored value so the default applies again.
func (s *Store) DeleteSetting(ctx context.Context, key string) error {
	var affected int64
	err := s.write(ctx, func(tx *gorm.DB) error {
		res := tx.Where("key = ?", key).Delete(&settingRow{})
		affected = res.RowsAffected
		return res.Error
	})
	s.settings.clear()
	if err != nil {
		return fmt.Errorf("delete setting %s: %w", key, err)
	}
	if affected == 0 {
		return fmt.Errorf("setting %q is not set: %w", key, domain.ErrNotFound)
	}
	return nil
}

// key loads the 256-bit secrets key, creating the file (0600) on first use.
// It lives outside the database so a copied .db file alone reveals nothing.
func (s *Store) key() ([]byte, error) {
	data, err := os.ReadFile(s.keyFile)
	if errors.Is(err, os.ErrNotExist) {
		k := make([]byte, 32)
		if _, err := rand.Read(k); err != nil {
			return nil, err
		}
		f, err := os.OpenFile(s.keyFile, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			if errors.Is(err, os.ErrExist) {
				return s.key()
			}
			return nil, fmt.Errorf("create key file %s: %w", s.keyFile, err)
		}
		defer f.Close()
		if _, err := f.WriteString(hex.EncodeToString(k) + "\n"); err != nil {
			return nil, fmt.Errorf("write key file: %w", err)
		}
		return k, f.Sync()
	}
	if err != nil {
		return nil, fmt.Errorf("read key file %s: %w", s.keyFile, err)
	}
	k, err := hex.DecodeString(strings.TrimSpace(string(data)))
	if err != nil || len(k) != 32 {
		return nil, fmt.Errorf("key file %s does not hold a 64-digit hex key", s.keyFile)
	}
	return k, nil
}

// aead is the cipher of the key file, read once: every webhook's stream
// secret is decrypted with it, and the file does not change under an open
// store.
func (s *Store) aead() (cipher.AEAD, error) {
	s.cipherMu.Lock()
	defer s.cipherMu.Unlock()
	if s.cipher != nil {
		return s.cipher, nil
	}
	k, err := s.key()
	if err != nil {
		return nil, err
	}
	block, err := aes.NewCipher(k)
	if err != nil {
		return nil, err
	}
	if s.cipher, err = cipher.NewGCM(block); err != nil {
		return nil, err
	}
	return s.cipher, nil
}

func (s *Store) encrypt(plain string) (string, error) {
	gcm, err := s.aead()
	if err != nil {
		return "", err
	}
	nonce := make([]byte, gcm.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return "", err
	}
	return encPrefix + base64.StdEncoding.EncodeToString(gcm.Seal(nonce, nonce, []byte(plain), nil)), nil
}

func (s *Store) decrypt(stored string) (string, error) {
	gcm, err := s.aead()
	if err != nil {
		return "", err
	}
	data, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(stored, encPrefix))
	if err != nil || len(data) < gcm.NonceSize() {
		return "", errors.New("corrupt encrypted value")
	}
	plain, err := gcm.Open(nil, data[:gcm.NonceSize()], data[gcm.NonceSize():], nil)
	if err != nil {
		return "", errors.New("cannot decrypt: wrong key file?")
	}
	return string(plain), nil
}
