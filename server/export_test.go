package server

import "time"

// WaitTasks waits until no task this server started is running, so a test
// reads a task's end without polling.
func (s *Server) WaitTasks() {
	s.mu.Lock()
	var running []runningTask
	for _, rt := range s.running {
		running = append(running, rt)
	}
	s.mu.Unlock()
	for _, rt := range running {
		<-rt.done
	}
}

// RenewTaskLeasesEvery renews running tasks' leases every d instead of a
// third of a lease, so a test sees a cancel on another server take effect
// at once.
func (s *Server) RenewTaskLeasesEvery(d time.Duration) { s.taskRenew = d }

// ServeCallsViaSDK sends every tools/call and tools/list to the go-sdk,
// as the reference the server's own answers are compared with.
func (s *Server) ServeCallsViaSDK() { s.viaSDK = true }

// DirectCalls is how many calls the server answered without the go-sdk.
func (s *Server) DirectCalls() int64 { return s.directCalls.Load() }

// DirectLists is how many tools/lists the server answered without the
// go-sdk.
func (s *Server) DirectLists() int64 { return s.directLists.Load() }
