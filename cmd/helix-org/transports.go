package main

import (
	"context"
	"log/slog"
	"slices"

	"github.com/helixml/helix-org/server"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/transports/delivery"
	"github.com/helixml/helix-org/transports/email"
	"github.com/helixml/helix-org/transports/github"
	"github.com/helixml/helix-org/transports/safedial"
	"github.com/helixml/helix-org/transports/webhook"
)

// transportRoutes are every transport's inbound handlers, mounted by the
// server without it importing the transports. Add a transport here.
func transportRoutes(st *store.Store, log *slog.Logger) []server.Route {
	return slices.Concat(
		webhook.NewHandler(st, webhook.HandlerOptions{Logger: log}).Routes(),
		[]server.Route{
			{Pattern: email.InboundPattern, Handler: email.NewHandler(st, log)},
			{Pattern: github.Pattern, Handler: github.NewHandler(st, log)},
		},
	)
}

// outboundSenders are the delivery engine's Senders, one per transport
// kind that sends. Outbound HTTP to user-given URLs goes through safedial.
func outboundSenders(st *store.Store) []delivery.Sender {
	client := safedial.NewClient(safedial.Options{AllowPrivate: func(ctx context.Context) bool {
		return st.BoolSetting(ctx, safedial.AllowPrivateSetting)
	}})
	return []delivery.Sender{
		webhook.NewSender(client, webhook.SenderOptions{UserAgent: "helix-org/" + version}),
		email.NewSender(st, client, nil),
	}
}
