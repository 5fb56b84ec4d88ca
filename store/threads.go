package store

import (
	"context"
	"fmt"
)

// OnThread reports whether a stream has taken part in a thread: it holds
// an event whose threadId or messageId is thread, or one of its events was
// delivered as the remote message thread (a post others then answer in
// its thread). A transport that routes a conversation to whoever is in it
// (Slack's worker streams) asks it; the answer is in the log, so it holds
// across restarts and servers.
func (s *Store) OnThread(ctx context.Context, streamID, thread string) (bool, error) {
	if streamID == "" || thread == "" {
		return false, nil
	}
	var ids []int64
	err := s.read(ctx).Model(&eventRow{}).
		Where("stream_id = ? AND ("+s.dia.jsonText("body", "threadId")+" = ? OR "+s.dia.jsonText("body", "messageId")+" = ?)", streamID, thread, thread).
		Limit(1).Pluck("seq", &ids).Error
	if err == nil && len(ids) == 0 {
		err = s.read(ctx).Model(&deliveryRow{}).Where("stream_id = ? AND remote_id = ?", streamID, thread).Limit(1).Pluck("id", &ids).Error
	}
	if err != nil {
		return false, fmt.Errorf("thread %s on %s: %w", thread, streamID, err)
	}
	return len(ids) > 0, nil
}
