package ui

import (
	"bytes"
	"html/template"
	"sync"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/util"
)

// md renders markdown for the web UI. It never passes raw HTML through
// (goldmark drops it and unsafe link schemes without html.WithUnsafe),
// and an image becomes a link, so no page loads anything from elsewhere.
// Built on first use: most starts of the binary render no markdown.
var md = sync.OnceValue(func() goldmark.Markdown {
	return goldmark.New(
		goldmark.WithExtensions(extension.GFM),
		goldmark.WithRendererOptions(renderer.WithNodeRenderers(util.Prioritized(imagesAsLinks{}, 100))),
	)
})

func markdown(src string) template.HTML {
	var buf bytes.Buffer
	if err := md().Convert([]byte(src), &buf); err != nil {
		return template.HTML(template.HTMLEscapeString(src))
	}
	return template.HTML(buf.String())
}

// imagesAsLinks renders ![alt](src) as a link to src, text alt.
type imagesAsLinks struct{}

func (imagesAsLinks) RegisterFuncs(reg renderer.NodeRendererFuncRegisterer) {
	reg.Register(ast.KindImage, func(w util.BufWriter, source []byte, n ast.Node, entering bool) (ast.WalkStatus, error) {
		img := n.(*ast.Image)
		if entering {
			dest := img.Destination
			if !safeURL(dest) {
				dest = nil
			}
			w.WriteString(`<a class="image-link" href="`)
			w.Write(util.EscapeHTML(util.URLEscape(dest, true)))
			w.WriteString(`">`)
			return ast.WalkContinue, nil
		}
		w.WriteString(`</a>`)
		return ast.WalkContinue, nil
	})
}

// safeURL refuses the schemes goldmark refuses for links.
func safeURL(u []byte) bool {
	l := bytes.ToLower(bytes.TrimSpace(u))
	for _, bad := range []string{"javascript:", "vbscript:", "file:", "data:"} {
		if bytes.HasPrefix(l, []byte(bad)) {
			return false
		}
	}
	return true
}
