package skill

import (
	"debug/elf"
	"fmt"
	"os"
	"path/filepath"
	"slices"
)

// libFile is a shared library: where the image keeps it and the host file
// it is copied from (links resolved).
type libFile struct{ path, src string }

// libResolver finds the shared libraries ELF objects load, in the host's
// standard library directories, the way the dynamic loader would without
// its cache: first match of the right machine and class wins.
type libResolver struct {
	search []string
	found  map[string]libFile // "<machine>/<class>/<soname>" → file
	used   map[string]bool    // directories libraries were found in
}

func newLibResolver() *libResolver {
	var search []string
	for _, pat := range []string{"/lib/*-linux-gnu*", "/usr/lib/*-linux-gnu*", "/lib64", "/usr/lib64", "/lib", "/usr/lib"} {
		m, _ := filepath.Glob(pat)
		for _, d := range m {
			if st, err := os.Stat(d); err == nil && st.IsDir() {
				search = append(search, d)
			}
		}
	}
	return &libResolver{search: search, found: map[string]libFile{}, used: map[string]bool{}}
}

// needs resolves obj's libraries and theirs, failing on the first one the
// host lacks.
func (r *libResolver) needs(obj string) ([]libFile, error) {
	return r.closure([]string{obj})
}

// closure is every library the objects load, directly or not, plus the
// program interpreter they name (the dynamic loader itself).
func (r *libResolver) closure(objects []string) ([]libFile, error) {
	seen := map[string]bool{}
	var out []libFile
	queue := slices.Clone(objects)
	for len(queue) > 0 {
		obj := queue[0]
		queue = queue[1:]
		deps, err := r.direct(obj)
		if err != nil {
			return nil, err
		}
		for _, d := range deps {
			if seen[d.path] {
				continue
			}
			seen[d.path] = true
			out = append(out, d)
			queue = append(queue, d.src)
		}
	}
	return out, nil
}

// direct resolves one object's own needs.
func (r *libResolver) direct(obj string) ([]libFile, error) {
	f, err := elf.Open(obj)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", obj, err)
	}
	defer f.Close()
	names, err := f.ImportedLibraries()
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", obj, err)
	}
	var out []libFile
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			b := make([]byte, p.Filesz)
			if _, err := p.ReadAt(b, 0); err == nil {
				interp := string(b[:max(0, slices.Index(b, 0))])
				src, err := filepath.EvalSymlinks(interp)
				if err != nil {
					return nil, fmt.Errorf("%s: interpreter %s: %w", obj, interp, err)
				}
				out = append(out, libFile{path: interp, src: src})
			}
		}
	}
	for _, name := range names {
		lib, err := r.find(name, f.Machine, f.Class)
		if err != nil {
			return nil, fmt.Errorf("%s needs %s: %w", obj, name, err)
		}
		out = append(out, lib)
	}
	return out, nil
}

func (r *libResolver) find(name string, m elf.Machine, c elf.Class) (libFile, error) {
	key := fmt.Sprintf("%d/%d/%s", m, c, name)
	if lib, ok := r.found[key]; ok {
		return lib, nil
	}
	for _, dir := range r.search {
		p := filepath.Join(dir, name)
		src, err := filepath.EvalSymlinks(p)
		if err != nil {
			continue
		}
		if f, err := elf.Open(src); err == nil {
			ok := f.Machine == m && f.Class == c
			f.Close()
			if ok {
				lib := libFile{path: p, src: src}
				r.found[key], r.used[dir] = lib, true
				return lib, nil
			}
		}
	}
	return libFile{}, fmt.Errorf("not found in %v", r.search)
}

// dirs are the directories libraries were found in, in search order.
func (r *libResolver) dirs() []string {
	var out []string
	for _, d := range r.search {
		if r.used[d] {
			out = append(out, d)
		}
	}
	return out
}
