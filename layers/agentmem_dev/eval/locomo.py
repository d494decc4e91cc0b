"""LoCoMo evidence retrieval through agentmem's real memory (``agentmem eval locomo``).

Each selected conversation of a LoCoMo file (the public ``locomo10.json`` format) becomes one
scope (tenant ``locomo``, user = the sample id). Its sessions are sent in order, one dialog line
per turn, through the real write path (queue -> ingest λ -> write pipeline -> store -> stream ->
projector λ, via :meth:`LocalRunner.drain` after every session), with the clock at the session's
date plus a few seconds per line, the dialog id (``D1:3``) as the message id, the line's speaker
as ``speaker`` and the line (plus ``[shared a photo: <caption>]`` when it carries an image) as
the user text; the assistant text is empty, each line being one statement by its speaker.

Then every question with evidence in categories 1-4 (1 multi-hop, 2 temporal, 3 open-domain,
4 single-hop; 5 adversarial is reported apart) is asked through the real recall at a time after
the last session. The top-k memories are mapped back to the dialog lines they came from through
``record.source_refs.message_ids``, and two metrics are averaged over questions:

- evidence recall@k: the share of the question's evidence lines covered by the top-k memories;
- hit@k: whether any evidence line is covered.

The same questions are also run against a raw-turn BM25 baseline (each line indexed as
``(session date) speaker: text``; Okapi BM25, k1=1.2, b=0.75) with the project's analyzer
(:func:`bm25_terms`: stopwords dropped, light stemming, CJK bigrams) and with a plain analyzer
(lower-cased ``\\w+`` tokens, nothing dropped) that reproduces the published reference point of
the development data's README (R@5 0.481 / R@10 0.555 on conversations 0-4).

``diagnostics`` says where recall is lost: evidence lines that left no active memory (nothing
extracted, or the memory was superseded), and evidence that has a memory but ranks below k (with
its rank in a deeper recall).
"""

from __future__ import annotations

import json
import re
import statistics
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from agentmem.adapters.embedded.text_index import InvertedIndex, bm25_terms
from agentmem.bootstrap import Container, bootstrap
from agentmem.clock import ManualClock
from agentmem.domain.context import Mode
from agentmem.domain.models import MemoryRecord, Scope, Status, Turn
from agentmem.messages import TurnMessage
from agentmem.settings import load_settings
from agentmem_dev.bench.common import TimedEmbedder, percentiles
from agentmem_dev.emulator.runner import LocalRunner
from agentmem_dev.harness import quiet_metrics

TENANT = "locomo"
TURN_SPACING = timedelta(seconds=30)
QUERY_PATH_TARGET_MS = 50.0  # docs/design.md "Performance targets": one question's recall, no embedding
QUERY_DELAY = timedelta(days=1)  # questions are asked a day after the last session
CATEGORY_NAMES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
SCORED_CATEGORIES = (1, 2, 3, 4)
DEFAULT_KS = (5, 10)
CONTEXT_SAMPLE = 50  # questions per conversation whose RAG context is measured
DIAGNOSTIC_DEPTH = 100
EXAMPLES = 8

_DATE_RE = re.compile(
    r"^\s*(\d{1,2})(?::(\d{2}))?\s*([ap])\.?\s*m\.?\s+on\s+(\d{1,2})\s+([A-Za-z]+)\.?,?\s+(\d{4})\s*$",
    re.IGNORECASE,
)
_MONTHS = {
    name: number
    for number, names in enumerate(
        [
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ],
        start=1,
    )
    for name in names
}
_EVIDENCE_RE = re.compile(r"^D:?(\d+):(\d+)$")
_PLAIN_TOKEN_RE = re.compile(r"\w+")


# ---------------------------------------------------------------------------------------- input


def parse_session_date(text: str) -> datetime:
    """A LoCoMo session date such as ``"1:56 pm on 8 May, 2023"`` (UTC); ISO 8601 is accepted too.

    Raises ValueError on anything else.
    """
    match = _DATE_RE.match(text)
    if match:
        hour, minute, half, day, month_name, year = match.groups()
        month = _MONTHS.get(month_name.lower())
        if month is None:
            raise ValueError(f"unknown month in session date {text!r}")
        hour_24 = int(hour) % 12 + (12 if half.lower() == "p" else 0)
        return datetime(int(year), month, int(day), hour_24, int(minute or 0), tzinfo=UTC)
    try:
        parsed = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(f"unrecognised session date {text!r}") from None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def parse_selection(spec: str | None, available: int) -> list[int]:
    """Conversation indices from ``"0-4"``, ``"0,2,5-7"`` or ``"all"`` (None = all)."""
    if spec is None or spec.strip().lower() in ("", "all"):
        return list(range(available))
    chosen: list[int] = []
    for part in spec.split(","):
        part = part.strip()
        if not part:
            continue
        if "-" in part:
            lo, hi = (int(x) for x in part.split("-", 1))
            chosen.extend(range(lo, hi + 1))
        else:
            chosen.append(int(part))
    out = list(dict.fromkeys(chosen))
    bad = [i for i in out if not 0 <= i < available]
    if bad:
        raise ValueError(f"conversation index out of range (0-{available - 1}): {bad}")
    return out


def parse_ks(spec: str | Sequence[int]) -> tuple[int, ...]:
    """``"5,10"`` -> (5, 10), sorted, each at least 1."""
    values = (
        [int(x) for x in spec.split(",") if x.strip()] if isinstance(spec, str) else [int(x) for x in spec]
    )
    if not values or min(values) < 1:
        raise ValueError("k values must be positive integers")
    return tuple(sorted(set(values)))


@dataclass(frozen=True, slots=True)
class DialogLine:
    """One line of a LoCoMo conversation, as sent to the write path."""

    dia_id: str
    session: int
    session_date: str
    at: datetime
    speaker: str
    text: str  # the line plus its photo caption, if any

    @property
    def raw_document(self) -> str:
        """The baseline's document: ``(session date) speaker: text``."""
        return f"({self.session_date}) {self.speaker}: {self.text}"


@dataclass(frozen=True, slots=True)
class Question:
    sample_id: str
    index: int
    question: str
    answer: str
    category: int
    evidence: tuple[str, ...]  # normalised dialog ids
    invalid_evidence: tuple[str, ...] = ()  # listed ids that name no line of the conversation


@dataclass
class Conversation:
    sample_id: str
    lines: list[DialogLine]
    questions: list[Question]

    @property
    def last_at(self) -> datetime:
        return max(line.at for line in self.lines)


def line_text(turn: dict[str, Any]) -> str:
    """The text of a dialog line, with its photo caption appended when it has one."""
    text = str(turn.get("text") or "").strip()
    caption = str(turn.get("blip_caption") or "").strip()
    if caption:
        text = f"{text} [shared a photo: {caption}]".strip()
    return text


def normalise_evidence(raw: Iterable[Any], known: set[str]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Clean LoCoMo evidence lists: ``"D8:6; D9:17"`` -> two ids, ``"D:11:26"`` -> ``"D11:26"``,
    ``"D30:05"`` -> ``"D30:5"``. Returns (ids found in the conversation, the rest)."""
    valid: list[str] = []
    invalid: list[str] = []
    for item in raw:
        for part in re.split(r"[;,\s]+", str(item)):
            if not part:
                continue
            match = _EVIDENCE_RE.match(part.strip())
            norm = f"D{int(match.group(1))}:{int(match.group(2))}" if match else part.strip()
            (valid if norm in known else invalid).append(norm)
    return tuple(dict.fromkeys(valid)), tuple(dict.fromkeys(invalid))


def session_numbers(conversation: dict[str, Any]) -> list[int]:
    numbers = []
    for key, value in conversation.items():
        match = re.fullmatch(r"session_(\d+)", key)
        if match and isinstance(value, list):
            numbers.append(int(match.group(1)))
    return sorted(numbers)


def parse_conversation(sample: dict[str, Any]) -> Conversation:
    """One LoCoMo sample as dialog lines (chronological) and questions."""
    conv = sample["conversation"]
    sample_id = str(sample.get("sample_id") or "conv")
    lines: list[DialogLine] = []
    for number in session_numbers(conv):
        date_text = str(conv.get(f"session_{number}_date_time") or "")
        start = parse_session_date(date_text)
        for position, turn in enumerate(conv[f"session_{number}"]):
            text = line_text(turn)
            if not text:
                continue
            lines.append(
                DialogLine(
                    dia_id=str(turn["dia_id"]),
                    session=number,
                    session_date=date_text,
                    at=start + position * TURN_SPACING,
                    speaker=str(turn.get("speaker") or ""),
                    text=text,
                )
            )
    known = {line.dia_id for line in lines}
    questions = []
    for index, qa in enumerate(sample.get("qa", [])):
        valid, invalid = normalise_evidence(qa.get("evidence") or [], known)
        answer = qa.get("answer", qa.get("adversarial_answer", ""))
        questions.append(
            Question(
                sample_id, index, str(qa["question"]), str(answer), int(qa.get("category", 0)), valid, invalid
            )
        )
    return Conversation(sample_id, lines, questions)


def load_conversations(path: Path, selection: str | None = "all") -> list[Conversation]:
    samples = json.loads(Path(path).read_text(encoding="utf-8"))
    if isinstance(samples, dict):
        samples = [samples]
    return [parse_conversation(samples[i]) for i in parse_selection(selection, len(samples))]


# ---------------------------------------------------------------------------------------- metrics


def coverage(evidence: Sequence[str], retrieved: Iterable[Iterable[str]], k: int) -> tuple[float, bool]:
    """(share of ``evidence`` covered by the first ``k`` retrieved items, any covered).

    Each retrieved item is the set of dialog ids it came from (one for a raw turn, possibly
    several for a memory reinforced by later lines).
    """
    covered: set[str] = set()
    for ids in list(retrieved)[:k]:
        covered.update(ids)
    found = sum(1 for e in evidence if e in covered)
    return (found / len(evidence) if evidence else 0.0), found > 0


@dataclass
class Ranked:
    """What one retrieval method returned for one question: dialog ids per rank."""

    question: Question
    retrieved: list[tuple[str, ...]]


def summarise(rows: Sequence[Ranked], ks: Sequence[int]) -> dict[str, Any]:
    """``{"overall": {...}, "by_category": {name: {...}}}`` with n, recall@k, hit@k."""

    def block(items: Sequence[Ranked]) -> dict[str, Any]:
        out: dict[str, Any] = {"n": len(items)}
        for k in ks:
            pairs = [coverage(r.question.evidence, r.retrieved, k) for r in items]
            out[f"recall@{k}"] = round(statistics.fmean(p[0] for p in pairs), 4) if pairs else None
            out[f"hit@{k}"] = (
                round(statistics.fmean(1.0 if p[1] else 0.0 for p in pairs), 4) if pairs else None
            )
        return out

    by_category: dict[int, list[Ranked]] = defaultdict(list)
    for row in rows:
        by_category[row.question.category].append(row)
    return {
        "overall": block(rows),
        "by_category": {
            f"{c}-{CATEGORY_NAMES.get(c, '?')}": block(by_category[c]) for c in sorted(by_category)
        },
    }


# ---------------------------------------------------------------------------------------- baseline


def plain_terms(text: str) -> list[str]:
    """Lower-cased ``\\w+`` tokens, nothing dropped: the analyzer of the README reference."""
    return _PLAIN_TOKEN_RE.findall(text.lower())


class TurnBM25:
    """Raw-turn BM25 over one conversation (the project's Okapi scorer, k1=1.2, b=0.75)."""

    def __init__(self, lines: Sequence[DialogLine], analyzer: Any = bm25_terms) -> None:
        self._analyzer = analyzer
        self._index = InvertedIndex()
        for line in lines:
            self._index.add(line.dia_id, Counter(analyzer(line.raw_document)))

    def search(self, query: str, k: int) -> list[tuple[str, ...]]:
        terms = self._analyzer(query)
        return [(hit.memory_id,) for hit in self._index.search(terms, k)] if terms else []


# ---------------------------------------------------------------------------------------- memory run


def scope_of(conversation: Conversation) -> Scope:
    return Scope(TENANT, conversation.sample_id)


def ingest_conversation(
    container: Container, runner: LocalRunner, clock: ManualClock, conversation: Conversation
) -> None:
    """Send the conversation session by session through the real write path."""
    scope = scope_of(conversation)
    by_session: dict[int, list[DialogLine]] = defaultdict(list)
    for line in conversation.lines:
        by_session[line.session].append(line)
    for number in sorted(by_session):
        for line in by_session[number]:
            clock.set(line.at)
            turn = Turn(
                scope=scope,
                session_id=f"session_{number}",
                user=line.text,
                assistant="",
                at=line.at,
                message_id=line.dia_id,
                speaker=line.speaker or None,
            )
            container.queue.send([TurnMessage.from_turn(turn)])
        runner.drain()


def all_records(container: Container, scope: Scope) -> list[MemoryRecord]:
    """Every record of the scope, whatever its status."""
    records: list[MemoryRecord] = []
    cursor: str | None = None
    while True:
        page = container.store.list(scope, statuses=tuple(Status), limit=500, cursor=cursor)
        records.extend(page.items)
        cursor = page.next_cursor
        if cursor is None:
            return records


def memory_ids_of(records: Iterable[MemoryRecord]) -> list[tuple[str, ...]]:
    return [tuple(r.source_refs.message_ids) for r in records]


@contextmanager
def _workspace(data_dir: Path | None) -> Iterator[Path]:
    if data_dir is not None:
        data_dir.mkdir(parents=True, exist_ok=True)
        yield data_dir
        return
    with tempfile.TemporaryDirectory(prefix="agentmem-locomo-") as tmp:
        yield Path(tmp)


def _progress(enabled: bool, message: str, *, end: str = "\n") -> None:
    if enabled:
        print(message, end=end, file=sys.stderr, flush=True)


def _context_sample(questions: Sequence[Question], size: int) -> list[Question]:
    """Evenly spaced questions (deterministic)."""
    if size <= 0 or not questions:
        return []
    if len(questions) <= size:
        return list(questions)
    step = len(questions) / size
    return [questions[int(i * step)] for i in range(size)]


@dataclass
class _Diagnostics:
    """Where evidence recall is lost, across conversations."""

    depth: int
    kmax: int
    evidence_refs: int = 0  # (question, evidence id) pairs
    with_active_memory: int = 0
    superseded_only: int = 0  # produced memories, none active any more
    no_memory: int = 0
    retrieved: int = 0  # covered within the top kmax
    rank_buckets: Counter[str] = field(default_factory=Counter)
    examples_no_memory: list[dict[str, Any]] = field(default_factory=list)
    examples_low_rank: list[dict[str, Any]] = field(default_factory=list)
    lines_total: int = 0
    lines_without_memory: int = 0
    distinct_lines_topk: list[int] = field(default_factory=list)

    def bucket(self, rank: int | None) -> str:
        """A rank band of a stored evidence memory that missed the top ``kmax``."""
        if rank is None:
            return f">{self.depth}"
        if rank <= 20:
            return f"{self.kmax + 1}-20"
        if rank <= 50:
            return "21-50"
        return f"51-{self.depth}"

    def to_dict(self) -> dict[str, Any]:
        refs = self.evidence_refs or 1
        return {
            "evidence_refs": self.evidence_refs,
            "share_with_active_memory": round(self.with_active_memory / refs, 4),
            "share_superseded_only": round(self.superseded_only / refs, 4),
            "share_without_any_memory": round(self.no_memory / refs, 4),
            f"share_retrieved_top{self.kmax}": round(self.retrieved / refs, 4),
            f"missed_but_stored_rank_in_top{self.depth}": dict(sorted(self.rank_buckets.items())),
            f"mean_distinct_lines_in_top{self.kmax}": round(statistics.fmean(self.distinct_lines_topk), 2)
            if self.distinct_lines_topk
            else None,
            "lines_total": self.lines_total,
            "share_lines_without_active_memory": round(
                self.lines_without_memory / (self.lines_total or 1), 4
            ),
            "examples_without_memory": self.examples_no_memory,
            "examples_stored_but_ranked_low": self.examples_low_rank,
        }


def run_locomo(
    data: Path,
    *,
    conversations: str | None = "all",
    ks: Sequence[int] = DEFAULT_KS,
    embedder: str = "auto",
    progress: bool = True,
    context_sample: int = CONTEXT_SAMPLE,
    data_dir: Path | None = None,
    details: bool = False,
) -> dict[str, Any]:
    """Run the LoCoMo evidence-retrieval eval; see the module docstring. ``data_dir`` keeps the
    stores for inspection (a temporary directory otherwise); ``details`` adds one row per
    question."""
    ks = parse_ks(ks)
    kmax = max(ks)
    convs = load_conversations(data, conversations)
    clock = ManualClock()
    memory_rows: list[Ranked] = []
    bm25_rows: list[Ranked] = []
    plain_rows: list[Ranked] = []
    adversarial_memory: list[Ranked] = []
    adversarial_bm25: list[Ranked] = []
    context_chars: list[int] = []
    question_rows: list[dict[str, Any]] = []
    diag = _Diagnostics(depth=DIAGNOSTIC_DEPTH, kmax=kmax)
    skipped = {"no_evidence": 0, "invalid_evidence_ids": 0}
    ingest_seconds = 0.0
    query_seconds = 0.0
    query_path_ms: list[float] = []  # one recall per question, its query embedding left out
    turns = 0
    active_total = 0
    written_total = 0
    started = time.perf_counter()
    with _workspace(data_dir) as workdir, quiet_metrics():
        settings = load_settings(data_dir=workdir, embedder=embedder)
        container = bootstrap(settings, clock=clock)
        # Recall's query embedding timed, so the query path can be reported without it.
        timed = container.recall.embedder = TimedEmbedder(container.recall.embedder)
        runner = LocalRunner(container)
        model_id = container.embedder.model_id
        for number, conv in enumerate(convs, 1):
            scope = scope_of(conv)
            tag = f"[eval locomo] {conv.sample_id} ({number}/{len(convs)})"
            _progress(progress, f"{tag}: ingesting {len(conv.lines)} lines ...", end="")
            t0 = time.perf_counter()
            ingest_conversation(container, runner, clock, conv)
            seconds = time.perf_counter() - t0
            ingest_seconds += seconds
            turns += len(conv.lines)
            records = all_records(container, scope)
            active = [r for r in records if r.is_active]
            active_total += len(active)
            written_total += len(records)
            _progress(progress, f" {seconds:.1f}s, {len(active)} active memories")
            active_lines = {m for r in active for m in r.source_refs.message_ids}
            any_lines = {m for r in records for m in r.source_refs.message_ids}
            diag.lines_total += len(conv.lines)
            diag.lines_without_memory += sum(1 for line in conv.lines if line.dia_id not in active_lines)
            text_of = {line.dia_id: f"{line.speaker}: {line.text}" for line in conv.lines}

            at = conv.last_at + QUERY_DELAY
            clock.set(at)
            bm25 = TurnBM25(conv.lines)
            plain = TurnBM25(conv.lines, plain_terms)
            scored = [q for q in conv.questions if q.category in SCORED_CATEGORIES]
            skipped["invalid_evidence_ids"] += sum(len(q.invalid_evidence) for q in conv.questions)
            skipped["no_evidence"] += sum(1 for q in scored if not q.evidence)
            eligible = [q for q in scored if q.evidence]
            adversarial = [q for q in conv.questions if q.category == 5 and q.evidence]
            t0 = time.perf_counter()
            for qnum, question in enumerate(eligible + adversarial, 1):
                embedded, q0 = timed.stats.seconds, time.perf_counter()
                recalled = container.recall.recall(scope, question.question, k=kmax, now=at)
                query_path_ms.append((time.perf_counter() - q0 - (timed.stats.seconds - embedded)) * 1000)
                mem = Ranked(question, memory_ids_of(m.record for m in recalled.memories))
                base = Ranked(question, bm25.search(question.question, kmax))
                if question.category == 5:
                    adversarial_memory.append(mem)
                    adversarial_bm25.append(base)
                    continue
                memory_rows.append(mem)
                bm25_rows.append(base)
                plain_rows.append(Ranked(question, plain.search(question.question, kmax)))
                deep = container.recall.recall(scope, question.question, k=DIAGNOSTIC_DEPTH, now=at)
                deep_ids = memory_ids_of(m.record for m in deep.memories)
                _diagnose(diag, question, mem, deep_ids, active_lines, any_lines, text_of, kmax)
                if details:
                    question_rows.append(_detail(question, mem, base, kmax))
                if qnum % 25 == 0:
                    _progress(progress, f"\r{tag}: question {qnum}/{len(eligible)}", end="")
            for question in _context_sample(eligible, context_sample):
                built = container.context.build(scope, question.question, mode=Mode.RAG, now=at)
                context_chars.append(len(built.context.text))
            query_seconds += time.perf_counter() - t0
            _progress(progress, f"\r{tag}: {len(eligible)} questions (+{len(adversarial)} adversarial) done")

    report: dict[str, Any] = summarise(memory_rows, ks)
    baseline = summarise(bm25_rows, ks)
    baseline["analyzer"] = "project bm25_terms (stopwords dropped, light stemming, CJK bigrams)"
    report["baseline_bm25"] = baseline
    plain_summary = summarise(plain_rows, ks)
    plain_summary["analyzer"] = "plain lower-cased \\w+ tokens (the data README's reference setup)"
    report["baseline_bm25_plain"] = plain_summary
    report["ratio_vs_bm25"] = {
        f"recall@{k}": _ratio(report["overall"][f"recall@{k}"], baseline["overall"][f"recall@{k}"])
        for k in ks
    }
    report["category_5"] = {
        "note": "adversarial questions (the answer is not in the conversation); evidence names the misleading line",
        "memory": summarise(adversarial_memory, ks)["overall"],
        "baseline_bm25": summarise(adversarial_bm25, ks)["overall"],
    }
    report["ingest_seconds"] = round(ingest_seconds, 2)
    report["turns"] = turns
    report["turns_per_second"] = round(turns / ingest_seconds, 2) if ingest_seconds else None
    report["memories_per_turn"] = round(active_total / turns, 4) if turns else None
    report["memories_written_per_turn"] = round(written_total / turns, 4) if turns else None
    report["mean_context_chars"] = round(statistics.fmean(context_chars), 1) if context_chars else None
    report["context_sample"] = len(context_chars)
    report["query_seconds"] = round(query_seconds, 2)
    report["query_path_ms_excl_embed"] = {**percentiles(query_path_ms), "questions": len(query_path_ms)}
    report["query_path_target_ms"] = QUERY_PATH_TARGET_MS
    report["seconds"] = round(time.perf_counter() - started, 2)
    report["skipped"] = skipped
    report["diagnostics"] = diag.to_dict()
    report["settings"] = {
        "data": str(data),
        "conversations": [c.sample_id for c in convs],
        "ks": list(ks),
        "embedder": model_id,
        "scope": f"tenant {TENANT!r}, user = sample id",
        "drain": "after every session",
        "turn_spacing_s": TURN_SPACING.total_seconds(),
        "query_time": "one day after the last session",
        "context_mode": Mode.RAG.value,
        "agentmem": settings.model_dump(
            mode="json", exclude={"api_token", "token_tenants", "data_dir", "backend"}
        ),
    }
    if details:
        report["questions"] = question_rows
    return report


def _ratio(value: float | None, base: float | None) -> float | None:
    return round(value / base, 3) if value is not None and base else None


def _diagnose(
    diag: _Diagnostics,
    question: Question,
    mem: Ranked,
    deep_ids: list[tuple[str, ...]],
    active_lines: set[str],
    any_lines: set[str],
    text_of: dict[str, str],
    kmax: int,
) -> None:
    top: set[str] = {m for ids in mem.retrieved[:kmax] for m in ids}
    diag.distinct_lines_topk.append(len(top))
    for evidence in question.evidence:
        diag.evidence_refs += 1
        if evidence in top:
            diag.retrieved += 1
        if evidence in active_lines:
            diag.with_active_memory += 1
            if evidence not in top:
                rank = next((i + 1 for i, ids in enumerate(deep_ids) if evidence in ids), None)
                diag.rank_buckets[diag.bucket(rank)] += 1
                if len(diag.examples_low_rank) < EXAMPLES:
                    diag.examples_low_rank.append(
                        {
                            "question": question.question,
                            "category": question.category,
                            "evidence": evidence,
                            "line": text_of.get(evidence, "")[:200],
                            "rank": rank,
                        }
                    )
        elif evidence in any_lines:
            diag.superseded_only += 1
        else:
            diag.no_memory += 1
            if len(diag.examples_no_memory) < EXAMPLES:
                diag.examples_no_memory.append(
                    {
                        "question": question.question,
                        "category": question.category,
                        "evidence": evidence,
                        "line": text_of.get(evidence, "")[:200],
                    }
                )


def _detail(question: Question, mem: Ranked, base: Ranked, kmax: int) -> dict[str, Any]:
    rec = coverage(question.evidence, mem.retrieved, kmax)[0]
    brec = coverage(question.evidence, base.retrieved, kmax)[0]
    return {
        "sample_id": question.sample_id,
        "index": question.index,
        "category": question.category,
        "question": question.question,
        "evidence": list(question.evidence),
        "memory_top": [list(ids) for ids in mem.retrieved[:kmax]],
        f"memory_recall@{kmax}": round(rec, 4),
        "bm25_top": [ids[0] for ids in base.retrieved[:kmax]],
        f"bm25_recall@{kmax}": round(brec, 4),
    }


# ---------------------------------------------------------------------------------------- rendering


def _fmt(value: Any) -> str:
    if value is None:
        return "-"
    return f"{value:.3f}" if isinstance(value, float) else str(value)


def table(report: dict[str, Any], ks: Sequence[int] | None = None) -> list[str]:
    """Markdown table rows: memory vs raw-turn BM25 per category."""
    ks = list(ks or report.get("settings", {}).get("ks", DEFAULT_KS))
    head = ["category", "n"] + [f"memory R@{k}" for k in ks] + [f"memory hit@{k}" for k in ks]
    head += [f"BM25 R@{k}" for k in ks] + [f"BM25 plain R@{k}" for k in ks]
    rows = [head, ["---"] * len(head)]
    names = ["overall", *report["by_category"].keys()]
    for name in names:
        mem = report["overall"] if name == "overall" else report["by_category"][name]
        base = report["baseline_bm25"]["overall" if name == "overall" else "by_category"]
        plain = report["baseline_bm25_plain"]["overall" if name == "overall" else "by_category"]
        if name != "overall":
            base, plain = base.get(name, {}), plain.get(name, {})
        row = [name, str(mem["n"])]
        row += [_fmt(mem.get(f"recall@{k}")) for k in ks] + [_fmt(mem.get(f"hit@{k}")) for k in ks]
        row += [_fmt(base.get(f"recall@{k}")) for k in ks] + [_fmt(plain.get(f"recall@{k}")) for k in ks]
        rows.append(row)
    return ["| " + " | ".join(r) + " |" for r in rows]


def render(report: dict[str, Any]) -> str:
    """A human-readable summary of a LoCoMo report."""
    ks = report["settings"]["ks"]
    lines = [
        f"LoCoMo evidence retrieval ({', '.join(report['settings']['conversations'])}; embedder {report['settings']['embedder']})",
        "",
        *table(report, ks),
        "",
        "category 5 (adversarial): memory "
        + ", ".join(f"R@{k} {_fmt(report['category_5']['memory'].get(f'recall@{k}'))}" for k in ks)
        + "; BM25 "
        + ", ".join(f"R@{k} {_fmt(report['category_5']['baseline_bm25'].get(f'recall@{k}'))}" for k in ks)
        + f" (n={report['category_5']['memory']['n']})",
        f"ingest: {report['turns']} lines in {report['ingest_seconds']} s ({report['turns_per_second']} lines/s); "
        f"{report['memories_per_turn']} active memories per line ({report['memories_written_per_turn']} written)",
        f"mean RAG context: {report['mean_context_chars']} chars over {report['context_sample']} questions",
        _query_path_line(report),
    ]
    diag = report["diagnostics"]
    kmax = max(ks)
    lines.append(
        f"evidence lines: {diag['share_with_active_memory']:.1%} have an active memory, "
        f"{diag['share_superseded_only']:.1%} only superseded ones, {diag['share_without_any_memory']:.1%} none; "
        f"{diag[f'share_retrieved_top{kmax}']:.1%} retrieved in the top {kmax}"
    )
    lines.append(
        f"stored but below top {kmax} (rank in a deeper recall): {diag[f'missed_but_stored_rank_in_top{DIAGNOSTIC_DEPTH}']}"
    )
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------- make eval


def eval_markdown(results: dict[str, Any]) -> str:
    """The short Markdown summary ``make eval`` writes next to ``reports/eval.json``."""
    out = ["# agentmem evaluation", ""]
    machine = results.get("machine")
    if machine:
        out += [
            f"Machine: {machine.get('platform')}, {machine.get('cpus')} CPUs, Python {machine.get('python')}.",
            "",
        ]
    memory = results.get("memory_eval") or {}
    if memory:
        out += ["## Bilingual memory eval", ""]
        out += [
            "| data | probes | pass | recall | update | context | isolation violations | leaks "
            "| false supersedes | seconds |"
        ]
        out += ["|---|---|---|---|---|---|---|---|---|---|"]
        for name, summary in memory.items():
            if not summary:
                out.append(f"| {name} | (absent) | | | | | | | | |")
                continue
            out.append(
                f"| {name} | {summary['probes']} | {_fmt(summary['pass_rate'])} | {_fmt(summary['recall_hit_rate'])} | "
                f"{_fmt(summary['update_timeliness'])} | {_fmt(summary['context_pass_rate'])} | "
                f"{summary['isolation_violations']} | {summary['leaks']} | {summary.get('false_supersedes', 0)} | "
                f"{summary.get('seconds')} |"
            )
        out.append("")
        for name, summary in memory.items():
            if summary:
                kinds = ", ".join(
                    f"{k} {_fmt(v['pass_rate'])} (n={v['n']})" for k, v in summary["by_kind"].items()
                )
                langs = ", ".join(
                    f"{k} {_fmt(v['pass_rate'])} (n={v['n']})" for k, v in summary["by_language"].items()
                )
                out.append(f"- {name}: by kind {kinds}; by language {langs}")
                for part, figures in (summary.get("by_split") or {}).items():
                    shown = ", ".join(f"{k} {_fmt(v)}" for k, v in figures.items() if v is not None)
                    out.append(f"  - {name} {part}: {shown}")
        out.append("")
    locomo = results.get("locomo")
    if locomo:
        out += ["## LoCoMo evidence retrieval", "", render(locomo).split("\n", 1)[0], ""]
        out += render(locomo).split("\n")[2:]
        out += [
            "",
            "Memory = agentmem's extraction + storage + recall; BM25 = raw dialog lines "
            "`(session date) speaker: text` with the project's analyzer; BM25 plain = the same with "
            "plain `\\w+` tokens (the data README's reference setup).",
        ]
    return "\n".join(out) + "\n"


def machine_info() -> dict[str, Any]:
    import os
    import platform

    return {"platform": platform.platform(), "cpus": os.cpu_count(), "python": platform.python_version()}


def read_report(text: str) -> dict[str, Any]:
    """A JSON report from a command's stdout, skipping Lambda Powertools metric lines
    (``{"_aws": ...}``) that its auto-flush may have printed before the report."""
    try:
        loaded: dict[str, Any] = json.loads(text)
        return loaded
    except json.JSONDecodeError:
        kept = [line for line in text.splitlines() if not line.startswith('{"_aws"')]
        cleaned: dict[str, Any] = json.loads("\n".join(kept))
        return cleaned


def combine(args: Sequence[str] | None = None) -> int:
    """``python -m agentmem_dev.eval.locomo combine --memory NAME=FILE ... --locomo FILE --json-out
    FILE --md-out FILE``: merge the reports ``make eval`` wrote into one JSON and a Markdown
    summary. A missing or empty file is recorded as absent."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m agentmem_dev.eval.locomo combine")
    parser.add_argument("--memory", action="append", default=[], metavar="NAME=FILE")
    parser.add_argument("--locomo")
    parser.add_argument("--json-out", required=True)
    parser.add_argument("--md-out", required=True)
    ns = parser.parse_args(args)

    def read(path: str | None) -> dict[str, Any] | None:
        if not path or not Path(path).is_file() or Path(path).stat().st_size == 0:
            return None
        return read_report(Path(path).read_text(encoding="utf-8"))

    memory: dict[str, Any] = {}
    for item in ns.memory:
        name, _, path = item.partition("=")
        memory[name] = read(path)
    results = {"machine": machine_info(), "memory_eval": memory, "locomo": read(ns.locomo)}
    Path(ns.json_out).write_text(json.dumps(results, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    Path(ns.md_out).write_text(eval_markdown(results), encoding="utf-8")
    print(Path(ns.md_out).read_text(encoding="utf-8"))
    return 0


def _query_path_line(report: dict[str, Any]) -> str:
    """The query path's figures (one recall per question, its embedding left out) against the target."""
    path = report.get("query_path_ms_excl_embed") or {}
    return (
        f"query path (one recall per question, embedding excluded): p50 {_fmt(path.get('p50_ms'))} ms, "
        f"p95 {_fmt(path.get('p95_ms'))} ms, mean {_fmt(path.get('mean_ms'))} ms over {path.get('questions')} "
        f"questions (target <= {report.get('query_path_target_ms')} ms)"
    )


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "combine":
        sys.exit(combine(sys.argv[2:]))
    print(
        "usage: python -m agentmem_dev.eval.locomo combine ... (the eval itself: agentmem eval locomo)",
        file=sys.stderr,
    )
    sys.exit(2)
