"""Sentence splitting that knows abbreviations, initials, numbers, URLs and CJK punctuation.

A candidate boundary is a terminator: CJK ``。！？；…`` (always), ASCII ``!?;`` (always), a
newline (always) and ``.`` (decided by the token before it and the word after it). Closing
quotes and brackets (``”’」』）"')``) that follow a terminator stay with its sentence.

A ``.`` ends a sentence unless:
- it sits inside a token (``3.5``, ``v2.1``, ``example.com``, ``e.g.,``): no space after it;
- it sits inside a URL or an e-mail address (masked before the scan);
- the token before it is a title (``Dr. St. Mr. Mrs. Mt. Prof.``...): a name always follows;
- the token before it is an abbreviation (``Inc. Ltd. etc. a.m. U.S. e.g.``), a token with
  inner periods (``Ph.D.``) or a single capital (an initial: ``J. R. R. Tolkien``) and the next
  word does not open a sentence: a lowercase word, or a capitalised one that is not a sentence
  opener (pronoun, determiner, conjunction, common adverb) — "Acme Inc. The office..." splits,
  "the U.S. last year" and "J. R. R. Tolkien" do not;
- it closes a list number at the start of a line (``1. buy milk``).
``...`` splits only before a capital or a CJK character. Pure; no dependencies.
"""

from __future__ import annotations

import re

from agentmem.domain.lazy_re import lazy_compile

__all__ = ["ABBREVIATIONS", "TITLES", "split_sentences"]


def _words(text: str) -> frozenset[str]:
    """A lexicon written as one space-separated string."""
    return frozenset(text.split())


# Titles are always followed by a name: never a boundary.
TITLES = _words(
    "dr mr mrs ms mx prof mt sen rep gov gen col lt capt cpt sgt maj rev fr hon pres supt insp cmdr "
    "adm messrs mme mlle"
)
# Abbreviations that may also end a sentence ("... at Acme Inc."): a boundary only before a
# sentence opener. Lower-cased, without their periods.
ABBREVIATIONS = _words(
    "st ft jr sr inc ltd co corp llc plc bros dept univ assn approx appt apt ave blvd rd hwy no nos vs "
    "etc eg ie cf viz jan feb apr jun jul aug sep sept oct nov dec mon tue tues thu thur thurs fri "
    "fig vol eds pp tel ext"
)
# Dotted abbreviations (U.S., a.m., Ph.D.) are recognised by their shape, not listed: "us", "am"
# and "ma" are words too.
# Abbreviations after which an example or a clause always follows.
_NEVER_FINAL = frozenset({"eg", "ie", "cf", "viz", "vs"})
# Capitalised words that open a sentence (a boundary after an abbreviation or initial).
_OPENERS = _words(
    "i i'm i've i'd i'll we we're our my you your he she it it's they their there this that these "
    "those the a an and but so then also however anyway meanwhile later after before now today "
    "yesterday tomorrow still yet if when while since because although though as what who where why "
    "how which do does did is are was were can could would should will please thanks thank sorry yes "
    "no ok okay oh well sure also besides plus his her its let's here"
)

_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
_CJK_RE = lazy_compile(f"[{_CJK}]")
_CLOSERS = "”’」』）)]】》\"'"
_HARD_END = "。！？；!?;\n…"
_RUN = "。！？；!?;…."
_CANDIDATE_RE = lazy_compile(r"[。！？；!?;\n….]")
_URL_RE = lazy_compile(
    r"(?:https?://|www\.)[^\s<>\"'“”「」]+[^\s<>\"'“”「」.,;:!?。，；！？)]"
    r"|[\w.+-]+@[\w-]+(?:\.[\w-]+)+",
    re.IGNORECASE,
)
_TOKEN_BEFORE_RE = lazy_compile(r"([A-Za-z][A-Za-z.']*|\d+)$")
_WORD_AFTER_RE = lazy_compile(r"\s*[\"'“‘(]*([A-Za-z][A-Za-z']*|\d|[" + _CJK + "])")


def _mask_urls(text: str) -> str:
    """The text with every ``.?!;`` inside a URL or e-mail replaced by a neutral character,
    so positions stay the same."""

    def neutral(match: re.Match[str]) -> str:
        return re.sub(r"[.?!;]", "_", match.group(0))

    return _URL_RE.sub(neutral, text)


def _opens_sentence(after: str) -> bool:
    """Whether the text after a period starts a new sentence."""
    match = _WORD_AFTER_RE.match(after)
    if match is None:
        return True  # end of text, or punctuation only
    word = match.group(1)
    if _CJK_RE.match(word):
        return True
    if word[0].isdigit() or word[0].islower():
        return False
    return word.lower() in _OPENERS or (len(word) > 4 and word.endswith("ly"))  # "Really", "Luckily"


def _is_abbreviation(token: str) -> bool:
    """A title, a listed abbreviation, a dotted token (U.S, a.m) or an initial (J)."""
    bare = token.replace(".", "").lower()
    return bare in TITLES or bare in ABBREVIATIONS or "." in token or (len(token) == 1 and token.isupper())


def _period_ends(masked: str, index: int) -> bool:
    """Whether the ``.`` at ``index`` ends a sentence."""
    after = masked[index + 1 :]
    if masked[index + 1 : index + 3] == "..":
        return False  # inside an ellipsis: decided at its last dot
    before = _TOKEN_BEFORE_RE.search(masked[max(0, index - 40) : index])
    token = before.group(1) if before else ""
    if after and not after[0].isspace() and after[0] not in _CLOSERS:
        # "我住在上海.明天去北京" ends ("我在U.S.工作" does not); 3.5, v2.1, e.g., are inside a token
        return bool(_CJK_RE.match(after[0])) and not (
            token and not token.isdigit() and _is_abbreviation(token)
        )
    if masked[index - 2 : index] == "..":  # the end of "..."
        match = _WORD_AFTER_RE.match(after)
        return match is None or not match.group(1)[0].islower()
    if not token:
        return True
    bare = token.replace(".", "").lower()
    if token.isdigit():
        start = index - len(token)
        line_start = masked.rfind("\n", 0, start) + 1
        return not (masked[line_start:start].strip() == "" and len(token) <= 2 and bool(after.strip()))
    if (bare in TITLES and "." not in token) or bare in _NEVER_FINAL:
        return False
    if _is_abbreviation(token):
        return _opens_sentence(after)
    return True


def split_sentences(text: str) -> list[str]:
    """Split ``text`` into sentences (Chinese and English), each keeping its punctuation and
    closing quotes; see the module docstring for the rules."""
    masked = _mask_urls(text)
    out: list[str] = []
    start = 0
    n = len(masked)
    for match in _CANDIDATE_RE.finditer(masked):
        i = match.start()
        if i < start:
            continue  # swallowed by the previous boundary's run
        if masked[i] == "." and not _period_ends(masked, i):
            continue
        j = i + 1
        # runs of terminators ("?!", "……", "。」") stay with the sentence
        while j < n and (masked[j] in _RUN or masked[j] in _CLOSERS):
            if (
                masked[j] == "."
                and j + 1 < n
                and not masked[j + 1].isspace()
                and masked[j + 1] not in _CLOSERS
            ):
                break
            j += 1
        piece = text[start:j].strip()
        if piece:
            out.append(piece)
        start = j
    tail = text[start:].strip()
    if tail:
        out.append(tail)
    return out
