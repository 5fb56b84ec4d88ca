# helix-org: `make run` to try it, `make test` to check it.
# CI runs `make test` too (see .ci/run), so the two never drift apart.

GO      ?= go
BIN     := bin/helix-org
VERSION := $(shell git describe --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -X main.version=$(VERSION)

# `make load` knobs.
LOAD_CLIENTS ?= 8
LOAD_CALLS   ?= 200

.PHONY: build run test bench load fuzz lint ci clean

build:
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/helix-org
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "-s -w" -o bin/helix-org-skill-shim ./agent/skill/shim

# The binary's own defaults (./helix-org.db, ./envs, 127.0.0.1:8080), which
# HELIX_ORG_* variables override. Bootstrap is idempotent: it creates the
# owner on first run and mints a fresh token on every run, printing the MCP
# URL and a ready `claude mcp add` line before the server starts.
run: build
	$(BIN) bootstrap
	$(BIN) serve

test:
	$(GO) test -race -count=1 -timeout 15m ./...

bench:
	$(GO) test -run '^$$' -bench . -benchmem -count=1 ./...

load:
	$(GO) run ./cmd/helix-org-load -clients $(LOAD_CLIENTS) -calls $(LOAD_CALLS)
	$(GO) test -count=1 -run '^TestInboundLoad$$' -v ./transports/webhook/

# Short fuzz runs of every inbound parser and verifier (go test runs only
# their seeds). -fuzz takes one target per run, hence one line each. The
# budget is a count, not a duration: Go 1.26's fuzz coordinator can fail a
# duration run at its deadline with nothing found (golang/go#75804).
FUZZTIME ?= 50000x
fuzz:
	$(GO) test -run '^$$' -fuzz '^FuzzInbound$$' -fuzztime $(FUZZTIME) ./transports/webhook/
	$(GO) test -run '^$$' -fuzz '^FuzzParseInbound$$' -fuzztime $(FUZZTIME) ./transports/email/
	$(GO) test -run '^$$' -fuzz '^FuzzAuthorize$$' -fuzztime $(FUZZTIME) ./transports/email/
	$(GO) test -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(FUZZTIME) ./transports/github/
	$(GO) test -run '^$$' -fuzz '^FuzzVerifySignature$$' -fuzztime $(FUZZTIME) ./transports/github/

lint:
	@unformatted="$$(gofmt -l .)"; \
	if [ -n "$$unformatted" ]; then echo "gofmt would reformat:"; echo "$$unformatted"; exit 1; fi
	$(GO) vet ./...

ci: lint test

clean:
	rm -rf bin
