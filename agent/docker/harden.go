package docker

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/mount"
	"github.com/docker/go-units"

	"github.com/helixml/helix-org/domain"
)

// Limits are the resource caps and identity of a container.
type Limits struct {
	// Memory caps RAM in bytes; swap is capped to the same, so none is used.
	Memory int64
	// NanoCPUs caps CPU time: 1e9 is one core.
	NanoCPUs int64
	// Pids caps processes and threads, which stops fork bombs.
	Pids int64
	// TmpBytes sizes the tmpfs at /tmp.
	TmpBytes int64
	// User is uid:gid inside the container; never root.
	User string
	// OCIRuntime is an alternative runtime (e.g. runsc for gVisor); empty
	// means the daemon's default.
	OCIRuntime string
}

// ParseLimits reads limits as operators write them: memory and tmp like
// "512m", cpus like "1.5".
func ParseLimits(memory, cpus string, pids int64, tmp, user, ociRuntime string) (Limits, error) {
	l := Limits{Pids: pids, User: user, OCIRuntime: ociRuntime}
	var err error
	if l.Memory, err = units.RAMInBytes(memory); err != nil || l.Memory <= 0 {
		return Limits{}, domain.Invalid("memory", "%q is not a size such as 512m", memory)
	}
	if l.TmpBytes, err = units.RAMInBytes(tmp); err != nil || l.TmpBytes <= 0 {
		return Limits{}, domain.Invalid("tmp", "%q is not a size such as 64m", tmp)
	}
	c, err := strconv.ParseFloat(cpus, 64)
	if err != nil || c <= 0 {
		return Limits{}, domain.Invalid("cpus", "%q is not a positive number of CPUs such as 1 or 0.5", cpus)
	}
	l.NanoCPUs = int64(c * 1e9)
	if l.Pids <= 0 {
		return Limits{}, domain.Invalid("pids", "must be positive, got %d", pids)
	}
	if err := checkUser(user); err != nil {
		return Limits{}, err
	}
	return l, nil
}

// checkUser refuses root: every container runs as an unprivileged uid.
func checkUser(user string) error {
	uid, _, _ := strings.Cut(user, ":")
	if n, err := strconv.Atoi(uid); err != nil || n <= 0 {
		return domain.Invalid("user", "%q must be a numeric non-root uid[:gid] such as 65534:65534", user)
	}
	return nil
}

// HostConfig is the hardened host side of every container: all
// capabilities dropped, no-new-privileges, read-only root with a
// size-capped /tmp, a private IPC namespace, an init process to reap
// zombies and forward signals, and the resource caps.
func (l Limits) HostConfig(mounts []mount.Mount) *container.HostConfig {
	pids := l.Pids
	return &container.HostConfig{
		CapDrop:        []string{"ALL"},
		SecurityOpt:    []string{"no-new-privileges:true"},
		ReadonlyRootfs: true,
		Tmpfs:          map[string]string{"/tmp": fmt.Sprintf("rw,nosuid,nodev,size=%d", l.TmpBytes)},
		IpcMode:        container.IPCModePrivate,
		Init:           ptr(true),
		Runtime:        l.OCIRuntime,
		Mounts:         mounts,
		LogConfig:      container.LogConfig{Type: "json-file", Config: map[string]string{"max-size": "1m", "max-file": "1"}},
		Resources: container.Resources{
			Memory: l.Memory, MemorySwap: l.Memory, NanoCPUs: l.NanoCPUs, PidsLimit: &pids,
		},
	}
}

func ptr[T any](v T) *T { return &v }

// DockerSocket is where the daemon's socket usually lives; it is never
// mounted into a container.
const DockerSocket = "/var/run/docker.sock"

// checkMount refuses a bind-mount source that is, contains or is inside
// a forbidden path (the database, its key file, the orgs' directory, the
// Docker socket).
func checkMount(src string, forbidden []string) error {
	abs, err := filepath.Abs(src)
	if err != nil {
		return fmt.Errorf("mount %s: %w", src, err)
	}
	for _, f := range append([]string{DockerSocket}, forbidden...) {
		if f == "" {
			continue
		}
		fa, err := filepath.Abs(f)
		if err != nil {
			continue
		}
		if rel, err := filepath.Rel(abs, fa); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
			return fmt.Errorf("refusing to mount %s into a container: it contains %s", abs, fa)
		}
		// A forbidden directory (the other orgs' databases) forbids what
		// is in it too.
		if rel, err := filepath.Rel(fa, abs); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
			return fmt.Errorf("refusing to mount %s into a container: it is inside %s", abs, fa)
		}
	}
	return nil
}

// chownTree hands a workspace to the container's user. Only root can,
// and only root needs to: otherwise the container runs as the server's
// own uid, which already owns it.
func chownTree(dir, user string) error {
	if os.Geteuid() != 0 {
		return nil
	}
	u, g, _ := strings.Cut(user, ":")
	uid, err := strconv.Atoi(u)
	if err != nil {
		return fmt.Errorf("user %q: %w", user, err)
	}
	gid := uid
	if g != "" {
		if gid, err = strconv.Atoi(g); err != nil {
			return fmt.Errorf("user %q: %w", user, err)
		}
	}
	return filepath.WalkDir(dir, func(p string, _ os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, uid, gid)
	})
}

// DefaultUser is the uid:gid containers run as: nobody when the server is
// root (it then hands the workspace over), else the server's own ids so
// the workspace stays writable without chown.
func DefaultUser() string {
	if os.Geteuid() == 0 {
		return "65534:65534"
	}
	return fmt.Sprintf("%d:%d", os.Getuid(), os.Getgid())
}
