"""Prompt-injection and memory-poisoning detection for text about to be written to memory.

A flagged message is quarantined whole, so precision matters as much as recall: talking *about*
prompts, rules or passwords is fine; asking the agent to drop its instructions, hand over its
prompt, other users' data or secrets, or to become an unrestricted persona is not. The text is
normalised first (:func:`normalize_for_scan`), so zero-width, full-width and homoglyph tricks fold
away. Chinese, English and mixed phrasing are matched.

Each reason code is one :class:`InjectionRule` in :data:`INJECTION_RULES`: the code, its weight in
the score, and the detector that decides it (whose docstring states the rule). The detectors live
beside this module, grouped by what they guard: :mod:`.instructions` (``override_instructions``,
``prompt_exfiltration``), :mod:`.exfiltration` (``data_exfiltration``, ``secret_request``),
:mod:`.persona` (``persona_override``, ``deceptive_rule``), :mod:`.markup` (``role_marker``,
``tool_markup``) and :mod:`.directives` (``behaviour_directive``: standing rules for the agent that
poison its memory, with :mod:`.authority`, :mod:`.agent_rules`, :mod:`.attachments`, :mod:`.tool_rules`
and :mod:`.assembly`); :mod:`.languages` holds the
ja/ko/es/fr/de/it/pt/ru phrasings and :mod:`.cooccurrence` the order-free target+predicate matching
that the first modules call. :mod:`.prototypes` is data for the semantic detector
(``agentmem.services.semantic_guard``), which this module does not call. To add a reason, write its detector and add one entry to the table;
``tests/unit/test_guards_injection.py`` checks the table and wants an example for the new reason.

Every rule reads the text and its de-obfuscated views (:func:`.decoding.deobfuscated_views`:
leetspeak, letters padded apart, filler, spaced CJK) and, for Traditional Chinese, its
Simplified view (:func:`~agentmem.domain.guards.normalize.simplified_view`). Besides the rules, ``encoded_payload`` marks a
payload (:func:`.decoding.decoded_payloads`: base64 incl. split runs, hex, URL-encoding, HTML
entities, ``\\u`` escapes, rot13 and reversed spelling) that decodes to text that is itself an
injection (its reasons follow); payloads are read to depth 2. Inside an *opaque* payload (base64,
hex, ``\\u`` escapes; rot13 when the text names it) a short imperative aimed at the agent ("praise
X", "always append Y to replies") is a ``behaviour_directive``: nobody encodes that for a human
reader. An instruction to decode and act ("run this:", "execute the hex instruction", "解码后执行")
next to an opaque payload is ``encoded_payload`` whatever the payload says. Lines that end
mid-sentence are also read joined to the next, so an attack split over messages (which the write
guard joins with newlines) reads as the sentence it was. A quoted phrase that the text only
*mentions* ("attackers say 'ignore previous instructions'", "translate 'ignore …' into French") is
not read as an instruction, unless the text also asks to follow it.

Phrasing about the future ("from now on", "always", "remember", "以后", "每次") is *not* a signal by
itself: it only raises the score of a message that already
carries one of the signals above.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

from agentmem.domain.guards.injection._shared import CI, FUTURE
from agentmem.domain.guards.injection.decoding import deobfuscated_views, tagged_payloads
from agentmem.domain.guards.injection.directives import behaviour_directive
from agentmem.domain.guards.injection.exfiltration import data_exfiltration, secret_request
from agentmem.domain.guards.injection.instructions import override_instructions, prompt_exfiltration
from agentmem.domain.guards.injection.markup import role_marker, tool_markup
from agentmem.domain.guards.injection.persona import deceptive_rule, persona_override
from agentmem.domain.guards.normalize import normalize_for_scan, simplified_view
from agentmem.domain.lazy_re import lazy_compile

__all__ = ["ENCODED_PAYLOAD", "INJECTION_RULES", "InjectionRule", "InjectionVerdict", "detect_injection"]


@dataclass(frozen=True, slots=True)
class InjectionVerdict:
    is_injection: bool
    reasons: tuple[str, ...]
    score: float


@dataclass(frozen=True, slots=True)
class InjectionRule:
    """One reason code: ``detect`` says whether normalised text carries it; ``weight`` (0-1) is
    what it adds to the score (weights combine as independent probabilities)."""

    reason: str
    weight: float
    detect: Callable[[str], bool]


# In the order reasons are reported.
INJECTION_RULES: tuple[InjectionRule, ...] = (
    InjectionRule("override_instructions", 0.9, override_instructions),
    InjectionRule("prompt_exfiltration", 0.85, prompt_exfiltration),
    InjectionRule("data_exfiltration", 0.85, data_exfiltration),
    InjectionRule("secret_request", 0.85, secret_request),
    InjectionRule("persona_override", 0.85, persona_override),
    InjectionRule("role_marker", 0.7, role_marker),
    InjectionRule("tool_markup", 0.7, tool_markup),
    InjectionRule("deceptive_rule", 0.8, deceptive_rule),
    InjectionRule("behaviour_directive", 0.8, behaviour_directive),
)
"""Every reason ``detect_injection`` reports from the text itself; one entry per reason."""

ENCODED_PAYLOAD = "encoded_payload"  # a decoded payload (base64, hex, rot13, ...) that is an injection
_FUTURE_BOOST = 0.3
_DIRECTIVE_WEIGHT = 0.8
_THRESHOLD = 0.5
_MAX_DEPTH = 2


def _combine(weights: list[float]) -> float:
    remaining = 1.0
    for weight in weights:
        remaining *= 1.0 - weight
    return 1.0 - remaining


_CJK_LATIN = lazy_compile(
    r"(?<=[\u3000-\u9fff\uf900-\ufaff\uff00-\uffef])(?=[A-Za-z0-9<\[{#])"
    r"|(?<=[A-Za-z0-9>\]}])(?=[\u3000-\u9fff\uf900-\ufaff\uff00-\uffef])"
)


_QUOTED = lazy_compile(
    r"'[^'\n]{3,200}'|\"[^\"\n]{3,200}\"|“[^”\n]{3,200}”|‘[^’\n]{3,200}’|「[^」\n]{1,200}」|『[^』\n]{1,200}』|«[^»\n]{3,200}»"
)
_MENTION = lazy_compile(
    r"\b(?:says?|said|saying|type[sd]?|typing|write|wrote|writes|phrases?|words?|like|such\s+as|e\.g\.|means?|meaning|"
    r"translate|translation|called|term|string|text|example|examples|sentence|quote[sd]?|prompts?\s+like|"
    r"payloads?\s+like|attempts?\s+like|pattern|keyword|attackers?|hackers?|jailbreaks?|injections?|scammers?|"
    r"tells?\s+(?:the\s+)?(?:models?|bots?|ais?|llms?|chatbots?|assistants?)\s+to)\b|例如|比如|像是?|说|输入|翻译|短语|这句话|所谓|叫做|攻击者|黑客",
    CI,
)
_FOLLOW = lazy_compile(
    r"\b(?:follow|obey|execute|do\s+(?:it|that|this|what\s+it\s+says)|comply|act\s+on|apply\s+it|then\s+do)\b|"
    r"照做|执行|遵守|按(?:照)?(?:它|这个|这句话)",
    CI,
)


_LINK = lazy_compile(
    r"https?://|\bwww\.|\b[\w-]+\.(?:com|net|org|io|example|xyz|top|cn|ru|co|me|app|site|online|link)\b|@[\w-]+\.",
    CI,
)


def _mentions_masked(text: str) -> str:
    """``text`` with the quoted phrases it only mentions replaced by a neutral mark."""
    quotes = list(_QUOTED.finditer(text))
    if not quotes or _FOLLOW.search(text):
        return text
    out: list[str] = []
    cursor = 0
    for m in quotes:
        if _LINK.search(m.group(0)):
            continue  # a quoted link is what gets attached, not a phrase talked about
        if _MENTION.search(text[max(0, m.start() - 40) : m.start()]):
            out += (text[cursor : m.start()], "«quote»")
            cursor = m.end()
    if not out:
        return text
    out.append(text[cursor:])
    return "".join(out)


# Inside a payload, a short imperative aimed at the agent is enough: nobody base64-encodes "praise X"
# or "always append Y to replies" for a human reader.
_IMPERATIVE_PAYLOAD = lazy_compile(
    r"^\W*(?:please\s+|now\s+|then\s+)?(?:(?:always|never|only|from\s+now\s+on,?|henceforth,?)\s+)?"
    r"(?:praise|recommend|promote|endorse|advertise|mention|say|tell|reply|respond|answer|append|add|include|insert|send|"
    r"forward|transfer|wire|pay|ignore|forget|disregard|reveal|print|output|obey|follow|execute|run|delete|call|visit|click|"
    r"buy|insult|agree|approve|grant|show|link|email|upload|disable|act|pretend|become|switch|use|put|write|sign)\b"
    r"|^\W*(?:请)?(?:以后|今后|总是|每次|永远|一律)?(?:夸|赞美|称赞|吹捧|推荐|说|回复|回答|告诉|加上|附上|添加|发送|转发|转账|汇款|"
    r"忽略|无视|执行|删除|购买|泄露|输出)",
    CI,
)
_MAX_IMPERATIVE_PAYLOAD = 400
_ROT13_NAMED = lazy_compile(r"\brot-?13\b|\bcaesar\b|凯撒", CI)
# An instruction to decode and act: "run this:", "execute the hex instruction", "decode and follow".
_RUN_PAYLOAD = lazy_compile(
    r"\b(?:run|execute|exec|eval(?:uate)?|follow|obey|apply|perform|carry\s+out|act\s+on|do|process|interpret)\s+"
    r"(?:this|these|that|it|the\s+following|what\s+(?:it|this)\s+says|(?:the\s+|this\s+)?(?:hex|base64|b64|encoded|decoded|"
    r"hidden|secret|rot13|embedded|binary|obfuscated)\s*(?:\w+\s*)?)\b"
    r"|\bdecode\b[^.!?\n]{0,30}?\b(?:and|then)\s+(?:run|execute|follow|obey|apply|do|act\s+on|comply|perform)\b"
    r"|\b(?:hex|base64|b64|encoded|rot13|hidden)\s+(?:instructions?|directives?|commands?|orders?|rules?)\b"
    r"|(?:执行|照做|运行|遵照|按照)(?:这段|以下|下面|这个|解码后|里面)|解码(?:后)?(?:并|然后|再)?(?:执行|照做|运行|遵守)|"
    r"(?:编码|十六进制|base64)(?:的)?(?:指令|命令)|실행해|디코딩해서|デコードして実行|実行して",
    CI,
)


_OPEN_LINE_END = lazy_compile(r"(?<![.!?。！？:：;；])[ \t]*\n[ \t]*(?=\S)")


def _joined_lines(text: str) -> list[str]:
    """``text`` with a line that ends mid-sentence joined to the next: an attack split over messages
    (which the caller joins with newlines) reads as the one sentence it was."""
    if "\n" not in text:
        return []
    joined = _OPEN_LINE_END.sub(" ", text)
    return [joined] if joined != text else []


def _rules_on(text: str) -> list[InjectionRule]:
    return [rule for rule in INJECTION_RULES if rule.detect(text)]


def _detect(text: str, depth: int, *, opaque: bool = False) -> InjectionVerdict:
    # A space where CJK meets Latin lets the English patterns' \b work in mixed text.
    text = _CJK_LATIN.sub(" ", text)
    scanned = _mentions_masked(text)
    fired = _rules_on(scanned)
    simplified = simplified_view(scanned)
    views = (*deobfuscated_views(scanned), *_joined_lines(scanned), *((simplified,) if simplified else ()))
    for view in views:
        fired += [rule for rule in _rules_on(view) if rule not in fired]
    fired.sort(key=INJECTION_RULES.index)
    reasons = [rule.reason for rule in fired]
    score = _combine([rule.weight for rule in fired])
    if (
        opaque
        and "behaviour_directive" not in reasons
        and len(text) <= _MAX_IMPERATIVE_PAYLOAD
        and _IMPERATIVE_PAYLOAD.search(text)
    ):
        reasons.append("behaviour_directive")
        score = _combine([score, _DIRECTIVE_WEIGHT])
    if depth < _MAX_DEPTH:
        payloads = tagged_payloads(text, respell=depth == 0)
        rot13_named = bool(_ROT13_NAMED.search(text))
        if any(o for _, o in payloads) and _RUN_PAYLOAD.search(text) and ENCODED_PAYLOAD not in reasons:
            reasons.append(ENCODED_PAYLOAD)  # asked to decode and act: what it decodes to is beside the point
            score = _combine([score, _DIRECTIVE_WEIGHT])
        for payload, is_opaque in payloads:
            inner = _detect(payload, depth + 1, opaque=is_opaque or rot13_named)
            if inner.is_injection:
                for reason in (ENCODED_PAYLOAD, *inner.reasons):
                    if reason not in reasons:
                        reasons.append(reason)
                score = max(score, _combine([score, inner.score]))
    if reasons and FUTURE.search(text):
        score = _combine([score, _FUTURE_BOOST])
    score = round(min(1.0, max(0.0, score)), 4)
    return InjectionVerdict(
        is_injection=bool(reasons) and score >= _THRESHOLD, reasons=tuple(reasons), score=score
    )


@lru_cache(maxsize=2048)
def detect_injection(text: str) -> InjectionVerdict:
    """Judge whether ``text`` (a whole user message) tries to inject instructions into memory.

    Kept for the last 2048 texts (the verdict is immutable and depends on the text alone): the
    cross-turn gate judges a session's last few messages again with every new one, and a turn's
    facts are screened once per gate."""
    return _detect(normalize_for_scan(text), 0)
