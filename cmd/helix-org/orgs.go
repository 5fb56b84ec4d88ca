package main

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/spf13/cobra"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/server"
	"github.com/helixml/helix-org/store"
)

// An org is a database. The default org is --db itself and is served at
// today's routes; another org is a SQLite file beside it,
// <dir>/orgs/<name>.db, or on PostgreSQL a database of its own in the
// same cluster, <db>_<name> — a database rather than a schema so that
// the store's write lock and its NOTIFY channel, which PostgreSQL scopes
// to a database, are the org's own too.

// orgKey carries --org, the org an operator command acts on, from the
// root command to where the database is opened.
type orgKey struct{}

func withOrg(ctx context.Context, name string) context.Context {
	return context.WithValue(ctx, orgKey{}, name)
}

// orgOf is the org --org chose, "" for the default.
func orgOf(ctx context.Context) string {
	name, _ := ctx.Value(orgKey{}).(string)
	return name
}

// orgURL is the base URL of the chosen org on the server at base.
func orgURL(ctx context.Context, base string) string {
	return strings.TrimRight(base, "/") + server.OrgPrefix(orgOf(ctx))
}

// checkBaseURL refuses a --url (or HELIX_ORG_URL) that is not
// http(s)://host: without a scheme Go reads 127.0.0.1:8080 as a path and
// localhost:8080 as scheme localhost, and what failed later would be
// told as something else.
func checkBaseURL(raw string) error {
	u, err := url.Parse(raw)
	if err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" {
		return nil
	}
	if !strings.Contains(raw, "://") {
		return fmt.Errorf("--url %s has no scheme: use http://%s", raw, raw)
	}
	return fmt.Errorf("--url %s: give an http:// or https:// URL, e.g. http://127.0.0.1:8080", raw)
}

// forOrg is f pointed at the named org's database and key file.
func (f dbFlags) forOrg(name string) (dbFlags, error) {
	if name == "" {
		return f, nil
	}
	if err := domain.ValidateOrgName(name); err != nil {
		return f, err
	}
	key := f.KeyFile
	if store.IsPostgres(f.DB) {
		u, err := url.Parse(f.DB)
		if err != nil {
			return f, fmt.Errorf("--db: %w", err)
		}
		base := strings.TrimPrefix(u.Path, "/")
		if base == "" {
			base = "helix_org"
		}
		u.Path = "/" + pgOrgDB(base, name)
		f.DB = u.String()
		if key == "" {
			key = "helix-org.key"
		}
	} else {
		f.DB = filepath.Join(filepath.Dir(f.DB), "orgs", name+".db")
	}
	if key != "" {
		// Each org's secrets under a key of its own.
		f.KeyFile = filepath.Join(filepath.Dir(key), "orgs", name+".key")
	}
	return f, nil
}

// pgOrgDB is the PostgreSQL database of an org: names may hold no hyphen
// unquoted, and org names hold no underscore, so none collide.
func pgOrgDB(base, name string) string {
	return base + "_" + strings.ReplaceAll(name, "-", "_")
}

// orgEnvs is the directory of an org's workers' environments: worker
// ids repeat across orgs, their directories must not.
func orgEnvs(envs, name string) string {
	if name == "" {
		return envs
	}
	return filepath.Join(envs, "orgs", name)
}

// sharedFiles are what no container of any org may have mounted: the
// default org's database and key, and the directories holding every
// other org's (the docker runtime's Forbidden).
func sharedFiles(def *store.Store) []string {
	key := def.KeyFile()
	out := []string{key, filepath.Join(filepath.Dir(key), "orgs")}
	if p := def.Path(); !store.IsPostgres(p) && !def.Shared() {
		out = append(out, p, p+"-wal", p+"-shm", filepath.Join(filepath.Dir(p), "orgs"))
	}
	return out
}

// opener opens an org's database on the first request for it and starts
// its stack; an org with no database is server.ErrNoOrg.
func (o orgServe) opener(ctx context.Context, def *store.Store) func(name string) (*server.Org, error) {
	flags := o.cfg.dbFlags
	if flags.DB == "" {
		flags.DB = def.Path()
	}
	return func(name string) (*server.Org, error) {
		f, err := flags.forOrg(name)
		if err != nil {
			return nil, err
		}
		f.Init = false
		st, err := f.open(ctx)
		if err != nil {
			if errors.Is(err, errNoDatabase) {
				return nil, server.ErrNoOrg
			}
			return nil, err
		}
		if at, archived, err := st.Archived(ctx); err != nil || archived {
			st.Close()
			if err != nil {
				return nil, err
			}
			return nil, &server.ArchivedError{Since: at}
		}
		envs := orgEnvs(o.cfg.EnvsDir, name)
		if err := os.MkdirAll(envs, 0o700); err != nil {
			st.Close()
			return nil, fmt.Errorf("create org %s's envs dir: %w", name, err)
		}
		// The org's loops end with the server, or when it is archived.
		orgCtx, cancel := context.WithCancel(ctx)
		org, err := o.startOrg(orgCtx, name, st, envs)
		if err != nil {
			cancel()
			st.Close()
			return nil, err
		}
		closeGateway, stop := org.Close, org.Stop
		org.Close = func() { closeGateway(); st.Close() }
		org.Stop = func(grace context.Context) error { cancel(); return stop(grace) }
		org.Archived, org.Changed = st.Archived, st.SettingsChanged
		o.log.Info("serving org", "org", name, "db", st.Path())
		// serve refuses to start when the default org's runs cannot reach
		// Helix; an org opened later is served anyway (nobody is at the
		// terminal, and its people can still work), and the log says why
		// its runs will fail and which keys to fix. The check asks Helix
		// (up to 30 s when it does not answer), so the request that opened
		// the org does not wait for it.
		go func() {
			if err := checkHelix(ctx, st); err != nil {
				// The error's advice names config set without --org; fix says it.
				o.log.Warn("org's runs will fail until its Helix settings are fixed", "org", name, "err", err, "fix", "helix-org --org "+name+" config set <key> <value>")
			}
		}()
		return org, nil
	}
}

func newOrgsCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "orgs",
		Short: "Several orgs on one server: each a database, served under /orgs/<name>/",
	}
	cmd.AddCommand(newOrgsCreateCmd(), newOrgsListCmd(), newOrgsArchiveCmd(), newOrgsRestoreCmd())
	return cmd
}

func newOrgsCreateCmd() *cobra.Command {
	var f dbFlags
	cmd := &cobra.Command{
		Use:   "create <name>",
		Short: "Create an org: a database beside --db, served at once under /orgs/<name>/ by a running server",
		Long: `create makes a new, empty org: on SQLite the file orgs/<name>.db beside --db,
on PostgreSQL the database <db>_<name> in the same cluster. A running server
serves it from its first request at /orgs/<name>/; bootstrap its owner with
helix-org --org <name> bootstrap. A name is lowercase letters, digits and
single hyphens, starting with a letter.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return createOrg(cmd, f, args[0])
		},
	}
	f.bind(cmd.Flags())
	return cmd
}

func createOrg(cmd *cobra.Command, f dbFlags, name string) error {
	ctx := cmd.Context()
	of, err := f.forOrg(name)
	if err != nil {
		return err
	}
	if store.IsPostgres(f.DB) {
		err = createPostgresDB(ctx, f.DB, of.DB)
	} else {
		err = createSQLiteFile(of.DB)
	}
	if err == nil && of.KeyFile != "" {
		// Its key is made on first use, beside the default org's.
		err = os.MkdirAll(filepath.Dir(of.KeyFile), 0o700)
	}
	if err != nil {
		return fmt.Errorf("create org %s: %w", name, err)
	}
	of.Init = true
	st, err := of.open(withOrg(ctx, ""))
	if err != nil {
		return fmt.Errorf("create org %s: %w", name, err)
	}
	defer st.Close()
	fmt.Fprintf(cmd.OutOrStdout(), "created org %s (%s), served at %s/; next: helix-org --org %s bootstrap\n", name, st.Path(), server.OrgPrefix(name), name)
	return nil
}

// createSQLiteFile makes the org's directory; the store creates the file.
func createSQLiteFile(path string) error {
	if _, err := os.Stat(path); err == nil {
		return fmt.Errorf("it already exists at %s", path)
	}
	return os.MkdirAll(filepath.Dir(path), 0o700)
}

// createPostgresDB creates the org's database through the default one.
func createPostgresDB(ctx context.Context, defURL, orgURL string) error {
	u, err := url.Parse(orgURL)
	if err != nil {
		return err
	}
	conn, err := pgx.Connect(ctx, defURL)
	if err != nil {
		return fmt.Errorf("connect to the default database: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	db := strings.TrimPrefix(u.Path, "/")
	_, err = conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{db}.Sanitize())
	if pe := (*pgconn.PgError)(nil); errors.As(err, &pe) && pe.Code == "42P04" {
		return fmt.Errorf("it already exists (PostgreSQL database %s)", db)
	}
	return err
}

func newOrgsListCmd() *cobra.Command {
	var f dbFlags
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the orgs beside --db, the default first",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			names, err := listOrgs(cmd.Context(), f)
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "ORG\tSERVED AT\tSTATE")
			fmt.Fprintln(tw, "(default)\t/\tserved")
			for _, n := range names {
				state, err := orgState(cmd.Context(), f, n)
				if err != nil {
					return err
				}
				fmt.Fprintf(tw, "%s\t%s/\t%s\n", n, server.OrgPrefix(n), state)
			}
			return tw.Flush()
		},
	}
	f.bind(cmd.Flags())
	return cmd
}

// orgState is what `orgs list` says of an org: served, or archived since
// when.
func orgState(ctx context.Context, f dbFlags, name string) (string, error) {
	var state string
	err := f.with(withOrg(ctx, name), func(st *store.Store) error {
		at, archived, err := st.Archived(ctx)
		state = "served"
		if archived {
			state = "archived " + at.UTC().Format(time.RFC3339)
		}
		return err
	})
	if err != nil {
		return "", fmt.Errorf("org %s: %w", name, err)
	}
	return state, nil
}

func newOrgsArchiveCmd() *cobra.Command {
	var f dbFlags
	cmd := &cobra.Command{
		Use:   "archive <name>",
		Short: "Archive an org: a running server stops its runs and serves nothing of it; its data is kept",
		Long: `archive takes an org out of service without deleting anything. A running
server notices within seconds and stops it as a shutdown does: no run
starts, runs in flight get --shutdown-grace to finish (and are
interrupted after it, their triggers waiting with those not yet run),
its dispatcher, schedules, deliveries and transports stop, and from then
on requests under /orgs/<name>/ are answered 410 Gone. Nothing of it
starts again until helix-org orgs restore <name>. Its database and key
stay where they are, so backup, export and config --org <name> still
work. The default org cannot be archived.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := args[0]
			return f.with(withOrg(cmd.Context(), name), func(st *store.Store) error {
				at, err := st.Archive(cmd.Context())
				if err != nil {
					return fmt.Errorf("org %s: %w", name, err)
				}
				fmt.Fprintf(cmd.OutOrStdout(), "archived org %s at %s: a running server lets its runs finish (up to its --shutdown-grace), then stops it and answers 410 at %s/; its data stays in %s; helix-org orgs restore %s serves it again\n",
					name, at.Format(time.RFC3339), server.OrgPrefix(name), st.Path(), name)
				return nil
			})
		},
	}
	f.bind(cmd.Flags())
	return cmd
}

func newOrgsRestoreCmd() *cobra.Command {
	var f dbFlags
	cmd := &cobra.Command{
		Use:   "restore <name>",
		Short: "Restore an archived org: a running server serves it again from its next request",
		Long: `restore clears an org's archive mark. A running server serves it again
from the next request under /orgs/<name>/, and its dispatcher picks up the
triggers that waited while it was archived.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := args[0]
			return f.with(withOrg(cmd.Context(), name), func(st *store.Store) error {
				if err := st.Restore(cmd.Context()); err != nil {
					return fmt.Errorf("org %s: %w", name, err)
				}
				fmt.Fprintf(cmd.OutOrStdout(), "restored org %s: a running server serves it again at %s/ from its next request\n", name, server.OrgPrefix(name))
				return nil
			})
		},
	}
	f.bind(cmd.Flags())
	return cmd
}

// listOrgs names the orgs created beside f's database.
func listOrgs(ctx context.Context, f dbFlags) ([]string, error) {
	if !store.IsPostgres(f.DB) {
		files, err := filepath.Glob(filepath.Join(filepath.Dir(f.DB), "orgs", "*.db"))
		if err != nil {
			return nil, err
		}
		var names []string
		for _, file := range files {
			if n := strings.TrimSuffix(filepath.Base(file), ".db"); domain.ValidateOrgName(n) == nil {
				names = append(names, n)
			}
		}
		return names, nil
	}
	return listPostgresOrgs(ctx, f.DB)
}

func listPostgresOrgs(ctx context.Context, defURL string) ([]string, error) {
	u, err := url.Parse(defURL)
	if err != nil {
		return nil, err
	}
	conn, err := pgx.Connect(ctx, defURL)
	if err != nil {
		return nil, fmt.Errorf("connect to the default database: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	prefix := strings.TrimPrefix(u.Path, "/") + "_"
	rows, err := conn.Query(ctx, "SELECT datname FROM pg_database WHERE starts_with(datname, $1)", prefix)
	if err != nil {
		return nil, err
	}
	dbs, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, err
	}
	var names []string
	for _, db := range dbs {
		if n := strings.ReplaceAll(strings.TrimPrefix(db, prefix), "_", "-"); domain.ValidateOrgName(n) == nil {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return names, nil
}

// errNoDatabase is open's error for a database that is not there.
var errNoDatabase = errors.New("no database")

// missingPostgresDB reports PostgreSQL's "database does not exist"
// (invalid_catalog_name); the connect error reaches here as text.
func missingPostgresDB(err error) bool {
	if pe := (*pgconn.PgError)(nil); errors.As(err, &pe) {
		return pe.Code == "3D000"
	}
	return err != nil && strings.Contains(err.Error(), "(SQLSTATE 3D000)")
}
