"""One guard for every entrance (docs/design.md "Principles"): the same function and the same tables of rules judge
whatever text is about to be stored, wherever it comes in.

The entrances: a turn's user and assistant text and its ``speaker`` (the write pipeline), an
explicit write's content and tags (``POST /v1/memories``, the MCP ``remember`` tool), a PATCH's
content and tags, and every text of a session's task state (``PUT /v1/sessions/{id}/state``).
Each asks :meth:`WriteGuard.screen` (PII redaction with :data:`~agentmem.domain.guards.pii.PII_RULES`
and the injection rules of :data:`~agentmem.domain.guards.injection.INJECTION_RULES`) and, where the
text is embedded anyway, :meth:`WriteGuard.semantic` (nearest attack prototypes with the configured
embedder): one extra embedding is never spent on a turn.

An order to the assistant (or one that lets a third party act) is also recognised by meaning, in any
language: :meth:`WriteGuard.directive` embeds the turn's sentences, its pasted part and, when the
turn leans that way, the session's recent turns joined, and asks the directive head
(:mod:`agentmem.domain.guards.directive`); that costs one batch of embeddings per turn (two when
the session's window is judged too), and nothing without a head for the embedder's model.

What a caller does with a verdict is the entrance's own rule (a turn is quarantined, an explicit
write is refused with 422, a speaker that reads as an injection is dropped), but the verdict is
the same everywhere.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from agentmem.domain.guards import InjectionVerdict, RedactionResult, detect_injection, redact
from agentmem.domain.guards.directive import (
    NOTHING,
    WINDOW_PART,
    DirectiveHead,
    DirectiveScore,
    DirectiveVerdict,
    judge,
    long_enough,
    obfuscated,
    order_sentences,
    pasted_part,
    readable_views,
    rest_of,
    separated,
)
from agentmem.domain.guards.gate import has_placeholder
from agentmem.domain.text import split_sentences
from agentmem.errors import ValidationFailed
from agentmem.ports import Embedder
from agentmem.services.semantic_guard import segments

__all__ = ["SEMANTIC_REASON", "Screened", "WriteGuard"]

SEMANTIC_REASON = "semantic_attack"  # the reason a semantic verdict adds
NAME_SHAPE = re.compile(r"[^\W_](?:[\w .'·・-]{0,38}[^\W_])?")
"""A person's name: letters (any script), digits, spaces and ``.'·-`` inside, at most 40 characters;
no brackets, colons, punctuation of a sentence or markup."""
MAX_NAME_WORDS = 4
MAX_DIRECTIVE_SEGMENTS = 6  # sentences of a turn (with its opening) the directive head reads
_JOINED_CHARS = 1200  # the tail of the session's recent turns joined, as one text
MAX_SEPARATE_SENTENCES = 12  # a longer turn that holds an order stops whole (its sentences are not each read)
MAX_VIEWS = 2  # de-obfuscated views and decoded payloads read besides the text
_VIEW_CHARS = 500
_SCORE_CACHE = 1024  # earlier turns' scores kept (the window judges them again with every turn)


@dataclass(frozen=True, slots=True)
class Screened:
    """One text through the guard: its redacted form and the injection verdict on the original."""

    redaction: RedactionResult
    injection: InjectionVerdict

    @property
    def text(self) -> str:
        return self.redaction.text

    @property
    def is_injection(self) -> bool:
        return self.injection.is_injection

    @property
    def reasons(self) -> tuple[str, ...]:
        return self.injection.reasons


class SemanticDetector(Protocol):
    """What the guard needs of a semantic detector: per embedded text, the reason it reads as
    an attack by meaning, or None (:class:`agentmem.services.semantic_guard.SemanticGuard`)."""

    def flags(self, vectors: np.ndarray) -> list[str | None]: ...

    def warm(self) -> None: ...


@dataclass
class WriteGuard:
    """The guard. ``semantic_detector`` is optional (tests and the rules-only mode run without it)."""

    semantic_detector: SemanticDetector | None = None
    directive_head: DirectiveHead | None = None  # orders by meaning (rules alone without)
    _scores: OrderedDict[tuple[str, str], DirectiveScore] = field(default_factory=OrderedDict, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def warm(self) -> None:
        """Prepare the semantic detector (embed its prototype banks) off the request path."""
        if self.semantic_detector is not None:
            self.semantic_detector.warm()

    def screen(self, text: str) -> Screened:
        """Redact ``text`` and judge it for injection (rules)."""
        return Screened(redact(text), detect_injection(text))

    def semantic(self, vectors: np.ndarray) -> list[str | None]:
        """Per embedded text: the reason it reads as an attack by meaning, or None."""
        if self.semantic_detector is None or len(vectors) == 0:
            return [None] * len(vectors)
        return self.semantic_detector.flags(vectors)

    def name(self, text: str | None) -> tuple[str | None, str | None]:
        """A name given with a write (a turn's ``speaker``): its redacted form, or None and the
        drop reason when it is not a plain name — ``speaker_not_a_name`` (not the shape of a
        name, :data:`NAME_SHAPE`: a speaker is prefixed to every fact of its turn, so it must not
        be able to carry a sentence, markup or a role header), ``speaker_injection``, ``speaker_pii``."""
        if not text:
            return None, None
        screened = self.screen(text)
        if screened.is_injection:
            return None, "speaker_injection"
        if has_placeholder(screened.text):
            return None, "speaker_pii"
        if not NAME_SHAPE.fullmatch(text.strip()) or len(text.split()) > MAX_NAME_WORDS:
            return None, "speaker_not_a_name"
        return text.strip(), None

    def directive(self, text: str, earlier: Sequence[str], embedder: Embedder) -> DirectiveVerdict:
        """The directive head's verdict on a user's turn (``text``, redacted) given the session's
        recent accepted user texts (``earlier``, oldest first): :func:`~agentmem.domain.guards.directive.judge`.
        No verdict without a head for ``embedder``'s model."""
        head = self.directive_head.for_model(embedder.model_id) if self.directive_head else None
        if head is None or not text.strip():
            return DirectiveVerdict()
        own_pieces = segments(text)[:MAX_DIRECTIVE_SEGMENTS]
        own_pieces += [redact(view[:_VIEW_CHARS]).text for view in readable_views(text)[:MAX_VIEWS]]
        own_pieces = [piece for piece in own_pieces if long_enough(piece)]
        pasted = pasted_part(text)
        quoted_pieces = (
            [p for p in segments(pasted)[:MAX_DIRECTIVE_SEGMENTS] if long_enough(p)] if pasted else []
        )
        scores = head.scores(embedder.embed_documents([*own_pieces, *quoted_pieces])) if own_pieces else []
        own = _most(scores[: len(own_pieces)])
        quoted = _most(scores[len(own_pieces) :])
        self._remember(embedder.model_id, text, own)
        if not earlier or own.order < WINDOW_PART:
            return self._narrowed(judge(text, own, quoted=quoted), text, (), head, embedder)
        with self._lock:
            unknown = [t for t in earlier if (embedder.model_id, t) not in self._scores]
        joined = "\n".join([*earlier, text])[-_JOINED_CHARS:]
        vectors = embedder.embed_documents([joined, *unknown])
        window_scores = head.scores(vectors)
        for t, score in zip(unknown, window_scores[1:], strict=True):
            self._remember(embedder.model_id, t, score)
        with self._lock:
            past = [self._scores.get((embedder.model_id, t), NOTHING) for t in earlier]
        verdict = judge(
            text, own, quoted=quoted, joined=window_scores[0], earlier=past, earlier_texts=earlier
        )
        return self._narrowed(verdict, text, earlier, head, embedder)

    def _narrowed(
        self,
        verdict: DirectiveVerdict,
        text: str,
        earlier: Sequence[str],
        head: DirectiveHead,
        embedder: Embedder,
    ) -> DirectiveVerdict:
        """The verdict on an order in the turn's own words narrowed to its sentences when the rest
        stands apart (:func:`~agentmem.domain.guards.directive.separated`): each sentence and then
        the rest are read by the head (one more batch, only for a turn that holds an order). Never
        for a turn with pasted content or obfuscation (what the head read there is not a sentence
        of the user's), nor one too long to read sentence by sentence."""
        if not verdict.stops or pasted_part(text) is not None or obfuscated(text):
            return verdict
        sentences = split_sentences(text)
        if not 2 <= len(sentences) <= MAX_SEPARATE_SENTENCES:
            return verdict
        readable = [i for i, sentence in enumerate(sentences) if long_enough(sentence)]
        if not readable:
            return verdict
        views = [(segments(sentences[i]) or [sentences[i]])[0] for i in readable]
        scores = head.scores(embedder.embed_documents(views))
        flagged = [readable[i] for i in order_sentences([sentences[i] for i in readable], scores)]
        rest = rest_of(verdict, sentences, flagged)
        if rest is None:  # nothing the turn could go on with: the rest is not read
            return verdict
        rest_score = _most(
            head.scores(embedder.embed_documents(segments(rest)[:MAX_DIRECTIVE_SEGMENTS] or [rest]))
        )
        narrowed = separated(verdict, sentences, flagged, rest_score, earlier)
        if narrowed.rest is not None:
            self._remember(embedder.model_id, text, rest_score)  # what the session keeps of this turn
        return narrowed

    def _remember(self, model_id: str, text: str, score: DirectiveScore) -> None:
        with self._lock:
            self._scores[(model_id, text)] = score
            self._scores.move_to_end((model_id, text))
            while len(self._scores) > _SCORE_CACHE:
                self._scores.popitem(last=False)

    def screen_all(self, texts: Iterable[str]) -> list[Screened]:
        return [self.screen(t) for t in texts]

    def clean_texts(
        self, fields: Sequence[tuple[str, str]], *, embedder: Embedder | None = None
    ) -> list[str]:
        """The redacted texts of a structured write (session state, tags): raises
        :class:`ValidationFailed` naming the fields that read as an injection (by the rules, or
        by meaning when an ``embedder`` is given)."""
        screened = [(name, self.screen(text)) for name, text in fields]
        refused = {name: list(s.reasons) for name, s in screened if s.is_injection}
        if embedder is not None and self.semantic_detector is not None and screened:
            vectors = embedder.embed_documents([s.text for _, s in screened])
            for (name, _), reason in zip(screened, self.semantic(vectors), strict=True):
                if reason is not None:
                    refused.setdefault(name, []).append(reason)
        if refused:
            raise ValidationFailed(
                "rejected by the injection gate",
                details={
                    "fields": sorted(refused),
                    "reasons": sorted({r for rs in refused.values() for r in rs}),
                },
            )
        return [s.text for _, s in screened]


def _most(scores: Sequence[DirectiveScore]) -> DirectiveScore:
    """The most order-like segment's score (a text is as order-like as its worst sentence)."""
    return max(scores, key=lambda score: score.order, default=NOTHING)
