"""An accepted recommendation (stored by the extraction as "I chose X (question?)") fills the
slot of the question it answers, so it replaces what the user used before — and nothing else."""

from __future__ import annotations

from agentmem.domain.attributes import infer_all, supersedes_text
from agentmem.domain.exchange import extract_acceptance


def _choice(question: str, reply: str, accept: str) -> str:
    [fact] = extract_acceptance(question, reply, accept)
    return fact.content


def test_the_choice_fills_the_questions_slot_in_english() -> None:
    content = _choice(
        "Should I move my blog to Ghost or Hugo?", "For a static blog, Hugo is the better fit.", "Sold."
    )
    assert [(a.name, a.value) for a in infer_all(content)] == [("blog", "hugo")]
    assert supersedes_text(content, "I run my blog on WordPress.")
    assert not supersedes_text(content, "I run my shop on Shopify.")


def test_the_choice_fills_the_questions_slot_in_chinese() -> None:
    content = _choice("输入法用哪个好？", "推荐你用微信输入法，免费、没广告。", "就装这个。")
    assert supersedes_text(content, "我一直用搜狗输入法。")
    assert not supersedes_text(content, "我住在南京。")


def test_a_question_in_brackets_alone_states_nothing() -> None:
    assert infer_all("(Should I move my blog to Ghost or Hugo?)") == ()
