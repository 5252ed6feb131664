# One vocabulary for building, generating and testing vmctl. Everything lands in _out/.
SHELL := /bin/bash
BINARIES := virt-controller virt-handler virt-launcher virt-api vmctl virtctl sidecar-shim
TOOLS_BIN := $(CURDIR)/_out/tools/bin
export VMCTL_TOOLS_BIN := $(TOOLS_BIN)
# Long test runs print each test's name and result as it ends (gotestsum, from the Go module
# proxy, cached by Go after the first run).
GOTESTSUM := go run gotest.tools/gotestsum@v1.13.0 --format testname --

.PHONY: all build images generate verify lint unit fuzz integration e2e e2e-cluster test test-preflight tools \
	cluster-up cluster-down cluster-sync chaos chaos-short bench-controller bench bench-smoke demo bench-vmctl clean

all: build

## build: every binary into _out/bin (static, no cgo), stamped with the checkout's version (VERSION= overrides)
build:
	CGO_ENABLED=0 go build -trimpath -ldflags "$$(hack/version-ldflags.sh)" -o _out/bin/ $(addprefix ./cmd/,$(BINARIES))
	ln -sf virtctl _out/bin/kubectl-virt

## images: every component image as a tarball in _out/images (no Docker: go-containerregistry)
images: build
	go run ./hack/imagebuilder --out _out/images

## generate: deepcopy, clientset, listers, informers, apply configurations and CRDs from api/
generate:
	hack/update-codegen.sh

## verify: fail when generated code or CRDs are stale, the code is not gofmt-clean, or a hack/ script fails shellcheck
verify:
	hack/verify.sh

## lint: go vet over the project, e2e tests included
lint:
	go vet ./...
	go vet -tags e2e ./test/e2e/...
	go vet -tags chaos ./test/chaos/...

## tools: the pinned Kubernetes, etcd and kubectl binaries tests run against (cached by Go)
tools:
	hack/build-tools.sh etcd kube-apiserver kubectl kube-controller-manager

## unit: tests that need nothing but Go
unit:
	go test $$(go list ./... | grep -v /test/) ./test/bench/...

## fuzz: each fuzz test for a bounded number of inputs (FUZZTIME), corpus in Go's cache, nothing written to the clone
# A count, not a duration: Go 1.26's fuzz coordinator can fail a run that ends on a wall-clock
# -fuzztime with a bare "context deadline exceeded" and no crasher (golang/go#75804, fixed in
# Go 1.27). -timeout still bounds a run.
FUZZTIME ?= 10000x
fuzz:
	go test -run '^$$' -fuzz '^FuzzAdmission$$' -fuzztime $(FUZZTIME) -timeout 5m ./virtapi/admission
	go test -run '^$$' -fuzz '^FuzzConvert$$' -fuzztime $(FUZZTIME) -timeout 5m ./handler/domain

## integration: tests against a real kube-apiserver and etcd started per package
integration: tools
	$(GOTESTSUM) -count=1 ./test/integration/...

## cluster-up: a real cluster on this machine, state in _cluster/ (REAL_NODES=n real nodes, default 1; NODES=n adds fake nodes)
cluster-up:
	REAL_NODES=$(REAL_NODES) NODES=$(NODES) hack/cluster/up.sh

## cluster-down: stop it and remove what it created on the host
cluster-down:
	hack/cluster/down.sh

## cluster-sync: build images, load them into the cluster and deploy manifests/
cluster-sync:
	hack/cluster-sync.sh

## e2e: the end-to-end suite against a running cluster (KUBECONFIG, default _cluster/kubeconfig)
e2e:
	$(GOTESTSUM) -tags e2e -count=1 -timeout 60m ./test/e2e/...

## chaos: faults one at a time (kill -9 of the project's processes, API server paused, etcd restarted, a node lost) under a mixed workload on two real nodes; reports recovery times (CHAOS_SHORT=1: the CI subset)
chaos:
	CHAOS_SHORT=$(CHAOS_SHORT) go test -tags chaos -count=1 -timeout 90m -v -run '^TestChaos$$' ./test/chaos/

## chaos-short: the CI subset of make chaos (kill -9 of virt-handler and of a guest's QEMU, a node lost and back)
chaos-short:
	$(MAKE) --no-print-directory chaos CHAOS_SHORT=1

## e2e-cluster: cluster-up, cluster-sync, e2e, cluster-down
e2e-cluster:
	hack/e2e-cluster.sh

## bench-controller: 1000 VMs on kwok nodes against a 1000-replica Deployment (COUNT=, NODES=)
bench-controller:
	hack/bench-controller.sh

## bench: performance next to its floors: 100 real guests direct and through vmctl, live migration, 1000 VMs on kwok nodes (hack/bench.sh)
bench:
	hack/bench.sh

## bench-smoke: make bench in miniature (3 guests, 1 boot per disk size, 10 requests through --forward, 1 live migration, 20 VMs on 5 kwok nodes), to keep it working; asserts no timing
bench-smoke:
	BENCH_DOWN=1 BENCH_VMS=3 BENCH_DISK_RUNS=1 BENCH_FORWARD_REQUESTS=10 BENCH_MIGRATIONS=1 BENCH_KWOK_VMS=20 BENCH_KWOK_NODES=5 hack/bench.sh

## demo: vmctl end to end: cluster up, deploy, the examples' Deployment of VMs, a Service, scaling
demo:
	hack/demo.sh

## bench-vmctl: vmctl pod Running -> clone's VMI Running vs the same VM started directly (RUNS=)
bench-vmctl:
	go run ./test/bench/vmctl --runs $(or $(RUNS),5)

## test: everything CI runs, on a cluster of its own (it refuses to start while this checkout's cluster is up)
test: test-preflight verify lint unit fuzz integration e2e-cluster bench-smoke

test-preflight:
	@if hack/cluster/running.sh; then \
	  echo "make test brings a local cluster up and down for itself, and this checkout's cluster is up" >&2; \
	  echo "(make demo or make cluster-up). Leaving it alone: run make cluster-down first, or make e2e" >&2; \
	  echo "to run the e2e suite against the cluster that is up." >&2; exit 1; fi

clean:
	rm -rf _out
