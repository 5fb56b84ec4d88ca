package skill

import (
	"bufio"
	"embed"
	"encoding/json"
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"

	"github.com/helixml/helix-org/agent/docker"
	"github.com/helixml/helix-org/domain"
)

//go:embed templates
var templateFS embed.FS

// Template names.
const (
	TemplateShell  = domain.SkillTemplateShell
	TemplatePython = domain.SkillTemplatePython
)

// Templates lists the templates create_skill accepts.
var Templates = domain.SkillTemplates

// BaseAlias is the image name an agent-written Dockerfile uses for the
// shell template's base (busybox and the shim, FROM scratch); the factory
// replaces it with this server's actual base image, as it does PythonAlias.
const BaseAlias = "skill-base"

// Limits on what an agent may hand in.
const (
	maxFiles        = 64
	maxContextBytes = 8 << 20
	maxDescription  = 1024
	maxSchemaBytes  = 64 << 10
)

// handlerFile is where each template expects the handler code.
var handlerFile = map[string]string{TemplateShell: "handler.sh", TemplatePython: "handler.py"}

// validate checks a spec before anything is built and returns its build
// context: the template's files, the handler and the caller's files.
func validate(spec domain.SkillSpec) ([]docker.File, error) {
	if err := domain.ValidateSkillName(spec.Name); err != nil {
		return nil, err
	}
	if strings.TrimSpace(spec.Description) == "" {
		return nil, domain.Required("description")
	}
	if len(spec.Description) > maxDescription {
		return nil, domain.Invalid("description", "is %d bytes; the limit is %d", len(spec.Description), maxDescription)
	}
	if _, err := InputSchema(spec.InputSchema); err != nil {
		return nil, err
	}
	if err := checkExamplesSpec(spec.Examples); err != nil {
		return nil, err
	}
	files := map[string]string{}
	switch {
	case spec.Template != "":
		if !slices.Contains(Templates, spec.Template) {
			return nil, domain.EnumError("template", "template", spec.Template, Templates)
		}
		if strings.TrimSpace(spec.Handler) == "" {
			return nil, domain.Invalid("handler", "is required with a template: the %s template runs it as %s", spec.Template, handlerFile[spec.Template])
		}
		if err := addTemplate(files, spec.Template); err != nil {
			return nil, err
		}
		files[handlerFile[spec.Template]] = spec.Handler
	case spec.Handler != "":
		return nil, domain.Invalid("handler", "needs a template (one of %s); without one, give files with a Dockerfile", strings.Join(Templates, ", "))
	case spec.Files["Dockerfile"] == "":
		return nil, domain.Invalid("files", "give a template and handler, or files including a Dockerfile")
	}
	for name, data := range spec.Files {
		if err := checkName(name); err != nil {
			return nil, err
		}
		files[name] = data
	}
	if err := checkDockerfile(files["Dockerfile"]); err != nil {
		return nil, err
	}
	return contextOf(files)
}

// InputSchema parses a skill's input schema; empty means any object. MCP
// tool inputs are always objects.
func InputSchema(raw json.RawMessage) (json.RawMessage, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return json.RawMessage(`{"type":"object"}`), nil
	}
	if len(raw) > maxSchemaBytes {
		return nil, domain.Invalid("inputSchema", "is %d bytes; the limit is %d", len(raw), maxSchemaBytes)
	}
	var s map[string]any
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, domain.Invalid("inputSchema", "must be a JSON Schema object: %v", err)
	}
	if s["type"] != "object" {
		return nil, domain.Invalid("inputSchema", `must have "type": "object" (a tool's input is an object)`)
	}
	return raw, nil
}

func addTemplate(files map[string]string, name string) error {
	entries, err := templateFS.ReadDir("templates/" + name)
	if err != nil {
		return fmt.Errorf("template %s: %w", name, err)
	}
	for _, e := range entries {
		if e.Name() == "README.md" {
			continue
		}
		b, err := templateFS.ReadFile("templates/" + name + "/" + e.Name())
		if err != nil {
			return err
		}
		files[e.Name()] = string(b)
	}
	return nil
}

func checkName(name string) error {
	clean := path.Clean(name)
	if name == "" || clean != name || path.IsAbs(name) || clean == ".." || strings.HasPrefix(clean, "../") || strings.ContainsAny(name, "\\\x00") {
		return domain.Invalid("files", "%q is not a clean relative path", name)
	}
	return nil
}

var (
	syntaxDirective = domain.LazyRegexp(`(?i)^\s*#\s*syntax\s*=`)
	remoteSource    = domain.LazyRegexp(`(?i)^\s*ADD\s.*\b(https?|git)://`)
	gitSource       = domain.LazyRegexp(`(?i)^\s*ADD\s.*(\.git\b|git@)`)
)

// checkDockerfile refuses what would reach outside the build: a frontend
// fetched by `# syntax=`, and ADD of URLs or git repositories, which the
// daemon downloads itself whatever the build's network mode.
func checkDockerfile(df string) error {
	sc := bufio.NewScanner(strings.NewReader(df))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case syntaxDirective().MatchString(line):
			return domain.Invalid("files", "Dockerfile line %d: `# syntax=` directives are refused: builds use the built-in frontend and fetch nothing", n)
		case remoteSource().MatchString(line), gitSource().MatchString(line):
			return domain.Invalid("files", "Dockerfile line %d: ADD from a URL or git repository is refused: builds have no network; put the files in create_skill's files", n)
		}
	}
	return nil
}

func contextOf(files map[string]string) ([]docker.File, error) {
	if len(files) > maxFiles {
		return nil, domain.Invalid("files", "%d files; the limit is %d", len(files), maxFiles)
	}
	total := 0
	var out []docker.File
	for _, name := range slices.Sorted(maps.Keys(files)) {
		total += len(files[name])
		out = append(out, docker.File{Name: name, Mode: 0o644, Data: []byte(files[name])})
	}
	if total > maxContextBytes {
		return nil, domain.Invalid("files", "%d bytes in all; the limit is %d", total, maxContextBytes)
	}
	return out, nil
}

// baseAliases are the image names a Dockerfile may use for the factory's
// own base images.
var baseAliases = []string{BaseAlias, PythonAlias}

// baseImages lists the images a Dockerfile builds on (FROM, COPY --from)
// that are not its own stages, returns the Dockerfile with each base
// alias replaced by its image in bases (when given), and lists the
// aliases used.
func baseImages(df string, bases map[string]string) (string, []string, []string) {
	var images, stages, used []string
	var out []string
	sc := bufio.NewScanner(strings.NewReader(df))
	for sc.Scan() {
		line := sc.Text()
		f := strings.Fields(line)
		switch {
		case len(f) >= 2 && strings.EqualFold(f[0], "FROM"):
			i := 1
			for i < len(f)-1 && strings.HasPrefix(f[i], "--") {
				i++
			}
			if slices.Contains(baseAliases, f[i]) && !slices.Contains(stages, f[i]) {
				if !slices.Contains(used, f[i]) {
					used = append(used, f[i])
				}
				if img, ok := bases[f[i]]; ok {
					f[i] = img
					line = strings.Join(f, " ")
				}
			}
			if !slices.Contains(stages, f[i]) && !strings.EqualFold(f[i], "scratch") {
				images = append(images, f[i])
			}
			if len(f) >= i+3 && strings.EqualFold(f[i+1], "AS") {
				stages = append(stages, f[i+2])
			}
		case len(f) >= 2 && (strings.EqualFold(f[0], "COPY") || strings.EqualFold(f[0], "ADD")):
			for _, a := range f[1:] {
				if from, ok := strings.CutPrefix(a, "--from="); ok && !slices.Contains(stages, from) && !isNumber(from) {
					images = append(images, from)
				}
			}
		}
		out = append(out, line)
	}
	return strings.Join(out, "\n") + "\n", images, used
}

func isNumber(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return s != ""
}
