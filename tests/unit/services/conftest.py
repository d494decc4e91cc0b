"""Services on the in-memory fakes (:mod:`support.fake_world`): no SQLite, no moto."""

from __future__ import annotations

import pytest

from support.fake_world import World, build


@pytest.fixture
def world() -> World:
    return build()
