"""What happened to one turn (or one explicit write): honest counts and ids, never content; and
the model calls a turn may still spend (:class:`LlmBudget`)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from enum import StrEnum

LLM_JUDGE_CALLS_PER_TURN = 3  # docs/design.md "The model's part": at most 3 judgements a turn
LLM_CLASSIFY_CALLS_PER_TURN = 8  # bounds the cost of a long message full of "general" facts
# The reason a turn's report gives when the model gave no usable answer and the rules decided alone
# (GET /v1/turns/{id}: "processed", reason "llm_fallback").
LLM_FALLBACK = "llm_fallback"


@dataclass
class LlmBudget:
    """Model calls a turn may still spend on conflicts and categories."""

    judge: int = LLM_JUDGE_CALLS_PER_TURN
    classify: int = LLM_CLASSIFY_CALLS_PER_TURN


class TurnStatus(StrEnum):
    ACCEPTED = "accepted"  # went through the write path (possibly storing nothing)
    DUPLICATE = "duplicate"  # this message id finished the write path before: nothing redone
    QUARANTINED = "quarantined"  # gate 0 found an injection: kept for audit, never recalled
    REJECTED = "rejected"  # malformed message, or an explicit write the guards refused


@dataclass
class TurnOutcome:
    message_id: str
    status: TurnStatus = TurnStatus.ACCEPTED
    written: list[str] = field(default_factory=list)
    reinforced: list[str] = field(default_factory=list)
    superseded: list[str] = field(default_factory=list)
    quarantined: list[str] = field(default_factory=list)
    dropped: dict[str, int] = field(default_factory=dict)  # reason -> candidate facts dropped
    redacted_kinds: list[str] = field(default_factory=list)
    reasons: list[str] = field(default_factory=list)
    split_parts: list[str] = field(default_factory=list)  # earlier turns of an attack this one completed
    llm_calls: int = 0  # every call to the model (extract, classify, judge)
    llm_fallbacks: int = 0  # calls that gave no usable answer: the rules decided
    llm_facts: int = 0  # facts the model added that passed every gate

    def drop(self, reason: str) -> None:
        self.dropped[reason] = self.dropped.get(reason, 0) + 1

    def to_dict(self) -> dict[str, object]:
        out = asdict(self)
        out["status"] = self.status.value
        return out
