# agent-runtime: every target sets up what it needs on a fresh machine.
# Without DATABASE_URL, targets use the project-local PostgreSQL under .data/ (scripts/local-pg.sh).

.PHONY: run test fuzz lint lint-static bench soak profile openapi sdks contracts agentctl db-stop ha-up ha-down clean-db check

## run: the server on 127.0.0.1:8080 with sandbox providers, no configuration needed
run:
	@scripts/run.sh

## test: every test, against a real PostgreSQL
test:
	@scripts/test.sh

## fuzz: schemathesis against the served API description, at least 5,000 cases over every operation; fails on any finding (FUZZ_SEED replays a run)
fuzz:
	@scripts/fuzz.sh

## lint: formatting, clippy with warnings denied, the layering rules and unused dependencies
lint: lint-static
	cargo clippy --workspace --all-targets --locked -- -D warnings

## lint-static: what lint checks without building: formatting, the layering rules, unused dependencies, the client libraries' generated code against docs/openapi.json and their hand-written layers (CI runs clippy in make test's build, TEST_WITH_CLIPPY=1)
lint-static:
	cargo fmt --all -- --check
	python3 scripts/layering.py
	python3 scripts/unused_deps.py
	scripts/sdks.sh check
	scripts/sdks.sh lint

## bench: load figures of the release server (requests/s, p50, p99, peak RSS)
bench:
	@scripts/bench.sh

## soak: the mixed load at a steady rate for 30 minutes (SOAK_MINUTES, SOAK_RATE); RSS, descriptors, database connections and p99 each minute in target/soak/soak.csv and .png; fails on an upward trend
soak:
	@scripts/soak.sh

## profile: flame graphs of the release server under each load scenario (target/profile/)
profile:
	@scripts/profile.sh

## openapi: regenerate the committed API description and its readable page after a contract change
openapi:
	cargo build --bin agent-runtime --locked
	target/debug/agent-runtime openapi > docs/openapi.json
	target/debug/agent-runtime openapi --markdown > docs/api.md

## sdks: regenerate the client libraries' code in sdks/ from docs/openapi.json (after make openapi), then build their wheel and npm tarball into target/sdks/
sdks:
	@scripts/sdks.sh generate

## contracts: recompile the ERC-20 test token (tests/chain/TestToken.sol) into tests/chain/build/
contracts:
	@scripts/chain-tools.sh contracts >/dev/null

## agentctl: the control-plane CLI on the same database as `make run` (same as scripts/agentctl), e.g. make agentctl ARGS="agents list"
agentctl:
	@scripts/agentctl $(ARGS)

## db-stop: stop the project-local PostgreSQL
db-stop:
	@scripts/local-pg.sh stop

## ha-up: a local pg_auto_failover formation (a monitor, two synchronous data nodes) under .data/ha/; prints its multi-host URL (scripts/ha.sh for failover and more)
ha-up:
	@scripts/ha.sh up

## ha-down: stop the local formation; its data stays for the next ha-up (scripts/ha.sh destroy removes it)
ha-down:
	@scripts/ha.sh down

## clean-db: drop the test databases killed runs left behind, and templates of other migrations
clean-db:
	@scripts/clean-db.sh

check:
	cargo check --workspace --all-targets
