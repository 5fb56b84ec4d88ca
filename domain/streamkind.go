package domain

import "strings"

// StreamKind is what the system makes of a stream, as its id says.
type StreamKind string

// The kinds of stream. Every id but those of the system's own streams is
// a StreamShared one, made by a worker with create_stream.
const (
	StreamShared      StreamKind = ""
	StreamDM          StreamKind = "dm"
	StreamActivations StreamKind = "activations"
	StreamInbox       StreamKind = "inbox"
	StreamContact     StreamKind = "contact"
	StreamTask        StreamKind = "task"
)

var streamKinds = []struct {
	prefix string
	kind   StreamKind
}{
	{DMStreamPrefix, StreamDM}, {ActivationStreamPrefix, StreamActivations}, {InboxStreamPrefix, StreamInbox},
	{ContactStreamPrefix, StreamContact}, {taskStreamPrefix, StreamTask},
}

// StreamKindOf reads a stream's kind from its id and, for a stream of one
// worker (its activation log, inbox or contact stream), that worker's id.
func StreamKindOf(id string) (kind StreamKind, worker string) {
	for _, k := range streamKinds {
		rest, ok := strings.CutPrefix(id, k.prefix)
		if !ok {
			continue
		}
		switch k.kind {
		case StreamActivations, StreamContact:
			return k.kind, rest
		case StreamInbox:
			return k.kind, PrefixWorker + rest
		}
		return k.kind, ""
	}
	return StreamShared, ""
}

// IsDM reports whether id is a direct-message stream's.
func IsDM(id string) bool { k, _ := StreamKindOf(id); return k == StreamDM }
