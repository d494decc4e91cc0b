"""Accepted recommendations: "就装这个" / "Sold." state the choice the previous reply made."""

from __future__ import annotations

import pytest

from agentmem.domain.acceptance import accepted_choice, is_acceptance, recommended
from agentmem.domain.attributes import supersedes_text
from agentmem.domain.models import Source


@pytest.mark.parametrize(
    "text",
    [
        "Sold.",
        "Deal!",
        "OK, let's go with that.",
        "I'll take it.",
        "就装这个。",
        "好，就用这个吧",
        "那就它了",
        "听你的",
    ],
)
def test_short_acceptances_are_recognised(text: str) -> None:
    assert is_acceptance(text)


@pytest.mark.parametrize(
    "text",
    [
        "I sold my bike to a colleague who needed it for commuting.",
        "这个怎么装？",
        "I like that",
        "我不要这个",
    ],
)
def test_other_messages_are_not_acceptances(text: str) -> None:
    assert not is_acceptance(text)


def test_the_recommended_option_is_found_in_either_language() -> None:
    assert recommended("Both are fine, but I'd recommend Obsidian for local notes.") == "Obsidian"
    assert recommended("For a small team, Linear is the better fit.") == "Linear"
    assert recommended("建议你用Notion，协作方便。") == "Notion"
    assert recommended("推荐飞书，免费版就够用。") == "飞书"
    assert recommended("It depends on your budget.") is None


def test_an_acceptance_becomes_the_users_choice_and_replaces_the_old_one() -> None:
    choice = accepted_choice(
        "就装这个。", "我想换个笔记软件，有什么推荐？", "推荐你用Obsidian，本地存储，插件多。"
    )
    assert choice is not None and choice.source is Source.USER and choice.update_strength == 2
    assert "Obsidian" in choice.content
    en = accepted_choice(
        "Sold.", "Should I host my site on Netlify or Vercel?", "I'd go with Vercel for Next.js."
    )
    assert en is not None and en.content.startswith("I went with Vercel")
    blog = accepted_choice(
        "Let's go with that.", "Should I move my blog to Ghost or Hugo?", "Hugo is the better fit."
    )
    assert blog is not None
    assert supersedes_text(
        blog.content, "I run my blog on WordPress."
    )  # the choice fills the question's slot
    assert not supersedes_text(blog.content, "I run my shop on Shopify.")
    assert accepted_choice("Sold.", "", "It depends.") is None
    assert accepted_choice("What about the price?", "", "I'd recommend the Kia.") is None
