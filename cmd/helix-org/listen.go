package main

import (
	"bufio"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// listen binds addr. When another process holds it, the error names that
// process so the operator knows what to stop.
func listen(addr string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err == nil {
		return ln, nil
	}
	if !errors.Is(err, syscall.EADDRINUSE) {
		return nil, fmt.Errorf("listen on %s: %w", addr, err)
	}
	hint := "choose another address with --addr (or HELIX_ORG_ADDR)"
	if pid, cmdline, ok := portOwner(addr); ok {
		return nil, fmt.Errorf("listen on %s: the address is in use by pid %d (%s): stop it (kill %d) or %s", addr, pid, cmdline, pid, hint)
	}
	return nil, fmt.Errorf("listen on %s: another process listens on %s: stop it or %s", addr, addr, hint)
}

// portOwner finds the process listening on addr: the socket's inode from
// /proc/net/tcp{,6}, then the process holding that inode among its file
// descriptors. ok is false wherever that cannot be read (another user's
// process, no /proc).
func portOwner(addr string) (pid int, cmdline string, ok bool) {
	host, portText, err := net.SplitHostPort(addr)
	if err != nil {
		return 0, "", false
	}
	port, err := strconv.Atoi(portText)
	if err != nil {
		return 0, "", false
	}
	inodes := map[string]bool{}
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		listeningInodes(table, net.ParseIP(host), port, inodes)
	}
	if len(inodes) == 0 {
		return 0, "", false
	}
	procs, _ := filepath.Glob("/proc/[0-9]*/fd/*")
	for _, fd := range procs {
		link, err := os.Readlink(fd)
		if err != nil || !strings.HasPrefix(link, "socket:[") || !inodes[strings.TrimSuffix(strings.TrimPrefix(link, "socket:["), "]")] {
			continue
		}
		pid, _ := strconv.Atoi(strings.Split(fd, "/")[2])
		raw, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		return pid, clip(strings.TrimSpace(strings.ReplaceAll(string(raw), "\x00", " ")), 120), true
	}
	return 0, "", false
}

// listeningInodes adds the inodes of sockets in table that listen on port
// at ip, or on every address.
func listeningInodes(table string, ip net.IP, port int, into map[string]bool) {
	f, err := os.Open(table)
	if err != nil {
		return
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Scan() // header
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 10 || fields[3] != "0A" { // 0A: LISTEN
			continue
		}
		local, p, ok := strings.Cut(fields[1], ":")
		if n, err := strconv.ParseUint(p, 16, 16); !ok || err != nil || int(n) != port {
			continue
		}
		if at := procIP(local); ip == nil || at == nil || at.IsUnspecified() || at.Equal(ip) {
			into[fields[9]] = true
		}
	}
}

// procIP decodes an address as /proc/net/tcp writes it: 32-bit words in
// host (little-endian) byte order.
func procIP(h string) net.IP {
	b, err := hex.DecodeString(h)
	if err != nil || len(b)%4 != 0 {
		return nil
	}
	for i := 0; i < len(b); i += 4 {
		b[i], b[i+1], b[i+2], b[i+3] = b[i+3], b[i+2], b[i+1], b[i]
	}
	return net.IP(b)
}
