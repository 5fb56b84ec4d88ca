package store

import (
	"strings"

	"gorm.io/gorm/schema"
)

// tableNamer is GORM's default naming with two shortcuts: a type named
// …Row, which every table's row type is, gets its plural by adding "s" to
// the snake-case name, exactly what the English plural rules give for
// "row"; an anonymous struct, which queries scan into, gets no name, as
// from GORM. GORM asks for a table name for every type it scans into, so
// without them a cold start's first call would compile those rules,
// about a hundred regular expressions (store/inflection).
// TestTableNamerAsGORM holds it to GORM's default.
type tableNamer struct{ schema.NamingStrategy }

func (n tableNamer) TableName(name string) string {
	if name == "" {
		return n.TablePrefix
	}
	if strings.HasSuffix(name, "Row") {
		return schema.NamingStrategy{TablePrefix: n.TablePrefix, SingularTable: true}.TableName(name) + "s"
	}
	return n.NamingStrategy.TableName(name)
}
