# agentmem: the verbs a newcomer looks for.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
PORT   ?= 8080
HOST   ?= 127.0.0.1
DATA   ?= .agentmem
STAMP  := $(VENV)/.installed

.PHONY: run test lint format typecheck eval bench synth demo clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[aws,dev]'
	touch $(STAMP)

install: $(STAMP)

run: $(STAMP)  ## serve the API on $(HOST):$(PORT) over embedded stores in $(DATA)/
	$(BIN)/agentmem serve --host $(HOST) --port $(PORT) --data-dir $(DATA)

test: $(STAMP)  ## the whole suite, offline
	$(BIN)/python -m pytest -n auto tests

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

eval: $(STAMP)  ## memory eval + LoCoMo on the development data -> reports/
	mkdir -p reports
	$(BIN)/agentmem eval memory --data $(or $(MEMORY_EVAL),../shared/data/memory_eval_dev.jsonl) --json > reports/eval_memory.json
	$(BIN)/python -c "import json;d=json.load(open('reports/eval_memory.json'));print({k:d[k] for k in ('recall_hit_rate','update_timeliness','context_pass_rate','isolation_violations','leaks')})"

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
