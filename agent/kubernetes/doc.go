// Package kubernetes is the kubernetes runtime: each activation is a Job
// in a configured namespace of a cluster, its agent (by default the
// built-in one, `helix-org agent run --from`) reading the run's token,
// endpoints, prompt and environment files from a Secret mounted into its
// pod. The Job's name is derived from the activation id, so creating it
// again is adopting it: a server restarted after a crash, or another
// server on the same database, never starts a second Job for one run.
//
// It talks to the cluster over plain HTTP and JSON (client.go: nine
// requests on three kinds), reading a kubeconfig's certificates and
// tokens itself and running none of its exec plugins; no client-go, whose
// start-up every server would pay for, cluster or none. It never reads
// the server's database or files beyond the worker's environment
// directory.
package kubernetes
