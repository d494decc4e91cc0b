"""docs/settings.md lists every variable (issue 13): each setting of
:class:`agentmem.settings.Settings` and each tooling variable, with what it does; it names no
variable that does not exist. Regenerate with ``python -m agentmem_dev.settings_doc > docs/settings.md``."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from agentmem.settings import TOOLING_VARIABLES, setting_variables
from agentmem_dev.settings_doc import render

DOC = Path(__file__).resolve().parents[2] / "docs" / "settings.md"
REGENERATE = "run: python -m agentmem_dev.settings_doc > docs/settings.md"


def _rows() -> dict[str, str]:
    rows = {}
    for line in DOC.read_text(encoding="utf-8").splitlines():
        match = re.match(r"\| `(AGENTMEM_[A-Z0-9_]+)` \|(.*)\|$", line)
        if match:
            rows[match.group(1)] = match.group(2)
    return rows


@pytest.mark.parametrize("variable", sorted(setting_variables() | TOOLING_VARIABLES.keys()))
def test_every_variable_is_in_the_settings_reference_with_what_it_does(variable: str) -> None:
    rows = _rows()
    assert variable in rows, f"{variable} is missing from docs/settings.md; {REGENERATE}"
    cells = [c.strip() for c in re.split(r"(?<!\\)\|", rows[variable])]
    assert cells[-1], f"{variable} has no description"


def test_the_reference_names_no_variable_that_does_not_exist() -> None:
    known = setting_variables() | TOOLING_VARIABLES.keys()
    stale = sorted(set(_rows()) - known)
    assert not stale, f"docs/settings.md lists unknown variables {stale}; {REGENERATE}"


def test_every_setting_has_a_description_in_the_generated_reference() -> None:
    for line in render().splitlines():
        if line.startswith("| `AGENTMEM_"):
            cells = [c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]]
            assert cells[-1], line
