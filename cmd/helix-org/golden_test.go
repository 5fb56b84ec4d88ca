package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/server"
	"github.com/helixml/helix-org/server/servertest"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/tools"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// golden compares got with testdata/name, or rewrites it under -update,
// so every change to what a model reads is a reviewed diff.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -run %s -update to create it)", err, t.Name())
	}
	if string(want) != string(got) {
		t.Errorf("%s differs from what the code now produces; if the change is meant, run go test ./cmd/helix-org -run %s -update and review the diff.\ngot:\n%s", path, t.Name(), got)
	}
}

// TestToolsListGolden: tools/list of a fully granted worker (the owner)
// on this binary — names, descriptions and schemas as models get them,
// create_stream's transports included — whole, and as a model is shown
// it within the default limits: find_tools and the compact core.
func TestToolsListGolden(t *testing.T) {
	for _, c := range []struct {
		file   string
		search string
	}{{"tools_list.golden.json", "off"}, {"tools_list_core.golden.json", ""}} {
		// <, > and & as a model reads them, not as \u003c.
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		if err := enc.Encode(listTools(t, c.search)); err != nil {
			t.Fatal(err)
		}
		golden(t, c.file, b.Bytes())
	}
}

// ownerTools lists every tool of a fully granted worker (the owner), as
// a client over HTTP gets them with tool search off.
func ownerTools(t *testing.T) []*mcp.Tool {
	t.Helper()
	all := listTools(t, "off")
	if len(all) != len(tools.Names()) {
		t.Errorf("the owner sees %d tools, want every one of %d", len(all), len(tools.Names()))
	}
	return all
}

// listTools is the owner's tools/list with the given tool search header.
func listTools(t *testing.T, search string) []*mcp.Tool {
	t.Helper()
	st, err := store.Open(t.Context(), filepath.Join(t.TempDir(), "helix-org.db"), store.Options{Synchronous: "NORMAL", Transports: transports.Specs()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if _, err := st.Bootstrap(t.Context(), tools.Names()); err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(server.New(st, server.Config{}))
	t.Cleanup(hs.Close)
	header := http.Header{}
	if search != "" {
		header.Set(domain.ToolSearchHeader, search)
	}
	cs, err := servertest.DialHeader(t, hs.URL+"/workers/w-owner/mcp", servertest.Token(t, st, store.OwnerWorker), header)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	var all []*mcp.Tool
	for tool, err := range cs.Tools(t.Context(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, tool)
	}
	return all
}
