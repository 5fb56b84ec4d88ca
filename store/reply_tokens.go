package store

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base32"
	"strings"
	"time"

	"github.com/helixml/helix-org/domain"
)

// ReplyTokenTTL is how long the token of a relayed email vouches for its
// person: an answer to an older message counts as theirs only when the
// provider's own checks pass.
const ReplyTokenTTL = 30 * 24 * time.Hour

// relayTag names, in a relayed email's subject, the event it carries and
// the token only the server can make for it: "[helix e-… t-…]". The event
// routes the answer back whatever the mail client does to headers (a
// subject survives "Re:"); the token says the answer replies to what the
// server sent that person. An old tag without a token still routes.
var relayTag = domain.LazyRegexp(`\[helix (e-[0-9a-z]+)(?: t-([0-9A-Za-z]+))?\]`)

// tokenEncoding spells tokens in lowercase base32, safe in any subject.
var tokenEncoding = base32.StdEncoding.WithPadding(base32.NoPadding)

// replyToken is the token of event relayed to worker: an HMAC of the two,
// 80 bits of it, under a key derived from the key file, so every process
// of the org makes the same tokens and no new secret needs keeping. A
// guess costs the guesser an email; 2^80 of them are out of reach.
func (s *Store) replyToken(worker, event string) (string, error) {
	key, err := s.replyKey()
	if err != nil {
		return "", err
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(worker + "\x00" + event))
	return strings.ToLower(tokenEncoding.EncodeToString(mac.Sum(nil)[:10])), nil
}

// replyKey derives the token key from the key file once; the label keeps
// it apart from the key's use for encryption.
func (s *Store) replyKey() ([]byte, error) {
	s.cipherMu.Lock()
	defer s.cipherMu.Unlock()
	if s.replyMAC != nil {
		return s.replyMAC, nil
	}
	k, err := s.key()
	if err != nil {
		return nil, err
	}
	mac := hmac.New(sha256.New, k)
	mac.Write([]byte("helix-org reply token v1"))
	s.replyMAC = mac.Sum(nil)
	return s.replyMAC, nil
}

// tokenVouches says whether subject carries the token of answered, the
// event an answer on worker's contact stream answers, made for worker and
// still within ReplyTokenTTL.
func (s *Store) tokenVouches(worker string, answered domain.Event, subject string) (bool, error) {
	tag := relayTag().FindStringSubmatch(subject)
	if tag == nil || tag[1] != answered.ID || tag[2] == "" || s.Now().Sub(answered.CreatedAt) > ReplyTokenTTL {
		return false, nil
	}
	want, err := s.replyToken(worker, answered.ID)
	if err != nil {
		return false, err
	}
	return hmac.Equal([]byte(want), []byte(strings.ToLower(tag[2]))), nil
}
