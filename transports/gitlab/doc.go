// Package gitlab receives GitLab project and group webhooks on POST
// /gitlab/webhook and turns each into events on the gitlab streams that
// follow its project and event. A stream holds the webhook's secret token:
// a request whose X-Gitlab-Token matches no gitlab stream's secret is
// refused (401) before a byte of its body is read, and a request reaches
// only the streams whose secret it carries. A delivery is stored at most
// once per stream, keyed by GitLab's Idempotency-Key (the same on every
// retry), else X-Gitlab-Event-UUID.
//
// Outbound, Sender posts what a worker publishes on a gitlab stream as a
// note (a comment) on the issue ("#23") or merge request ("!1") of its
// thread, in the stream's project, with transport.gitlab's token; it never
// does anything else on GitLab.
package gitlab
