// Package processor holds the kinds of processors that run in the server
// between streams (domain.Processor): each compiles a definition once —
// CEL expressions type-checked, templates parsed, errors naming the field
// and the position — and runs it over one event at a time, returning the
// messages to append to its outputs. It is pure: it reads only the event
// it is given and its label, writes nothing, and so serves the dispatcher
// that runs processors durably and the preview that runs them dry alike.
// A kind is a file here and a line in Kinds.
package processor
