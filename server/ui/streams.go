package ui

import (
	"net/http"
	"slices"
	"strings"

	"github.com/helixml/helix-org/domain"
)

type streamsPage struct {
	Streams []domain.Stream
	Err     string
	Pager   pager
	Kinds   []domain.TransportKind
	// Archived: archived streams are listed too (?archived=1).
	Archived bool
}

// handleStreams lists the streams list_streams shows the viewer, paged by
// id, archived ones too with ?archived=1, with a form to create one for
// holders of create_stream.
func (u *UI) handleStreams(w http.ResponseWriter, r *http.Request, v *viewer) {
	p := streamsPage{Kinds: u.st.Transports().Kinds(), Archived: r.URL.Query().Get("archived") != ""}
	got, err := invoke[struct{ Streams []domain.Stream }](r.Context(), v, "list_streams", map[string]any{"archived": p.Archived})
	p.Err = sectionErr(err)
	// People's streams first, then direct messages, activation logs and
	// the audit trail.
	key := func(s domain.Stream) string { return streamRank(s.ID) + "/" + s.ID }
	slices.SortFunc(got.Streams, func(a, b domain.Stream) int { return strings.Compare(key(a), key(b)) })
	var next string
	p.Streams, next = pageAfter(got.Streams, key, r.URL.Query().Get("after"), limitOf(r))
	p.Pager = newPager(r, "after", next)
	u.render(w, r, http.StatusOK, "streams", pageData{Title: "Streams", Nav: "streams", V: v, Body: p})
}

func streamRank(id string) string {
	return map[string]string{"": "0", "direct messages": "1", "activation log": "2", "audit trail": "3"}[streamKind(id)]
}

// streamKind names the kinds of stream the system makes; "" for the rest.
func streamKind(id string) string {
	kind, _ := domain.StreamKindOf(id)
	switch {
	case id == domain.StreamOrg:
		return "audit trail"
	case kind == domain.StreamActivations:
		return "activation log"
	case kind == domain.StreamDM:
		return "direct messages"
	}
	return ""
}
