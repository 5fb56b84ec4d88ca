package designdocs_test

import (
	"crypto/rand"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store/designdocs"
	"github.com/helixml/helix-org/store/designdocs/gittest"
)

func TestCloneFromURL(t *testing.T) {
	root := t.TempDir()
	src := gittest.Repo(t, filepath.Join(root, "src"))
	gittest.Bare(t, src, filepath.Join(root, "app.git"))
	srv := gittest.Serve(t, root, false)
	port := srv.URL[strings.LastIndex(srv.URL, ":")+1:]
	tests := []struct{ name, url string }{
		{"file URL", "file://" + src},
		{"loopback smart HTTP", srv.URL + "/app.git"},
		{"loopback by name, pinned to what it resolved to", "http://localhost:" + port + "/app.git"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := designdocs.Remote{ClonesDir: t.TempDir(), AllowPrivate: true, Roots: []string{root}}
			top, origin, err := designdocs.Resolve(t.Context(), tt.url, r)
			if err != nil || origin != tt.url {
				t.Fatalf("Resolve(%s) = %q, %q, %v", tt.url, top, origin, err)
			}
			if got, want := gittest.Git(t, top, "rev-parse", "HEAD"), gittest.Git(t, src, "rev-parse", "HEAD"); got != want {
				t.Errorf("clone HEAD = %s, want %s", got, want)
			}
			if !strings.HasPrefix(top, r.ClonesDir) {
				t.Errorf("clone at %s, not under %s", top, r.ClonesDir)
			}
			// The same URL again reuses the clone, and design docs work in it.
			again, _, err := designdocs.Resolve(t.Context(), tt.url, r)
			if err != nil || again != top {
				t.Errorf("second Resolve = %q, %v; want the clone %s", again, err, top)
			}
			if _, err := designdocs.Open(t.Context(), top); err != nil {
				t.Fatal(err)
			}
			entries, _ := os.ReadDir(r.ClonesDir)
			if len(entries) != 1 {
				t.Errorf("clones dir holds %d entries, want the one clone", len(entries))
			}
		})
	}
}

func TestCloneRefuses(t *testing.T) {
	root := t.TempDir()
	gittest.Bare(t, gittest.Repo(t, filepath.Join(root, "src")), filepath.Join(root, "app.git"))
	srv := gittest.Serve(t, root, false)
	plain := t.TempDir()
	tests := []struct {
		name, url    string
		allowPrivate bool
		wantErr      string
	}{
		{"loopback without the setting", srv.URL + "/app.git", false, "127.0.0.1 is a loopback, private, link-local or multicast address"},
		{"private range", "http://10.1.2.3/app.git", false, "10.1.2.3 is a loopback, private"},
		{"metadata address", "http://169.254.169.254/latest", false, "169.254.169.254 is a loopback"},
		{"missing repository", srv.URL + "/nope.git", true, "cannot be cloned: "},
		{"file URL of no repository", "file://" + filepath.Join(plain, "nope"), true, "does not exist"},
		{"file URL of a plain directory", "file://" + plain, true, "cannot be cloned: "},
		{"ssh shorthand", "git@github.com:org/app.git", true, "ssh repositories are not supported"},
		{"other scheme", "ssh://git@github.com/org/app.git", true, `scheme "ssh" is not supported`},
		{"credentials in the URL", "https://me:secret@example.com/app.git", true, "credentials in the URL are refused"},
		{"file URL of another host", "file://server/share/app.git", true, "a file URL names a path on this machine"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := designdocs.Remote{ClonesDir: t.TempDir(), AllowPrivate: tt.allowPrivate, Roots: []string{root, plain}}
			_, _, err := designdocs.Resolve(t.Context(), tt.url, r)
			if err == nil || !errors.Is(err, domain.ErrInvalid) || !strings.Contains(err.Error(), "repo: ") || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Resolve(%s) = %v, want an invalid repo: %q", tt.url, err, tt.wantErr)
			}
			if strings.Contains(err.Error(), "secret") {
				t.Errorf("the error shows the password: %v", err)
			}
			if entries, _ := os.ReadDir(r.ClonesDir); len(entries) != 0 {
				t.Errorf("a refused clone left %d entries in the clones dir", len(entries))
			}
		})
	}
}

func TestPushSendsTheDocsBranchBack(t *testing.T) {
	root := t.TempDir()
	src := gittest.Repo(t, filepath.Join(root, "src"))
	for _, name := range []string{"file", "http", "ro", "again"} {
		gittest.Bare(t, src, filepath.Join(root, name+".git"))
	}
	writable, readOnly := gittest.Serve(t, root, true), gittest.Serve(t, root, false)
	tests := []struct {
		name, url, origin string
		wantErr           string
	}{
		{"file URL", "file://" + root + "/file.git", "file.git", ""},
		{"smart HTTP", writable.URL + "/http.git", "http.git", ""},
		{"a server that refuses pushes", readOnly.URL + "/ro.git", "ro.git", "push helix-design-docs to " + readOnly.URL + "/ro.git: "},
		// A second clone (another server, a lost clones dir) continues
		// the branch origin has instead of starting one that cannot push.
		{"first clone of again", writable.URL + "/again.git", "again.git", ""},
		{"second clone of again", "file://" + root + "/again.git", "again.git", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			origin := filepath.Join(root, tt.origin)
			r := designdocs.Remote{ClonesDir: t.TempDir(), AllowPrivate: true, Roots: []string{root}}
			top, _, err := designdocs.Resolve(t.Context(), tt.url, r)
			if err != nil {
				t.Fatal(err)
			}
			book, err := designdocs.Open(t.Context(), top)
			if err != nil {
				t.Fatal(err)
			}
			head, err := book.Write(t.Context(), designdocs.Author{ID: "w-plan"}, "t-"+strings.ReplaceAll(tt.name, " ", "-"), "requirements",
				map[string]string{"requirements.md": "# " + tt.name + "\n"})
			if err != nil {
				t.Fatal(err)
			}
			err = r.Push(t.Context(), top, tt.url)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Push = %v, want %q", err, tt.wantErr)
				}
				if got := gittest.Git(t, top, "rev-parse", designdocs.Branch); got != head {
					t.Errorf("the local branch is at %s after a refused push, want %s", got, head)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := gittest.Git(t, origin, "rev-parse", designdocs.Branch); got != head {
				t.Errorf("origin's %s = %s, want %s", designdocs.Branch, got, head)
			}
		})
	}
}

// TestCloneOverTheLimit: a repository larger than MaxBytes is refused
// with an error naming the field and the setting, and leaves nothing in
// the clones directory; under the limit it clones.
func TestCloneOverTheLimit(t *testing.T) {
	root := t.TempDir()
	src := gittest.Repo(t, filepath.Join(root, "src"))
	big := make([]byte, 4<<20)
	rand.Read(big) // incompressible: the pack is as large as the file
	if err := os.WriteFile(filepath.Join(src, "big.bin"), big, 0o644); err != nil {
		t.Fatal(err)
	}
	gittest.Git(t, src, "add", "big.bin")
	gittest.Git(t, src, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "a big file")
	gittest.Bare(t, src, filepath.Join(root, "big.git"))
	srv := gittest.Serve(t, root, false)
	tests := []struct {
		name     string
		url      string
		maxBytes int64
		wantErr  bool
	}{
		{"file URL over", "file://" + src, 1 << 20, true},
		{"smart HTTP over", srv.URL + "/big.git", 1 << 20, true},
		{"smart HTTP under", srv.URL + "/big.git", 64 << 20, false},
		{"no limit", "file://" + src, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := designdocs.Remote{ClonesDir: t.TempDir(), AllowPrivate: true, MaxBytes: tt.maxBytes, Roots: []string{root}}
			_, err := r.Clone(t.Context(), tt.url)
			if !tt.wantErr {
				if err != nil {
					t.Fatalf("Clone = %v, want a clone", err)
				}
				return
			}
			if !errors.Is(err, domain.ErrInvalid) || !strings.Contains(err.Error(), "repo") || !strings.Contains(err.Error(), designdocs.MaxBytesKey) {
				t.Fatalf("Clone = %v, want an invalid repo naming %s", err, designdocs.MaxBytesKey)
			}
			if entries, _ := os.ReadDir(r.ClonesDir); len(entries) != 0 {
				t.Errorf("clones dir holds %d entries after a refused clone, want none", len(entries))
			}
		})
	}
}
