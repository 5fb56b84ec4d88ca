package main

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/helixml/helix-org/safedial"
	"github.com/helixml/helix-org/server"
	"github.com/helixml/helix-org/server/ui"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/transports/discord"
	"github.com/helixml/helix-org/transports/email"
	"github.com/helixml/helix-org/transports/github"
	"github.com/helixml/helix-org/transports/gitlab"
	"github.com/helixml/helix-org/transports/inbound"
	"github.com/helixml/helix-org/transports/schedule"
	"github.com/helixml/helix-org/transports/slack"
	"github.com/helixml/helix-org/transports/telegram"
	"github.com/helixml/helix-org/transports/transport"
	"github.com/helixml/helix-org/transports/webhook"
)

// transports are every transport this binary serves, in the order
// create_stream offers them. Add a transport here: one line.
var transports = transport.List{
	webhook.Transport,
	email.Transport,
	github.Transport,
	gitlab.Transport,
	slack.Transport,
	telegram.Transport,
	discord.Transport,
	schedule.Transport,
}

// transportDeps is what the transports are built with. Outbound HTTP to
// user-given URLs goes through safedial; an install flow acts for the
// owner's UI session only (ui.Operator).
func transportDeps(st *store.Store, log *slog.Logger) transport.Deps {
	client := safedial.NewClient(safedial.Options{AllowPrivate: func(ctx context.Context) bool {
		return st.BoolSetting(ctx, safedial.AllowPrivateSetting)
	}})
	return transport.Deps{Store: st, Client: client, Now: time.Now, Logger: log, UserAgent: "helix-org/" + version,
		Operator: func(r *http.Request) (string, error) { return ui.Operator(st, r) }}
}

// transportRoutes are every transport's inbound handlers, mounted by the
// server without it importing the transports.
func transportRoutes(d transport.Deps, budget *inbound.Budget) []server.Route {
	var routes []server.Route
	for _, r := range transports.Routes(d, budget) {
		routes = append(routes, server.Route{Pattern: r.Pattern, Handler: r.Handler})
	}
	return routes
}
