# Entry points. `make run` and `make test` each create the virtualenv and install on first use.
PYTHON ?= python3.11
VENV ?= .venv
BIN := $(VENV)/bin
INSTALLED := $(VENV)/.installed

.PHONY: install install-bench run test test-sequences test-fast test-dist test-unit test-adapter test-adapter-connect test-adapter-thrift test-adapter-remote test-reliability \
	test-cluster test-multihost test-auth test-metastore test-threads test-ops lint fix clean interop bench \
	bench-smoke bench-analyst test-docs \
	endpoint-start endpoint-stop endpoint-status cluster-start cluster-stop cluster-status \
	metastore-start metastore-stop metastore-status

# The adapter (its own distribution, dbt-sparkdelta/, with its tests' dependencies) and the
# project, both editable; then the project's dbt packages (delta_ops, by path).
$(INSTALLED): pyproject.toml dbt-sparkdelta/pyproject.toml packages.yml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e './dbt-sparkdelta[dev]' -e '.[dev]'
	$(BIN)/dbt deps --quiet --project-dir . --profiles-dir .
	@touch $@

install: $(INSTALLED)

# The benchmark's plotting, installed once (not at each run: `.ci/run` runs bench-smoke beside
# a test suite, whose processes would see the project reinstalled under them).
BENCH_INSTALLED := $(VENV)/.bench-installed
$(BENCH_INSTALLED): $(INSTALLED)
	$(BIN)/python -m pip install --quiet -e '.[dev,bench]'
	@touch $@

install-bench: $(BENCH_INSTALLED)

# The Debian packages a target's services need (slapd, nginx, PostgreSQL), installed when
# missing, so a fresh machine runs the target (apt-get: root and Debian's registry).
define debian_packages
	@missing=$$(for package in $(1); do dpkg -s $$package >/dev/null 2>&1 || echo $$package; done); \
	if [ -n "$$missing" ]; then \
		echo "installing Debian packages:" $$missing; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
			--no-install-recommends $$missing >/dev/null; \
	fi
endef

## The main job: land the initial data in bronze, then `dbt build` the whole project.
run: $(INSTALLED)
	$(BIN)/lakehouse run

# What `make test` leaves to targets of their own (each run by .ci/run or named in the README).
NOT_IN_TEST := not slow and not sequence and not cluster and not auth and not connect \
	and not metastore and not multihost and not distribution and not docs_site
# Two pytest processes (pytest-xdist), each with its own Spark session; the tests that share a
# build or a project stay in one (python_tests/conftest.py, worker_group). TEST_WORKERS=0: one.
TEST_WORKERS ?= 2
IN_WORKERS = $(if $(filter 0,$(TEST_WORKERS)),,-n $(TEST_WORKERS) --dist loadscope --no-loadscope-reorder)

## The test suite of every part: unit tests (the project's and the adapter's), dbt on Spark +
## Delta (integration, dbt's adapter suite's quick classes, the endpoint), SQL and Python lint.
test: $(INSTALLED)
	$(BIN)/python -m pytest --durations=15 -m "$(NOT_IN_TEST)" $(IN_WORKERS) \
		python_tests dbt-sparkdelta/tests

## The long change sequences: bronze commits no batch id could follow (late changes, deletes,
## erasure, compaction) and seeded random sequences, each build compared with an independent
## recompute and a full refresh; and a random upstream history under `strategy: cdf` snapshots,
## each run compared with dbt's check strategy. `.ci/run` runs it after `make test`. Two pytest
## processes, as `make test` (one dbt command after another leaves a core idle); a module
## stays in one.
test-sequences: $(INSTALLED)
	$(BIN)/python -m pytest -rA --durations=5 -m "sequence and not slow" $(IN_WORKERS) \
		python_tests/integration dbt-sparkdelta/tests/functional/test_snapshot_cdf.py

## Reliability and safety, slow parts included: concurrent writers, crashes (SIGKILL at named
## points and at random moments), idempotency, bad input, dangerous operations, endpoint faults,
## secrets; and incremental = full refresh = an independent recompute over long random sequences.
test-reliability: $(INSTALLED)
	$(BIN)/python -m pytest -rA python_tests/unit/test_retry.py python_tests/integration/reliability \
		python_tests/integration/test_equivalence.py

## The whole project with dbt's threads (4) on the session, thrift and connect targets: THREADS_RUNS
## (default 5) green `dbt build`s back to back on each, Python models at the same time; and a
## Python model that fails without a message shows its type and traceback on each target.
test-threads: $(INSTALLED)
	$(BIN)/python -m pytest -rA -s python_tests/integration/test_threads.py

## The project on a Spark standalone cluster started here (a master and two 1-core workers on
## loopback): the embedded target and the endpoint run the pipeline on its executors.
test-cluster: $(INSTALLED)
	$(BIN)/python -m pytest -rA -s -m cluster python_tests/integration/test_cluster.py

## The deployment across hosts on this machine: the master, two workers, an LDAP directory, a
## PostgreSQL metastore, the endpoint (LDAP, Connect token behind an nginx TLS proxy) and a dbt
## client building with 4 threads while a reader polls the seeds, each in its own network
## namespace with its own address; the reference build is a first `lakehouse run` in a new home,
## whose output must be quiet (root; installs iproute2, openssl, slapd, ldap-utils,
## nginx-light, postgresql and its JDBC driver when missing).
test-multihost: $(INSTALLED)
	$(call debian_packages,iproute2 openssl slapd ldap-utils nginx-light postgresql libpostgresql-jdbc-java)
	$(BIN)/python -m pytest -rA -s -m multihost python_tests/integration/test_multihost.py

## The endpoint's client authentication: Thrift with LDAP against a real slapd started here
## (installs Debian's slapd and ldap-utils when missing).
test-auth: $(INSTALLED)
	$(call debian_packages,slapd ldap-utils)
	$(BIN)/python -m pytest -rA -s -m auth python_tests/integration/test_endpoint_auth.py

## A shared Hive metastore on a local PostgreSQL started here (installs Debian's postgresql and
## libpostgresql-jdbc-java when missing): the endpoint and an embedded dbt run see each other's tables, four
## dbt processes write at once, a view longer than Derby's 32,700 characters.
test-metastore: $(INSTALLED)
	$(call debian_packages,postgresql libpostgresql-jdbc-java)
	$(BIN)/python -m pytest -rA -s -m metastore python_tests/integration/test_metastore.py

## What a stranger does: the adapter's wheel alone in a clean virtualenv, `dbt init`, the
## operations package by path, a project with no file_format (a copy of delta_ops' integration
## tests) built twice, its operation tests run (as `make test-ops` runs them), cloned, inspected;
## a copied `lakehouse` home refused, and a new home's first command quiet (a whole first
## `lakehouse run`'s output: test-multihost). Two pytest processes (a module stays in one): the
## stranger on the pinned stack beside the one on the oldest stack and the home's tests.
test-dist: $(INSTALLED)
	$(BIN)/python -m pytest -rA -m distribution $(IN_WORKERS) \
		python_tests/distribution python_tests/integration/test_cli.py

## The dbt docs site: `dbt docs generate` after a build (the catalog from the tables), served on
## loopback and opened in headless Chromium: fct_orders' page shows its YAML's description and
## columns with the tables' types, its lineage graph and the project's draw their nodes, every
## model and column described. Screenshots in DOCS_SITE_OUT (pytest's --basetemp, emptied at
## each run). Installs Debian's chromium when /usr/bin/chromium is missing, and playwright-core
## (pinned by python_tests/docs_site/package-lock.json) with `npm ci` when the lock changed.
DOCS_SITE := python_tests/docs_site
DOCS_SITE_OUT ?= /tmp/lakehouse-test-docs

$(DOCS_SITE)/node_modules/.installed: $(DOCS_SITE)/package.json $(DOCS_SITE)/package-lock.json
	cd $(DOCS_SITE) && npm ci --no-audit --no-fund --loglevel=error
	@touch $@

test-docs: $(INSTALLED) $(DOCS_SITE)/node_modules/.installed
	@test -x /usr/bin/chromium || { echo "installing Debian's chromium"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
			--no-install-recommends chromium >/dev/null; }
	$(BIN)/python -m pytest -rA -m docs_site --basetemp=$(DOCS_SITE_OUT) $(DOCS_SITE)

## delta_ops' integration tests, from their folder on its own profile (state under its target/):
## one `dbt build` (the time-travel macros' models compared with seeds of expected rows), every
## operation dry run then real, checked on the tables (run_all_operation_tests), and
## diff_relations with fail_on_diff failing the command on relations that differ.
OPS_TESTS := delta_ops/integration_tests
OPS_DBT := cd $(OPS_TESTS) && DBT_PROFILES_DIR=. $(abspath $(BIN))/dbt

test-ops: $(INSTALLED)
	$(OPS_DBT) deps --quiet
	$(OPS_DBT) build
	$(OPS_DBT) run-operation run_all_operation_tests
	@$(OPS_DBT) run-operation diff_relations \
		--args '{a: accounts, b: raw_accounts, fail_on_diff: true}' > target/fail_on_diff.log 2>&1; \
	status=$$?; \
	if [ $$status -ne 0 ] && grep -q "data differs: 1 removed, 1 added, 1 changed (a = .*); fail_on_diff is set" \
		target/fail_on_diff.log; then \
		echo "diff_relations with fail_on_diff failed the command on relations that differ, as it should"; \
	else cat target/fail_on_diff.log; \
		echo "expected diff_relations with fail_on_diff to fail on accounts vs raw_accounts"; exit 1; fi

## The fast gate (under 2 minutes): the unit tests (no Spark JVM), ruff and sqlfluff. sqlfluff's
## dbt templater does start one: before compiling the models it fills dbt's relation cache, and
## listing a schema opens the profile's `local` connection, the embedded Spark session with Delta.
## `.ci/run` runs it before `make test`.
test-fast: lint
	$(BIN)/python -m pytest -q python_tests/unit dbt-sparkdelta/tests/unit

test-unit: $(INSTALLED)
	$(BIN)/python -m pytest python_tests/unit dbt-sparkdelta/tests/unit

## dbt's standard adapter test suite (dbt-tests-adapter), from the adapter's own folder
## (dbt-sparkdelta/tests/functional) on the embedded session target, its slow classes included
## (`make test` runs the others); -rs lists every skipped class's reason.
ADAPTER_SUITE := $(BIN)/python -m pytest -rs dbt-sparkdelta/tests/functional
# The project's endpoint, started once for the commands after `--`, each run on the targets named
# (SPARKDELTA_TEST_TARGET; the endpoint's address and token in SPARKDELTA_TEST_*).
WITH_ENDPOINT := $(BIN)/python -m python_tests.with_endpoint
CONNECT_TESTS := $(BIN)/python -m pytest -rs -m connect python_tests/integration/test_connect_method.py

test-adapter: $(INSTALLED)
	$(ADAPTER_SUITE)

## The same suite on the `connect` method (SQL and Python models through Spark Connect) against
## the project's endpoint, started here with a Connect token; then the connect target's own
## tests: the token refused and accepted, the project's SQL + Python models, a lost endpoint.
test-adapter-connect: $(INSTALLED)
	$(WITH_ENDPOINT) connect -- $(ADAPTER_SUITE)
	$(CONNECT_TESTS)

## The same suite on the `thrift` method (SQL through the Spark Thrift server, Python models
## through Spark Connect) against the project's endpoint, started here.
test-adapter-thrift: $(INSTALLED)
	$(WITH_ENDPOINT) thrift -- $(ADAPTER_SUITE)

## The adapter suite's quick classes (those `make test` runs on the session) on the `thrift`
## and on the `connect` method, against one endpoint of the project started here with a Connect
## token; then the connect target's own tests (as test-adapter-connect: the token refused and
## accepted, the whole project built with 4 threads, a lost endpoint). The `cdf` snapshots'
## module is left to the session (CI's time; its SQL is the same on every method, and
## test-adapter-thrift / test-adapter-connect run it on theirs).
## `.ci/run` runs it after `make test` when it fits in CI's time.
test-adapter-remote: $(INSTALLED)
	$(WITH_ENDPOINT) thrift connect -- $(ADAPTER_SUITE) -m "not slow and not sequence" \
		--ignore=dbt-sparkdelta/tests/functional/test_snapshot_cdf.py
	$(CONNECT_TESTS)

## Re-run the delta-rs interoperability tests, record their results in docs/interop.json and
## render them into docs/interop.md (the test fails on results that differ from the recorded ones;
## it records nothing when a read is wrong, and then there is nothing to render).
interop: $(INSTALLED)
	rm -f target/interop.json
	-$(BIN)/python -m pytest python_tests/integration/test_delta_interop.py
	$(BIN)/python -m lakehouse.reports.interop

## Benchmarks at 100k, 1M and 5M order lines (LAKEHOUSE_BENCH_SCALES), scenarios 1 and 2 also at
## 20M (LAKEHOUSE_BENCH_LARGE_SCALES): docs/bench/ (docs/benchmarks.md).
bench: $(BENCH_INSTALLED)
	$(BIN)/python -m lakehouse.bench.run

## The benchmark at its smallest scale, once, into a temporary directory (docs/bench/ untouched):
## CI's proof that every scenario still runs. Its timings mean nothing. Bronze at two ages only
## (1 and 2: the re-sends and their full refresh run once, as at every later age).
bench-smoke: $(BENCH_INSTALLED)
	LAKEHOUSE_BENCH_SCALES=20000 LAKEHOUSE_BENCH_LARGE_SCALES= LAKEHOUSE_BENCH_REPEATS=1 \
		LAKEHOUSE_BENCH_BRONZE_AGES=1,2 \
		LAKEHOUSE_BENCH_OUT=$$(mktemp -d) $(BIN)/python -m lakehouse.bench.run > /dev/null

## The analyst's loop (docs/analyst.md) timed as typed, each `lakehouse dev` command a process of its
## own on the warm engine, and a 1M-row diff against a full scan of both sides:
## docs/bench/analyst.md. Wants the machine to itself, as `bench` does.
bench-analyst: $(INSTALLED)
	$(BIN)/python -m lakehouse.bench.analyst

PYTHON_DIRS := src dbt-sparkdelta python_tests models

lint: $(INSTALLED)
	$(BIN)/ruff check $(PYTHON_DIRS)
	$(BIN)/ruff format --check $(PYTHON_DIRS)
	$(BIN)/sqlfluff lint

fix: $(INSTALLED)
	$(BIN)/ruff check --fix $(PYTHON_DIRS)
	$(BIN)/ruff format $(PYTHON_DIRS)
	$(BIN)/sqlfluff fix

## The local Spark Thrift + Spark Connect endpoint of the `thrift` target (LAKEHOUSE_TARGET=thrift).
endpoint-start: $(INSTALLED)
	$(BIN)/lakehouse endpoint start

endpoint-stop: $(INSTALLED)
	$(BIN)/lakehouse endpoint stop

endpoint-status: $(INSTALLED)
	$(BIN)/lakehouse endpoint status

## A local Spark standalone cluster; point the project at it with
## LAKEHOUSE_SPARK_MASTER=spark://127.0.0.1:7077 (docs/deployment.md).
cluster-start: $(INSTALLED)
	$(BIN)/lakehouse cluster start

cluster-stop: $(INSTALLED)
	$(BIN)/lakehouse cluster stop

cluster-status: $(INSTALLED)
	$(BIN)/lakehouse cluster status

## A local PostgreSQL Hive metastore shared by the endpoint and embedded runs
## (apt-get install -y postgresql libpostgresql-jdbc-java); `start` prints what to export:
## eval "$$(.venv/bin/lakehouse metastore start)" (docs/metastore.md).
metastore-start: $(INSTALLED)
	$(call debian_packages,postgresql libpostgresql-jdbc-java)
	$(BIN)/lakehouse metastore start

metastore-stop: $(INSTALLED)
	$(BIN)/lakehouse metastore stop

metastore-status: $(INSTALLED)
	$(BIN)/lakehouse metastore status

clean:
	rm -rf target logs .lakehouse
