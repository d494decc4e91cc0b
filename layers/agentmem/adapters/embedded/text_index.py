"""CJK-aware terms for BM25, the embedded stand-in for OpenSearch's ``cjk`` analyzer.

Text is NFKC-normalised (full-width letters and digits become ASCII) and lower-cased, then cut
into runs:

* a run of letters/digits of non-CJK scripts is one word (a possessive ``'s`` is stripped, an
  apostrophe between letters is dropped: ``don't`` → ``dont``). English stopwords are dropped,
  and words get a light, symmetric stemming: when longer than 4, plurals lose ``ies``→``y``,
  ``es`` after a sibilant (``boxes``), else ``s`` (not ``ss``/``us``/``is``); then, when longer
  than 5, ``ing``/``ed`` go and a doubled final consonant is undoubled (``planned``→``plan``);
* a run of CJK characters (Han, Kana, Hangul) becomes overlapping character bigrams, a lone CJK
  character a unigram — the standard CJK bigram scheme, so "项目预算" matches "项目的总预算".

Anything else (spaces, punctuation, symbols) separates runs.

:class:`InvertedIndex` is the in-memory BM25 scorer the embedded search index keeps per scope
(built from its ``doc_terms`` rows, then updated in place).
"""

from __future__ import annotations

import json
import math
import re
import unicodedata
from array import array
from collections.abc import Sequence
from functools import lru_cache
from itertools import groupby
from typing import Any

import numpy as np

from agentmem.domain.text import is_cjk
from agentmem.ports import Hit

_STOPWORD_TEXT = """a an the and or but if of to in on at by for with from as into about is are was were be been
    being am it its this that these those i me my we our you your he him his she her they them their
    do does did so than then there here what which who whom how when where why will would can could
    should shall may might must have has had not no nor just very too also"""
STOPWORDS = frozenset(_STOPWORD_TEXT.split())


_SIBILANT_ES = ("ches", "shes", "sses", "xes", "zes")
_SEPARATOR, _WORD, _CJK = 0, 1, 2
K1 = 1.2
B = 0.75
_POSSESSIVE = re.compile(r"(?<=[^\W_])['\u2019]s\b")  # "user's" -> "user"
_INNER_APOSTROPHE = re.compile(r"(?<=[^\W_])['\u2019](?=[^\W_])")  # "don't" -> "dont"


def stem(word: str) -> str:
    """The light stemming described in the module docstring (words with digits are kept)."""
    if any(ch.isdigit() for ch in word):
        return word
    if len(word) > 4:
        if word.endswith("ies"):
            word = word[:-3] + "y"
        elif word.endswith(_SIBILANT_ES):
            word = word[:-2]
        elif word.endswith("s") and not word.endswith(("ss", "us", "is")):
            word = word[:-1]
    if len(word) > 5 and word.endswith(("ing", "ed")):
        word = word[:-3] if word.endswith("ing") else word[:-2]
        if len(word) > 2 and word[-1] == word[-2] and word[-1] not in "aeiouylsz":
            word = word[:-1]  # planned -> plan, running -> run
    return word


def _word_terms(word: str) -> list[str]:
    if not word or word in STOPWORDS:
        return []
    stemmed = stem(word)
    return [stemmed] if stemmed and stemmed not in STOPWORDS else []


def _cjk_terms(run: str) -> list[str]:
    if len(run) == 1:
        return [run]
    return [run[i : i + 2] for i in range(len(run) - 1)]


@lru_cache(maxsize=65536)
def _kind(ch: str) -> int:
    """0 separator, 1 word character (letters, digits, combining marks), 2 CJK."""
    if is_cjk(ch):
        return _CJK
    return _WORD if ch.isalnum() or unicodedata.category(ch).startswith("M") else _SEPARATOR


def bm25_terms(text: str) -> list[str]:
    """Terms of ``text`` in order, with repeats (term frequency matters to BM25)."""
    normalised = unicodedata.normalize("NFKC", text).lower()
    normalised = _INNER_APOSTROPHE.sub("", _POSSESSIVE.sub("", normalised))
    terms: list[str] = []
    for kind, chars in groupby(normalised, key=_kind):
        if kind == _CJK:
            terms.extend(_cjk_terms("".join(chars)))
        elif kind == _WORD:
            terms.extend(_word_terms("".join(chars)))
    return terms


def top_hits(scores: np.ndarray, ids: Sequence[str | None], candidates: np.ndarray, k: int) -> list[Hit]:
    """The ``k`` best candidates, best first; ties go to the larger (newer) id."""
    return top_of(scores[candidates], candidates, ids, k)


def top_of(values: np.ndarray, slots: np.ndarray, ids: Sequence[str | None], k: int) -> list[Hit]:
    """:func:`top_hits` given the candidates' scores ``values`` and their ``slots`` in ``ids``."""
    if slots.size > k:
        part = np.argpartition(-values, k - 1)[:k]
        values, slots = values[part], slots[part]
    hits = [Hit(str(ids[i]), float(v)) for i, v in zip(slots.tolist(), values.tolist(), strict=True)]
    hits.sort(key=lambda h: h.memory_id, reverse=True)
    hits.sort(key=lambda h: -h.score)
    return hits


class InvertedIndex:
    """Okapi BM25 (k1=1.2, b=0.75) over one scope's documents, in memory.

    Postings are per-term ``array('i')`` pairs (slots, term frequencies). Every (re)added
    document gets a fresh slot; the old one is masked, not removed, so writes stay O(terms).
    """

    def __init__(self) -> None:
        self.ids: list[str | None] = []
        self.slot_of: dict[str, int] = {}
        self.valid = np.zeros(16, dtype=bool)
        self.doc_len = np.zeros(16, dtype=np.float64)
        self.postings: dict[str, tuple[array[int], array[int]]] = {}
        self.total_len = 0

    @classmethod
    def load(cls, conn: Any, pk: str) -> InvertedIndex:
        text = cls()
        docs = conn.execute(
            "SELECT d.memory_id, d.doc_len, t.terms FROM docs AS d"
            " LEFT JOIN doc_terms AS t ON t.pk = d.pk AND t.memory_id = d.memory_id WHERE d.pk = ?",
            (pk,),
        ).fetchall()
        size = max(16, len(docs))
        text.ids = [m for m, _, _ in docs]
        text.slot_of = {m: i for i, m in enumerate(text.ids) if m is not None}
        text.valid = np.zeros(size, dtype=bool)
        text.valid[: len(docs)] = True
        text.doc_len = np.zeros(size, dtype=np.float64)
        text.doc_len[: len(docs)] = np.fromiter((d for _, d, _ in docs), dtype=np.float64, count=len(docs))
        text.total_len = int(text.doc_len.sum())
        postings = text.postings
        for slot, (_, _, terms) in enumerate(docs):  # slots ascend: each term's slots stay sorted
            for term, tf in json.loads(terms or "{}").items():
                entry = postings.get(term)
                if entry is None:
                    entry = postings[term] = (array("i"), array("i"))
                entry[0].append(slot)
                entry[1].append(tf)
        return text

    @property
    def dead(self) -> int:
        return len(self.ids) - len(self.slot_of)

    def add(self, memory_id: str, counts: dict[str, int]) -> None:
        self.remove(memory_id)
        slot = len(self.ids)
        self.ids.append(memory_id)
        self.slot_of[memory_id] = slot
        if slot >= self.valid.size:
            grown = 2 * self.valid.size
            self.valid = np.concatenate([self.valid, np.zeros(grown - self.valid.size, bool)])
            self.doc_len = np.concatenate([self.doc_len, np.zeros(grown - self.doc_len.size)])
        length = sum(counts.values())
        self.valid[slot] = True
        self.doc_len[slot] = length
        self.total_len += length
        for term, tf in counts.items():
            entry = self.postings.get(term)
            if entry is None:
                entry = self.postings[term] = (array("i"), array("i"))
            entry[0].append(slot)
            entry[1].append(tf)

    def remove(self, memory_id: str) -> None:
        slot = self.slot_of.pop(memory_id, None)
        if slot is not None:
            self.valid[slot] = False
            self.total_len -= int(self.doc_len[slot])

    def search(self, terms: Sequence[str], k: int) -> list[Hit]:
        """BM25 top ``k``; the cost grows with the postings of the query's terms, not the scope:
        each term's contributions are summed per document in term order (``bincount`` over the
        documents the terms reach), which adds the same numbers in the same order as a dense
        score vector would, so the scores and their ties are the same."""
        docs = len(self.slot_of)
        if docs == 0:
            return []
        valid, doc_len = self.valid, self.doc_len
        avgdl = self.total_len / docs or 1.0
        reached: list[np.ndarray] = []
        parts: list[np.ndarray] = []
        for term in dict.fromkeys(terms):
            entry = self.postings.get(term)
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
            reached.append(slots)
            parts.append(idf * tfs * (K1 + 1) / (tfs + K1 * (1 - B + B * doc_len[slots] / avgdl)))
        if not reached:
            return []
        order, where = np.unique(np.concatenate(reached), return_inverse=True)
        sums = np.bincount(where.ravel(), weights=np.concatenate(parts), minlength=order.size)
        positive = np.flatnonzero(sums > 0)
        return top_of(sums[positive], order[positive], self.ids, k)
