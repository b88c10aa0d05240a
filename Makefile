# `make e2e`  — the main job: set-up (venv, Docker engine, kind, node and workload images,
#               pulled or built offline), a kind cluster, the scenarios, reports in reports/
#               (the HTML report too, also when tests failed).
# `make test` — the framework's own tests (no cluster).
# `make docs` — the guide (docs/) and the API reference as one site: build/docs/index.html.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
REPORTS ?= reports
# K8S_VERSION=1.34 picks another Kubernetes (1.36.2: any released patch of a minor of
# hack/offline/versions.env, built offline: hack/offline/k8s-version.sh); NODE_IMAGE=... an explicit node image;
# OFFLINE=1 always builds the node image locally (auto: when it cannot be pulled).
K8S_VERSION ?=
# the workload families (CASES-workloads.md: ~30 min on 2 cores) run with `make e2e-workloads`:
# with them `make e2e` would no longer fit CI's 90 minutes after a cold offline build
E2E_MARKERS ?= not slow and not workloads
# pytest-xdist workers: how many tests run at once (e2e.run.plan: serial tests on copies of
# their profile's cluster, heavy ones E2E_HEAVY_SLOTS at a time, the rest waiting on timers
# side by side); 0: one test after another, one cluster per profile
E2E_WORKERS ?= 0
PYTEST_ARGS ?=
# a command the scenarios' pytest runs under (make wire-check sets it)
E2E_WRAP ?=
# NO_DOCKER=1: the scenarios' pytest runs with Docker forbidden (hack/no-docker/run: every docker
# call fails loudly), for --kubeconfig runs on a cluster the suite did not make
NO_DOCKER ?=
NO_DOCKER_WRAP := $(if $(NO_DOCKER),hack/no-docker/run)

.PHONY: help app e2e prepare e2e-slow e2e-workloads smoke test docs offline compare matrix lint lock clean clean-reports interrupt-check report wire-check foreign-cluster foreign-cluster-delete idle-cpu bisect

# `make help` (and plain `make`): every target with the line after its `## `
.DEFAULT_GOAL := help
help: ## every target and what it does
	@awk -F ':[^#]*## ' '/^[a-z][a-z0-9-]*:[^=]*## / {printf "make %-16s %s\n", $$1, $$2}' $(firstword $(MAKEFILE_LIST))

# the venv: exactly the versions of uv.lock (every dependency with its hashes, for every Python
# from 3.10 on), the dev tools of `make lint` included, and this project editable. uv, pinned
# here, installs it into the venv made by $(PYTHON); --inexact keeps pip and uv themselves there.
UV_VERSION := 0.13.9
UV := UV_PROJECT_ENVIRONMENT=$(VENV) $(BIN)/uv
$(BIN)/.uv-$(UV_VERSION):
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q uv==$(UV_VERSION)
	touch $@
$(BIN)/.installed: pyproject.toml uv.lock $(BIN)/.uv-$(UV_VERSION)
	$(UV) sync -q --locked --inexact
	touch $@

# after changing a dependency in pyproject.toml: resolve again, write uv.lock (commit it);
# `make lock LOCK_ARGS=--upgrade` takes the newest versions the bounds allow
LOCK_ARGS ?=
lock: $(BIN)/.uv-$(UV_VERSION) ## resolve pyproject.toml again into uv.lock (LOCK_ARGS=--upgrade: the newest allowed)
	$(UV) lock $(LOCK_ARGS)

# no cluster: the framework's tests write no junit.xml/allure-results over a scenario run's.
# CASES: the folders of cases whose modules it imports and checks (every judged measurement name
# registered, no version hole on the upgrade path): add your own, e.g. CASES="scenarios examples apps ../my-cases"
CASES ?= scenarios examples apps
test: $(BIN)/.installed ## the framework's own tests, no cluster (CASES: the case folders it checks)
	env -u E2E_NODE_IMAGE E2E_CASES="$(CASES)" $(BIN)/pytest tests -q

# the site: the guide's pages (docs/*.md, docs/cases/) and the API reference of every module of
# e2e/ from its docstrings, built by Sphinx (the docs group of uv.lock: Sphinx, MyST-Parser for the
# Markdown pages) into $(DOCS)/index.html; offline (no web font, script or image from elsewhere),
# its search in the site. Strict: a warning — a broken link between pages, a missing page, a page
# in no table of contents, a docstring Sphinx cannot read — fails the build. docs/api/ holds the
# reference's generated sources (not committed). `make test` checks that every public name a case
# author uses states its arguments, return value, units and errors (tests/test_api_reference.py).
DOCS ?= build/docs
docs: $(BIN)/.installed ## the guide and the API reference as one site: build/docs/index.html (DOCS=dir)
	rm -rf $(DOCS) docs/api
	$(BIN)/sphinx-build -q -W --keep-going -b html docs $(DOCS)

# the set-up of make e2e alone: Docker engine, kind, the node image of K8S_VERSION (reused when
# built or pulled before; built offline only when missing and no registry answers), the workload
# images; writes $(REPORTS)/profile.env for a direct pytest run (docs/running.md "One case, by hand, on a kept cluster").
# With --kubeconfig in PYTEST_ARGS (a cluster the suite did not make): no kind, no node image, the workload images only
PREPARE_FOR := $(if $(filter --kubeconfig --kubeconfig=%,$(PYTEST_ARGS)),kubeconfig)
prepare: $(BIN)/.installed ## the set-up of make e2e alone: Docker, kind, node and workload images, REPORTS/profile.env
	@mkdir -p $(REPORTS)
	K8S_VERSION=$(K8S_VERSION) E2E_PREPARE_FOR=$(PREPARE_FOR) hack/write-if-ok.sh $(REPORTS)/profile.env hack/prepare.sh

# pytest's exit status is the target's; the run builds its own HTML report at its end (also when
# tests failed; one that cannot be made fails only a passing run: e2e.plugin.options)
e2e: prepare ## the main job: set-up, a kind cluster, the scenarios (E2E_MARKERS), reports in REPORTS
	set -a; . $(REPORTS)/profile.env; set +a; \
	$(E2E_WRAP) $(NO_DOCKER_WRAP) $(BIN)/pytest scenarios -m "$(E2E_MARKERS)" -n $(E2E_WORKERS) --reports-dir $(REPORTS) $(PYTEST_ARGS)

# your own app under the lifecycle contracts (apps/, docs/your-own-app.md): APP=dir of manifests
# (a Deployment or StatefulSet, its Service, optional PDB and app.yaml); several: APP="dir1 dir2";
# without APP the two embedded examples/apps (graceful: every contract holds; naive: a negative
# control); APP=examples/apps/stateful: a StatefulSet. Same set-up and reports as make e2e.
APP ?=
app: prepare ## your own app under the lifecycle contracts (APP=dir; default: examples/apps)
	set -a; . $(REPORTS)/profile.env; set +a; \
	$(E2E_WRAP) $(BIN)/pytest apps $(foreach a,$(APP),--app $(a)) -n $(E2E_WORKERS) --reports-dir $(REPORTS) $(PYTEST_ARGS)

# the HTML report of $(REPORTS)/allure-results, again (a run with a cluster builds it at its end):
# Allure 3 (pinned in hack/report, npm ci into ~/.cache/pod-lifecycle-e2e) in
# $(REPORTS)/allure-report/index.html; without Node.js/npm the plain page $(REPORTS)/summary.html
report: $(BIN)/.installed ## the HTML report of REPORTS/allure-results again
	$(BIN)/python -m e2e.cli.htmlreport $(REPORTS)

# the slow cases: the tail of CL-1 (back-off up to the 300 s cap) and the CL-7 reset after
# 600 s (on its own profile cluster): about 11 minutes each
e2e-slow: ## the slow cases: the CL-1 tail and the CL-7 reset (~11 min each)
	$(MAKE) e2e E2E_MARKERS="slow and not workloads"

# the workload families of docs/cases/CASES-workloads.md (RS, RR, PB, HK, IM, JB, CJ, PC, ST, HP),
# their slow tests (CJ-2, CJ-3, IM-1's back-off tail) left out: ~30 minutes
e2e-workloads: ## the workload families of CASES-workloads.md, their slow tails left out (~30 min)
	$(MAKE) e2e E2E_MARKERS="workloads and not slow"

# build the offline node image (and kind, workload images) without running anything
offline: ## build the offline node image, kind and workload images only
	hack/offline/build.sh $(K8S_VERSION)

clean-reports: ## remove a run's reports from REPORTS (profile.env and the values history stay)
	rm -rf $(REPORTS)/allure-results $(REPORTS)/.incoming-* $(REPORTS)/junit.xml $(REPORTS)/measurements.json* $(REPORTS)/summary.* $(REPORTS)/*/

# make e2e while tcpdump watches every interface of the host that can carry a packet off and the
# suite's Docker bridge, and the host guard counts what it refuses (e2e/cli/wirecheck.py): exit 3
# when a packet left or tried to, or a capture did not see the whole run, although every test passed.
# Root; tcpdump from Debian (installed here when missing).
wire-check: $(BIN)/.installed ## make e2e under tcpdump: fails when a packet leaves the machine (root)
	@command -v tcpdump >/dev/null || [ "$$(id -u)" != 0 ] || { apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q tcpdump; }
	$(MAKE) e2e E2E_WRAP="$(BIN)/python -m e2e.cli.wirecheck --reports $(REPORTS) --"

# the fast API-level cases (smoke marker): under a minute once the cluster is up
smoke: ## the fast API-level cases (smoke marker)
	$(MAKE) e2e E2E_MARKERS=smoke

# smoke runs stopped by Ctrl-C (once, twice) or SIGTERM at chosen moments, on owned, kept and
# --kubeconfig clusters, with and without xdist (hack/interrupt_check.py; 20: every variant twice):
# nothing leaks, reports are written and agree (after make e2e)
INTERRUPTS ?= 20
# KUBECONFIG=PATH (on the command line): the runs on that cluster with --node-agent, a clean end and
# SIGKILL + make clean KUBECONFIG=… too, and what they left on its workers (INTERRUPT_ARGS: e.g.
# --select "-m smoke" --agent-args "--node-selector …"; NO_DOCKER=1 forbids Docker to the check and its runs)
interrupt-check: $(BIN)/.installed ## INTERRUPTS smoke runs stopped by Ctrl-C or SIGTERM, and what they left (after make e2e; KUBECONFIG=: on that cluster)
	set -a; . $(REPORTS)/profile.env; set +a; $(NO_DOCKER_WRAP) $(BIN)/python hack/interrupt_check.py --runs $(INTERRUPTS) \
	  --out $(REPORTS)/interrupts.md $(if $(filter command line,$(origin KUBECONFIG)),--kubeconfig '$(KUBECONFIG)') $(INTERRUPT_ARGS)

# compare two runs' reports: make compare A=reports-1.34 B=reports (exit 1 on unexplained changes);
# e2e.cli.compare needs only the standard library: no venv is built or rebuilt for it
compare: ## what changed between two runs: make compare A=<reports> B=<reports> (exit 1: unexplained)
	$(PYTHON) -m e2e.cli.compare $(A) $(B) $(if $(OUT),--json $(OUT))

# the first released patch between GOOD and BAD (one minor, or across minors: GOOD=1.35.4 BAD=1.36.2)
# whose values for CASE differ from GOOD's, with the compare of that pair (hack/patch_bisect.py: builds
# only the patches the binary search asks, OFFLINE=1; runs every test of CASE, slow ones too); each
# version's reports in REPORTS/<version>, REPORTS/bisect.json. BISECT_LOCK: a flock(1) file held over
# each run. Exit 0: found; 1: BAD does not differ; 2: bad input, nothing built; 3: a run failed
BISECT_LOCK ?=
bisect: $(BIN)/.installed ## first patch whose CASE values differ: make bisect CASE=KB-6 GOOD=1.36.2 BAD=1.36.3
	$(BIN)/python hack/patch_bisect.py --case "$(CASE)" --good "$(GOOD)" --bad "$(BAD)" \
	  --reports $(if $(filter command line,$(origin REPORTS)),$(REPORTS),reports-bisect) \
	  $(if $(E2E_STATE_DIR),--state $(E2E_STATE_DIR)) $(if $(BISECT_LOCK),--lock $(BISECT_LOCK))

# the upgrade path: build what is missing (one version at a time), run the suite on each minor
# into reports-<minor>/ (MATRIX_JOBS at a time: each version has its own clusters), then compare
# along the path into reports-matrix/upgrade.md and upgrade.json. Exit 1 on an unexplained change
# or a failed test in any run (a run's own failure does not stop the others).
MATRIX ?= 1.34 1.35 1.36 1.37
MATRIX_JOBS ?= 1
matrix: $(BIN)/.installed ## the suite on every minor of MATRIX, compared along the upgrade path into reports-matrix/
	for v in $(MATRIX); do K8S_VERSION=$$v hack/prepare.sh > /dev/null || exit 1; done
	$(MAKE) -j$(MATRIX_JOBS) $(addprefix matrix-run-,$(MATRIX))
	$(BIN)/python -m e2e.cli.upgrade $(addprefix reports-,$(MATRIX)) --out reports-matrix

# one version of the matrix; its failures are judged by e2e.cli.upgrade, not here
matrix-run-%:
	-$(MAKE) e2e K8S_VERSION=$* REPORTS=reports-$*

# lint: ruff on the whole tree, mypy on e2e/ (both configured in pyproject.toml, pinned in
# uv.lock) and the CI workflow with actionlint (built from its Go module, cached)
ACTIONLINT := $(HOME)/.cache/pod-lifecycle-e2e/bin/actionlint-v1.7.12
$(ACTIONLINT):
	mkdir -p $(dir $@) && GOBIN=$(dir $@)tmp go install github.com/rhysd/actionlint/cmd/actionlint@v1.7.12 && mv $(dir $@)tmp/actionlint $@
lint: $(BIN)/.installed $(ACTIONLINT) ## ruff on the tree, mypy on e2e/, actionlint on the workflows
	$(BIN)/ruff check .
	$(BIN)/mypy
	$(ACTIONLINT) -color=false .github/workflows/*.yml

# issue 45 step 1: the idle CPU and memory of kind nodes and the host's CPU pressure, no test
# running (hack/idle_cpu.py): the clusters of PROFILES made (and deleted at the end), or CLUSTERS
# that exist (comma-separated, never deleted); every node Ready, SETTLE_S s, then SAMPLE_S s of samples
# every 10 s. A markdown table on stdout, JSON in REPORTS/idle-cpu.json. Exit 2 (no cluster made)
# while a run of the suite is alive or other kind clusters run (ALLOW_OTHERS=1: measure anyway).
PROFILES ?= default multi-node
CLUSTERS ?=
SAMPLE_S ?= 180
SETTLE_S ?= 60
ALLOW_OTHERS ?=
idle-cpu: prepare ## idle CPU/memory per kind node and host CPU pressure, no test running (PROFILES, CLUSTERS, SAMPLE_S)
	set -a; . $(REPORTS)/profile.env; set +a; \
	$(BIN)/python hack/idle_cpu.py --profiles "$(PROFILES)" --clusters "$(CLUSTERS)" --seconds $(SAMPLE_S) \
	  --settle $(SETTLE_S) --out $(REPORTS)/idle-cpu.json $(if $(ALLOW_OTHERS),--allow-others)

# the kind to delete with, whatever REPORTS a run used: the run's (REPORTS/profile.env), else the one
# on PATH, else the pinned one make e2e installed (make clean, make foreign-cluster-delete)
FIND_KIND = set -a; if [ -f $(REPORTS)/profile.env ]; then . $(REPORTS)/profile.env; fi; set +a; \
	if [ -z "$$E2E_KIND" ] && ! command -v kind >/dev/null; then \
	  E2E_KIND=$$(ls $${E2E_CACHE:-$$HOME/.cache/pod-lifecycle-e2e}/offline/bin/kind-* 2>/dev/null | tail -1); export E2E_KIND; fi

# remove what dead runs left: unused clusters (kept ones too), namespaces of dead runs, lock
# files (DRY_RUN=1: only list them), with FIND_KIND's kind. `make clean KUBECONFIG=PATH
# [CONTEXT=NAME]` (on the command line only: an exported KUBECONFIG is never cleaned by surprise)
# cleans that cluster instead: what dead runs left there (armed undos fire now, namespaces)
clean: $(BIN)/.installed ## remove what dead runs left: clusters no process uses, namespaces, lock files (DRY_RUN=1: list)
	$(FIND_KIND); \
	$(BIN)/python -m e2e.cli.clean $(if $(DRY_RUN),--dry-run) \
	  $(if $(filter command line,$(origin KUBECONFIG)),--kubeconfig '$(KUBECONFIG)' $(if $(CONTEXT),--context '$(CONTEXT)'))

# the "foreign" cluster (issue 42 item 6; hack/foreign_cluster.py): plain `kind create cluster` from
# hack/foreign-cluster.yaml (1 control plane + 2 workers in zones, eviction thresholds of its own, one
# worker with a 20 s crash-loop back-off cap), on the guarded network, workload images loaded;
# kubeconfig $(FOREIGN_DIR)/kubeconfig. Not the suite's: make clean leaves it; make foreign-cluster-delete removes it.
# Then e.g.: make e2e NO_DOCKER=1 PYTEST_ARGS="--kubeconfig $(FOREIGN_DIR)/kubeconfig"
FOREIGN_NAME ?= pod-lifecycle-foreign
FOREIGN_DIR ?= $(HOME)/.cache/pod-lifecycle-e2e/foreign
foreign-cluster: prepare ## a kind cluster the suite did not make, for --kubeconfig runs (FOREIGN_DIR/kubeconfig)
	set -a; . $(REPORTS)/profile.env; set +a; \
	E2E_STATE_DIR=$(FOREIGN_DIR) $(BIN)/python hack/foreign_cluster.py create --name $(FOREIGN_NAME) --dir $(FOREIGN_DIR)

foreign-cluster-delete: $(BIN)/.installed ## delete the foreign cluster (and the guarded network once nothing is on it)
	$(FIND_KIND); \
	E2E_STATE_DIR=$(FOREIGN_DIR) $(BIN)/python hack/foreign_cluster.py delete --name $(FOREIGN_NAME) --dir $(FOREIGN_DIR)
