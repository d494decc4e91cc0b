"""Fixtures of the AWS adapter tests (helpers live in ``awshelpers``)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from awshelpers import Moto, moto_tables


@pytest.fixture
def moto() -> Iterator[Moto]:
    with moto_tables() as tables:
        yield tables
