package agent

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/helixml/helix-org/domain"
)

// StopGrace is how long a process gets between SIGTERM and SIGKILL.
const StopGrace = 5 * time.Second

// maxLine bounds one line of agent output.
const maxLine = 1 << 20

// runAgent runs an agent's command, in sb when it is set (bins are the
// programs it needs from outside the system directories): it tells the
// run once the process has started (its group and start time, so a
// restarted server can find it) and feeds it the run's prompt on stdin —
// never on the command line, whose strings the kernel caps at 128 KiB.
func runAgent(ctx context.Context, cmd *exec.Cmd, run domain.Run, sb *Bwrap, bins []string, onLine func(stream, line string)) (domain.RunResult, error) {
	return runAgentFed(ctx, cmd, run, sb, bins, FeedText(run.Prompt), onLine)
}

// runAgentFed is runAgent with stdin written by feed.
func runAgentFed(ctx context.Context, cmd *exec.Cmd, run domain.Run, sb *Bwrap, bins []string, feed Feed, onLine func(stream, line string)) (domain.RunResult, error) {
	if sb != nil {
		if err := sb.Wrap(cmd, run.EnvDir, bins...); err != nil {
			return domain.RunResult{ExitStatus: -1}, err
		}
	}
	var stop string
	code, err := startAndWait(ctx, cmd, feed, sb != nil, func(pid int) {
		st, _ := procStat(pid)
		run.Started(domain.AgentProcess{PGID: pid, StartTicks: st.startTicks})
	}, onLine, &stop)
	if stop != "" {
		note(&run, StopNote(stop, StopGrace))
	}
	return domain.RunResult{ExitStatus: code, Killed: err == nil && killed(ctx, code), Stop: stop}, err
}

// How a stop ended an agent, as RunResult.Stop and the run's log say it.
const (
	StopStopped = "stopped"
	StopKilled  = "killed"
)

// StopNote is what a run's log says of how a stop ended its agent, given
// the grace it had between SIGTERM and SIGKILL.
func StopNote(how string, grace time.Duration) string {
	if how == StopKilled {
		return "stop: the agent did not end within " + grace.String() + " of SIGTERM: killed (SIGKILL)"
	}
	return "stop: the agent ended when asked (SIGTERM): stopped"
}

// findAgentBin finds the program a CLI runtime runs: bin, or name on
// PATH. In a sandbox it is the program the name leads to, which is what
// the sandbox binds: a symlink's directory is not in it.
func findAgentBin(name, bin, product string, sandboxed bool) (string, error) {
	if bin == "" {
		bin = name
	}
	path, err := exec.LookPath(bin)
	if err != nil {
		return "", fmt.Errorf("%s runtime: %q not found on PATH; install %s or choose another agent.runtime", name, bin, product)
	}
	if sandboxed {
		if path, err = filepath.EvalSymlinks(path); err != nil {
			return "", fmt.Errorf("%s runtime: resolve %s: %w", name, bin, err)
		}
	}
	return path, nil
}

// killed reports whether an agent that exited with code was killed by a
// signal the server did not send (it signals only once ctx ends): the
// process itself (-1), or, through a shell or bwrap that did not exec it,
// 128+SIGKILL or 128+SIGTERM. Then its work may be half done and its
// triggers run again.
func killed(ctx context.Context, code int) bool {
	return ctx.Err() == nil && (code == -1 || code == 128+int(syscall.SIGKILL) || code == 128+int(syscall.SIGTERM))
}

// runProcess runs a caller-built command in its own process group, feeds
// it stdin, and hands each stdout/stderr line to onLine. When ctx ends it
// stops the group: close stdin, SIGTERM, then SIGKILL after StopGrace.
// It returns the exit status.
func runProcess(ctx context.Context, cmd *exec.Cmd, stdin string, onLine func(stream, line string)) (int, error) {
	return startAndWait(ctx, cmd, FeedText(stdin), false, nil, onLine, nil)
}

// Feed writes an agent's stdin and closes it. ctx ends when the agent
// has exited or is being stopped: a feed that waits for more to write
// returns then.
type Feed func(ctx context.Context, stdin io.WriteCloser)

// FeedText is the feed of most agents: text, then end of input.
func FeedText(text string) Feed {
	return func(_ context.Context, w io.WriteCloser) {
		io.WriteString(w, text)
		w.Close()
	}
}

// startAndWait is runProcess that calls started with the pid, if set,
// once the process runs. The process leads a session of its own, so its
// group is its pid and it has no controlling terminal to type into
// (TIOCSTI) when the server runs on one. sandboxed says the leader is
// bwrap, which a stop leaves to exit with what it runs (see terminate).
// A stop sets *stop, when stop is set, to StopStopped or StopKilled.
func startAndWait(ctx context.Context, cmd *exec.Cmd, feed Feed, sandboxed bool, started func(pid int), onLine func(stream, line string), stop *string) (int, error) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	in, err := cmd.StdinPipe()
	if err != nil {
		return -1, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return -1, err
	}
	errOut, err := cmd.StderrPipe()
	if err != nil {
		return -1, err
	}
	if err := cmd.Start(); err != nil {
		return -1, fmt.Errorf("start %s: %w", cmd.Path, err)
	}
	if started != nil {
		started(cmd.Process.Pid)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex // onLine is called from two readers
	for name, r := range map[string]io.Reader{"stdout": out, "stderr": errOut} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sc := bufio.NewScanner(r)
			sc.Buffer(make([]byte, 64<<10), maxLine)
			sc.Split(scanCappedLines)
			for sc.Scan() {
				mu.Lock()
				onLine(name, sc.Text())
				mu.Unlock()
			}
		}()
	}
	feedCtx, endFeed := context.WithCancel(ctx)
	fed := make(chan struct{})
	go func() {
		defer close(fed)
		feed(feedCtx, in)
	}()
	stopped := make(chan struct{})
	exited := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			in.Close()
			how := StopStopped
			if terminate(cmd.Process.Pid, sandboxed, exited) {
				how = StopKilled
			}
			if stop != nil {
				*stop = how
			}
		case <-exited:
		}
		close(stopped)
	}()
	wg.Wait()
	err = cmd.Wait() // closes stdin, so a feed blocked writing returns
	endFeed()
	<-fed
	close(exited)
	<-stopped
	// Leave no stragglers from the group behind.
	syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) {
		if ctx.Err() != nil {
			return exitErr.ExitCode(), ctx.Err()
		}
		return exitErr.ExitCode(), nil
	}
	if err != nil {
		return -1, err
	}
	return 0, ctx.Err()
}

func trimCR(s string) string { return strings.TrimRight(s, "\r") }

// scanCappedLines is bufio.ScanLines that hands on a line longer than
// maxLine in maxLine pieces instead of stopping: a stopped scanner would
// leave the pipe unread and the agent blocked on it until the timeout.
func scanCappedLines(data []byte, atEOF bool) (int, []byte, error) {
	if advance, token, err := bufio.ScanLines(data, atEOF); advance > 0 || token != nil || err != nil {
		return advance, token, err
	}
	if len(data) >= maxLine {
		return maxLine, data[:maxLine], nil
	}
	return 0, nil, nil
}

// terminate stops a process group: SIGTERM to each member, and to each
// that joins it meanwhile, until the group's leader has exited, or
// SIGKILL to the group after StopGrace. A sandboxed group's leader, bwrap,
// is spared: it would die of SIGTERM at once, leaving its pid 1 (which
// ignores it) to start a command that had not yet run when the signal
// came; spared, it exits when what it runs does.
// It reports whether it had to kill.
func terminate(pgid int, sandboxed bool, exited <-chan struct{}) bool {
	signalled := map[int]bool{}
	if sandboxed {
		signalled[pgid] = true
	} else {
		syscall.Kill(-pgid, syscall.SIGTERM) // all at once, and where /proc is not
		for _, pid := range groupMembers(pgid) {
			signalled[pid] = true
		}
	}
	grace := time.NewTimer(StopGrace)
	defer grace.Stop()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		for _, pid := range groupMembers(pgid) {
			if !signalled[pid] {
				signalled[pid] = true
				syscall.Kill(pid, syscall.SIGTERM)
			}
		}
		select {
		case <-exited:
			return false
		case <-grace.C:
			syscall.Kill(-pgid, syscall.SIGKILL)
			return true
		case <-tick.C:
		}
	}
}
