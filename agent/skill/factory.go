package skill

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/docker/go-units"

	"github.com/helixml/helix-org/agent/docker"
	"github.com/helixml/helix-org/domain"
)

// Store is what the factory needs of the database; *store.Store has it.
type Store interface {
	GetSkill(ctx context.Context, name string) (domain.Skill, error)
	ListSkills(ctx context.Context) ([]domain.Skill, error)
	SaveSkill(ctx context.Context, actor string, sk domain.Skill) (domain.Skill, error)
	SetSkillState(ctx context.Context, name string, status domain.SkillStatus, container, errText string) error
	TouchSkill(ctx context.Context, name string) error
	DeleteSkill(ctx context.Context, actor, name string) error
	SaveSkillVersion(ctx context.Context, v domain.SkillVersion) error
	SkillVersions(ctx context.Context, name string) ([]domain.SkillVersion, error)
	GetSkillVersion(ctx context.Context, name string, version int) (domain.SkillVersion, error)
	RollbackSkill(ctx context.Context, actor string, sk domain.Skill, from int) (domain.Skill, error)
	SettingOr(ctx context.Context, spec domain.SettingSpec) (string, error)
	DurationSetting(ctx context.Context, spec domain.SettingSpec) time.Duration
	IntSetting(ctx context.Context, spec domain.SettingSpec) int64
	Now() time.Time
}

// Note narrates a step (building, healthy, calling…) to whoever asked for
// it: the tools put each on the calling activation's log. A nil Note says
// nothing.
type Note func(text string)

func (n Note) say(format string, args ...any) {
	if n != nil {
		n(fmt.Sprintf(format, args...))
	}
}

// Port is where a skill's service listens inside its container.
const Port = 8080

// Factory builds, runs and calls skills.
type Factory struct {
	// OnBuild, if set, hears how every build went (the server's metrics).
	// Set it before the factory is used.
	OnBuild func(ok bool, took time.Duration)

	eng  *docker.Engine
	st   Store
	log  *slog.Logger
	http *http.Client

	mu       sync.Mutex
	locks    map[string]*sync.Mutex
	addrs    map[string]string // skill → host:port of its running container
	inflight map[string]int

	baseMu sync.Mutex
}

// New builds a factory. It does no I/O until used.
func New(eng *docker.Engine, st Store, log *slog.Logger) *Factory {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	// No proxy: skills live on a host-local bridge, and a proxy from the
	// environment would only get in the way (or see the inputs).
	tr := &http.Transport{Proxy: nil, MaxIdleConnsPerHost: 4, IdleConnTimeout: 30 * time.Second}
	return &Factory{eng: eng, st: st, log: log.With("component", "skill"), http: &http.Client{Transport: tr},
		locks: map[string]*sync.Mutex{}, addrs: map[string]string{}, inflight: map[string]int{}}
}

// lock serialises everything that changes one skill's container.
func (f *Factory) lock(name string) func() {
	f.mu.Lock()
	l, ok := f.locks[name]
	if !ok {
		l = &sync.Mutex{}
		f.locks[name] = l
	}
	f.mu.Unlock()
	l.Lock()
	return l.Unlock
}

func (f *Factory) addr(name string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.addrs[name]
}

func (f *Factory) setAddr(name, addr string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if addr == "" {
		delete(f.addrs, name)
		return
	}
	f.addrs[name] = addr
}

func (f *Factory) setting(ctx context.Context, spec domain.SettingSpec) string {
	v, _ := f.st.SettingOr(ctx, spec)
	return v
}

func (f *Factory) bytes(ctx context.Context, spec domain.SettingSpec) int64 {
	n, err := units.RAMInBytes(f.setting(ctx, spec))
	if err != nil {
		n, _ = units.RAMInBytes(spec.Default)
	}
	return n
}

// limits reads the container caps from config.
func (f *Factory) limits(ctx context.Context) (docker.Limits, error) {
	pids, err := strconv.ParseInt(f.setting(ctx, PidsSetting), 10, 64)
	if err != nil {
		return docker.Limits{}, fmt.Errorf("%s: %w", PidsSetting.Key, err)
	}
	return docker.ParseLimits(f.setting(ctx, MemorySetting), f.setting(ctx, CPUsSetting), pids,
		f.setting(ctx, TmpSetting), "65534:65534", f.setting(ctx, OCIRuntimeSetting))
}

// perSkill reads one skill's entry of a JSON setting keyed by skill name.
func perSkill[T any](ctx context.Context, f *Factory, spec domain.SettingSpec, name string) (T, error) {
	var all map[string]T
	var zero T
	if err := json.Unmarshal([]byte(f.setting(ctx, spec)), &all); err != nil {
		return zero, fmt.Errorf("%s: %w", spec.Key, err)
	}
	return all[name], nil
}
