package orgdir

import "github.com/helixml/helix-org/domain"

// subscriptions.yaml: who follows which stream, by stream then worker.
var subscriptionsKind = kind{name: "subscriptions", export: exportSubscriptions, load: loadSubscriptions}

type subscriptionRecord struct {
	Stream    string `yaml:"stream"`
	Worker    string `yaml:"worker"`
	CreatedAt string `yaml:"createdAt"`
}

func exportSubscriptions(x *exporter) error {
	ss, err := x.st.ListAllStreams(x.ctx, "")
	if err != nil {
		return err
	}
	out := []subscriptionRecord{}
	for _, s := range ss {
		members, err := x.st.StreamMembers(x.ctx, s.ID)
		if err != nil {
			return err
		}
		for _, m := range members {
			out = append(out, subscriptionRecord{Stream: m.StreamID, Worker: m.WorkerID, CreatedAt: stamp(m.CreatedAt)})
		}
	}
	return x.yaml("subscriptions.yaml", out)
}

func loadSubscriptions(in *importer) error {
	var recs []subscriptionRecord
	if err := in.yaml("subscriptions.yaml", &recs); err != nil {
		return err
	}
	for _, r := range recs {
		created, err := parseStamp("subscription "+r.Worker+" to "+r.Stream+": createdAt", r.CreatedAt)
		if err != nil {
			return err
		}
		if err := in.im.Subscription(domain.Subscription{WorkerID: r.Worker, StreamID: r.Stream, CreatedAt: created}); err != nil {
			return err
		}
	}
	return nil
}
