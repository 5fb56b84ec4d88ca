package storetest

import (
	"bufio"
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/helixml/helix-org/store"
	// The pgx driver GORM's postgres driver uses, here as database/sql's
	// "pgx" for the admin connection.
	_ "github.com/jackc/pgx/v5/stdlib"
)

// The throwaway PostgreSQL cluster: one per test binary, started on first
// use from Debian's packages, listening only on a unix socket in its temp
// dir, and stopped when the test binary exits (the postmaster gets a
// parent-death signal). Each test gets a database of its own.

// UsePostgres reports whether tests open their stores on PostgreSQL
// (HELIX_ORG_TEST_DB=postgres) rather than SQLite.
func UsePostgres() bool { return os.Getenv("HELIX_ORG_TEST_DB") == "postgres" }

var cluster struct {
	once  sync.Once
	dir   string // socket directory
	err   error
	admin *sql.DB
	n     atomic.Int64
}

// templateDB is migrated once per cluster; each test's database is a copy
// of it, which is much faster than migrating every one.
const templateDB = "helix_template"

// PostgresURL creates a migrated, empty database in the test binary's cluster
// (starting it on first use) and returns its URL; the database is dropped
// at the test's cleanup.
func PostgresURL(t testing.TB) string {
	t.Helper()
	return createDB(t, templateDB)
}

// createDB creates a database of t's own from template in the cluster,
// dropped at t's cleanup, and returns its URL.
func createDB(t testing.TB, template string) string {
	t.Helper()
	cluster.once.Do(func() { cluster.err = startCluster() })
	if cluster.err != nil {
		t.Fatalf("postgres test cluster: %v", cluster.err)
	}
	name := fmt.Sprintf("t%d", cluster.n.Add(1))
	if _, err := cluster.admin.ExecContext(t.Context(), "CREATE DATABASE "+name+" TEMPLATE "+template+" STRATEGY = FILE_COPY"); err != nil {
		t.Fatalf("create database %s: %v", name, err)
	}
	t.Cleanup(func() {
		// WITH (FORCE): a server a test left running may still hold a
		// connection; the database goes regardless.
		if _, err := cluster.admin.ExecContext(context.Background(), "DROP DATABASE "+name+" WITH (FORCE)"); err != nil {
			t.Errorf("drop database %s: %v", name, err)
		}
	})
	return clusterURL(name)
}

func clusterURL(db string) string {
	return "postgres:///" + db + "?host=" + cluster.dir + "&user=postgres&sslmode=disable"
}

// startCluster runs initdb and the postmaster as the user postgres when
// this process is root (PostgreSQL refuses to run as root), as this user
// otherwise.
func startCluster() error {
	bin, err := postgresBin()
	if err != nil {
		return err
	}
	base := filepath.Join(clusterParent(), "helix-org-pgtest")
	if err := os.MkdirAll(base, 0o755); err != nil {
		return err
	}
	removeStale(base)
	dir, err := os.MkdirTemp(base, strconv.Itoa(os.Getpid())+"-")
	if err != nil {
		return err
	}
	cred, err := credential()
	if err != nil {
		return err
	}
	if cred != nil {
		if err := os.Chown(dir, int(cred.Uid), int(cred.Gid)); err != nil {
			return err
		}
	}
	data := filepath.Join(dir, "data")
	initdb := exec.Command(filepath.Join(bin, "initdb"), "-D", data, "-U", "postgres", "--auth=trust", "--no-sync", "-E", "UTF8", "--locale=C")
	initdb.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	if out, err := initdb.CombinedOutput(); err != nil {
		return fmt.Errorf("initdb: %w: %s", err, out)
	}
	// Durability is the SQLite tests' business; these want speed. No
	// autovacuum either: a worker on the template database makes each
	// CREATE DATABASE from it wait, 100 ms at a time, for it to leave.
	pg := exec.Command(filepath.Join(bin, "postgres"), "-D", data, "-k", dir, "-c", "listen_addresses=",
		"-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off", "-c", "autovacuum=off",
		"-c", "max_connections=400", "-c", "shared_buffers=32MB")
	pg.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Pdeathsig: syscall.SIGQUIT, Setpgid: true}
	logf, err := os.Create(filepath.Join(dir, "postgres.log"))
	if err != nil {
		return err
	}
	pg.Stdout, pg.Stderr = logf, logf
	if err := pg.Start(); err != nil {
		return fmt.Errorf("start postgres: %w", err)
	}
	cluster.dir = dir
	admin, err := sql.Open("pgx", clusterURL("postgres"))
	if err != nil {
		return err
	}
	admin.SetMaxOpenConns(2)
	// Ready is when it answers; a dead postmaster ends the wait at once.
	exited := make(chan error, 1)
	go func() { exited <- pg.Wait() }()
	deadline := time.Now().Add(60 * time.Second)
	for {
		err := admin.Ping()
		if err == nil {
			break
		}
		select {
		case werr := <-exited:
			log, _ := os.ReadFile(filepath.Join(dir, "postgres.log"))
			return fmt.Errorf("postgres exited (%v): %s", werr, log)
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("postgres did not answer within a minute: %w", err)
		}
	}
	cluster.admin = admin
	return migrateTemplate(dir)
}

// migrateTemplate creates the template database and runs the store's
// migrations on it; its connections are closed after, as a template
// needs.
func migrateTemplate(dir string) error {
	if _, err := cluster.admin.Exec("CREATE DATABASE " + templateDB); err != nil {
		return err
	}
	st, err := store.Open(context.Background(), clusterURL(templateDB), store.Options{KeyFile: filepath.Join(dir, "template.key"), NoListen: true})
	if err != nil {
		return fmt.Errorf("migrate the template database: %w", err)
	}
	return st.Close()
}

// clusterParent is where clusters live: /dev/shm when this machine has
// it with room to spare, so that the 8 MB each CREATE DATABASE copies
// never waits for the disk behind the durability tests' fsyncs (it took
// 20–400 ms on /tmp); the temp dir otherwise (a container's 64 MB
// /dev/shm would fill).
func clusterParent() string {
	const room = 2 << 30
	var fs syscall.Statfs_t
	if syscall.Access("/dev/shm", 2) == nil && syscall.Statfs("/dev/shm", &fs) == nil && fs.Bavail*uint64(fs.Bsize) >= room {
		return "/dev/shm"
	}
	return os.TempDir()
}

// postgresBin is the newest installed PostgreSQL's bin directory
// (Debian: /usr/lib/postgresql/<major>/bin).
func postgresBin() (string, error) {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return majorOf(dirs[i]) < majorOf(dirs[j]) })
	if len(dirs) == 0 {
		return "", fmt.Errorf("no PostgreSQL under /usr/lib/postgresql: install Debian's postgresql package")
	}
	return dirs[len(dirs)-1], nil
}

func majorOf(bin string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(bin)))
	return n
}

// credential is the user postgres when running as root, nil otherwise.
func credential() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, fmt.Errorf("running as root, the cluster runs as user postgres: %w", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

// removeStale deletes the clusters of test binaries that have exited
// (their postmaster went with them; their files stay behind).
func removeStale(base string) {
	entries, _ := os.ReadDir(base)
	for _, e := range entries {
		pid, ok := pidOf(e.Name())
		if !ok || pid == os.Getpid() || alive(pid) {
			continue
		}
		dir := filepath.Join(base, e.Name())
		if postmasterAlive(filepath.Join(dir, "data", "postmaster.pid")) {
			continue
		}
		os.RemoveAll(dir)
	}
}

// pidOf reads the process id a directory name starts with ("<pid>-…").
func pidOf(name string) (int, bool) {
	pidText, _, _ := strings.Cut(name, "-")
	pid, err := strconv.Atoi(pidText)
	return pid, err == nil
}

func alive(pid int) bool { return syscall.Kill(pid, 0) == nil }

// postmasterAlive reads a data directory's postmaster.pid.
func postmasterAlive(pidFile string) bool {
	f, err := os.Open(pidFile)
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	if !sc.Scan() {
		return false
	}
	pid, err := strconv.Atoi(strings.TrimSpace(sc.Text()))
	return err == nil && alive(pid)
}
