"""Text utilities shared by extraction, scoring and context assembly: CJK-aware terms,
sentence splitting, language detection and a token estimate. Pure functions."""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

from agentmem.domain.lazy_re import lazy_compile
from agentmem.domain.sentences import split_sentences as _split_sentences

_CJK_RANGES = (
    (0x1100, 0x11FF),  # Hangul Jamo
    (0x2E80, 0x2FDF),  # CJK radicals, Kangxi radicals
    (0x3040, 0x30FF),  # Hiragana, Katakana
    (0x3100, 0x312F),  # Bopomofo
    (0x3130, 0x318F),  # Hangul compatibility Jamo
    (0x31F0, 0x31FF),  # Katakana phonetic extensions
    (0x3400, 0x4DBF),  # CJK extension A
    (0x4E00, 0x9FFF),  # CJK unified ideographs
    (0xA960, 0xA97F),  # Hangul Jamo extended-A
    (0xAC00, 0xD7AF),  # Hangul syllables
    (0xD7B0, 0xD7FF),  # Hangul Jamo extended-B
    (0xF900, 0xFAFF),  # CJK compatibility ideographs
    (0xFF66, 0xFF9F),  # half-width Katakana (NFKC maps most of them anyway)
    (0x20000, 0x3134F),  # CJK extensions B-G
)

_WORD_RE = lazy_compile(r"[0-9a-z]+(?:['’][a-z]+)?")

EN_STOPWORDS = frozenset(
    [
        "a",
        "an",
        "the",
        "and",
        "or",
        "but",
        "if",
        "of",
        "to",
        "in",
        "on",
        "at",
        "by",
        "for",
        "with",
        "from",
        "as",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "being",
        "am",
        "i",
        "me",
        "my",
        "mine",
        "we",
        "us",
        "our",
        "you",
        "your",
        "yours",
        "he",
        "him",
        "his",
        "she",
        "her",
        "it",
        "its",
        "they",
        "them",
        "their",
        "this",
        "that",
        "these",
        "those",
        "there",
        "here",
        "what",
        "which",
        "who",
        "whom",
        "whose",
        "when",
        "where",
        "why",
        "how",
        "do",
        "does",
        "did",
        "done",
        "doing",
        "have",
        "has",
        "had",
        "having",
        "can",
        "could",
        "will",
        "would",
        "shall",
        "should",
        "may",
        "might",
        "must",
        "not",
        "no",
        "so",
        "than",
        "then",
        "too",
        "very",
        "just",
        "about",
        "into",
        "over",
        "under",
        "again",
        "also",
        "any",
        "some",
        "all",
        "each",
        "more",
        "most",
        "other",
        "such",
        "only",
        "own",
        "same",
        "s",
        "t",
        "don't",
        "i'm",
        "i've",
        "i'd",
        "i'll",
        "it's",
        "that's",
        "what's",
        "let's",
        "please",
        "tell",
        "remind",
        "know",
        "said",
        "say",
        "told",
        "yes",
        "ok",
        "okay",
        "hi",
        "hello",
        "hey",
        "thanks",
        "thank",
        "really",
        "much",
        "many",
        "one",
        "get",
        "got",
        "going",
        "go",
        "now",
        "still",
        "ever",
    ]
)
# Characters whose bigrams carry no topic on their own (function words, question words).
ZH_STOP_BIGRAMS = frozenset(
    [
        "什么",
        "怎么",
        "哪里",
        "哪个",
        "哪些",
        "多少",
        "是否",
        "是不是",
        "一下",
        "一个",
        "这个",
        "那个",
        "我们",
        "你们",
        "他们",
        "我的",
        "你的",
        "的是",
        "了吗",
        "吗？",
        "之前",
        "以前",
        "现在",
        "可以",
        "能不能",
        "请问",
        "告诉",
        "提醒",
        "记得",
        "一下",
        "有没",
        "没有",
        "还是",
        "就是",
        "但是",
        "因为",
        "所以",
        "如果",
        "而且",
        "或者",
        "然后",
        "的话",
        "一些",
        "这些",
        "那些",
        "自己",
        "我是",
        "我在",
        "是什么",
        "问过",
    ]
)


def _class_of(ranges: tuple[tuple[int, int], ...]) -> str:
    return "".join(f"\\U{lo:08x}-\\U{hi:08x}" for lo, hi in ranges)


_CJK_CHAR_RE = lazy_compile(f"[{_class_of(_CJK_RANGES)}]")
_CJK_RUN_RE = lazy_compile(f"[{_class_of(_CJK_RANGES)}]+")


def is_cjk(ch: str) -> bool:
    """Whether the character lies in one of the CJK / kana / hangul blocks of ``_CJK_RANGES``."""
    return _CJK_CHAR_RE.fullmatch(ch) is not None


@lru_cache(maxsize=8192)
def normalize(text: str) -> str:
    """NFKC, case-folded, whitespace collapsed: the form every comparison uses."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    return " ".join(folded.split())


@lru_cache(maxsize=8192)
def cjk_ratio(text: str) -> float:
    """Share of the text's letters (``str.isalpha``) that are CJK, 0.0 without letters. Counted
    by C loops (``map``, one regex scan), cached per text: the write path asks for the same texts
    several times a turn."""
    letters = sum(map(str.isalpha, text))
    if not letters:
        return 0.0
    return sum(map(str.isalpha, _CJK_CHAR_RE.findall(text))) / letters


def language(text: str) -> str:
    """'zh' when CJK characters are at least a fifth of the letters, else 'en'."""
    return "zh" if cjk_ratio(text) >= 0.2 else "en"


def _stem(word: str) -> str:
    if word.endswith("'s") or word.endswith("’s"):
        word = word[:-2]
    if len(word) > 5 and word.endswith("ing"):
        return word[:-3]
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 4 and word.endswith("es") and word[-3] in "sxz":
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    if len(word) > 5 and word.endswith("ed"):
        return word[:-2]
    return word


def _cjk_runs_and_words(text: str) -> tuple[list[str], list[str]]:
    """The text's runs of CJK characters, and its Latin words with every run read as a break."""
    return _CJK_RUN_RE.findall(text), _WORD_RE.findall(_CJK_RUN_RE.sub(" ", text))


@lru_cache(maxsize=16384)
def terms(text: str) -> tuple[str, ...]:
    """Content terms: stemmed English words without stopwords, CJK character bigrams without
    function bigrams (a lone CJK character stays a unigram). Order kept, duplicates kept."""
    runs, words = _cjk_runs_and_words(normalize(text))
    out: list[str] = [_stem(w) for w in words if w.isdigit() or (len(w) > 1 and w not in EN_STOPWORDS)]
    for run in runs:
        if len(run) == 1:
            out.append(run)
            continue
        out.extend(run[i : i + 2] for i in range(len(run) - 1) if run[i : i + 2] not in ZH_STOP_BIGRAMS)
    return tuple(out)


@lru_cache(maxsize=8192)
def term_set(text: str) -> frozenset[str]:
    """The set of :func:`terms` (cached: recall scores the same memories' texts call after call)."""
    return frozenset(terms(text))


def lexical_match(query: str, content: str) -> float:
    """The lexical match (docs/design.md "One scorer"): 0.6 x term overlap (share of the query's terms found in the content) +
    0.4 x containment (the normalised query appears in the content). In [0, 1]."""
    q = term_set(query)
    if not q:
        return 0.0
    c = term_set(content)
    overlap = len(q & c) / len(q)
    nq = normalize(query).strip(" ?？。.!！")
    contained = 1.0 if nq and nq in normalize(content) else 0.0
    return 0.6 * overlap + 0.4 * contained


def split_sentences(text: str) -> list[str]:
    """Split on sentence punctuation (Chinese and English), keeping the punctuation; knows
    abbreviations, initials, decimals, URLs and CJK punctuation (``domain/sentences.py``)."""
    return _split_sentences(text)


def estimate_tokens(text: str) -> int:
    """Rough LLM token count: one per CJK character, ~1.3 per English word, a few for the rest."""
    cjk = len(_CJK_CHAR_RE.findall(text))
    words = len(re.findall(r"[A-Za-z0-9]+", text))
    return cjk + int(words * 1.3 + 0.5) + max(0, len(text) // 40)
