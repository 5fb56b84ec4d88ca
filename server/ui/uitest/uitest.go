// Package uitest drives a real Chromium — Debian's /usr/bin/chromium,
// headless — through chromedp for the web UI's browser tests. A test
// binary shares one browser (started on first use, closed by Main); each
// test gets its own browser context, so cookies never cross tests.
package uitest

import (
	"context"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// ExecPath is the browser the tests drive; CI installs Debian's chromium.
const ExecPath = "/usr/bin/chromium"

var (
	mu        sync.Mutex
	browser   context.Context
	closeFunc context.CancelFunc
)

// Main runs a test binary's tests and then closes the shared browser.
// Call it from TestMain.
func Main(m *testing.M) {
	code := m.Run()
	Close()
	os.Exit(code)
}

// Close stops the shared browser, if one was started.
func Close() {
	mu.Lock()
	defer mu.Unlock()
	if closeFunc != nil {
		closeFunc()
		browser, closeFunc = nil, nil
	}
}

// shared returns the browser, starting it on first use. It runs without a
// sandbox because CI runs as root, where Chromium's sandbox cannot start.
func shared(t testing.TB) context.Context {
	t.Helper()
	mu.Lock()
	defer mu.Unlock()
	if browser != nil {
		return browser
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(ExecPath), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.WindowSize(1280, 800), chromedp.Flag("hide-scrollbars", true))
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(alloc)
	if err := chromedp.Do(ctx); err != nil {
		cancelCtx()
		cancelAlloc()
		t.Fatalf("start %s: %v", ExecPath, err)
	}
	browser, closeFunc = ctx, func() { cancelCtx(); cancelAlloc() }
	return browser
}

// Tab opens a tab in a browser context of its own (its own cookies),
// closed when the test ends, with network events on so Requests works.
func Tab(t testing.TB) context.Context {
	t.Helper()
	ctx, cancel := chromedp.NewContext(shared(t), chromedp.WithNewBrowserContext())
	t.Cleanup(cancel)
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("open a tab: %v", err)
	}
	if _, err := chromedp.Call(ctx, network.Enable, network.EnableParams{}); err != nil {
		t.Fatalf("enable network events: %v", err)
	}
	return ctx
}

// Do runs actions on a tab with a deadline, failing the test on error.
func Do(t testing.TB, tab context.Context, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	ctx, cancel := context.WithTimeout(tab, 30*time.Second)
	defer cancel()
	for _, a := range actions {
		// A live view may swap the node an action found before it acts on
		// it (the page is updated as the org changes); the action runs again
		// on the node that replaced it.
		err := chromedp.Do(ctx, a)
		for try := 1; err != nil && try < 3 && strings.Contains(err.Error(), "Could not find node with given id"); try++ {
			err = chromedp.Do(ctx, a)
		}
		if err != nil {
			t.Fatalf("browser: %v", err)
		}
	}
}

// Run runs one action that returns a value, with a deadline.
func Run[T any](t testing.TB, tab context.Context, action chromedp.Action[T]) T {
	t.Helper()
	ctx, cancel := context.WithTimeout(tab, 30*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, action)
	if err != nil {
		t.Fatalf("browser: %v", err)
	}
	return v
}

// Requests records the URL of every request a tab makes from now on.
type Requests struct {
	mu   sync.Mutex
	urls []string
}

// Record starts recording a tab's requests.
func Record(t testing.TB, tab context.Context) *Requests {
	t.Helper()
	r := &Requests{}
	err := chromedp.Listen(tab, func(ev any) {
		if e, ok := ev.(*network.EventRequestWillBeSent); ok {
			r.mu.Lock()
			r.urls = append(r.urls, e.Request.URL)
			r.mu.Unlock()
		}
	})
	if err != nil {
		t.Fatalf("listen for requests: %v", err)
	}
	return r
}

// URLs returns what was requested so far.
func (r *Requests) URLs() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.urls)
}

// Foreign returns the requested URLs whose origin is not origin. data:
// and blob: URLs never leave the browser and are not counted.
func (r *Requests) Foreign(origin string) []string {
	var out []string
	for _, u := range r.URLs() {
		p, err := url.Parse(u)
		if err != nil {
			out = append(out, u)
			continue
		}
		if p.Scheme == "data" || p.Scheme == "blob" {
			continue
		}
		if p.Scheme+"://"+p.Host != origin {
			out = append(out, u)
		}
	}
	return out
}

// Screenshot saves a full-page PNG of the tab as name.png in the
// directory HELIX_UI_SCREENSHOTS names, else in the test's artifact
// directory (kept with go test -artifacts). It returns the file's path.
func Screenshot(t *testing.T, tab context.Context, name string) string {
	t.Helper()
	png := Run(t, tab, chromedp.FullScreenshot(100))
	dir := os.Getenv("HELIX_UI_SCREENSHOTS")
	if dir == "" {
		dir = t.ArtifactDir()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, strings.ReplaceAll(name, "/", "_")+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}
