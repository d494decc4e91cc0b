"""BM25 over the postings of the query's terms gives what a dense score vector over every
document gave: the same hits, the same scores bit for bit, the same order of ties."""

from __future__ import annotations

import math
import random

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from agentmem.adapters.embedded.text_index import K1, B, InvertedIndex, top_hits
from agentmem.ports import Hit

WORDS = [f"w{i}" for i in range(12)]


def dense_search(index: InvertedIndex, terms: list[str], k: int) -> list[Hit]:
    """The former implementation: one score per document slot, every slot scanned."""
    docs = len(index.slot_of)
    if docs == 0:
        return []
    n = len(index.ids)
    valid, doc_len = index.valid[:n], index.doc_len[:n]
    avgdl = index.total_len / docs or 1.0
    scores = np.zeros(n, dtype=np.float64)
    for term in dict.fromkeys(terms):
        entry = index.postings.get(term)
        if entry is None:
            continue
        slots = np.array(entry[0], dtype=np.int64)
        live = valid[slots]
        df = int(live.sum())
        if df == 0:
            continue
        slots = slots[live]
        tfs = np.array(entry[1], dtype=np.float64)[live]
        idf = math.log(1.0 + (docs - df + 0.5) / (df + 0.5))
        scores[slots] += idf * tfs * (K1 + 1) / (tfs + K1 * (1 - B + B * doc_len[slots] / avgdl))
    return top_hits(scores, index.ids, np.flatnonzero(scores > 0), k)


def build(seed: int, docs: int) -> InvertedIndex:
    rng = random.Random(seed)
    index = InvertedIndex()
    templates = [rng.choices(WORDS, k=rng.randint(1, 6)) for _ in range(8)]  # repeats: ties
    for i in range(docs):
        words = rng.choice(templates) if rng.random() < 0.5 else rng.choices(WORDS, k=rng.randint(1, 6))
        counts: dict[str, int] = {}
        for w in words:
            counts[w] = counts.get(w, 0) + 1
        index.add(f"m{i:04d}", counts)
        if rng.random() < 0.1:  # rewrites and deletes leave dead slots behind
            index.remove(f"m{rng.randrange(i + 1):04d}")
    return index


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    docs=st.integers(0, 300),
    query=st.lists(st.sampled_from([*WORDS, "absent"]), min_size=1, max_size=5),
    k=st.integers(1, 40),
)
def test_postings_search_equals_the_dense_scan(seed: int, docs: int, query: list[str], k: int) -> None:
    index = build(seed, docs)
    assert index.search(query, k) == dense_search(index, query, k)


def test_tied_hits_are_the_dense_scans_and_newer_first() -> None:
    index = InvertedIndex()
    for i in range(30):
        index.add(f"m{i:02d}", {"same": 1})
    hits = index.search(["same"], 5)
    assert hits == dense_search(index, ["same"], 5)
    assert [h.memory_id for h in hits] == sorted((h.memory_id for h in hits), reverse=True)
