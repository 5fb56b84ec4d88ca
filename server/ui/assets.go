package ui

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"mime"
	"net/http"
	"path"
	"sync"
)

//go:embed assets
var assetFS embed.FS

// assetTags are the ETags of the embedded assets, computed on first use.
var assetTags = sync.OnceValue(func() map[string]string {
	tags := map[string]string{}
	entries, _ := assetFS.ReadDir("assets")
	for _, e := range entries {
		b, _ := assetFS.ReadFile("assets/" + e.Name())
		sum := sha256.Sum256(b)
		tags[e.Name()] = `"` + hex.EncodeToString(sum[:8]) + `"`
	}
	return tags
})

// handleAsset serves the stylesheet, the script and the icon from the
// binary. They need no sign-in: they hold nothing of the org's.
func (u *UI) handleAsset(w http.ResponseWriter, r *http.Request) {
	name := path.Base(r.PathValue("file"))
	tag, ok := assetTags()[name]
	if !ok {
		http.NotFound(w, r)
		return
	}
	b, _ := assetFS.ReadFile("assets/" + name)
	w.Header().Set("Content-Type", mime.TypeByExtension(path.Ext(name)))
	w.Header().Set("ETag", tag)
	w.Header().Set("Cache-Control", "no-cache")
	if r.Header.Get("If-None-Match") == tag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	w.Write(b)
}
