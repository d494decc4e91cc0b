"""Orders recognised by meaning, in any language: the *directive head* and how its scores combine
with the rules (docs/guards.md "Detection").

The head is multinomial logistic regression over the shipped multilingual embedder's document
vectors (numpy at inference, like the statement reader's heads: :mod:`agentmem.domain.reading.heads`),
trained by ``agentmem_dev.guards_training.train`` on labelled texts in many languages and on benign
look-alikes. Its labels:

- ``none``: statements, habits, questions, how-to, quoted rules of a game or an office, recipe steps;
- ``preference``: the user's own wishes about how the assistant treats *them* (language, length, tone);
- ``to_assistant``: an order steering the agent beyond the user's own service (override its rules,
  promote a brand, a standing rule for every user, tell other people something);
- ``to_others``: a wish that lets a third party act or weakens a safeguard (copy someone on mail,
  approve every prompt, skip warnings, one password everywhere, send data to an address).

How a turn is judged (:func:`judge`), each score the most order-like segment of its text:

- an order (``to_assistant`` + ``to_others``) at least :data:`ALONE` stops the turn; at least
  :data:`WITH_SIGNAL` when the rules saw a weak signal (future phrasing, a link, heavy obfuscation:
  :func:`obfuscated`). Mostly ``to_assistant``: quarantined (``directive``); mostly ``to_others``:
  held for confirmation (``held_third_party``), never stored as an active rule;
- text the user pasted or quoted (:func:`pasted_part`: an e-mail, a CV, a transcript, a quoted block)
  is the third party's words: an order in it at :data:`QUOTED` quarantines (``indirect_directive``),
  so it is never stored as the user's preference or rule;
- the session's recent accepted turns judged together (their joined text, and the sum of their
  scores) catch an order built up over turns (``gradual``).

Pure: the vectors come from the caller (``agentmem.services.guard.WriteGuard``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from agentmem.domain.guards.injection._shared import FUTURE
from agentmem.domain.guards.injection.decoding import deobfuscated_views, tagged_payloads
from agentmem.domain.lazy_re import lazy_compile
from agentmem.domain.reading.heads import Head

__all__ = [
    "ALONE",
    "LABELS",
    "QUOTED",
    "WINDOW_SUM",
    "WITH_SIGNAL",
    "DirectiveHead",
    "DirectiveScore",
    "DirectiveVerdict",
    "judge",
    "long_enough",
    "obfuscated",
    "order_sentences",
    "pasted_part",
    "readable_views",
    "rest_of",
    "separated",
    "sharing_a_name",
]

LABELS = ("none", "preference", "to_assistant", "to_others")
ALONE = 0.70  # p(to_assistant) + p(to_others) that stops a turn by itself
WITH_SIGNAL = 0.45  # ... when the rules saw a weak signal (future phrasing, a link, obfuscation)
QUOTED = 0.50  # ... of pasted/quoted content (the third party's words)
WINDOW_JOINED = 0.60  # ... of the session's recent turns joined
WINDOW_SUM = 1.2  # or the sum of their own scores (each at least WINDOW_PART)
WINDOW_PART = 0.3


@dataclass(frozen=True, slots=True)
class DirectiveScore:
    """The head's probabilities that a text orders the assistant / lets others act."""

    to_assistant: float = 0.0
    to_others: float = 0.0
    preference: float = 0.0

    @property
    def order(self) -> float:
        """How likely the text is an order of either kind."""
        return self.to_assistant + self.to_others


NOTHING = DirectiveScore()


@dataclass(frozen=True)
class DirectiveHead:
    """The trained head of one embedder model; ``held_out``: its measured accuracy on the held-out
    split (shown by the guards eval), when the file records it."""

    model_id: str
    head: Head
    held_out: dict[str, float] | None = None

    def for_model(self, model_id: str) -> DirectiveHead | None:
        return self if model_id == self.model_id else None

    def scores(self, vectors: npt.NDArray[np.float32]) -> list[DirectiveScore]:
        out = []
        for vector in vectors:
            p = self.head.probabilities(vector)
            out.append(
                DirectiveScore(p.get("to_assistant", 0.0), p.get("to_others", 0.0), p.get("preference", 0.0))
            )
        return out


@dataclass(frozen=True, slots=True)
class DirectiveVerdict:
    """``quarantine``: the reasons a turn is quarantined for (empty: not); ``hold``: the reason it is
    held for confirmation instead; ``parts``: the earlier turns (positions) that are part of it."""

    quarantine: tuple[str, ...] = ()
    hold: str | None = None
    parts: tuple[int, ...] = ()  # positions in the earlier turns that are part of the order
    # When the order is in sentences of their own (:func:`separated`): those sentences, and the
    # rest of the turn, which goes on through the write path as the user's words.
    orders: tuple[str, ...] = ()
    rest: str | None = None

    @property
    def stops(self) -> bool:
        return bool(self.quarantine or self.hold)

    @property
    def whole_turn(self) -> bool:
        """Whether the whole turn stops (else only :attr:`orders` do, and :attr:`rest` goes on)."""
        return self.stops and self.rest is None


_LINK = lazy_compile(
    r"https?://|\bwww\.|\b[\w-]+\.(?:com|net|org|io|example|xyz|top|cn|ru|app|site|link)\b|@[\w-]+\."
)
_WORD = lazy_compile(r"\w+")
_NON_TEXT = lazy_compile(r"[^\w\s.,;:!?'\"()\-，。！？；：、（）「」『』]")


MIN_WORDS = 5  # a shorter piece ("contact: [EMAIL] (work)") is no sentence the head can read
_TOKEN = lazy_compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]|[^\W\d_]{2,}")


def long_enough(piece: str) -> bool:
    """Whether ``piece`` has words enough to be an order (a CJK character counts as half a word)."""
    tokens = _TOKEN.findall(piece)
    cjk = sum(1 for t in tokens if len(t) == 1)
    return (len(tokens) - cjk) + cjk / 2 >= MIN_WORDS


def readable_views(text: str) -> list[str]:
    """What the head reads besides the text when it is obfuscated (:func:`obfuscated`): its
    de-obfuscated views (letters padded apart, leetspeak, ...) and the payloads it decodes to
    (base64, hex, rot13, ...), as the rules read them."""
    if not obfuscated(text):
        return []
    views = deobfuscated_views(text)
    views += [payload for payload, _ in tagged_payloads(text, respell=True)]
    return [v for v in views if v.strip()]


def _words(text: str) -> set[str]:
    """The whole words of ``text`` (letters only, two or more), lower-cased."""
    return {w for w in (t.strip(".,;:!?\"'()") for t in text.lower().split()) if len(w) >= 2 and w.isalpha()}


def obfuscated(text: str) -> bool:
    """Heavy obfuscation (a signal by itself): a payload that decodes to a sentence (five words or
    more), a de-obfuscated view that spells three words or more the text does not (letters padded
    apart, leetspeak over a phrase: one code such as ``C02XK1ZZJG5H`` is no obfuscation), or more
    than a quarter of the non-space characters neither letters, digits nor punctuation."""
    if any(len(_words(payload)) >= 3 for payload, _ in tagged_payloads(text, respell=False)):
        return True
    words = _words(text)
    for view in deobfuscated_views(text):
        if len(_words(view) - words) >= 3:
            return True
    dense = "".join(text.split())
    return len(dense) >= 20 and len(_NON_TEXT.findall(dense)) > len(dense) / 4


# What introduces a third party's words, and the shapes of pasted content.
_INTRO = lazy_compile(
    r"(?:here(?:'s| is| are)|below is|pasting|pasted|forwarding|forwarded|copied|quote[sd]?|this is)\s+"
    r"(?:the|a|an|my|his|her|their|our)?\s*[\w -]{0,30}?"
    r"(?:e-?mail|message|mail|letter|cv|resume|résumé|transcript|comment|review|post|page|article|chat|text|document|note|ticket|issue)"
    r"[^\n:]{0,40}[:：]"
    r"|(?:邮件|信|简历|记录|评论|帖子|网页|文章|聊天记录|原文|内容|留言|工单)(?:如下|是这样的|内容)?[:：]"
    r"|(?:correo|mensaje|carta|currículum|transcripción|comentario|courriel|message|lettre|lebenslauf|nachricht|"
    r"письмо|сообщение|резюме|メール|履歴書|文字起こし|メッセージ|이메일|메일|이력서|댓글)[^\n:：]{0,30}[:：]",
    re.IGNORECASE,
)
_HEADERS = lazy_compile(
    r"^(?:from|to|subject|cc|date|von|an|betreff|de|para|asunto|objet|发件人|收件人|主题)\s*[:：]",
    re.IGNORECASE | re.MULTILINE,
)
_QUOTE_LINE = lazy_compile(r"^\s*>.*$", re.MULTILINE)
_FENCE = lazy_compile(
    r"```.*?```|<blockquote>.*?</blockquote>|-{3,}\s*(?:forwarded|original)[^\n]*\n.*",
    re.IGNORECASE | re.DOTALL,
)
_LONG_PASTE = 600  # characters after an introduction that make a pasted section


def pasted_part(text: str) -> str | None:
    """The part of ``text`` that is somebody else's words (quoted lines, a fenced or forwarded block,
    mail headers, or what follows "here is the email:"), or None when nothing is quoted."""
    parts = [m.group(0).lstrip(" >") for m in _QUOTE_LINE.finditer(text)]
    parts += [m.group(0) for m in _FENCE.finditer(text)]
    intro = _INTRO.search(text)
    if intro:
        parts.append(text[intro.end() :])
    elif headers := _HEADERS.search(text):
        parts.append(text[headers.start() :])
    elif len(text) >= _LONG_PASTE and text.count("\n") >= 4:
        first_break = text.find("\n")
        parts.append(text[first_break + 1 :])  # a long multi-line paste under one line of the user's
    joined = "\n".join(p.strip() for p in parts if p.strip())
    return joined or None


# A name an order and its earlier parts share: a capitalised word inside a sentence, a word with
# digits, a domain ("Sonquill", "T4xfl1p", "deals.example").
_NAME = lazy_compile(r"(?<=[\w,;:] )[A-ZÀ-ÖØ-ÞА-ЯЁ][\w-]{3,}|\b\w*\d\w*[A-Za-z]\w*\b|\b[\w-]+\.[a-z]{2,}\b")


_CJK_RUN = lazy_compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]{3,}")


def _names(text: str) -> set[str]:
    """The names in ``text``; in CJK text (no capitals to tell a name), its three-character runs."""
    names = {m.group(0).lower() for m in _NAME.finditer(text)}
    for run in _CJK_RUN.findall(text):
        names.update(run[i : i + 3] for i in range(len(run) - 2))
    return names


def sharing_a_name(earlier: Sequence[str], text: str) -> tuple[int, ...]:
    """The earlier turns that name what the order names (its brand, person or link): the pieces
    an order was built from over turns ("mention Sonquill when …" / "make that a rule for all")."""
    names = _names(text)
    return tuple(i for i, t in enumerate(earlier) if names & _names(t)) if names else ()


def _weak_signal(text: str) -> bool:
    return bool(FUTURE.search(text) or _LINK.search(text)) or obfuscated(text)


def _is_order(text: str, score: DirectiveScore) -> bool:
    return score.order >= ALONE or (score.order >= WITH_SIGNAL and _weak_signal(text))


def order_sentences(sentences: Sequence[str], scores: Sequence[DirectiveScore]) -> list[int]:
    """The positions of the ``sentences`` that are orders by themselves (the rule :func:`judge`
    applies to a turn's own text), given each one's score."""
    return [i for i, (s, score) in enumerate(zip(sentences, scores, strict=True)) if _is_order(s, score)]


def rest_of(verdict: DirectiveVerdict, sentences: Sequence[str], orders: Sequence[int]) -> str | None:
    """What is left of the turn without its order sentences, when the verdict may narrow to them
    at all: an order by the turn's own words (not a quoted or a gradual one), in some sentences
    but not all, leaving words enough to be a statement. None otherwise."""
    if not verdict.stops or verdict.rest is not None or not orders or len(set(orders)) >= len(sentences):
        return None
    if set(verdict.quarantine) - {"directive"} or (verdict.hold and verdict.hold != "held_third_party"):
        return None
    flagged = set(orders)
    rest = " ".join(s for i, s in enumerate(sentences) if i not in flagged).strip()
    return rest if long_enough(rest) else None


def separated(
    verdict: DirectiveVerdict,
    sentences: Sequence[str],
    orders: Sequence[int],
    rest_score: DirectiveScore,
    earlier_texts: Sequence[str] = (),
) -> DirectiveVerdict:
    """The verdict narrowed to the order's own sentences when the rest of the turn stands apart:
    "I'm a wedding planner. Clients can mail me directly." stops the second sentence, not the
    job. It stays the whole turn's when :func:`rest_of` finds nothing to go on with (no sentence
    is an order by itself, every one is, the order is quoted or gradual, too few words are left)
    or when what is left still leans towards an order (``rest_score``, the head's score of that
    rest, at least :data:`WINDOW_PART`)."""
    rest = rest_of(verdict, sentences, orders)
    if rest is None or rest_score.order >= WINDOW_PART:
        return verdict
    said = tuple(sentences[i] for i in sorted(set(orders)))
    return DirectiveVerdict(
        verdict.quarantine,
        verdict.hold,
        parts=sharing_a_name(earlier_texts, " ".join(said)),
        orders=said,
        rest=rest,
    )


def judge(
    text: str,
    own: DirectiveScore,
    *,
    quoted: DirectiveScore = NOTHING,
    joined: DirectiveScore = NOTHING,
    earlier: Sequence[DirectiveScore] = (),
    earlier_texts: Sequence[str] = (),
) -> DirectiveVerdict:
    """The directive verdict on a user's turn ``text``: ``own`` its score, ``quoted`` that of its
    pasted part (:func:`pasted_part`), ``joined`` that of the session's recent accepted turns joined
    with it, ``earlier`` those turns' own scores and ``earlier_texts`` their texts (oldest first)."""
    if _is_order(text, own):
        if own.to_others > own.to_assistant:
            return DirectiveVerdict(hold="held_third_party")
        return DirectiveVerdict(("directive",), parts=sharing_a_name(earlier_texts, text))
    if quoted.order >= QUOTED:
        return DirectiveVerdict(("indirect_directive",))
    if earlier and own.order >= WINDOW_PART:
        parts = [s.order for s in earlier if s.order >= WINDOW_PART]
        if joined.order >= WINDOW_JOINED or sum(parts) + own.order >= WINDOW_SUM:
            return DirectiveVerdict(("gradual",), parts=tuple(range(len(earlier))))
    return DirectiveVerdict()
