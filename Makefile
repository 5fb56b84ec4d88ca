# helix-org: `make run` to try it, `make test` to check it.
# CI runs `make test` too (see .ci/run), so the two never drift apart.

GO      ?= go
BIN     := bin/helix-org
VERSION := $(shell git describe --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -X main.version=$(VERSION)

# `make load` knobs.
LOAD_CLIENTS ?= 8
LOAD_CALLS   ?= 200

.PHONY: build run test test-postgres pg-coverage cluster bench bench-read bench-memory load soak lean-compare fuzz lint ci clean print-staticcheck-version

build:
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/helix-org
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "-s -w" -o bin/helix-org-skill-shim ./agent/skill/shim

# The binary's own defaults (./helix-org.db, ./envs, 127.0.0.1:8080), which
# HELIX_ORG_* variables override. One process: it binds the port first (a
# taken port names its holder and mints nothing), creates the database on
# a fresh checkout (--init), then bootstraps: the first run creates the
# owner and prints its token; later runs print the URL and a sign-in link
# and keep the token you have (bootstrap --new-token mints another).
run: build
	$(BIN) serve --init --bootstrap

# TEST_PAR: go test runs -p test binaries at once and, in each, -parallel
# of its parallel tests; both default to the core count. Many tests wait
# more than they compute (servers, agents and containers they start, a
# PostgreSQL they query), so on two cores -p 4 -parallel 6 keeps the
# cores busy: on 2026-12-02 make test took 342 s instead of 451 and
# cmd/helix-org alone 191 s instead of 295, with the same CPU.
TEST_PAR ?= -p 4 -parallel 6

# -timeout is per package: cmd/helix-org, the end-to-end suite, takes
# 6–7 minutes under -race on two cores (its tests that touch no
# process-wide state run in parallel), and took over 25 on a machine that
# ran about three times slower for hours (2026-11-29), so 45m: a slow
# machine is not a failed test. GORACE=atexit_sleep_ms=0: a -race binary otherwise
# sleeps 1 s as it exits, and the end-to-end tests start many (the CLI,
# agents), so the suite spent minutes asleep. The memory benchmark's
# claim (store's TestMemoryOutcome) runs on the second line, without
# -race: under it, its 4,500 runs' ends took 280 s of CPU-bound tail.
test:
	GORACE=atexit_sleep_ms=0 $(GO) test -race -count=1 $(TEST_PAR) -timeout 45m ./...
	$(GO) test -count=1 -timeout 10m -run '^TestMemoryOutcome$$' ./store/

# The whole suite again with every store a test opens (store/storetest)
# on PostgreSQL: a throwaway cluster per test binary from Debian's
# postgresql packages, a database per test. Tests that open a SQLite file
# by its path stay on SQLite. CI runs it with PG_RACE= : the Go code is
# the same one make test already ran under -race; this run checks the SQL.
# Of cmd/helix-org, whose servers open their databases by path, only the
# tests that choose PostgreSQL under HELIX_ORG_TEST_DB run (PG_CMD_TESTS):
# the rest would be the same SQLite runs again, 4–9 minutes of CI. Its
# cluster and PostgreSQL tests run on PostgreSQL in make test already.
# Of the packages whose tests can open a store (PG_ALL: they build with
# store/storetest), those in PG_OMIT are left out: their tests reach no
# statement of store (where all the SQL is) that other packages' tests
# miss, so they would send the same SQL again (`make pg-coverage`
# measures it: on 2026-12-01 these reached nothing else but five error
# returns, a third of the run's package-seconds). The others (domain,
# the wire fakes, git, the parsers) open no database.
# store's TestMemoryOutcome (PG_SKIP) is left out: it is the memory
# benchmark's claim, worlds of 1,500 runs (118 s for three, two thirds of
# store's time on PostgreSQL), statistics of Go code make test checks on
# SQLite; the SQL it goes through runs here in store's memory tests
# (recall against a full scan, shared credit, a run citing 150 insights).
PG_ALL       ?= $(shell $(GO) list -test -f '{{if .ForTest}}{{range .Deps}}{{$$.ForTest}} {{.}}{{"\n"}}{{end}}{{end}}' ./... | \
	awk '$$2 == "github.com/helixml/helix-org/store/storetest" { print $$1 }' | sort -u | grep -v '/cmd/helix-org$$')
PG_OMIT      ?= agent agent/docker agent/helix agent/kubernetes agent/skill cmd/helix-org-load demos/getting-started \
	gateway server/metrics transports/discord transports/github transports/gitlab transports/slack transports/telegram
PG_PACKAGES  ?= $(filter-out $(addprefix github.com/helixml/helix-org/,$(PG_OMIT)),$(PG_ALL))
PG_CMD_TESTS ?= ^(TestSeveralOrgs|TestArchive)
PG_RACE      ?= -race
PG_SKIP      ?= ^TestMemoryOutcome$$
test-postgres:
	@test -n "$(PG_PACKAGES)" || { echo "no packages to run on PostgreSQL"; exit 1; }
	HELIX_ORG_TEST_DB=postgres $(GO) test $(PG_RACE) -count=1 $(TEST_PAR) -timeout 40m -skip '$(PG_SKIP)' $(PG_PACKAGES)
	HELIX_ORG_TEST_DB=postgres $(GO) test $(PG_RACE) -count=1 $(TEST_PAR) -timeout 40m -run '$(PG_CMD_TESTS)' ./cmd/helix-org/

# Each package of PG_ALL on PostgreSQL with coverage of store: which
# store code only it reaches (scripts/pg-coverage.sh; not CI).
pg-coverage:
	PG_ALL="$(PG_ALL)" PG_OMIT="$(PG_OMIT)" PG_SKIP='$(PG_SKIP)' PG_CMD_TESTS='$(PG_CMD_TESTS)' bash scripts/pg-coverage.sh

# bench runs every benchmark, BenchmarkReadEvents on SQLite among them;
# `make bench-read` runs that one on both stores.
# Two servers on one throwaway PostgreSQL database, 10,000 events to 100
# AI workers through both, one server killed mid-run (make test runs the
# same test with 1,000 events).
cluster:
	HELIX_ORG_CLUSTER_EVENTS=10000 $(GO) test -race -count=1 -timeout 20m -run '^TestClusterTwoServersOneDatabase$$' -v ./cmd/helix-org/

bench:
	$(GO) test -run '^$$' -bench . -benchmem -count=1 ./...

# read_events' store read on one stream of 1k, 10k, 100k and 1M events
# (the newest page and one from the middle), p50-ms and p99-ms, on SQLite
# and on a throwaway PostgreSQL cluster. Target: p50 under 2 ms at every size.
bench-read:
	$(GO) test -run '^$$' -bench '^BenchmarkReadEvents$$' -benchtime 200x -count=1 ./store/
	HELIX_ORG_TEST_DB=postgres $(GO) test -run '^$$' -bench '^BenchmarkReadEvents$$' -benchtime 200x -count=1 ./store/

# Insight memory: precision@5, calibration and time to sink of the
# baseline and learned rankings after 1,500 simulated activations in each
# of three mixes, over seeds 1-5 (MEMORY_SEEDS=6,7,8 plays others), and
# recall latency at 100k insights (docs/performance.md, Insight memory).
MEMORY_SEEDS ?= 1,2,3,4,5
bench-memory:
	$(GO) test -run '^$$' -bench '^BenchmarkMemoryOutcome$$' -benchtime 1x -count 1 -v ./store/ -args -memory.seeds=$(MEMORY_SEEDS)
	$(GO) test -run '^$$' -bench '^BenchmarkMemoryRecall100k$$' -benchtime 500x -count 1 ./store/

# The load tool prints publish with group commit and with a commit per
# write, and the disk's fsync rate, with go-sdk clients and then with
# clients that post JSON-RPC themselves (little client CPU beside the
# server's); the benchmark does the same for
# inbound webhooks from 16 senders.
load:
	$(GO) run ./cmd/helix-org-load -clients $(LOAD_CLIENTS) -calls $(LOAD_CALLS)
	$(GO) run ./cmd/helix-org-load -clients $(LOAD_CLIENTS) -calls $(LOAD_CALLS) -client wire
	$(GO) test -count=1 -run '^TestInboundLoad$$' -v ./transports/webhook/
	$(GO) test -count=1 -run '^$$' -bench '^BenchmarkInboundWebhook$$/sync=FULL' -benchtime 8000x ./transports/webhook/

# helix-org serve in a process of its own under a steady publish, webhook
# and read_events load for SOAK_DURATION, printing its resident memory, Go
# heap, goroutines and open files each minute (scripts/soak.sh; not CI).
SOAK_DURATION ?= 20m
soak:
	SOAK_DURATION=$(SOAK_DURATION) bash scripts/soak.sh

# helix-org serve from BASE (a commit) and from this tree, side by side:
# cold start (exec to first MCP answer) on an empty and on a big database
# (LEAN_WORKERS AI workers, LEAN_EVENTS events), resident memory idle and
# after the publish run, read_events (limit 20, short history), publish
# and webhook rates — interleaved rounds, medians, the machine's load
# (scripts/lean-compare.sh; not CI). Issue #35's baseline is aa9d46f.
BASE ?= aa9d46f
lean-compare:
	BASE=$(BASE) bash scripts/lean-compare.sh

# Short fuzz runs of the inbound parsers and signature checks that stand
# alone (go test runs only their seeds; Slack's and Telegram's event
# parsers read the store, and their packages' tests drive them over HTTP).
# -fuzz takes one target per run, hence one line each. The
# budget is a count, not a duration: Go 1.26's fuzz coordinator can fail a
# duration run at its deadline with nothing found (golang/go#75804).
# -tags fuzzonly leaves out the test files that reach the store: -fuzz
# compiles every package in the test binary with coverage instrumentation,
# and theirs would have it build gorm, pgx and SQLite's C again: cold, the
# stage took 577 CPU-seconds with them and 205 without (2026-12-02).
FUZZTIME ?= 50000x
FUZZ      = $(GO) test -tags fuzzonly -run '^$$' -fuzztime $(FUZZTIME)
fuzz:
	$(FUZZ) -fuzz '^FuzzInbound$$' ./transports/webhook/
	$(FUZZ) -fuzz '^FuzzParseInbound$$' ./transports/email/
	$(FUZZ) -fuzz '^FuzzAuthorize$$' ./transports/email/
	$(FUZZ) -fuzz '^FuzzParse$$' ./transports/github/
	$(FUZZ) -fuzz '^FuzzVerifySignature$$' ./transports/github/
	$(FUZZ) -fuzz '^FuzzParse$$' ./transports/gitlab/
	$(FUZZ) -fuzz '^FuzzVerify$$' ./transports/slack/

# staticcheck is installed by .ci/run (go install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)).
STATICCHECK_VERSION := v0.8.2
STATICCHECK ?= $(shell command -v staticcheck || echo $$($(GO) env GOPATH)/bin/staticcheck)

lint:
	@unformatted="$$(gofmt -l .)"; \
	if [ -n "$$unformatted" ]; then echo "gofmt would reformat:"; echo "$$unformatted"; exit 1; fi
	$(GO) vet ./...
	@test -x "$(STATICCHECK)" || { echo "staticcheck not found: go install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)"; exit 1; }
	$(STATICCHECK) ./...

ci: lint test

clean:
	rm -rf bin

print-staticcheck-version:
	@echo $(STATICCHECK_VERSION)
