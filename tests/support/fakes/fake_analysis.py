"""Analyzers and BM25 of the fake OpenSearch, following Lucene's behaviour closely enough for the
adapter's tests:

* tokenizer ``standard``: letter/digit runs are words (an inner apostrophe stays), every CJK
  character is its own token;
* ``cjk``: NFKC width folding, lower case, ``cjk_bigram`` (adjacent CJK characters → overlapping
  bigrams, a lone one stays a unigram), Lucene's CJK stop set;
* ``english``: possessive ``'s`` removed, lower case, Lucene's English stop set, stemming;
* ``standard``: lower case only (no stopwords);
* custom analyzers over the standard tokenizer, from the index's own ``settings.analysis``, with
  the filters ``cjk_width``, ``lowercase``, ``cjk_bigram``, ``stop``, ``stemmer``
  (possessive_english) and ``porter_stem``.

``porter_stem`` is *approximated* by the project's light stemmer
(:func:`agentmem.domain.text.terms`): the same family (plurals, -ing, -ed), not Porter's exact
output.

BM25 is Lucene's (k1 = 1.2, b = 0.75, no ``(k1 + 1)`` factor, idf ``ln(1 + (N - n + 0.5) /
(n + 0.5))``), with exact document lengths (Lucene stores them lossily, so real scores differ in
the last digits).
"""

from __future__ import annotations

import itertools
import math
import unicodedata
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from agentmem.domain.text import is_cjk, terms

_ENGLISH_STOP_TEXT = (
    "a an and are as at be but by for if in into is it no not of on or such that the their then there"
    " these they this to was will with"
)
ENGLISH_STOP = frozenset(_ENGLISH_STOP_TEXT.split())
CJK_STOP = ENGLISH_STOP | {"s", "t", "www"}
K1, B = 1.2, 0.75


def standard_tokens(text: str) -> list[tuple[str, bool, int]]:
    """(token, is_cjk, run id): CJK characters one by one; the run id tells which CJK characters
    are adjacent in the text."""
    tokens: list[tuple[str, bool, int]] = []
    word: list[str] = []
    run, prev_cjk = 0, False
    for ch in text:
        if is_cjk(ch):
            if word:
                tokens.append(("".join(word).strip("'"), False, run))
                word.clear()
            if not prev_cjk:
                run += 1
            tokens.append((ch, True, run))
            prev_cjk = True
            continue
        prev_cjk = False
        if ch.isalnum() or (ch == "'" and word):
            word.append(ch)
        elif word:
            tokens.append(("".join(word).strip("'"), False, run))
            word.clear()
    if word:
        tokens.append(("".join(word).strip("'"), False, run))
    return [t for t in tokens if t[0]]


Token = tuple[str, bool, int]


def _bigrams(tokens: Sequence[Token]) -> list[Token]:
    out: list[Token] = []
    i = 0
    while i < len(tokens):
        token, cjk, run = tokens[i]
        if not cjk:
            out.append((token, False, run))
            i += 1
            continue
        j = i
        while j + 1 < len(tokens) and tokens[j + 1][1] and tokens[j + 1][2] == run:
            j += 1
        chars = [t[0] for t in tokens[i : j + 1]]
        grams = [chars[0]] if len(chars) == 1 else [a + b for a, b in itertools.pairwise(chars)]
        out.extend((g, True, -1) for g in grams)  # bigrams are never joined again
        i = j + 1
    return out


def _stem(token: str) -> str:
    if any(is_cjk(ch) for ch in token):
        return token
    stemmed = terms(token)
    return stemmed[0] if len(stemmed) == 1 else token


def _apply(spec: Mapping[str, Any] | str, tokens: list[Token]) -> list[Token]:
    kind = spec if isinstance(spec, str) else str(spec.get("type"))
    if kind == "cjk_width":
        return [(unicodedata.normalize("NFKC", t), c, r) for t, c, r in tokens]
    if kind == "lowercase":
        return [(t.lower(), c, r) for t, c, r in tokens]
    if kind == "cjk_bigram":
        return _bigrams(tokens)
    if kind == "porter_stem":
        return [(_stem(t), c, r) for t, c, r in tokens]
    if kind == "stemmer" and isinstance(spec, Mapping) and spec.get("language") == "possessive_english":
        return [(t[:-2] if t.endswith(("'s", "’s")) else t, c, r) for t, c, r in tokens]
    if kind == "stop" and isinstance(spec, Mapping):
        words = spec.get("stopwords", "_english_")
        stop = ENGLISH_STOP if words == "_english_" else CJK_STOP if words == "_cjk_" else frozenset(words)
        return [tok for tok in tokens if tok[0] not in stop]
    raise ValueError(f"token filter {spec!r} not served by the fake")


BUILTIN: dict[str, list[Mapping[str, Any] | str]] = {
    "standard": ["lowercase"],
    "cjk": ["cjk_width", "lowercase", "cjk_bigram", {"type": "stop", "stopwords": "_cjk_"}],
    "english": [
        {"type": "stemmer", "language": "possessive_english"},
        "lowercase",
        {"type": "stop", "stopwords": "_english_"},
        "porter_stem",
    ],
}


def analyze(analyzer: str, text: str, analysis: Mapping[str, Any] | None = None) -> list[str]:
    """Tokens of ``text`` under a built-in analyzer or a custom one defined in ``analysis`` (an
    index's ``settings.analysis``)."""
    custom = ((analysis or {}).get("analyzer") or {}).get(analyzer)
    if custom is not None:
        if custom.get("type") != "custom" or custom.get("tokenizer") != "standard":
            raise ValueError(f"analyzer {analyzer!r} not served by the fake")
        filters = (analysis or {}).get("filter") or {}
        chain = [filters.get(f, f) for f in custom.get("filter", [])]
    elif analyzer in BUILTIN:
        chain = BUILTIN[analyzer]
    else:
        raise ValueError(f"analyzer {analyzer!r} not served by the fake")
    tokens = standard_tokens(text)
    for spec in chain:
        tokens = _apply(spec, tokens)
    return [t for t, _, _ in tokens if t]


class FieldStats:
    """Per-field postings of the whole index (the fake has one shard)."""

    def __init__(self, docs: dict[str, list[str]]) -> None:
        self.tf = {doc_id: Counter(tokens) for doc_id, tokens in docs.items() if tokens}
        self.lengths = {doc_id: len(tokens) for doc_id, tokens in docs.items() if tokens}
        self.n_docs = len(self.lengths)
        self.avgdl = sum(self.lengths.values()) / self.n_docs if self.n_docs else 0.0

    def df(self, term: str) -> int:
        return sum(1 for counts in self.tf.values() if term in counts)

    def score(self, doc_id: str, query_terms: Iterable[str]) -> tuple[float, int]:
        """(BM25 score, number of query clauses matched)."""
        counts = self.tf.get(doc_id)
        if counts is None:
            return 0.0, 0
        total, matched = 0.0, 0
        norm = K1 * ((1 - B) + B * self.lengths[doc_id] / self.avgdl)
        for term in query_terms:
            tf = counts.get(term, 0)
            if not tf:
                continue
            n = self.df(term)
            idf = math.log(1 + (self.n_docs - n + 0.5) / (n + 0.5))
            total += idf * tf / (tf + norm)
            matched += 1
        return total, matched
