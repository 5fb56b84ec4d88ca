package agent

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/helixml/helix-org/domain"
)

// StopOrphans kills the process groups of agents that a crashed server
// left running — the activations it was told of, each with the process
// recorded when its agent started — and waits until they are gone or ctx
// ends. A group is killed only if it is still the agent's: its leader has
// the recorded start time, or (the leader gone) a member carries the
// activation's HELIX_ORG_ACTIVATION; a pid the kernel has reused is left
// alone. It reads /proc, so elsewhere than Linux it finds nothing. It
// returns how many groups it killed.
func StopOrphans(ctx context.Context, acts []domain.Activation) (int, error) {
	var errs []error
	killed := 0
	for _, a := range acts {
		// Never 0 or 1 (kill(2) would hit us or everything), never our own group.
		if a.Process == nil || a.Process.PGID <= 1 || a.Process.PGID == syscall.Getpgrp() {
			continue
		}
		ok, err := stopOrphan(ctx, a.ID, *a.Process)
		if err != nil {
			errs = append(errs, fmt.Errorf("stop the agent of activation %s (process group %d): %w", a.ID, a.Process.PGID, err))
		}
		if ok {
			killed++
		}
	}
	return killed, errors.Join(errs...)
}

func stopOrphan(ctx context.Context, activation string, p domain.AgentProcess) (bool, error) {
	members := groupMembers(p.PGID)
	if len(members) == 0 || !ownGroup(activation, p, members) {
		return false, nil
	}
	if err := syscall.Kill(-p.PGID, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return false, err
	}
	// SIGKILL is not instant: wait for the group to die, so the caller can
	// count on it being gone before the activation's triggers run again.
	for len(groupMembers(p.PGID)) > 0 {
		select {
		case <-ctx.Done():
			return true, fmt.Errorf("still alive after SIGKILL: %w", ctx.Err())
		case <-time.After(10 * time.Millisecond):
		}
	}
	return true, nil
}

// ownGroup reports whether the live group members are the agent's.
func ownGroup(activation string, p domain.AgentProcess, members []int) bool {
	if leader, ok := procStat(p.PGID); ok && p.StartTicks != 0 {
		return leader.startTicks == p.StartTicks
	}
	mark := []byte("HELIX_ORG_ACTIVATION=" + activation + "\x00")
	for _, pid := range members {
		env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
		if err == nil && (bytes.HasPrefix(env, mark) || bytes.Contains(env, append([]byte{0}, mark...))) {
			return true
		}
	}
	return false
}

// groupMembers lists the live (not zombie) processes of a process group.
func groupMembers(pgid int) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if st, ok := procStat(pid); ok && st.pgrp == pgid && st.state != 'Z' && st.state != 'X' {
			out = append(out, pid)
		}
	}
	return out
}

// stat is what we read of /proc/<pid>/stat.
type stat struct {
	state      byte
	pgrp       int
	startTicks uint64
}

// procStat reads a process's state, process group and start time (clock
// ticks after boot). ok is false when there is no such process.
func procStat(pid int) (stat, bool) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return stat{}, false
	}
	// The command name, field 2, is in parentheses and may hold spaces or
	// parentheses itself: the fields we want follow its last ')'.
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return stat{}, false
	}
	f := strings.Fields(string(data[i+1:]))
	if len(f) < 20 || len(f[0]) != 1 {
		return stat{}, false
	}
	pgrp, err1 := strconv.Atoi(f[2])                // field 5
	start, err2 := strconv.ParseUint(f[19], 10, 64) // field 22
	if err1 != nil || err2 != nil {
		return stat{}, false
	}
	return stat{state: f[0][0], pgrp: pgrp, startTicks: start}, true
}

// Alive reports whether the agent of activation still runs as p: its
// process group has a live member that is the agent's (see StopOrphans).
// Elsewhere than Linux, or with no group recorded, it says yes.
func Alive(activation string, p domain.AgentProcess) bool {
	if p.PGID <= 1 {
		return true
	}
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		return true
	}
	members := groupMembers(p.PGID)
	return len(members) > 0 && ownGroup(activation, p, members)
}
