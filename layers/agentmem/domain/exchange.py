"""The exchange (docs/design.md "Two sources of facts"): what of the assistant's reply is kept, and the user's choice when
they accept a recommendation without naming it.

- Query-anchored facts (importance 0.5, inferred): only when the user asked a question or
  requested information (not when they asked to be remembered or reminded), only reply sentences
  that answer it — sharing a topic term with it, filling its slot (domain/answers.py: what -> a
  named thing, where -> a place, when -> a time...) or, when the caller passes a calibrated
  similarity, close to it in meaning (``ANCHOR_SIMILARITY``) — never small talk, secrets,
  credentials, other people's data or rule-changing text. Assistant text is never a user fact
  unless anchored this way.
- An acceptance (``extract_acceptance``): a short reply that takes the previous reply's
  recommendation without naming it ("就装这个", "Sold.", "ok let's do that", "好，就这么办")
  stores that recommendation as the user's (confirmed) choice.
Pure; the text is already redacted by the guards.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from agentmem.domain.answers import chosen_name, fills_slot, is_acceptance, question_slots, recommendation
from agentmem.domain.extraction import (
    _REQUEST_EN,
    _REQUEST_ZH,
    EXCHANGE_IMPORTANCE,
    USER_IMPORTANCE,
    Candidate,
    _clauses,
    _entities,
    _finish,
    _strip_greeting,
    is_question,
    update_strength,
)
from agentmem.domain.keys import match_keys
from agentmem.domain.lazy_re import lazy_compile
from agentmem.domain.models import Confidence, Source
from agentmem.domain.reading import Stance, cues
from agentmem.domain.smalltalk import is_small_talk
from agentmem.domain.text import language, split_sentences, term_set

__all__ = [
    "ANCHOR_SIMILARITY",
    "AnswerSimilarity",
    "extract_acceptance",
    "extract_from_exchange",
    "topic_terms",
]

ANCHOR_SIMILARITY = 0.5  # calibrated question <-> answer similarity that anchors a reply sentence
# question -> calibrated similarity of each reply sentence to it (the write path embeds them)
AnswerSimilarity = Callable[[str, Sequence[str]], Sequence[float]]


# Anything the exchange must never contribute (docs/design.md "Two sources of facts", rules 3-4).
_EXCHANGE_FORBIDDEN = lazy_compile(
    # other people's data, rule-changing text, redaction placeholders
    r"(?:其他用户|别的用户|其它用户|该用户|这位用户|other users?|another user|this user|the user'?s|"
    r"忽略|请记住|记住|以后|从现在|ignore|disregard|remember|from now on|system prompt|系统提示|\[[A-Z_]+\])"
    # a credential stated with its value ("密码是…", "PIN is 1234"); advice about secrets is fine
    r"|(?:密码|口令|验证码|密钥|令牌|token|password|passcode|passwd|\bpin\b|secret|api[ _-]?key|credential)s?"
    r"[^.。!?！？\n]{0,40}?(?:是|为|:|：|=|\bis\b|\bwas\b)\s*\S",
    re.IGNORECASE,
)
# A user message that tries to change the rules anchors nothing ("帮我记住一条规则：以后…").
_RULE_CHANGE = lazy_compile(
    r"请记住|记住.{0,6}规则|以后(?:不管|无论|都|一律)|从现在起|忽略|\bremember (?:this|that|to)\b|\bfrom now on\b|"
    r"\bignore\b|\bdisregard\b|system prompt|系统提示",
    re.IGNORECASE,
)
_ASSISTANT_CHATTER = lazy_compile(
    r"^(?:sure|of course|certainly|great question|happy to help|no problem|ok(?:ay)?|got it|understood|"
    r"好的|当然|没问题|收到|明白)[\s,，!！.。:：]*",
    re.IGNORECASE,
)
_ASSISTANT_SELF = lazy_compile(
    r"^(?:i can|i will|i'll|i'd|let me|i'm happy|i am happy|here(?:'s| is| are)|我来|我会|我可以|希望|以下是|下面是)",
    re.IGNORECASE,
)


def topic_terms(question: str) -> frozenset[str]:
    return term_set(question)


# Requests that ask to be remembered or reminded are not answered with information: the reply
# to them ("麻烦记一下" -> "不建议保存手机号。") is never a fact of the user's.
_NO_ANSWER_REQUEST = lazy_compile(
    r"记(?:一下|住|下来?|着)|提醒我|备忘|\bremember\b|\bremind me\b|\bnote (?:that|this|down|it)\b|"
    r"\bkeep in mind\b|\bsave (?:this|that|it)\b",
    re.IGNORECASE,
)


def _anchor(user_text: str) -> str | None:
    """The user's question or information request this exchange answers: its question/request
    sentences (clauses), or None when the user only made statements or asked to be remembered."""
    asked: list[str] = []
    for sentence in split_sentences(user_text):
        sentence = _strip_greeting(sentence)
        for clause in _clauses(sentence) if not is_question(sentence) else [sentence]:
            if _NO_ANSWER_REQUEST.search(clause) and not is_question(clause):
                continue
            if is_question(clause) or _REQUEST_EN.match(clause) or _REQUEST_ZH.match(clause):
                asked.append(clause)
    return " ".join(asked) if asked else None


def _reply_sentences(answer: str) -> list[str]:
    """The reply's sentences that could state something: no chatter, small talk, stated
    credentials, other people's data or rule-changing text."""
    out: list[str] = []
    for sentence in split_sentences(answer):
        sentence = _ASSISTANT_CHATTER.sub("", sentence.strip()).strip()
        if sentence and not _EXCHANGE_FORBIDDEN.search(sentence) and not is_small_talk(sentence):
            out.append(sentence)
    return out


def extract_from_exchange(
    question: str,
    answer: str,
    *,
    max_sentences: int = 3,
    similarity: AnswerSimilarity | None = None,
) -> list[Candidate]:
    """Query-anchored facts from the assistant's reply (docs/extraction.md): only when the user asked
    or requested information, only reply sentences that answer it — sharing a topic term with
    it, filling its slot (``domain/answers.py``) or, with ``similarity``, at least
    ``ANCHOR_SIMILARITY`` close to it — never small talk, other people's data, stated credentials
    or rule-changing text. One candidate per turn: the question with the anchored sentences."""
    anchor = _anchor(question)
    if anchor is None or not answer.strip() or _RULE_CHANGE.search(anchor):
        return []
    topic = topic_terms(question)
    slots = question_slots(anchor)
    kept: list[str] = []
    unanchored: list[str] = []
    for sentence in _reply_sentences(answer):
        filled = fills_slot(slots, sentence)
        if _ASSISTANT_SELF.match(sentence) and not filled:
            continue
        if filled or topic & term_set(sentence):
            kept.append(sentence)
        else:
            unanchored.append(sentence)
    if not kept and unanchored and similarity is not None:
        scores = similarity(anchor, unanchored)
        kept = [s for s, score in zip(unanchored, scores, strict=True) if score >= ANCHOR_SIMILARITY]
    kept = kept[:max_sentences]
    if not kept:
        return []
    joiner = "" if language(answer) == "zh" else " "
    content = _finish(f"{anchor.strip()} {joiner.join(kept)}")
    labels = sorted(topic, key=lambda t: (-len(t), t))
    return [
        Candidate(
            content=content,
            source=Source.EXCHANGE,
            importance=EXCHANGE_IMPORTANCE,
            confidence=Confidence.INFERRED,
            key=None,
            value=None,
            category_hint=None,
            entities=_entities(" ".join(kept), []),
            tags=(f"topic:{labels[0]}",) if labels else (),
        )
    ]


def accepts(user_text: str) -> bool:
    """A short reply the statement reader reads as accepting a recommendation ("okay, you sold me",
    "被你说服了", "就它了"), beside the phrasings :func:`is_acceptance` knows."""
    return len(user_text) <= ACCEPTANCE_CHARS and cues.stance(user_text) is Stance.ACCEPTS


ACCEPTANCE_CHARS = 80  # a longer reply states more than a choice: its own facts are extracted


def extract_acceptance(previous_user: str, previous_answer: str, user_text: str) -> list[Candidate]:
    """The user's choice when ``user_text`` only accepts the recommendation of the previous reply
    ("就装这个" after "推荐你装PostgreSQL。"): the recommendation stored as a confirmed user fact,
    with the question it answered; nothing when the reply is not an acceptance or the previous
    reply recommended nothing."""
    if not (is_acceptance(user_text) or accepts(user_text)) or not previous_answer.strip():
        return []
    question = _anchor(previous_user) or ""
    if not question or _RULE_CHANGE.search(question):
        return []
    chosen = recommendation(question, _reply_sentences(previous_answer))
    if chosen is None:
        return []
    name = chosen_name(question, chosen)
    if language(f"{question}{user_text}") == "zh":
        content = (
            f"我选定了{name}（{question.strip()}）"
            if name
            else f"我采纳了建议：{chosen}（{question.strip()}）"
        )
    else:
        content = (
            f"I chose {name} ({question.strip()})" if name else f"I went with: {chosen} ({question.strip()})"
        )
    keys = match_keys(content)
    primary = keys[0] if keys else None
    return [
        Candidate(
            content=_finish(content),
            source=Source.USER,
            importance=USER_IMPORTANCE,
            key=primary.key if primary else None,
            value=primary.value if primary else None,
            category_hint=primary.category if primary else None,
            update_strength=update_strength(user_text),
            entities=_entities(chosen, keys),
            tags=("accepted",),
        )
    ]
