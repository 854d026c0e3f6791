# queue-scheduler build, code generation, checks and tests.
SHELL := /usr/bin/env bash
BIN := $(CURDIR)/bin
GO ?= go

# Packages that start an in-process control plane run without the race detector: it slows the
# API server several times over. Everything else runs with it.
# The image and go install tests build binaries as users do; like the integration tests they run
# without -race and with a longer timeout.
INTEGRATION_PKGS = $(shell $(GO) list ./test/integration/... | grep -v /test/integration/queuesim) ./test/image ./test/goinstall
# The scenarios queuesim plays run on the real clock at many times its speed: they get the machine to
# themselves, after the other integration tests, as compiling beside them would slow the scheduler
# they measure.
REALTIME_PKGS := ./test/integration/queuesim
UNIT_PKGS = $(shell $(GO) list ./... | grep -v -e /test/integration -e /test/image -e /test/goinstall -e /test/schedperf -e /pkg/generated/)
# The kubectl plugin is a module of its own (go install …/cmd/kubectl-queue@vX); go.work joins it.
PLUGIN_PKGS := ./cmd/kubectl-queue/...

TOOLS := controller-gen golangci-lint deepcopy-gen client-gen lister-gen informer-gen openapi-gen helm
TOOL_PKGS := sigs.k8s.io/controller-tools/cmd/controller-gen \
	github.com/golangci/golangci-lint/v2/cmd/golangci-lint helm.sh/helm/v3/cmd/helm \
	k8s.io/code-generator/cmd/deepcopy-gen k8s.io/code-generator/cmd/client-gen \
	k8s.io/code-generator/cmd/lister-gen k8s.io/code-generator/cmd/informer-gen \
	k8s.io/kube-openapi/cmd/openapi-gen

# The pinned tools are a module of their own, outside go.work.
TOOLS_GO := GOWORK=off $(GO) -C hack/tools

MODULE := github.com/queue-scheduler/queue-scheduler
VERSION ?= $(shell cat VERSION)
COMMIT ?= $(shell git rev-parse HEAD 2>/dev/null)
# The commit's date, not the build's: the same commit gives the same binary.
BUILD_DATE ?= $(shell git log -1 --format=%cd --date=format-local:%Y-%m-%dT%H:%M:%SZ 2>/dev/null)
# The Kubernetes release the binaries embed; the API server of queuesim and the scheduler report it
# (without it they report v0.0.0-master, which kubectl version and helm's kubeVersion cannot parse).
KUBE_VERSION := $(shell $(GO) list -m -f '{{.Version}}' k8s.io/kubernetes 2>/dev/null)
KUBE_VERSION_PKG := k8s.io/component-base/version
LDFLAGS := -X $(MODULE)/pkg/version.version=$(VERSION) -X $(MODULE)/pkg/version.commit=$(COMMIT) \
	-X $(MODULE)/pkg/version.buildDate=$(BUILD_DATE) -X $(KUBE_VERSION_PKG).gitVersion=$(KUBE_VERSION) \
	-X $(KUBE_VERSION_PKG).gitMajor=$(word 1,$(subst ., ,$(KUBE_VERSION:v%=%))) \
	-X $(KUBE_VERSION_PKG).gitMinor=$(word 2,$(subst ., ,$(KUBE_VERSION)))
# make image: the platforms of the image's index, its reference name, and where it is written.
IMAGE_PLATFORMS ?= linux/amd64 linux/arm64
IMAGE ?= queue-scheduler:$(VERSION)
IMAGE_OUT ?= out/image

SCENARIO ?= examples/scenarios/demo.yaml
# The cases of make bench; BenchmarkEndToEnd (creation included) runs with BENCH=.
BENCH ?= Freshness|Gangs|Memory|Fairness|Reclaim|Throughput
# The throughput case again at scale, in a process of its own (results in out/bench/scale); bigger
# machines: BENCH_SCALE_FLAGS="-throughput-nodes=5000 -queues=1000 -pods=50000".
BENCH_SCALE_FLAGS ?= -throughput-nodes=5000 -queues=1000 -pods=10000
# go test flags for make bench, e.g. BENCH_TESTFLAGS=-cpuprofile=out/bench/cpu.pprof
BENCH_TESTFLAGS ?=
# The scheduler_perf workloads of make bench-upstream (labels of test/schedperf/config/workloads.yaml).
SCHEDPERF_LABELS ?= performance
OUT ?= out/demo

.PHONY: all
all: build

.PHONY: build
build: ## Build the binaries into bin/.
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN)/ ./cmd/... $(PLUGIN_PKGS)

.PHONY: image
image: $(BIN)/ocibuild ## Build the queue-scheduler OCI image archive (no container engine) into $(IMAGE_OUT).
	@for p in $(IMAGE_PLATFORMS); do \
		echo "building $$p"; \
		CGO_ENABLED=0 GOOS=$${p%/*} GOARCH=$${p#*/} $(GO) build -trimpath -ldflags "$(LDFLAGS) -s -w" \
			-o $(IMAGE_OUT)/$${p/\//_}/queue-scheduler ./cmd/queue-scheduler || exit 1; \
	done
	$(BIN)/ocibuild --name queue-scheduler --version $(VERSION) --ref $(IMAGE) --source https://$(MODULE) \
		--out $(IMAGE_OUT)/queue-scheduler.oci.tar \
		$(foreach p,$(IMAGE_PLATFORMS),--binary $(p)=$(IMAGE_OUT)/$(subst /,_,$(p))/queue-scheduler)
	@echo "wrote $(IMAGE_OUT)/queue-scheduler.oci.tar ($(IMAGE)); push it with: skopeo copy --all oci-archive:$(IMAGE_OUT)/queue-scheduler.oci.tar docker://REGISTRY/queue-scheduler:$(VERSION)"

$(BIN)/ocibuild: hack/tools/go.mod hack/tools/go.sum hack/tools/ocibuild/main.go
	$(TOOLS_GO) build -o $(BIN)/ ./ocibuild

# Upstream kubectl of the pinned k8s.io/kubectl (v0.X.Y is kubectl v1.X.Y), stamped with its release
# as upstream's build does; test/integration/docs builds the same and runs the docs' commands with it.
KUBECTL_VERSION = $(shell $(TOOLS_GO) list -m -f '{{.Version}}' k8s.io/kubectl | sed 's/^v0/v1/')
.PHONY: kubectl
kubectl: $(BIN)/kubectl ## Build upstream kubectl (the version pinned in hack/tools) into bin/.

$(BIN)/kubectl: hack/tools/go.mod hack/tools/go.sum hack/tools/kubectl/main.go
	$(TOOLS_GO) build -ldflags "-X $(KUBE_VERSION_PKG).gitVersion=$(KUBECTL_VERSION) \
		-X $(KUBE_VERSION_PKG).gitMajor=$(word 1,$(subst ., ,$(KUBECTL_VERSION:v%=%))) \
		-X $(KUBE_VERSION_PKG).gitMinor=$(word 2,$(subst ., ,$(KUBECTL_VERSION)))" -o $(BIN)/ ./kubectl

.PHONY: tools
tools: $(addprefix $(BIN)/,$(TOOLS)) ## Build the pinned code generators and linters.

$(addprefix $(BIN)/,$(TOOLS)) &: hack/tools/go.mod hack/tools/go.sum
	$(TOOLS_GO) build -o $(BIN)/ $(TOOL_PKGS)

.PHONY: generate
generate: tools ## Regenerate deepcopy, clientset, listers, informers and CRDs.
	hack/update-codegen.sh

.PHONY: fmt
fmt:
	gofmt -s -w $$(git ls-files '*.go')

.PHONY: vet
vet:
	$(GO) vet ./... $(PLUGIN_PKGS)

.PHONY: lint
lint: tools ## Run golangci-lint.
	$(BIN)/golangci-lint run ./... $(PLUGIN_PKGS)

.PHONY: verify
verify: generate ## Regenerate, then fail on any diff, gofmt, vet or lint finding.
	@test -z "$$(gofmt -s -l $$(git ls-files '*.go'))" || { gofmt -s -l $$(git ls-files '*.go'); echo "gofmt: files above need formatting"; exit 1; }
	$(GO) vet ./... $(PLUGIN_PKGS)
	$(BIN)/golangci-lint run ./... $(PLUGIN_PKGS)
	$(BIN)/helm lint --strict --kube-version 1.37.0 charts/queue-scheduler
	$(BIN)/helm lint --strict --kube-version 1.37.0 --set webhook.certManager.enabled=true charts/queue-scheduler
	@git diff --exit-code || { echo "generated files differ: run make generate and commit"; exit 1; }
	@test -z "$$(git ls-files --others --exclude-standard -- pkg/generated manifests/crds apis)" || { git ls-files --others --exclude-standard -- pkg/generated manifests/crds apis; echo "generated files not added to git"; exit 1; }

.PHONY: test
test: ## Unit tests (with -race where cgo and a C compiler exist), then the integration tests on the in-process control plane.
	@cc="$$($(GO) env CC)"; if [[ "$$($(GO) env CGO_ENABLED)" == 1 ]] && command -v "$${cc%% *}" >/dev/null; then race=-race; else \
		echo "make test: cgo is off or no C compiler is installed (CGO_ENABLED=$$($(GO) env CGO_ENABLED), CC=$$($(GO) env CC)):" \
			"the unit tests run WITHOUT the race detector; install a C compiler (gcc) to run them with it"; race=; fi; \
	set -x; $(GO) test $$race -count=1 $(UNIT_PKGS)
	$(GO) test -count=1 -timeout 30m $(INTEGRATION_PKGS)
	$(if $(REALTIME_PKGS),$(GO) test -count=1 -timeout 30m $(REALTIME_PKGS))

.PHONY: run
run: ## Play the queuesim demo on the embedded control plane; report, chart and series in out/demo.
	$(GO) run -ldflags "$(LDFLAGS)" ./cmd/queuesim run $(SCENARIO) --out $(OUT)

.PHONY: bench
bench: ## Benchmarks on the in-process control plane (test/perf); table in out/bench; scale with BENCH_FLAGS="-pods=50000 ...".
	$(GO) test -run '^$$' -bench '$(BENCH)' -benchtime 1x -timeout 60m $(BENCH_TESTFLAGS) ./test/perf/ -args $(BENCH_FLAGS)
	@if [[ "$(BENCH)" == *Throughput* ]]; then \
		echo "Throughput at scale: $(BENCH_SCALE_FLAGS)"; \
		$(GO) test -run '^$$' -bench 'Throughput' -benchtime 1x -timeout 60m $(BENCH_TESTFLAGS) ./test/perf/ \
			-args $(BENCH_FLAGS) -bench-out=$(CURDIR)/out/bench/scale $(BENCH_SCALE_FLAGS); \
	fi

.PHONY: bench-upstream
bench-upstream: ## Upstream scheduler_perf's SchedulingBasic, PreemptionBasic and GangScheduling with the default and the queue-scheduler profile (test/schedperf); ratios in out/bench/schedperf.md; bigger machines: SCHEDPERF_LABELS=large.
	$(GO) test -run '^$$' -bench 'PerfSchedulingQueueScheduler' -benchtime 1x -timeout 90m $(BENCH_TESTFLAGS) ./test/schedperf/ -args -perf-scheduling-label-filter=$(SCHEDPERF_LABELS) $(SCHEDPERF_FLAGS)

.PHONY: clean
clean:
	rm -rf $(BIN)
