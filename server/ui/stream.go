package ui

import (
	"net/http"
	"slices"
	"strconv"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
)

type streamPage struct {
	Stream  domain.Stream
	Members []member
	Threads []thread
	EvErr   string
	Pager   pager
	// ReadOnly says why no one publishes here, when that is so.
	ReadOnly string
	// Others are the workers who could be subscribed.
	Others []domain.Worker
	IsDM   bool
	// Processors read or write this stream.
	Processors []domain.Processor
	// Preview is what ?preview=<processor> would write for the input's
	// latest events: preview_processor, which writes nothing.
	Preview *processorPreview
	// Outbound is what the stream has sent out, if anything.
	Outbound *outbound
	// CanArchive: the viewer may archive the stream (archive_stream): it
	// is in use, made with create_stream, and theirs or they an admin.
	CanArchive bool
	// CanEdit: the viewer may change its name, description and transport
	// config (update_stream), on the same terms as archiving it.
	CanEdit bool
	// ConfigKeys describes the config the stream's kind takes (its
	// TransportSpec.Config); empty for a kind that takes none.
	ConfigKeys string
}

// processorPreview is preview_processor's answer, as the page shows it.
type processorPreview struct {
	ID     string
	Err    string
	Events []struct {
		Event   string
		Subject string
		Outputs []domain.ProcessorOutput
		Error   string
	}
	Passed, Dropped, Failed int
}

type member struct {
	Worker string            `json:"worker"`
	Name   string            `json:"name"`
	Kind   domain.WorkerKind `json:"kind"`
}

// thread is an event and, folded under it, the later events of its thread
// on the same page.
type thread struct {
	ID      string
	Root    domain.Event
	Replies []domain.Event
}

// handleStream shows one stream: its events (newest page first, threads
// folded, live on the newest page), its members, and a composer.
func (u *UI) handleStream(w http.ResponseWriter, r *http.Request, v *viewer) {
	ctx := r.Context()
	id := r.PathValue("id")
	before, _ := strconv.ParseInt(r.URL.Query().Get("before"), 10, 64)
	live := ""
	if before == 0 {
		live = u.liveURL(ctx, "view", "stream", "stream", id)
	}
	got, err := invoke[struct {
		Stream  domain.Stream
		Members []string
	}](ctx, v, "get_stream", map[string]any{"id": id})
	if err != nil {
		u.fail(w, r, v, err)
		return
	}
	p := streamPage{Stream: got.Stream, ReadOnly: readOnly(u.st.Transports(), got.Stream), IsDM: domain.IsDM(id)}
	p.Members = u.members(r, v, id, got.Members)
	if err := probeStream(ctx, v, id); err != nil {
		p.EvErr, live = err.Error(), ""
	} else {
		limit := limitOf(r)
		evs, err := u.st.EventsBefore(ctx, store.PageQuery{StreamIDs: []string{id}, Before: before, Limit: limit})
		if err != nil {
			u.fail(w, r, v, err)
			return
		}
		next := ""
		if len(evs) == limit {
			next = strconv.FormatInt(evs[len(evs)-1].Seq, 10)
		}
		slices.Reverse(evs)
		p.Threads, p.Pager = threads(evs), newPager(r, "before", next)
	}
	if v.Can("list_processors") {
		got, _ := invoke[struct{ Processors []domain.Processor }](ctx, v, "list_processors", map[string]any{"stream": id})
		p.Processors = got.Processors
	}
	if id := r.URL.Query().Get("preview"); id != "" && v.Can("preview_processor") {
		got, err := invoke[processorPreview](ctx, v, "preview_processor", map[string]any{"id": id, "last": 20})
		got.ID = id
		if err != nil {
			got.Err = err.Error()
		}
		p.Preview = &got
	}
	p.Outbound = streamOutbound(ctx, v, got.Stream)
	archived := got.Stream.ArchivedAt != nil
	if archived {
		live = "" // it takes no new events: nothing would come down a live view
	}
	mine := archivable(id) && (got.Stream.CreatedBy == v.Worker.ID || v.IsAdmin())
	p.CanArchive = !archived && mine && v.Can("archive_stream")
	p.CanEdit = !archived && mine && v.Can("update_stream")
	if spec, err := u.st.Transports().Spec("stream", got.Stream.Transport.Kind); err == nil {
		p.ConfigKeys = spec.Config
	}
	if v.Can("subscribe") && !p.IsDM && !archived {
		all, _ := invoke[struct{ Workers []domain.Worker }](ctx, v, "list_workers", nil)
		p.Others = all.Workers
	}
	u.render(w, r, http.StatusOK, "stream", pageData{Title: got.Stream.Name, Nav: "streams", V: v, Live: live, Body: p})
}

// members names a stream's members through stream_members when the
// viewer holds it, else lists the ids get_stream gave.
func (u *UI) members(r *http.Request, v *viewer, id string, ids []string) []member {
	if v.Can("stream_members") {
		got, err := invoke[struct{ Members []member }](r.Context(), v, "stream_members", map[string]any{"stream": id})
		if err == nil {
			return got.Members
		}
	}
	out := make([]member, len(ids))
	for i, m := range ids {
		out[i] = member{Worker: m, Name: m}
	}
	return out
}

// threads folds a page of events (oldest first) by thread id.
func threads(evs []domain.Event) []thread {
	var out []thread
	at := map[string]int{}
	for _, ev := range evs {
		tid := ev.Message.ThreadID
		if i, ok := at[tid]; ok && tid != "" {
			out[i].Replies = append(out[i].Replies, ev)
			continue
		}
		if tid != "" {
			at[tid] = len(out)
		}
		out = append(out, thread{ID: tid, Root: ev})
	}
	return out
}

// archivable: a stream made with create_stream, not one the system keeps.
func archivable(id string) bool {
	kind, _ := domain.StreamKindOf(id)
	return kind == domain.StreamShared && id != domain.StreamOrg
}

// readOnly says why a stream takes no messages from people, as publish
// would refuse them.
func readOnly(kinds *domain.Transports, st domain.Stream) string {
	spec, err := kinds.Spec("stream", st.Transport.Kind)
	kind, _ := domain.StreamKindOf(st.ID)
	switch {
	case st.ArchivedAt != nil:
		return "This stream is archived: it takes no new events or members and sends nothing; its history stays here."
	case st.ID == domain.StreamOrg:
		return "This is the org's audit trail: the system writes it as the org changes."
	case kind == domain.StreamActivations:
		return "This is an activation log: only the agent runtime writes it."
	case kind == domain.StreamInbox:
		return "This is an inbox: only the system writes it (approval requests, incidents)."
	case err != nil:
		return err.Error()
	case !spec.Publish:
		return "This is a " + string(spec.Kind) + " stream, which takes no messages from people: " + spec.About + "."
	}
	return ""
}
