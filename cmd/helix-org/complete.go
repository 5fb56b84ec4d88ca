package main

import (
	"context"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/tools"
)

// nameList lists the names of one kind from the database, for shell completion.
type nameList func(context.Context, *store.Store) ([]string, error)

// complete is a completion function offering names read from the
// database the command's flags point at. Completion never creates a
// database: with none there, it offers nothing.
func (f *dbFlags) complete(list nameList) cobra.CompletionFunc {
	return func(cmd *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return matching(f.names(cmd.Context(), list), toComplete), cobra.ShellCompDirectiveNoFileComp
	}
}

// completeFirst completes only the first positional argument.
func (f *dbFlags) completeFirst(list nameList) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return f.complete(list)(cmd, args, toComplete)
	}
}

func (f *dbFlags) names(ctx context.Context, list nameList) []string {
	ro := dbFlags{DB: f.DB, KeyFile: f.KeyFile} // never --init
	st, err := ro.open(ctx)
	if err != nil {
		return nil
	}
	defer st.Close()
	out, _ := list(ctx, st)
	return out
}

func matching(all []string, prefix string) []cobra.Completion {
	var out []cobra.Completion
	for _, n := range all {
		if strings.HasPrefix(n, prefix) {
			out = append(out, n)
		}
	}
	return out
}

func workerNames(ctx context.Context, st *store.Store) ([]string, error) {
	ws, err := st.ListWorkers(ctx, store.WorkerFilter{})
	return ids(ws, err, func(w domain.Worker) string { return w.ID })
}

func streamNames(ctx context.Context, st *store.Store) ([]string, error) {
	ss, err := st.ListStreams(ctx, "")
	return ids(ss, err, func(s domain.Stream) string { return s.ID })
}

func roleNames(ctx context.Context, st *store.Store) ([]string, error) {
	rs, err := st.ListRoles(ctx)
	return ids(rs, err, func(r domain.Role) string { return r.ID })
}

func positionNames(ctx context.Context, st *store.Store) ([]string, error) {
	ps, err := st.ListPositions(ctx)
	return ids(ps, err, func(p domain.Position) string { return p.ID })
}

func tokenIDs(ctx context.Context, st *store.Store) ([]string, error) {
	ts, err := st.ListTokens(ctx, store.TokenQuery{})
	return ids(ts, err, func(t store.Token) string { return t.ID })
}

// toolNames are the built-in tools and a tool per skill.
func toolNames(ctx context.Context, st *store.Store) ([]string, error) {
	out := tools.Names()
	sks, err := st.ListSkills(ctx)
	for _, sk := range sks {
		out = append(out, sk.ToolName())
	}
	slices.Sort(out)
	return out, err
}

func ids[T any](xs []T, err error, id func(T) string) ([]string, error) {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = id(x)
	}
	return out, err
}

// configKeys completes a config key; needs no database.
func configKeys(_ *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	keys := make([]string, 0, len(settings()))
	for _, s := range settings() {
		keys = append(keys, s.Key)
	}
	slices.Sort(keys)
	return matching(keys, toComplete), cobra.ShellCompDirectiveNoFileComp
}

// completeCall completes call's tool name, then the value of an argument
// that names a record: worker=, stream=, role=, position=, tool=, and
// id= of a *_role, *_worker or *_stream tool.
func (f *clientFlags) completeCall(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	if len(args) == 0 {
		return f.complete(toolNames)(cmd, args, toComplete)
	}
	key, value, ok := strings.Cut(toComplete, "=")
	if !ok {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	if key == "id" {
		_, key, _ = strings.Cut(args[0], "_")
	}
	lists := map[string]nameList{"worker": workerNames, "workers": workerNames, "stream": streamNames, "streams": streamNames,
		"role": roleNames, "position": positionNames, "reportsTo": positionNames, "tool": toolNames}
	list, ok := lists[key]
	if !ok {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var out []cobra.Completion
	for _, n := range matching(f.names(cmd.Context(), list), value) {
		out = append(out, strings.SplitN(toComplete, "=", 2)[0]+"="+n)
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}
