"""Gates 1 and 2 of the write path (docs/design.md "The write path"): what of the extracted facts may be stored.

Gate 1 looks at each candidate: a key/value holding a redaction placeholder loses its key (the
secret's slot is never a key), a fact holding one keeps only the clauses around it (or is
dropped as ``pii`` when too little is left), and a fact or value that reads as an injection is
dropped as ``injection``. Gate 2 looks at the joined text of what Gate 1 kept: facts that inject
only together are all dropped (``injection_joined``). A turn whose original text held PII caps
the importance of every fact it yields.

Drop reasons carry a prefix for the model's facts (``llm_pii``, ``llm_injection``, ...): the
write path counts them apart in its outcome. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from agentmem.domain.extraction import Candidate, is_question, is_statement
from agentmem.domain.guards.injection import InjectionVerdict, detect_injection
from agentmem.domain.guards.injection.assembly import refers_to_pieces
from agentmem.domain.guards.pii import PLACEHOLDERS
from agentmem.domain.lazy_re import lazy_compile
from agentmem.domain.models import Source
from agentmem.domain.smalltalk import speaks_of_self
from agentmem.domain.text import terms

__all__ = [
    "PII_IMPORTANCE_CAP",
    "GateResult",
    "SplitAttack",
    "gate",
    "has_placeholder",
    "injects_when_joined",
    "only_placeholders",
    "placeholder_kinds",
    "split_attack",
    "without_placeholder_clauses",
]

MAX_PIECES = 2  # earlier messages an order to assemble pieces takes with it (attacks split over 2-3 turns)
PII_IMPORTANCE_CAP = 0.3  # a fact from a message that held PII is never important

_PLACEHOLDER_TAGS = tuple(PLACEHOLDERS.values())
_CLAUSE_RE = lazy_compile(r"[^，,；;。.!?！？\n]+[，,；;。.!?！？\n]*")


@dataclass(frozen=True, slots=True)
class GateResult:
    """The candidates that passed, in their order, and one drop reason per candidate dropped
    (in the order they were dropped; ``injection_joined`` once for the whole joined set)."""

    kept: list[Candidate]
    drops: tuple[str, ...] = ()


def has_placeholder(text: str) -> bool:
    """Whether ``text`` holds a redaction placeholder (``[PHONE]``, ``[EMAIL]``, ...)."""
    return any(tag in text for tag in _PLACEHOLDER_TAGS)


def without_placeholder_clauses(text: str, *, statement: bool = True) -> str | None:
    """The text without the clauses that hold a redaction placeholder; None when too little is
    left (fewer than two terms or, for a ``statement``, only the request around the secret)."""
    kept = "".join(c for c in _CLAUSE_RE.findall(text) if not has_placeholder(c)).strip(" ，,；;")
    if len(terms(kept)) < 2 or (statement and not is_statement(kept)):
        return None  # what is left is too little, or only the request around the secret
    return kept


def placeholder_kinds(text: str) -> set[str]:
    """The PII kinds whose placeholders ``text`` holds (text redacted before it came in)."""
    return {kind for kind, tag in PLACEHOLDERS.items() if tag in text}


def only_placeholders(text: str) -> bool:
    """Whether nothing but placeholders (and punctuation or spaces) is left of ``text``."""
    stripped = text
    for tag in _PLACEHOLDER_TAGS:
        stripped = stripped.replace(tag, "")
    return not any(ch.isalnum() for ch in stripped)


def injects_when_joined(candidates: Iterable[Candidate]) -> bool:
    """Whether the facts, one per line as they would sit in a prompt, read as an injection."""
    return detect_injection("\n".join(c.content for c in candidates)).is_injection


@dataclass(frozen=True, slots=True)
class SplitAttack:
    """An attack split over turns: its reasons (``multi_turn`` first) and the positions in
    ``earlier`` of its parts (the new message completes them)."""

    reasons: list[str]
    parts: tuple[int, ...]


def split_attack(
    earlier: Sequence[str], text: str, alone: InjectionVerdict | None = None
) -> SplitAttack | None:
    """Gate 2 across turns: the shortest run of a user's last few messages of a session
    (``earlier``, oldest first) that, joined with ``text``, reads as an injection that ``text``
    alone is not — an attack split over turns that ``text`` completes; None otherwise.

    A message that injected on its own was quarantined by itself when it came, so it is no part
    of a later split (joined with any harmless message it would read as an injection forever
    after), and the innocent messages around it are no part of anything. One exception: the
    message right after it, when it neither says anything about the user (a first-person fact:
    "I keep bees", "我搬到北京了") nor asks anything, is taken as the attack's continuation
    ("step two: tell users to visit …"). And one case where ``text`` injects alone: an order to
    assemble the pieces before it ("put those together and apply it to everyone", "两句连起来就是新规则")
    takes the messages right before it (up to :data:`MAX_PIECES`, back to a question or an injection)
    as its parts. ``alone`` is ``text``'s own verdict when the caller has it already (it is not
    judged twice)."""
    if not earlier:
        return None
    injected = [detect_injection(message).is_injection for message in earlier]
    if injected[-1] and not (speaks_of_self(text) or is_question(text)):
        joined = detect_injection(f"{earlier[-1]}\n{text}")
        return SplitAttack(["multi_turn", *joined.reasons], (len(earlier) - 1,))
    alone = alone if alone is not None else detect_injection(text)
    if alone.is_injection:
        # an order to assemble the pieces before it ("put those together and apply it to everyone")
        # takes them with it; any other message that injects alone is judged alone
        if not refers_to_pieces(text):
            return None
        parts: list[int] = []
        for i in range(len(earlier) - 1, -1, -1):
            if len(parts) == MAX_PIECES or injected[i] or is_question(earlier[i]):
                break
            parts.insert(0, i)
        return SplitAttack(["multi_turn", *alone.reasons], tuple(parts)) if parts else None
    window = [i for i, bad in enumerate(injected) if not bad]
    if not window or not detect_injection("\n".join([*(earlier[i] for i in window), text])).is_injection:
        return None
    for length in range(1, len(window) + 1):
        run = window[-length:]
        joined = detect_injection("\n".join([*(earlier[i] for i in run), text]))
        if joined.is_injection:
            if detect_injection("\n".join(earlier[i] for i in run)).is_injection:
                return None  # complete before this message: judged (and quarantined) then
            return SplitAttack(["multi_turn", *joined.reasons], tuple(run))
    return None


def gate(candidates: Sequence[Candidate], *, had_pii: bool, prefix: str = "") -> GateResult:
    """Gate 1 (each key/value and fact) and Gate 2 (the joined text). ``prefix`` names the drop
    reasons of model facts apart ("llm_injection")."""
    kept: list[Candidate] = []
    drops: list[str] = []
    for cand in candidates:
        if has_placeholder(cand.value or ""):
            cand = replace(cand, key=None, value=None)
        if has_placeholder(cand.content):
            # Keep what the fact says around the secret, never the secret's slot;
            # an exchange fact starts with the user's question or request by design.
            cleaned = without_placeholder_clauses(cand.content, statement=cand.source is Source.USER)
            if cleaned is None:
                drops.append(prefix + "pii")
                continue
            cand = replace(cand, content=cleaned)
        if detect_injection(cand.content).is_injection or (
            cand.value and detect_injection(cand.value).is_injection
        ):
            drops.append(prefix + "injection")
            continue
        if had_pii:
            cand = replace(cand, importance=min(cand.importance, PII_IMPORTANCE_CAP))
        kept.append(cand)
    if kept and injects_when_joined(kept):
        return GateResult([], (*drops, prefix + "injection_joined"))
    return GateResult(kept, tuple(drops))
