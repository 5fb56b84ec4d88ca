// Package docker runs agent activations in one-shot, hardened containers
// through the Docker Engine API, and gives the skill factory the same
// hardening, the internal networks and image builds.
//
// Everything it creates is labelled with this server's instance, so a
// restarted server can reap what a crashed one left behind without
// touching another server's containers. It never mounts the Docker socket
// or the database into a container, and it never touches the store: an
// agent acts on the org only through its MCP endpoint.
package docker
