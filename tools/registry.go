package tools

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/helixml/helix-org/domain"
)

// All is the one readable list of every built-in tool.
var All = sync.OnceValue(func() []Tool {
	return []Tool{
		createRole(), updateRole(), listRoles(), getRole(),
		createPosition(), listPositions(),
		hireWorker(), dismissWorker(), updateIdentity(), setContact(), listWorkers(), getWorker(),
		invite(), listInvitations(), revokeInvitation(), setOrgRole(),
		grantTool(), revokeTool(), listGrants(),
		createStream(), listStreams(), getStream(), updateStream(), archiveStream(),
		createProcessor(), previewProcessor(), listProcessors(), deleteProcessor(),
		subscribe(), unsubscribe(), inviteWorkers(), streamMembers(),
		publish(), readEvents(), dm(), askHuman(), getAttachment(),
		workerLog(), cancelActivation(), messageActivation(),
		listDeliveries(), enableEndpoint(), retryDelivery(),
		createSkill(), listSkills(), getSkill(), callSkill(), rollbackSkill(), deleteSkill(),
		addMCPServer(), listMCPServers(), removeMCPServer(),
		setBudget(), listBudgets(),
		listApprovals(), decideApproval(), dismissInbox(),
		createSpecTask(), listSpecTasks(), getSpecTask(), reportExploration(), submitSpec(), reviewSpec(), claimItem(), reportItem(), skipItem(), cancelSpecTask(),
		attachRepository(), detachRepository(), listRepositories(), openPullRequest(), mergePullRequest(),
		storeInsight(), recall(), insightFeedback(), rateActivation(), correctInsight(), endorseInsight(), listInsights(), linkInsights(), consolidateInsights(), learn(),
	}
})

// Names lists every tool name in registry order.
func Names() []string {
	var names []string
	for _, t := range All() {
		names = append(names, t.Name)
	}
	return names
}

// Settings are the operational config keys the tools read.
var Settings = domain.Settings{MaxBodySetting, ApprovalTTLSetting, HighRiskSetting, AIRequiresSetting, LinkSimilarSetting, SpecClonesDirSetting, SpecAllowPrivateSetting, SpecMaxCloneSetting,
	SearchThresholdSetting, ContextBudgetSetting, SpecRepoRootsSetting, SpecExploreBudgetSetting,
	GitHubTokenSetting, GitHubAPISetting, GitLabTokenSetting, GitLabURLSetting, InviteTTLSetting, PublicURLSetting}

// MaxBodySetting bounds a published message body.
var MaxBodySetting = domain.SettingSpec{
	Key: "events.max_body_bytes", Type: domain.SettingInt, Default: fmt.Sprint(domain.DefaultMaxBody),
	Description: "Largest message body publish and dm accept, in bytes.",
}

var schemaCache = mcp.NewSchemaCache()

// NewServer returns an MCP server holding exactly the granted tools and the
// prompts they enable. Every tools/call runs through Call (callThrough): a
// call to any other known tool gets a tool error that names the missing
// grant, instead of the SDK's bare "unknown tool". When
// env's catalog is past its limits, tools/list shows only its core and
// find_tools, and every granted tool can still be called.
func NewServer(env *Env, granted []string) *mcp.Server {
	instructions := "helix-org organisation graph. You are worker " + env.Caller + ". Use the help prompt to see what you can do. " + gateNote
	searching := env.Catalog != nil && env.Catalog.Searching()
	if searching {
		instructions += " " + searchNote
	}
	srv := mcp.NewServer(Implementation(),
		&mcp.ServerOptions{SchemaCache: schemaCache, Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}, Resources: &mcp.ResourceCapabilities{}},
			Instructions: instructions, SetCacheable: private})
	for _, t := range All() {
		if slices.Contains(granted, t.Name) {
			t.bind(srv, t.Def(env.Store.Transports()))
		}
	}
	addSkillTools(srv, env, granted)
	addOutsideTools(srv, env, granted)
	addPrompts(srv, env, granted)
	addResults(srv, env)
	addSteering(srv, env)
	srv.AddReceivingMiddleware(callThrough(env, granted))
	if searching {
		find := FindTools()
		find.bind(srv, find.def())
		srv.AddReceivingMiddleware(showOnly(env.Catalog))
	}
	return srv
}

// searchNote tells a client whose tools/list is the core that there is
// more.
const searchNote = "You hold more tools than tools/list shows: find_tools finds them by words of what you want to do, and you call them like the rest."

// showOnly narrows tools/list to what cat shows, after the go-sdk has
// listed every tool on the server (and read any cursor).
func showOnly(cat *Catalog) mcp.Middleware {
	shown := map[string]bool{}
	for _, t := range cat.Shown() {
		shown[t.Name] = true
	}
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			list, ok := res.(*mcp.ListToolsResult)
			if method != "tools/list" || err != nil || !ok {
				return res, err
			}
			narrowed := *list
			narrowed.Tools = slices.DeleteFunc(slices.Clone(list.Tools), func(t *mcp.Tool) bool { return !shown[t.Name] })
			return &narrowed, nil
		}
	}
}

// private marks every cacheable result (2026-07-28) as the caller's alone
// and stale at once: what a worker sees follows its grants, which change
// or lapse at any moment, and names it.
func private(_ context.Context, _ mcp.Request, c *mcp.Cacheable) {
	c.CacheScope, c.TTLMs = "private", 0
}

// Version is the binary's version, set by cmd at link time.
var Version = "dev"

// Implementation is the server's name and version, as initialize and
// 2026-07-28 results give them.
func Implementation() *mcp.Implementation {
	return &mcp.Implementation{Name: "helix-org", Version: Version}
}
