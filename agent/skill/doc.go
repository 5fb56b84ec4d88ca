// Package skill is the skill factory: it turns code an agent wrote into a
// running service. It validates and builds the image (no network, no
// build arguments, capped in time and size), runs it hardened on the
// internal skills network, waits for GET /health, forwards calls to
// POST /execute, stops idle skills and starts them again on demand, and
// brings skills back after a restart.
//
// It records skills through the small Store interface it declares and
// reads its limits from operational config on every use. Secrets reach a
// skill only as environment variables from operational config, never
// through a tool call.
package skill
