// Package skill is the skill factory: it turns code an agent wrote into a
// running service. It validates and builds the image (no network, no
// build arguments, capped in time and size, on base images it builds
// itself: busybox and a shim, or the host's python3), runs it hardened on
// the internal skills network, waits for GET /health, checks the
// version's examples before it goes live, forwards calls to POST
// /execute, rolls back to the previous working version, stops idle skills
// and starts them again on demand, and brings skills back after a restart.
// Every build is kept as a version with its source and build log, and a
// run of failed builds is bounded.
//
// It records skills through the small Store interface it declares and
// reads its limits from operational config on every use. Secrets reach a
// skill only as environment variables from operational config, never
// through a tool call. Callers may pass a narrator, told each step.
package skill
