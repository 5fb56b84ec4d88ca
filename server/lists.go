package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/tools"
)

// serveLists answers a plain tools/list itself, with the answer kept for
// the caller's catalog. A list changes only when the grants, skills or
// limits it is built from do — read at every request's authentication
// or answer, where a change in any process moves an epoch — yet the
// go-sdk lists a server's tools anew each time, marshalling every schema
// (9 ms for the owner). Any other tools/list (a cursor, a progress token,
// headers the go-sdk checks) goes on to the go-sdk, which stays the
// reference: TestToolsListAnswersAsTheSDK compares the two byte for byte.
func (s *Server) serveLists(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, modern, ok := s.directList(r)
		if !ok {
			next.ServeHTTP(w, r)
			return
		}
		c := callerFrom(r.Context())
		c.readLimits()
		result, err := s.catalogs.answer(s, c, modern)
		if err != nil {
			s.log.Error("encode tools/list", "err", err)
			next.ServeHTTP(w, r)
			return
		}
		s.directLists.Add(1)
		// The envelope as the go-sdk writes it: at 2026-07-28 its own, and
		// before it as fitAnswers re-marshals it, keys in order.
		var body []byte
		if modern {
			body = slices.Concat([]byte(`{"jsonrpc":"2.0","id":`), id, []byte(`,"result":`), result, []byte(`}`))
		} else {
			body = slices.Concat([]byte(`{"id":`), id, []byte(`,"jsonrpc":"2.0","result":`), result, []byte(`}`))
		}
		w.Header().Set("Cache-Control", "no-cache, no-transform")
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		w.Write(body)
	})
}

// directList reports whether r is a tools/list serveLists answers: the
// request id as the answer gives it back, and whether the client speaks
// 2026-07-28.
func (s *Server) directList(r *http.Request) (id json.RawMessage, modern, ok bool) {
	req := rpcRequestOf(r)
	version := r.Header.Get("MCP-Protocol-Version")
	if s.viaSDK || r.Method != http.MethodPost || req.Method != "tools/list" || req.JSONRPC != "2.0" ||
		callerFrom(r.Context()) == nil || !slices.Contains(directVersions, version) || !plainHeaders(r, version, "tools/list", "") {
		return nil, false, false
	}
	modern = version >= statelessVersion
	if id, ok = listID(req.ID, modern); !ok {
		return nil, false, false
	}
	var params map[string]json.RawMessage
	if p := bytes.TrimSpace(req.Params); len(p) > 0 && !bytes.Equal(p, []byte("null")) && json.Unmarshal(p, &params) != nil {
		return nil, false, false
	}
	for k, v := range params {
		if k != "_meta" || !modern || !plainMeta(v, version) {
			return nil, false, false
		}
	}
	if modern && params["_meta"] == nil {
		return nil, false, false
	}
	return id, modern, true
}

// listID is the request id as the go-sdk writes it back in a tools/list
// answer: as plainID does, but a 2026-07-28 answer, which fitAnswers does
// not re-marshal, leaves HTML in a string unescaped.
func listID(raw json.RawMessage, modern bool) (json.RawMessage, bool) {
	id, ok := plainID(raw)
	if !ok || !modern || id[0] != '"' {
		return id, ok
	}
	var s string
	if json.Unmarshal(id, &s) != nil {
		return nil, false
	}
	b, err := encode(s)
	return b, err == nil
}

// catalogCache keeps each grant set's catalog and its tools/list result,
// encoded for clients before 2026-07-28 and for 2026-07-28, by what the
// catalog is built from (catalogKey).
type catalogCache struct {
	mu      sync.Mutex
	entries map[string]*catalogEntry
}

// maxCatalogs bounds the cache: a few grant sets are common, and a server
// with more rebuilds a catalog now and then rather than growing.
const maxCatalogs = 64

type catalogEntry struct {
	cat            *tools.Catalog
	once           sync.Once
	legacy, modern json.RawMessage
	err            error
}

// catalogKey is what a caller's catalog is built from: its grants, the
// skills and outside tools there are and the limits on what it shows.
func catalogKey(c *caller) string {
	return fmt.Sprintf("%s|%s|%s|%d/%d", strings.Join(c.granted, ","), tools.SkillsKey(c.skills), tools.OutsideKey(c.outside), c.limits.Threshold, c.limits.Budget)
}

// get is c's catalog, built once per key.
func (l *catalogCache) get(s *Server, c *caller) *catalogEntry {
	key := catalogKey(c)
	l.mu.Lock()
	defer l.mu.Unlock()
	e := l.entries[key]
	if e == nil {
		if len(l.entries) >= maxCatalogs {
			clear(l.entries)
		}
		e = &catalogEntry{cat: tools.NewCatalog(c.limits, tools.Builtins(s.store.Transports(), c.granted), tools.Skills(c.skills, c.granted),
			tools.Outsiders(c.outside, c.granted))}
		l.entries[key] = e
	}
	return e
}

// answer is the tools/list result for c, encoded once per catalog.
func (l *catalogCache) answer(s *Server, c *caller, modern bool) (json.RawMessage, error) {
	e := l.get(s, c)
	e.once.Do(func() { e.legacy, e.modern, e.err = listResults(e.cat.Shown()) })
	if modern {
		return e.modern, e.err
	}
	return e.legacy, e.err
}

// toolLimits are the limits on what r's tools/list shows: none when it
// turns tool search off (domain.ToolSearchHeader).
func (s *Server) toolLimits(r *http.Request) tools.Limits {
	if strings.EqualFold(r.Header.Get(domain.ToolSearchHeader), "off") {
		return tools.Limits{}
	}
	return tools.LimitsOf(r.Context(), s.store)
}

// listResults encodes a list of tools as the go-sdk answers tools/list:
// before 2026-07-28 as fitAnswers leaves it, and at 2026-07-28 complete,
// naming the server, private and stale at once.
func listResults(ts []*mcp.Tool) (legacy, modern json.RawMessage, err error) {
	res := &mcp.ListToolsResult{Tools: ts}
	b, err := encode(res)
	if err != nil {
		return nil, nil, err
	}
	legacy, ok := fitResult(false, "tools/list", b)
	if !ok {
		return nil, nil, errors.New("the result does not decode")
	}
	res.ResultType = "complete"
	res.Meta = mcp.Meta{mcp.MetaKeyServerInfo: tools.Implementation()}
	res.CacheScope = "private"
	modern, err = encode(res)
	return legacy, modern, err
}

// encode marshals as the go-sdk does: without escaping HTML.
func encode(v any) (json.RawMessage, error) { return domain.MarshalPlain(v) }
