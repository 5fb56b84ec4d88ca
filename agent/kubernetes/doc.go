// Package kubernetes is the kubernetes runtime: each activation is a Job
// in a configured namespace of a cluster, its agent (by default the
// built-in one, `helix-org agent run --from`) reading the run's token,
// endpoints, prompt and environment files from a Secret mounted into its
// pod. The Job's name is derived from the activation id, so creating it
// again is adopting it: a server restarted after a crash, or another
// server on the same database, never starts a second Job for one run.
//
// It talks to the cluster only through client-go's rest and clientcmd,
// with a scheme of the three kinds it uses (never the clientset, whose
// scheme registers every API group at start-up); it never reads the
// server's database or files beyond the worker's environment directory.
package kubernetes
