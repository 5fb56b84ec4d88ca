package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/helixml/helix-org/tools"
)

// repoRoot is the repository's root, seen from this package.
const repoRoot = "../.."

// docPages are the pages whose shell blocks TestDocsCommands runs, in the
// order it runs them: the README first (its walkthrough makes the org
// the others use), then docs/ by name.
func docPages(t *testing.T) []string {
	t.Helper()
	pages, err := filepath.Glob(filepath.Join(repoRoot, "docs", "*.md"))
	if err != nil || len(pages) == 0 {
		t.Fatalf("no pages in docs/: %v", err)
	}
	slices.Sort(pages)
	return append([]string{filepath.Join(repoRoot, "README.md")}, pages...)
}

// shellBlock is one ```sh block of a page: its first line's number, its
// text, and why it is not run when a `<!-- not run: why -->` line stands
// right above its fence.
type shellBlock struct {
	line   int
	text   string
	notRun string
}

var notRunMark = regexp.MustCompile(`^<!-- not run: (\S.*?) -->$`)

// otherShells are fence languages that would hide a command from the
// test: a command is ```sh, what it prints ```text.
var otherShells = []string{"bash", "shell", "console", "zsh", "shell-session", "shellsession"}

// shellBlocks parses a page's fenced blocks and returns its sh blocks,
// and what breaks the convention CONTRIBUTING.md states (docs): a shell
// fence in another language, a not-run mark with no block under it.
func shellBlocks(page string) ([]shellBlock, []string) {
	var blocks []shellBlock
	var problems []string
	lines := strings.Split(page, "\n")
	for i := 0; i < len(lines); i++ {
		trimmed := strings.TrimLeft(lines[i], " ")
		if strings.HasPrefix(trimmed, "<!-- not run") {
			switch {
			case !notRunMark.MatchString(strings.TrimSpace(trimmed)):
				problems = append(problems, fmt.Sprintf("line %d: a not-run mark says why: <!-- not run: why -->", i+1))
			case i+1 >= len(lines) || strings.TrimSpace(lines[i+1]) != "```sh":
				problems = append(problems, fmt.Sprintf("line %d: a not-run mark stands right above the ```sh fence it marks", i+1))
			}
		}
		if !strings.HasPrefix(trimmed, "```") {
			continue
		}
		indent := len(lines[i]) - len(trimmed)
		lang, _, _ := strings.Cut(strings.TrimSpace(strings.TrimPrefix(trimmed, "```")), " ")
		start := i + 1
		var body []string
		for i++; i < len(lines) && strings.TrimSpace(lines[i]) != "```"; i++ {
			body = append(body, strings.TrimPrefix(lines[i], strings.Repeat(" ", indent)))
		}
		switch {
		case slices.Contains(otherShells, lang):
			problems = append(problems, fmt.Sprintf("line %d: a ```%s block: commands go in ```sh (run by TestDocsCommands, or marked <!-- not run: why -->), what they print in ```text", start, lang))
		case lang == "sh":
			b := shellBlock{line: start + 1, text: strings.Join(body, "\n") + "\n"}
			if start >= 2 {
				if m := notRunMark.FindStringSubmatch(strings.TrimSpace(lines[start-2])); m != nil {
					b.notRun = m[1]
				}
			}
			blocks = append(blocks, b)
		}
	}
	return blocks, problems
}

func TestShellBlocks(t *testing.T) {
	tests := []struct {
		name     string
		page     string
		want     []shellBlock
		problems int
	}{
		{"a block runs", "text\n\n```sh\necho hi\n```\n", []shellBlock{{line: 4, text: "echo hi\n"}}, 0},
		{"marked not run", "<!-- not run: needs a key -->\n```sh\nx\n```\n", []shellBlock{{line: 3, text: "x\n", notRun: "needs a key"}}, 0},
		{"indented in a list", "- item:\n\n  ```sh\n  a\n  b\n  ```\n", []shellBlock{{line: 4, text: "a\nb\n"}}, 0},
		{"text and json are not shell", "```text\n$ x\n```\n```jsonc\n{}\n```\n", nil, 0},
		{"a comment further up does not count", "<!-- not run: x -->\n\n```sh\ny\n```\n", []shellBlock{{line: 4, text: "y\n"}}, 1},
		{"a mark needs a reason", "<!-- not run: -->\n```sh\ny\n```\n", []shellBlock{{line: 3, text: "y\n"}}, 1},
		{"bash is refused", "```bash\nmake\n```\n", nil, 1},
		{"console is refused", "```console\n$ make\n```\n", nil, 1},
		{"a fence line in a text block is text", "```sh\na\n```\n```text\n```sh\n```\n", []shellBlock{{line: 2, text: "a\n"}}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, problems := shellBlocks(tt.page)
			if !slices.Equal(got, tt.want) {
				t.Errorf("blocks = %+v, want %+v", got, tt.want)
			}
			if len(problems) != tt.problems {
				t.Errorf("problems = %q, want %d", problems, tt.problems)
			}
		})
	}
}

// TestDocsCommands runs every ```sh block of the README and docs/ not
// marked `<!-- not run: why -->`, as a reader would paste it: in order,
// each with sh -eu, against one fresh server in a temp dir, the pages one
// after another (README first). A block that fails fails the test, and
// the rest of its page is skipped: later blocks build on it.
func TestDocsCommands(t *testing.T) {
	t.Parallel()
	sh := newDocsShell(t)
	ran := 0
	for _, path := range docPages(t) {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		name, _ := filepath.Rel(repoRoot, path)
		blocks, problems := shellBlocks(string(data))
		for _, p := range problems {
			t.Errorf("%s: %s", name, p)
		}
		for _, b := range blocks {
			if b.notRun != "" {
				continue
			}
			out, err := sh.run(t, b.text)
			if err != nil {
				t.Errorf("%s:%d: the block failed (%v); the rest of the page is not run:\n%s\n--- output:\n%s", name, b.line, err, b.text, out)
				break
			}
			ran++
		}
	}
	if ran < 10 {
		t.Errorf("ran %d blocks; the README and docs/ hold more than that", ran)
	}
}

// TestDocsListEveryTool: docs/tools.md has a row for every built-in tool
// and for nothing else, so the table cannot fall behind the registry.
func TestDocsListEveryTool(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(repoRoot, "docs", "tools.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, _ := strings.Cut(string(data), "\n## Every tool\n")
	section, _, _ = strings.Cut(section, "\n## ")
	var rows []string
	for _, m := range regexp.MustCompile("(?m)^\\| `([a-z_<>]+)` \\|").FindAllStringSubmatch(section, -1) {
		rows = append(rows, m[1])
	}
	want := append(tools.Names(), tools.FindTools().Name, "skill_<name>")
	for _, name := range want {
		if !slices.Contains(rows, name) {
			t.Errorf("docs/tools.md has no row for %s", name)
		}
	}
	for _, name := range rows {
		if !slices.Contains(want, name) {
			t.Errorf("docs/tools.md has a row for %s, which is no tool", name)
		}
	}
}

var (
	mdLink    = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	mdHeading = regexp.MustCompile(`^#{1,6} +(.+?) *#*$`)
)

// TestDocsLinks: every relative link in the README, CONTRIBUTING.md,
// docs/ and demos/ reaches a file, and every #anchor a heading of it.
func TestDocsLinks(t *testing.T) {
	var pages []string
	for _, pattern := range []string{"*.md", "docs/*.md", "demos/*.md", "demos/*/*.md"} {
		found, _ := filepath.Glob(filepath.Join(repoRoot, pattern))
		pages = append(pages, found...)
	}
	anchors := map[string][]string{}
	anchorsOf := func(path string) []string {
		if a, ok := anchors[path]; ok {
			return a
		}
		data, _ := os.ReadFile(path)
		anchors[path] = headingAnchors(string(data))
		return anchors[path]
	}
	for _, page := range pages {
		data, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		name, _ := filepath.Rel(repoRoot, page)
		for _, target := range pageLinks(string(data)) {
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			file, anchor, _ := strings.Cut(target, "#")
			path := page
			if file != "" {
				path = filepath.Join(filepath.Dir(page), file)
				if _, err := os.Stat(path); err != nil {
					t.Errorf("%s: the link %s reaches no file", name, target)
					continue
				}
			}
			if anchor != "" && strings.HasSuffix(path, ".md") && !slices.Contains(anchorsOf(path), anchor) {
				t.Errorf("%s: the link %s names no heading of %s", name, target, filepath.Base(path))
			}
		}
	}
}

// pageLinks are a page's link targets outside code blocks and spans.
func pageLinks(page string) []string {
	var links []string
	fenced := false
	for _, line := range strings.Split(page, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if fenced {
			continue
		}
		line = regexp.MustCompile("`[^`]*`").ReplaceAllString(line, "")
		for _, m := range mdLink.FindAllStringSubmatch(line, -1) {
			links = append(links, m[1])
		}
	}
	return links
}

// headingAnchors are the anchors GitHub gives a page's headings: lower
// case, punctuation dropped, spaces as hyphens, a repeat numbered.
func headingAnchors(page string) []string {
	var anchors []string
	seen := map[string]int{}
	fenced := false
	for _, line := range strings.Split(page, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
		}
		m := mdHeading.FindStringSubmatch(line)
		if fenced || m == nil {
			continue
		}
		var b strings.Builder
		for _, r := range strings.ToLower(m[1]) {
			switch {
			case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_':
				b.WriteRune(r)
			case r == ' ':
				b.WriteRune('-')
			}
		}
		a := b.String()
		if n := seen[a]; n > 0 {
			anchors = append(anchors, fmt.Sprintf("%s-%d", a, n))
		} else {
			anchors = append(anchors, a)
		}
		seen[a]++
	}
	return anchors
}
