"""The model's facts on the write path (docs/design.md "The model's part"): an anti-corruption layer between what an
:class:`~agentmem.ports.LLM` answers and the candidates the rules would have produced.

A model fact is untrusted: it is mapped like a rule fact (the user's statements at
:data:`~agentmem.domain.extraction.USER_IMPORTANCE` and confirmed, the exchange's at
:data:`~agentmem.domain.extraction.EXCHANGE_IMPORTANCE` and inferred), PII the model wrote is
redacted, and it passes the very same gates (:func:`~agentmem.domain.guards.gate.gate`) with its
drop reasons prefixed ``llm_``. Model facts come after the rule facts and never change them: a
model fact the rules already have is dropped (``llm_known``), and one that would turn the joined
text of the turn into an injection is what gets dropped (``llm_injection_joined``), never a rule
fact. A fact without content is ``llm_malformed``. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from agentmem.domain.classify import classify
from agentmem.domain.extraction import (
    EXCHANGE_IMPORTANCE,
    MAX_CONTENT_CHARS,
    USER_IMPORTANCE,
    Candidate,
    update_strength,
)
from agentmem.domain.guards.gate import PII_IMPORTANCE_CAP, gate, injects_when_joined
from agentmem.domain.guards.pii import redact
from agentmem.domain.keys import MULTI_VALUED_KEYS, SINGLE_VALUED_KEYS, match_keys
from agentmem.domain.models import Category, Confidence, Source
from agentmem.domain.text import normalize, term_set

LLM_TAG = "extractor:llm"  # the tag every memory the model contributed carries
LLM_PREFIX = "llm_"  # drop reasons of model facts: llm_pii, llm_injection, ...

_KNOWN_KEYS = SINGLE_VALUED_KEYS | MULTI_VALUED_KEYS
_USER_SOURCES = frozenset({"user", "statement", "user_statement"})
_EXCHANGE_SOURCES = frozenset({"exchange", "assistant", "inferred", "answer"})
_SUBJECT_TERMS = frozenset({"user", "用户"})  # "The user lives in..." names the user, not a topic


@dataclass(frozen=True, slots=True)
class LlmFact:
    """One fact as a model stated it, before any guard: ``content`` (blank: malformed), and
    optionally a ``key``/``value``, a ``category`` (a :class:`Category` value, or anything the
    model made up) and a ``source`` ("user" or "exchange"; None: decide from the wording)."""

    content: str
    key: str | None = None
    value: str | None = None
    category: str | None = None
    source: str | None = None


@dataclass(frozen=True, slots=True)
class Admission:
    """What of the model's facts joins the turn: the candidates (after the rule facts), one drop
    reason per fact dropped (in order), and the PII kinds redacted from the model's text."""

    candidates: list[Candidate]
    drops: tuple[str, ...] = ()
    redacted_kinds: frozenset[str] = frozenset()


def dedupe_key(text: str) -> str:
    """The normalised form two facts are "the same" in: case, width, spaces, end punctuation."""
    return normalize(text).strip(" .。!！?？,，;；:：")


def parse_category(answer: object) -> Category | None:
    """A model's category answer, or None when it is not one of ours."""
    if not isinstance(answer, str):
        return None
    try:
        return Category(answer.strip().lower())
    except ValueError:
        return None


def optional_text(value: str | None, limit: int) -> str | None:
    """``value`` stripped and cut to ``limit`` characters; None when absent or blank."""
    if not isinstance(value, str) or not value.strip():
        return None
    return value.strip()[:limit]


def fact_source(fact: LlmFact, content: str, user_text: str) -> Source:
    """Who stated a model fact. An explicit ``source`` wins; otherwise (Bedrock's schema has
    none) a fact whose every topic term is in the user's own message is the user's statement,
    and anything else came from the exchange (the lower-trust reading when unsure)."""
    declared = fact.source
    if isinstance(declared, str):
        if declared.strip().lower() in _USER_SOURCES:
            return Source.USER
        if declared.strip().lower() in _EXCHANGE_SOURCES:
            return Source.EXCHANGE
    topical = term_set(content) - _SUBJECT_TERMS
    if topical and topical <= term_set(user_text):
        return Source.USER
    return Source.EXCHANGE


def to_candidate(fact: LlmFact, user_text: str) -> tuple[Candidate, frozenset[str]] | None:
    """One model fact as a candidate and the PII kinds redacted from it; None when it has no
    content. Keys only when they are keys the rules know (a free-form model key would block
    same-key updates); PII the model wrote is redacted here and caps the importance, and the
    placeholder gate then cuts its clause."""
    if not fact.content.strip():
        return None
    cleaned = redact(fact.content.strip()[:MAX_CONTENT_CHARS])
    raw_value = optional_text(fact.value, 300)
    value_clean = redact(raw_value) if raw_value else None
    found = frozenset(cleaned.kinds) | frozenset(value_clean.kinds if value_clean else ())
    text = cleaned.text
    source = fact_source(fact, text, user_text)
    from_user = source is Source.USER
    importance = USER_IMPORTANCE if from_user else EXCHANGE_IMPORTANCE
    if found:
        importance = min(importance, PII_IMPORTANCE_CAP)
    keys = match_keys(text)
    key: str | None = None
    value: str | None = None
    hint: str | None = None
    if keys:
        key, value, hint = keys[0].key, keys[0].value, keys[0].category
    else:
        llm_key = optional_text(fact.key, 100)
        if llm_key in _KNOWN_KEYS and value_clean is not None:
            key, value = llm_key, value_clean.text
        llm_category = parse_category(fact.category)
        if llm_category is not Category.GENERAL:
            hint = llm_category  # kept by rules_first only where the rules say "general"
    candidate = Candidate(
        content=text,
        source=source,
        importance=importance,
        confidence=Confidence.CONFIRMED if from_user else Confidence.INFERRED,
        key=key,
        value=value,
        category_hint=hint,
        update_strength=update_strength(text) if from_user else 0,
        entities=(value,) if value and len(value) <= 40 else (),
        tags=(LLM_TAG,),
    )
    return candidate, found


def rules_first(cand: Candidate) -> Candidate:
    """A gated model fact keeps the model's category only where the rules, on the text as it
    will be stored (clauses around a secret cut), can say no more than ``general``."""
    if cand.category_hint is None or match_keys(cand.content):
        return cand
    if classify(cand.content) is Category.GENERAL:
        return cand
    return replace(cand, category_hint=None)


def admit(
    facts: Sequence[LlmFact],
    *,
    user_text: str,
    rule_facts: Sequence[Candidate],
    kept: Sequence[Candidate],
    had_pii: bool,
) -> Admission:
    """The model's facts the rules did not already produce, through the same gates as rule
    facts. ``rule_facts`` are the rule candidates before the gates, ``kept`` after them: neither
    is ever changed, and a model fact that would turn the joined text of the turn into an
    injection is what gets dropped, never a rule fact."""
    drops: list[str] = []
    kinds: frozenset[str] = frozenset()
    seen = {dedupe_key(c.content) for c in (*rule_facts, *kept)}
    fresh: list[Candidate] = []
    for fact in facts:
        mapped = to_candidate(fact, user_text)
        if mapped is None:
            drops.append(LLM_PREFIX + "malformed")
            continue
        cand, found = mapped
        kinds |= found
        marker = dedupe_key(cand.content)
        if marker in seen:
            drops.append(LLM_PREFIX + "known")
            continue
        seen.add(marker)
        fresh.append(cand)
    gated = gate(fresh, had_pii=had_pii, prefix=LLM_PREFIX)
    drops.extend(gated.drops)
    admitted = [rules_first(c) for c in gated.kept]
    if admitted and kept and injects_when_joined((*kept, *admitted)):
        return Admission([], (*drops, LLM_PREFIX + "injection_joined"), kinds)
    return Admission(admitted, tuple(drops), kinds)
