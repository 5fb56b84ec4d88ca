package domain

// orgName is what an org may be called: it becomes a path segment
// (/orgs/<name>/), a file name and a PostgreSQL database name, so only
// lowercase letters, digits and single hyphens, starting with a letter.
var orgName = LazyRegexp(`^[a-z][a-z0-9]*(-[a-z0-9]+)*$`)

// MaxOrgName bounds an org's name.
const MaxOrgName = 40

// ValidateOrgName checks a name given to `orgs create`, --org or the
// /orgs/<name>/ route.
func ValidateOrgName(name string) error {
	if name == "" {
		return Required("org")
	}
	if len(name) > MaxOrgName || !orgName().MatchString(name) {
		return Invalid("org", "%q is not an org name: lowercase letters, digits and single hyphens, starting with a letter, at most %d characters (e.g. acme or north-lab)", name, MaxOrgName)
	}
	return nil
}
