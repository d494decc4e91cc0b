"""``agentmem eval guards``: a held-out attack corpus run against a live local server, as a
hostile user of the public HTTP API would run it (``docs`` and ``/v1/openapi.json`` only).

It measures, it does not gate: per area the cases tried and those that got through (what
"through" means for each area is in :mod:`.content`, :mod:`.erase`, :mod:`.isolation` and
:mod:`.robustness`; the comparison rules in :mod:`.checks`). The corpus is every
``eval/data/guard_corpus*.jsonl`` (:mod:`.corpus`).
"""

from agentmem_dev.eval.guards.client import Api, ServerDidNotStart, local_server
from agentmem_dev.eval.guards.corpus import AREAS, CorpusError, load_corpus
from agentmem_dev.eval.guards.report import fold, render
from agentmem_dev.eval.guards.runner import run_cases, run_guard_eval

__all__ = [
    "AREAS",
    "Api",
    "CorpusError",
    "ServerDidNotStart",
    "fold",
    "load_corpus",
    "local_server",
    "render",
    "run_cases",
    "run_guard_eval",
]
