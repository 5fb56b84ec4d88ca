package server

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
