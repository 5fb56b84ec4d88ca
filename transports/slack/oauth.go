package slack

import (
	"cmp"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/transports/delivery"
	"github.com/helixml/helix-org/transports/transport"
)

// The install flow's routes. The first is under /ui/ because the owner's
// session cookie is scoped there; Slack sends the browser back to the
// second.
const (
	InstallPattern  = "GET /ui/slack/install"
	CallbackPattern = "GET /slack/oauth/callback"
	CallbackPath    = "/slack/oauth/callback"
)

// BotScopes are what the app asks of a workspace: read the messages of
// the conversations it is in, and post.
var BotScopes = []string{"app_mentions:read", "channels:history", "groups:history", "im:history", "mpim:history", "chat:write"}

// StateTTL is how long an install may take between our redirect and
// Slack's.
const StateTTL = 10 * time.Minute

// stateCookie binds an install's state to the browser that began it.
const stateCookie = "helix_slack_oauth"

// Install is the OAuth install flow: the owner, signed in with a one-time
// link (operator), is sent to Slack to approve the app; Slack sends the
// browser back with a code, which is exchanged at oauth.v2.access for the
// bot token, stored (encrypted) in transport.slack with the bot's user id.
// The state parameter is signed with the app's client secret, expires,
// and must come back to the browser that began (a cookie).
func Install(st transport.Store, client *http.Client, operator func(*http.Request) (string, error), log *slog.Logger) []transport.Route {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	f := &flow{st: st, client: delivery.NoRedirects(client), operator: operator, log: log.With("component", "slack-install"), now: time.Now}
	return []transport.Route{{Pattern: InstallPattern, Handler: http.HandlerFunc(f.begin)}, {Pattern: CallbackPattern, Handler: http.HandlerFunc(f.callback)}}
}

type flow struct {
	st       transport.Store
	client   *http.Client
	operator func(*http.Request) (string, error)
	log      *slog.Logger
	now      func() time.Time
}

// begin sends the owner to Slack's authorize page.
func (f *flow) begin(w http.ResponseWriter, r *http.Request) {
	if f.operator == nil {
		page(w, http.StatusForbidden, "installing the Slack app is not enabled on this server")
		return
	}
	who, err := f.operator(r)
	switch {
	case errors.Is(err, domain.ErrForbidden):
		page(w, http.StatusForbidden, err.Error())
		return
	case err != nil:
		http.Redirect(w, r, "/ui/signin?next="+url.QueryEscape("/ui/slack/install"), http.StatusSeeOther)
		return
	}
	cfg, err := setting.Load(r.Context(), f.st)
	if err != nil {
		f.fail(w, err)
		return
	}
	if cfg.ClientID == "" || cfg.ClientSecret == "" {
		page(w, http.StatusConflict, "transport.slack has no client_id or client_secret: set both, from the app's Basic Information page (helix-org config set transport.slack …), then install")
		return
	}
	nonce := make([]byte, 16)
	rand.Read(nonce)
	http.SetCookie(w, &http.Cookie{Name: stateCookie, Value: base64.RawURLEncoding.EncodeToString(nonce), Path: "/slack/oauth/",
		MaxAge: int(StateTTL.Seconds()), HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: r.TLS != nil})
	q := url.Values{"client_id": {cfg.ClientID}, "scope": {strings.Join(BotScopes, ",")}, "state": {sign(cfg.ClientSecret, nonce, f.now().Add(StateTTL))}}
	if cfg.RedirectURL != "" {
		q.Set("redirect_uri", cfg.RedirectURL)
	}
	f.log.Info("slack install begun", "by", who)
	http.Redirect(w, r, cfg.OAuthURL+"?"+q.Encode(), http.StatusFound)
}

// callback takes Slack's answer: checks the state, exchanges the code,
// stores the token.
func (f *flow) callback(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	cfg, err := setting.Load(r.Context(), f.st)
	if err != nil {
		f.fail(w, err)
		return
	}
	if err := f.checkState(r, cfg, q.Get("state")); err != nil {
		page(w, http.StatusBadRequest, "refused: "+err.Error()+"; begin again at /ui/slack/install")
		return
	}
	http.SetCookie(w, &http.Cookie{Name: stateCookie, Value: "", Path: "/slack/oauth/", MaxAge: -1, HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: r.TLS != nil})
	if e := q.Get("error"); e != "" {
		page(w, http.StatusBadRequest, "Slack did not install the app: "+trim(e))
		return
	}
	if q.Get("code") == "" {
		page(w, http.StatusBadRequest, "refused: Slack's answer has no code")
		return
	}
	inst, err := f.exchange(r.Context(), cfg, q.Get("code"))
	if err != nil {
		f.fail(w, err)
		return
	}
	if err := f.store(r.Context(), inst); err != nil {
		f.fail(w, err)
		return
	}
	f.log.Info("slack app installed", "team", inst.Team.ID, "bot_user", inst.BotUserID)
	page(w, http.StatusOK, fmt.Sprintf("The Slack app is installed in %s (%s): transport.slack now holds its bot token. You can close this page.", trim(inst.Team.Name), inst.Team.ID))
}

// sign makes a state: expiry and nonce, with an HMAC under a key derived
// from the client secret, which only this server and Slack hold.
func sign(secret string, nonce []byte, exp time.Time) string {
	payload := binary.BigEndian.AppendUint64(nil, uint64(exp.Unix()))
	payload = append(payload, nonce...)
	return base64.RawURLEncoding.EncodeToString(payload) + "." + base64.RawURLEncoding.EncodeToString(stateMAC(secret, payload))
}

func stateMAC(secret string, payload []byte) []byte {
	key := sha256.Sum256([]byte("helix-org slack oauth state\x00" + secret))
	mac := hmac.New(sha256.New, key[:])
	mac.Write(payload)
	return mac.Sum(nil)
}

// checkState verifies the signature, the expiry and that the browser is
// the one that began (its cookie holds the nonce).
func (f *flow) checkState(r *http.Request, cfg Config, state string) error {
	p, s, ok := strings.Cut(state, ".")
	payload, err1 := base64.RawURLEncoding.DecodeString(p)
	sig, err2 := base64.RawURLEncoding.DecodeString(s)
	switch {
	case cfg.ClientSecret == "":
		return errors.New("transport.slack has no client_secret")
	case !ok || err1 != nil || err2 != nil || len(payload) != 24:
		return errors.New("the state parameter is missing or malformed")
	case !hmac.Equal(sig, stateMAC(cfg.ClientSecret, payload)):
		return errors.New("the state parameter is not one this server made")
	case f.now().Unix() > int64(binary.BigEndian.Uint64(payload[:8])):
		return fmt.Errorf("the install took longer than %s", StateTTL)
	}
	c, err := r.Cookie(stateCookie)
	if err != nil || subtle.ConstantTimeCompare([]byte(c.Value), []byte(base64.RawURLEncoding.EncodeToString(payload[8:]))) != 1 {
		return errors.New("this browser did not begin the install")
	}
	return nil
}

// installation is the part of oauth.v2.access's answer that is kept.
type installation struct {
	AccessToken string `json:"access_token"`
	TokenType   string `json:"token_type"`
	BotUserID   string `json:"bot_user_id"`
	Team        struct {
		ID   string `json:"id"`
		Name string `json:"name"`
	} `json:"team"`
}

// exchange trades the code for the bot token at oauth.v2.access.
func (f *flow) exchange(ctx context.Context, cfg Config, code string) (installation, error) {
	form := url.Values{"client_id": {cfg.ClientID}, "client_secret": {cfg.ClientSecret}, "code": {code}}
	if cfg.RedirectURL != "" {
		form.Set("redirect_uri", cfg.RedirectURL)
	}
	var ans struct {
		OK    bool   `json:"ok"`
		Error string `json:"error"`
		installation
	}
	resp, out := delivery.Do(ctx, f.client, delivery.Call{Name: "slack oauth.v2.access", URL: strings.TrimRight(cfg.APIURL, "/") + "/oauth.v2.access", Form: form}, &ans)
	if resp == nil {
		return installation{}, out.Err
	}
	switch {
	case !ans.OK:
		// invalid_code, code_already_used, bad_redirect_uri, bad_client_secret…
		return installation{}, domain.Invalid("code", "Slack's oauth.v2.access answered %d: %s", resp.StatusCode, cmp.Or(ans.Error, resp.Status))
	case ans.TokenType != "bot" || !botToken().MatchString(ans.AccessToken):
		return installation{}, domain.Invalid("code", "Slack's oauth.v2.access gave no bot token (token_type %q)", ans.TokenType)
	}
	return ans.installation, nil
}

// store merges the bot token and user into transport.slack as it is
// stored, keeping the rest.
func (f *flow) store(ctx context.Context, inst installation) error {
	raw, err := f.st.SettingOr(ctx, ConfigSetting)
	if err != nil {
		return err
	}
	obj := map[string]json.RawMessage{}
	if err := json.Unmarshal([]byte(raw), &obj); err != nil {
		return errors.New("transport.slack is not a JSON object")
	}
	obj["bot_token"], _ = json.Marshal(inst.AccessToken)
	if userID().MatchString(inst.BotUserID) {
		obj["bot_user_id"], _ = json.Marshal(inst.BotUserID)
	}
	merged, _ := json.Marshal(obj)
	return f.st.SetSetting(ctx, ConfigSetting, string(merged))
}

// fail answers an error: the sender's (4xx) with its reason, ours (5xx)
// logged and answered with only its status.
func (f *flow) fail(w http.ResponseWriter, err error) {
	code := http.StatusInternalServerError
	if errors.Is(err, domain.ErrInvalid) {
		code = http.StatusBadGateway
		page(w, code, err.Error())
		return
	}
	f.log.Error("slack install failed", "err", err)
	page(w, code, http.StatusText(code))
}

// page answers a person's browser in plain text.
func page(w http.ResponseWriter, code int, text string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	io.WriteString(w, text+"\n")
}

// trim keeps a value Slack (or anyone) sent short in an answer.
func trim(s string) string {
	if len(s) > 100 {
		return s[:100] + "…"
	}
	return s
}
