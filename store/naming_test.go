package store

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"

	"gorm.io/gorm/schema"
)

// Every type the package declares is named by tableNamer as GORM's
// default naming would, so no table is renamed under a database.
func TestTableNamerAsGORM(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	gorms, ours := schema.NamingStrategy{IdentifierMaxLength: 64}, tableNamer{schema.NamingStrategy{IdentifierMaxLength: 64}}
	rows := 0
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.TYPE {
				continue
			}
			for _, sp := range g.Specs {
				name := sp.(*ast.TypeSpec).Name.Name
				if strings.HasSuffix(name, "Row") {
					rows++
				}
				if got, want := ours.TableName(name), gorms.TableName(name); got != want {
					t.Errorf("TableName(%q) = %q, GORM's default names it %q", name, got, want)
				}
			}
		}
	}
	if rows < 50 {
		t.Fatalf("found %d …Row types, want the package's fifty-odd", rows)
	}
	for name, want := range map[string]string{"activationRow": "activation_rows", "oauthClientRow": "oauth_client_rows", "schemaMigration": "schema_migrations", "": ""} {
		if got := ours.TableName(name); got != want || got != gorms.TableName(name) {
			t.Errorf("TableName(%q) = %q, want %q as GORM's default gives", name, got, want)
		}
	}
}
