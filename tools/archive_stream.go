package tools

import (
	"context"

	"github.com/helixml/helix-org/domain"
)

type archiveStreamIn struct {
	ID string `json:"id" jsonschema:"the stream to archive (s-…), one made with create_stream"`
}

// archiveStream retires a stream made by mistake or no longer used. The
// org keeps its history, so it archives rather than deletes: the stream
// and its events stay, and nothing new goes on it or out of it.
func archiveStream() Tool {
	return define("archive_stream", "Archive a Stream made with create_stream that is wrong or no longer used; its creator or an admin may, holding create_stream too. "+
		"From then on it takes nothing new: publish and subscribe are refused, an inbound webhook to it is answered 410 Gone so the sender stops, "+
		"and outbound deliveries not yet sent are never sent (list_deliveries shows them disabled). "+
		"Its history stays readable: its members stay, read_events reads it without following it (a private one: only its members), "+
		"get_stream shows it with archivedAt, list_streams only with archived true. "+
		"Archiving it again changes nothing; it cannot be undone.",
		func(ctx context.Context, env *Env, in archiveStreamIn) (domain.Stream, error) {
			if in.ID == "" {
				return domain.Stream{}, domain.Required("id")
			}
			st, err := env.Store.ArchiveStream(ctx, env.Caller, in.ID)
			return redacted(env, st), err
		}).annotated("Archive stream", destructive|idempotent)
}
