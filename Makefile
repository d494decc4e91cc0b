# agentmem: the verbs a newcomer looks for.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
PORT   ?= 8080
HOST   ?= 127.0.0.1
DATA   ?= .agentmem
WORKERS ?=
STAMP  := $(VENV)/.installed

.PHONY: run test lint format typecheck eval bench synth demo clean engines engines-fetch engines-down typescript-types typescript

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(STAMP): pyproject.toml clients/python/pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[aws,dev,cdk]'
	$(BIN)/python -m pip install --quiet -e './clients/python[sqs]'  # agentmem.client re-exports it
	touch $(STAMP)

install: $(STAMP)

run: $(STAMP)  ## serve the API on $(HOST):$(PORT) over embedded stores in $(DATA)/ ($(WORKERS) workers; empty: one per core)
	$(BIN)/agentmem serve --host $(HOST) --port $(PORT) --data-dir $(DATA) $(if $(WORKERS),--workers $(WORKERS))

test: $(STAMP)  ## the whole suite, offline
	$(BIN)/python -m pytest -n auto --dist loadgroup tests

typescript: $(STAMP)  ## the TypeScript client: npm ci and tsc (clients/typescript; make test runs its node --test suite)
	cd clients/typescript && npm ci --no-audit --no-fund && npm run build

typescript-types: $(STAMP)  ## regenerate clients/typescript/src/openapi.ts from the server's OpenAPI document
	$(BIN)/python -c "from agentmem.api.app import openapi_json; print(openapi_json(), end='')" > clients/typescript/openapi.tmp.json
	cd clients/typescript && npx openapi-typescript openapi.tmp.json -o src/openapi.ts && rm openapi.tmp.json

engines-fetch: $(STAMP)  ## fetch OpenSearch + k-NN and Gremlin Server with Maven into .engines/ (once)
	$(BIN)/agentmem engines fetch

engines: engines-fetch  ## start OpenSearch, Gremlin Server and the DynamoDB/SQS server on 127.0.0.1 (detached)
	$(BIN)/agentmem engines up

engines-down: $(STAMP)  ## stop what `make engines` started
	$(BIN)/agentmem engines down

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

format: $(STAMP)
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

typecheck: $(STAMP)
	$(BIN)/mypy

demo: $(STAMP)
	$(BIN)/agentmem demo

# Evaluation data: the shared development sets next to the repository, and the project's own
# bilingual set when present. A missing file is skipped (and recorded as absent), not an error.
MEMORY_EVAL     ?= ../shared/data/memory_eval_dev.jsonl
MEMORY_EVAL_OWN ?= layers/agentmem_dev/eval/data/memory_eval.jsonl
MEMORY_EVAL_UPDATES ?= layers/agentmem_dev/eval/data/memory_eval_updates.jsonl
LOCOMO          ?= ../shared/data/locomo_dev.json
LOCOMO_CONVS    ?= 0-4
EVAL_EMBEDDER   ?= auto

eval: $(STAMP)  ## memory eval (dev + own set + update set) + LoCoMo + guard attack corpus -> reports/eval.json, reports/eval.md
	mkdir -p reports
	rm -f reports/eval_memory_dev.tmp reports/eval_memory_own.tmp reports/eval_memory_updates.tmp reports/eval_locomo.tmp reports/eval_guards.tmp
	@if [ -f "$(MEMORY_EVAL)" ]; then \
		echo "== memory eval: $(MEMORY_EVAL)"; \
		$(BIN)/agentmem eval memory --data "$(MEMORY_EVAL)" --embedder $(EVAL_EMBEDDER) --json > reports/eval_memory_dev.tmp; \
	else echo "== memory eval: $(MEMORY_EVAL) not found, skipped"; fi
	@if [ -f "$(MEMORY_EVAL_OWN)" ]; then \
		echo "== memory eval: $(MEMORY_EVAL_OWN)"; \
		$(BIN)/agentmem eval memory --data "$(MEMORY_EVAL_OWN)" --embedder $(EVAL_EMBEDDER) --json > reports/eval_memory_own.tmp; \
	else echo "== memory eval: $(MEMORY_EVAL_OWN) not found, skipped"; fi
	@if [ -f "$(MEMORY_EVAL_UPDATES)" ]; then \
		echo "== memory eval: $(MEMORY_EVAL_UPDATES)"; \
		$(BIN)/agentmem eval memory --data "$(MEMORY_EVAL_UPDATES)" --embedder $(EVAL_EMBEDDER) --json > reports/eval_memory_updates.tmp; \
	else echo "== memory eval: $(MEMORY_EVAL_UPDATES) not found, skipped"; fi
	@if [ -f "$(LOCOMO)" ]; then \
		echo "== LoCoMo: $(LOCOMO) conversations $(LOCOMO_CONVS)"; \
		$(BIN)/agentmem eval locomo --data "$(LOCOMO)" --conversations $(LOCOMO_CONVS) --embedder $(EVAL_EMBEDDER) --json > reports/eval_locomo.tmp; \
	else echo "== LoCoMo: $(LOCOMO) not found, skipped"; fi
	@echo "== statement reader heads: held-out accuracy"
	-$(BIN)/python -m agentmem_dev.reading.train --measure-only
	@echo "== the reader sets, then real dialogue by others: users changing a value in task dialogues (SGD dev, CC BY-SA 4.0: eval/data/public/NOTICE.md)"
	@for f in layers/agentmem_dev/eval/data/memory_eval_reader_dev.jsonl layers/agentmem_dev/eval/data/memory_eval_reader_holdout.jsonl layers/agentmem_dev/eval/data/memory_eval_retractions_fresh.jsonl \
		layers/agentmem_dev/eval/data/public/sgd_dev_updates.jsonl layers/agentmem_dev/eval/data/public/sgd_holdout_updates.jsonl; do \
		echo "== memory eval: $$f"; $(BIN)/agentmem eval memory --data "$$f" --embedder $(EVAL_EMBEDDER) | head -20; done
	$(BIN)/python -m agentmem_dev.eval.locomo combine \
		--memory dev=reports/eval_memory_dev.tmp --memory own=reports/eval_memory_own.tmp \
		--memory updates=reports/eval_memory_updates.tmp \
		--locomo reports/eval_locomo.tmp --json-out reports/eval.json --md-out reports/eval.md
	@echo "== guards: the attack corpus against a fresh local server (a measurement, not a gate)"
	@$(BIN)/agentmem eval guards --embedder $(EVAL_EMBEDDER) --json > reports/eval_guards.tmp \
		|| { echo "== guards: the local server did not start, recorded as absent"; rm -f reports/eval_guards.tmp; }
	$(BIN)/python -m agentmem_dev.eval.guards fold --guards reports/eval_guards.tmp \
		--json-out reports/eval.json --md-out reports/eval.md

# The peer benchmark against mem0 runs from its own virtualenv (../shared/bench/README.md says how
# to make one): `make bench PEER_PYTHON=/path/to/venv/bin/python` adds it (~3 min); without it,
# it is skipped and recorded as absent.
PEER_PYTHON ?=
PEER_BENCH  ?= ../shared/bench/peer_http.py

bench: $(STAMP)  ## all benchmarks -> reports/bench.json, reports/bench.md (+ the mem0 peer run with PEER_PYTHON=...)
	mkdir -p reports
	rm -f reports/peer_http.json
	$(BIN)/agentmem bench all --json > reports/bench.tmp && mv reports/bench.tmp reports/bench.json
	@if [ -n "$(PEER_PYTHON)" ] && [ -f "$(PEER_BENCH)" ]; then \
		echo "== peer: $(PEER_BENCH) with $(PEER_PYTHON)"; \
		( cd "$$(dirname "$(PEER_BENCH)")" && "$(PEER_PYTHON)" "$$(basename "$(PEER_BENCH)")" --n 10000 --queries 50 \
			--json-out "$(CURDIR)/reports/peer_http.json" ) \
			|| { echo "== peer: failed, recorded as absent"; rm -f reports/peer_http.json; }; \
	else echo "== peer: PEER_PYTHON not set or $(PEER_BENCH) not found, skipped"; fi
	$(BIN)/python -m agentmem_dev.bench.report reports/bench.json reports/bench.md

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache

synth: $(STAMP)  ## synthesize the CDK stacks of every environment (no bundling, no AWS account)
	for e in dev staging prod; do $(BIN)/python infra_cdk/synth.py --env $$e --skip-bundling || exit 1; done
