package store

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"gorm.io/gorm"

	"github.com/helixml/helix-org/domain"
)

// mcpServerRow is an outside MCP server. Auth holds its credential as
// JSON sealed with the secrets key, whole: no field of it is ever read
// back but by the broker (MCPServerAuth).
type mcpServerRow struct {
	Name        string `gorm:"primaryKey"`
	Transport   string `gorm:"not null"`
	URL         string
	Command     string
	Args        string `gorm:"not null;default:'[]'"`
	Env         string `gorm:"not null;default:'{}'"`
	AuthType    string `gorm:"not null;default:''"`
	Auth        string `gorm:"not null;default:''"`
	Trusted     bool   `gorm:"not null;default:false"`
	TimeoutMs   int64  `gorm:"not null;default:0"`
	Tools       string `gorm:"not null;default:'[]'"`
	Healthy     bool   `gorm:"not null;default:false"`
	Error       string `gorm:"not null;default:''"`
	CreatedBy   string
	CreatedAt   time.Time
	RefreshedAt *time.Time
}

func (mcpServerRow) TableName() string { return "mcp_servers" }

func (r mcpServerRow) toDomain() domain.MCPServer {
	s := domain.MCPServer{Name: r.Name, Transport: domain.MCPTransport(r.Transport), URL: r.URL, Command: r.Command,
		AuthType: r.AuthType, Trusted: r.Trusted, Timeout: time.Duration(r.TimeoutMs) * time.Millisecond,
		Healthy: r.Healthy, Error: r.Error, CreatedBy: r.CreatedBy, CreatedAt: r.CreatedAt.UTC(), Tools: r.tools()}
	json.Unmarshal([]byte(r.Args), &s.Args)
	json.Unmarshal([]byte(r.Env), &s.Env)
	if r.RefreshedAt != nil {
		t := r.RefreshedAt.UTC()
		s.RefreshedAt = &t
	}
	return s
}

func (r mcpServerRow) tools() []domain.OutsideTool {
	out := []domain.OutsideTool{}
	json.Unmarshal([]byte(r.Tools), &out)
	for i := range out {
		out[i].Server, out[i].Trusted = r.Name, r.Trusted
	}
	return out
}

// migrateMCPServers makes the table and the triggers that move the auth
// epoch when a server comes, goes, or its tools or trust change: what a
// worker's tools/list is built from (health is not).
func migrateMCPServers(tx *gorm.DB) error {
	if err := autoMigrate(tx, &mcpServerRow{}); err != nil {
		return err
	}
	return dialectOf(tx).createEpochTrigger(tx, epochAuth, epochTable{table: "mcp_servers", columns: []string{"tools", "trusted"}})
}

// AddMCPServer stores an outside server and its credential (auth may be
// nil), encrypted. Its tools come later, from SetMCPTools.
func (s *Store) AddMCPServer(ctx context.Context, actor string, srv domain.MCPServer, auth *domain.MCPAuth) (domain.MCPServer, error) {
	if err := srv.Validate(); err != nil {
		return domain.MCPServer{}, err
	}
	row := mcpServerRow{Name: srv.Name, Transport: string(srv.Transport), URL: srv.URL, Command: srv.Command,
		Trusted: srv.Trusted, TimeoutMs: srv.Timeout.Milliseconds(), Tools: "[]", CreatedBy: actor, CreatedAt: s.Now()}
	args, _ := json.Marshal(cmpOr(srv.Args, []string{}))
	env, _ := json.Marshal(cmpOr(srv.Env, map[string]string{}))
	row.Args, row.Env = string(args), string(env)
	if auth != nil {
		if err := auth.Validate(); err != nil {
			return domain.MCPServer{}, err
		}
		plain, err := json.Marshal(auth)
		if err != nil {
			return domain.MCPServer{}, err
		}
		if row.Auth, err = s.encrypt(string(plain)); err != nil {
			return domain.MCPServer{}, fmt.Errorf("encrypt credential of mcp server %s: %w", srv.Name, err)
		}
		row.AuthType = auth.Type
	}
	err := s.write(ctx, func(tx *gorm.DB) error {
		if err := tx.Create(&row).Error; err != nil {
			return fmt.Errorf("mcp server %q: %w", srv.Name, mapErr(err))
		}
		return s.audit(tx, Change{Action: "add_mcp_server", Actor: actor, Target: srv.Name, After: row.toDomain()})
	})
	if err != nil {
		return domain.MCPServer{}, fmt.Errorf("add mcp server %s: %w", srv.Name, err)
	}
	return row.toDomain(), nil
}

func cmpOr[T any](v, empty T) T {
	if b, _ := json.Marshal(v); string(b) == "null" {
		return empty
	}
	return v
}

// GetMCPServer returns one server, without its credential.
func (s *Store) GetMCPServer(ctx context.Context, name string) (domain.MCPServer, error) {
	var r mcpServerRow
	if err := s.read(ctx).Where("name = ?", name).Take(&r).Error; err != nil {
		return domain.MCPServer{}, notFoundOr(err, "mcp server", name)
	}
	return r.toDomain(), nil
}

// ListMCPServers returns every server by name, without credentials.
func (s *Store) ListMCPServers(ctx context.Context) ([]domain.MCPServer, error) {
	var rows []mcpServerRow
	if err := s.read(ctx).Order("name").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("list mcp servers: %w", err)
	}
	return mapRows(rows, mcpServerRow.toDomain), nil
}

// OutsideTools are the tools of every server, as last fetched.
func (s *Store) OutsideTools(ctx context.Context) ([]domain.OutsideTool, error) {
	var rows []mcpServerRow
	if err := s.read(ctx).Select("name", "tools", "trusted").Order("name").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("outside tools: %w", err)
	}
	var out []domain.OutsideTool
	for _, r := range rows {
		out = append(out, r.tools()...)
	}
	return out, nil
}

// MCPServerAuth returns a server's credential in the clear, for the broker
// that adds it to calls; nil when it has none. Nothing else reads it.
func (s *Store) MCPServerAuth(ctx context.Context, name string) (*domain.MCPAuth, error) {
	var r mcpServerRow
	if err := s.read(ctx).Select("name", "auth").Where("name = ?", name).Take(&r).Error; err != nil {
		return nil, notFoundOr(err, "mcp server", name)
	}
	if r.Auth == "" {
		return nil, nil
	}
	plain, err := s.decrypt(r.Auth)
	if err != nil {
		return nil, fmt.Errorf("credential of mcp server %s: %w", name, err)
	}
	var a domain.MCPAuth
	if err := json.Unmarshal([]byte(plain), &a); err != nil {
		return nil, fmt.Errorf("credential of mcp server %s: stored value is not JSON", name)
	}
	return &a, nil
}

// SetMCPTools records a server's tool list as just fetched, marks it
// healthy, and keeps the owner holding every one of its tools: a tool
// new to the list is granted to the owner, and every grant of a tool the
// list no longer has is removed. An unchanged list leaves the tools (and
// the epoch every worker's tool list is cached by) alone.
func (s *Store) SetMCPTools(ctx context.Context, name string, tools []domain.OutsideTool) error {
	for i := range tools {
		tools[i].Server = name
	}
	raw, err := json.Marshal(cmpOr(tools, []domain.OutsideTool{}))
	if err != nil {
		return err
	}
	err = s.write(ctx, func(tx *gorm.DB) error {
		var prev mcpServerRow
		if err := tx.Where("name = ?", name).Take(&prev).Error; err != nil {
			return notFoundOr(err, "mcp server", name)
		}
		now := s.Now()
		set := map[string]any{"healthy": true, "error": "", "refreshed_at": &now}
		if prev.Tools != string(raw) {
			set["tools"] = string(raw)
		}
		if err := tx.Model(&mcpServerRow{}).Where("name = ?", name).Updates(set).Error; err != nil {
			return err
		}
		return s.ownOutsideTx(tx, prev.tools(), tools)
	})
	if err != nil {
		return fmt.Errorf("set tools of mcp server %s: %w", name, err)
	}
	return nil
}

// ownOutsideTx grants the owner the tools new to a server's list and
// removes every grant of the tools gone from it.
func (s *Store) ownOutsideTx(tx *gorm.DB, before, after []domain.OutsideTool) error {
	names := func(ts []domain.OutsideTool) []string {
		var out []string
		for _, t := range ts {
			out = append(out, t.ToolName())
		}
		return out
	}
	was, is := names(before), names(after)
	var gone []string
	for _, n := range was {
		if !slices.Contains(is, n) {
			gone = append(gone, n)
		}
	}
	if len(gone) > 0 {
		if err := tx.Where("tool IN ?", gone).Delete(&grantRow{}).Error; err != nil {
			return err
		}
	}
	if ok, err := exists(tx, &workerRow{}, domain.OwnerWorker); err != nil || !ok {
		return err
	}
	for _, n := range is {
		if slices.Contains(was, n) {
			continue
		}
		if err := s.grantTx(tx, "", domain.Grant{WorkerID: domain.OwnerWorker, Tool: n}); err != nil {
			return err
		}
	}
	return nil
}

// SetMCPHealth records whether a server answered, and why not. It is not
// an org change: a worker's tool list does not follow it.
func (s *Store) SetMCPHealth(ctx context.Context, name string, healthy bool, errText string) error {
	err := s.write(ctx, func(tx *gorm.DB) error {
		res := tx.Model(&mcpServerRow{}).Where("name = ?", name).Updates(map[string]any{"healthy": healthy, "error": errText})
		if res.Error == nil && res.RowsAffected == 0 {
			return domain.NotFound("mcp server", name)
		}
		return res.Error
	})
	if err != nil {
		return fmt.Errorf("set health of mcp server %s: %w", name, err)
	}
	return nil
}

// RemoveMCPServer removes a server, its credential and every grant of its
// tools.
func (s *Store) RemoveMCPServer(ctx context.Context, actor, name string) error {
	err := s.write(ctx, func(tx *gorm.DB) error {
		var prev mcpServerRow
		if err := tx.Where("name = ?", name).Take(&prev).Error; err != nil {
			return notFoundOr(err, "mcp server", name)
		}
		if err := tx.Delete(&prev).Error; err != nil {
			return err
		}
		var tools []string
		for _, t := range prev.tools() {
			tools = append(tools, t.ToolName())
		}
		if len(tools) > 0 {
			if err := tx.Where("tool IN ?", tools).Delete(&grantRow{}).Error; err != nil {
				return err
			}
		}
		return s.audit(tx, Change{Action: "remove_mcp_server", Actor: actor, Target: name, Before: prev.toDomain()})
	})
	if err != nil {
		return fmt.Errorf("remove mcp server %s: %w", name, err)
	}
	return nil
}
