"""Who may turn a memory into an instruction (docs/guards.md "By construction": poisoning,
structurally).

A memory is data about the user; only a *policy* memory is an instruction to the agent, and the
Constraints slot shows nothing else. The rule is made by construction, not by checks at the
entrances:

- **the service never infers a policy.** :data:`InferredCategory` is every category but
  ``policy``; the rule classifier (:func:`agentmem.domain.classify.classify`) and
  :func:`conversational_category` return one, so a rule-shaped text written without the policy
  category (a plain write, an import, MCP, a turn, a model's fact) is a ``preference`` — the
  user's own standing wish, shown as what the user said;
- **a policy is made from a grant.** :func:`written_category` returns ``policy`` only when handed
  a :class:`PolicyGrant`, and :func:`grant_policy` makes one only where a caller holding
  :data:`POLICY_PERMISSION` *stated* the policy category; a stated policy without the grant is
  refused (:class:`PolicyNotGranted`, a 403 at the edge). Nothing else can build a grant;
- **the grant is written down.** A granted record carries :data:`INSTRUCTION_MARK` in its
  ``slot_hint`` (:func:`written_category` returns it beside the category), and
  :func:`is_instruction` — the Constraints slot's one filter — asks for the mark as well as an
  active policy memory an explicit or operator write made. A record that reached the store any
  other way (older data, the classifier's ``policy`` of earlier versions, a bug) is never an
  instruction: it is listed as data, as what its writer said.

Pure: no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, NamedTuple

from agentmem.domain.models import Category, MemoryRecord, Source, Status

__all__ = [
    "AUTHORISED_SOURCES",
    "INSTRUCTION_MARK",
    "POLICY_PERMISSION",
    "InferredCategory",
    "PolicyGrant",
    "PolicyNotGranted",
    "Written",
    "conversational_category",
    "grant_policy",
    "is_instruction",
    "touches_policy",
    "written_category",
]

POLICY_PERMISSION = "memory:policy"
"""The permission a caller needs to write, change or re-categorise a policy memory."""

AUTHORISED_SOURCES = frozenset({Source.EXPLICIT, Source.ADMIN})
"""Sources of a write an authorised caller made outright (never derived from a conversation)."""

INSTRUCTION_MARK = "constraints"
"""The ``slot_hint`` of a record written under a :class:`PolicyGrant`: the only records the
Constraints slot shows."""

InferredCategory = Literal[
    Category.IDENTITY,
    Category.PREFERENCE,
    Category.FACT,
    Category.EPISODIC,
    Category.TOOL_FAILURE,
    Category.GENERAL,
]
"""A category the service may give a text by itself: every category but ``policy``."""

_GRANT_KEY = object()  # only grant_policy holds it, so only grant_policy makes a PolicyGrant


class PolicyNotGranted(ValueError):
    """A policy memory was asked for without a grant (the caller lacks the permission)."""


@dataclass(frozen=True, slots=True)
class PolicyGrant:
    """Proof that one write may make a policy memory: a caller holding :data:`POLICY_PERMISSION`
    stated the ``policy`` category. Built only by :func:`grant_policy` (any other construction
    raises TypeError)."""

    key: object

    def __post_init__(self) -> None:
        if self.key is not _GRANT_KEY:
            raise TypeError("a PolicyGrant is made by grant_policy only")


class Written(NamedTuple):
    """The category a write stores and the record's ``slot_hint`` (:data:`INSTRUCTION_MARK` for a
    granted policy, else None)."""

    category: Category
    slot_hint: str | None


def grant_policy(permitted: bool, stated: Category | None) -> PolicyGrant | None:
    """The grant of a write whose caller holds the policy permission (``permitted``) and which
    states the policy category; None otherwise — a permission alone, or a category alone, grants
    nothing."""
    if permitted and stated is Category.POLICY:
        return PolicyGrant(_GRANT_KEY)
    return None


def written_category(
    stated: Category | None, inferred: InferredCategory, grant: PolicyGrant | None
) -> Written:
    """What a write stores: the stated category, else the inferred one (never ``policy``); a
    stated ``policy`` needs ``grant``, and is then marked as an instruction. Raises
    :class:`PolicyNotGranted` for a stated policy without a grant."""
    if stated is Category.POLICY:
        if not isinstance(grant, PolicyGrant):
            raise PolicyNotGranted(f"a policy memory needs the {POLICY_PERMISSION!r} permission")
        return Written(Category.POLICY, INSTRUCTION_MARK)
    return Written(stated if stated is not None else conversational_category(inferred), None)


def conversational_category(category: Category) -> InferredCategory:
    """The category a memory the service read for itself may have: ``policy`` becomes
    ``preference`` (the user's own standing wish is data about the user, not an instruction)."""
    if category is Category.POLICY:
        return Category.PREFERENCE
    return category


def is_instruction(record: MemoryRecord) -> bool:
    """Whether ``record`` may sit in the Constraints slot: an active policy memory an authorised
    caller wrote outright under a grant (:data:`INSTRUCTION_MARK`)."""
    return (
        record.category is Category.POLICY
        and record.slot_hint == INSTRUCTION_MARK
        and record.source in AUTHORISED_SOURCES
        and record.status is Status.ACTIVE
    )


def touches_policy(current: Category | None, wanted: Category | None) -> bool:
    """Whether a write or change concerns a policy memory: it creates one, changes one, or
    moves a memory into or out of the policy category."""
    return current is Category.POLICY or wanted is Category.POLICY
