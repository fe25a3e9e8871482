# agent-runtime: every target sets up what it needs on a fresh machine.
# Without DATABASE_URL, targets use the project-local PostgreSQL under .data/ (scripts/local-pg.sh).

.PHONY: run test lint bench openapi contracts agentctl db-stop check

## run: the server on 127.0.0.1:8080 with sandbox providers, no configuration needed
run:
	@scripts/run.sh

## test: every test, against a real PostgreSQL
test:
	@scripts/test.sh

## lint: formatting, clippy with warnings denied, and the layering rules
lint:
	cargo fmt --all -- --check
	cargo clippy --workspace --all-targets --locked -- -D warnings
	@if [ -f ../shared/tools/layering.py ]; then python3 ../shared/tools/layering.py; else echo "layering: ../shared/tools/layering.py not found, skipped"; fi

## bench: load figures of the release server (requests/s, p50, p99, peak RSS)
bench:
	@scripts/bench.sh

## openapi: regenerate the committed API description after a contract change
openapi:
	cargo build --bin agent-runtime --locked
	target/debug/agent-runtime openapi > docs/openapi.json

## contracts: recompile the ERC-20 test token (tests/chain/TestToken.sol) into tests/chain/build/
contracts:
	@scripts/chain-tools.sh contracts >/dev/null

## agentctl: the control-plane CLI on the same database as `make run`, e.g. make agentctl ARGS="agents list"
agentctl:
	@scripts/agentctl.sh $(ARGS)

## db-stop: stop the project-local PostgreSQL
db-stop:
	@scripts/local-pg.sh stop

check:
	cargo check --workspace --all-targets
