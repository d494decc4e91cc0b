"""Reading a candidate fact (:func:`read`) and the two gates the write path asks before it ends an
earlier fact (:func:`may_supersede`, :func:`may_end`).

Each of the three decisions (subject, modality, stance) starts from the rules' label
(:mod:`agentmem.domain.reading.cues`). Where a learned head exists for the vector's model, the
rule label is a prior (:data:`RULE_PRIOR` of the mass) multiplied with the head's distribution
and renormalised; an exact rule (a question's form, a conditional opener) is not overruled.
Without a head the rules stand alone at :data:`RULES_ALONE` confidence.

A false supersede destroys a true fact; a missed one leaves two facts that the read path orders
newest first. So the gates lean to "keep both": the user as subject (or the same third party, by
the attribute's own subject), asserted, and sure (:data:`SUPERSEDE_CONFIDENCE`)."""

from __future__ import annotations

import re
from dataclasses import replace
from enum import StrEnum
from typing import TypeVar

import numpy as np
import numpy.typing as npt

from agentmem.domain.attributes import Attribute, infer_all
from agentmem.domain.reading import cues
from agentmem.domain.reading.heads import Heads
from agentmem.domain.reading.model import Modality, Reading, Stance, Subject

RULE_PRIOR = 0.6  # the rule label's share of the prior; the rest is spread over the other labels
RULES_ALONE = 0.75  # the confidence of a reading made by the rules alone
SUPERSEDE_CONFIDENCE = 0.5  # below it a reading is doubtful: keep both
SOMEONE = "someone"  # the attribute subject of a third party the tables name no relation for

E = TypeVar("E", bound=StrEnum)


def _decide(kind: type[E], rule: E, exact: bool, probs: dict[str, float] | None) -> tuple[E, float]:
    if exact:
        return rule, 1.0
    if probs is None:
        return rule, RULES_ALONE
    labels = list(kind)
    rest = (1.0 - RULE_PRIOR) / max(1, len(labels) - 1)
    post = {lab: probs.get(lab.value, 0.0) * (RULE_PRIOR if lab is rule else rest) for lab in labels}
    total = sum(post.values()) or 1.0
    best = max(labels, key=lambda lab: post[lab])
    return best, post[best] / total


def own_attribute(attribute: Attribute, who: Subject) -> Attribute:
    """The attribute with its subject re-read: a third party's or the world's value is never the
    user's (the tables' subject stands where they name a relation or an event)."""
    if attribute.subject.rpartition("/")[2] != "self":
        return attribute
    if who is Subject.OTHER or who is Subject.ASSISTANT:
        speaker = attribute.subject.rpartition("/")[0]
        return replace(attribute, subject=f"{speaker}/{SOMEONE}" if speaker else SOMEONE)
    if who is Subject.GENERIC:
        return replace(attribute, subject="world")
    return attribute


_CLAUSE = re.compile(r"[，,；;]\s*")


def _stated_by_others(text: str) -> frozenset[str]:
    """The attributes ``text`` states only in clauses of its own whose subject is another person
    ("钢琴课停了，老师搬去外地了": the teacher moved, not the user), read clause by clause by the
    rules; an attribute a clause of the speaker's states too stays the speaker's."""
    clauses = [c for c in _CLAUSE.split(text) if c.strip()]
    if len(clauses) < 2:
        return frozenset()
    theirs: set[str] = set()
    ours: set[str] = set()
    for clause in clauses:
        names = {a.name for a in infer_all(clause)}
        (theirs if cues.subject(clause) is Subject.OTHER else ours).update(names)
    return frozenset(theirs - ours)


def read(
    text: str,
    *,
    vector: npt.NDArray[np.float32] | None = None,
    heads: Heads | None = None,
) -> Reading:
    """One typed reading of ``text`` (a candidate fact). ``vector``: its embedding by
    ``heads.model_id`` (the heads are used only then)."""
    learned = heads is not None and vector is not None

    def probs(name: str) -> dict[str, float] | None:
        return heads.probabilities(name, vector) if heads is not None and vector is not None else None

    rule_stance = cues.stance(text)
    # "you sold me, buying that one": the choice is the user's, whoever the clause opens with
    rule_subject = Subject.SPEAKER if rule_stance is Stance.ACCEPTS else cues.subject(text)
    rule_modality, exact_modality = cues.modality(text, rule_stance)
    who, p_who = _decide(Subject, rule_subject, False, probs("subject"))
    how, p_how = _decide(Modality, rule_modality, exact_modality, probs("modality"))
    toward, p_toward = _decide(Stance, rule_stance, False, probs("stance"))
    stated = infer_all(text)
    if who is Subject.OTHER and any(
        a.subject == "self" and cues.names_own_attribute(text, a.name) for a in stated
    ):
        who = Subject.SPEAKER  # "my manager is Alice": the user's manager
    others = _stated_by_others(text) if who is Subject.SPEAKER and stated else frozenset()
    attributes = tuple(own_attribute(a, Subject.OTHER if a.name in others else who) for a in stated)
    return Reading(who, how, toward, min(p_who, p_how), attributes, learned, p_toward)


def may_supersede(new: Reading, old: Reading | None, *, by_attribute: bool = False) -> bool:
    """Whether ``new`` may retire an earlier fact (read as ``old``): asserted (or a plan that
    replaces a plan, or a denial of an asserted fact), sure, and not the assistant's; an earlier wish, hypothetical or question
    is never retired (it stays true as what it was). ``by_attribute``: the two facts state the
    same attribute of the same subject (the tables' subject, re-read by the readings), so the
    subject classes need not agree ("my daughter goes to Maple" / "we moved her to Riverside");
    otherwise the user's fact and a third party's never retire each other."""
    if new.confidence < SUPERSEDE_CONFIDENCE or new.subject is Subject.ASSISTANT:
        return False
    before = old.modality if old is not None else None
    replaces_plan = new.modality is Modality.PLAN and before is Modality.PLAN
    denies = new.modality is Modality.NEGATED and before is Modality.ASSERTED  # "I don't … any more"
    if new.modality is not Modality.ASSERTED and not (replaces_plan or denies):
        return False
    if old is None:
        return True
    if old.modality in {Modality.WISH, Modality.HYPOTHETICAL, Modality.QUESTION}:
        return False
    return by_attribute or (old.subject is Subject.OTHER) == (new.subject is Subject.OTHER)


def may_revise(new: Reading, old: Reading | None) -> bool:
    """Whether ``new`` may give a new value to ``old`` said earlier in the same conversation (a
    changed date, city or count of a request or plan): both the user's own (neither a third
    party's nor the assistant's), and never a plan, wish or question over an asserted fact."""
    if new.subject in {Subject.OTHER, Subject.ASSISTANT} or new.confidence < SUPERSEDE_CONFIDENCE:
        return False
    if old is None:
        return True
    if old.subject in {Subject.OTHER, Subject.ASSISTANT}:
        return False
    return not (old.modality is Modality.ASSERTED and new.modality is not Modality.ASSERTED)


def may_end(new: Reading, old: Reading | None) -> bool:
    """Whether ``new`` ends an earlier fact without a new value: a retraction or a correction
    that may supersede at all (:func:`may_supersede`)."""
    return new.stance in {Stance.RETRACTS, Stance.CORRECTS} and may_supersede(new, old)
