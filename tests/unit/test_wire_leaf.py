"""``agentmem.wire`` is a leaf the light client ships as ``agentmem_client.wire``: its modules
import only the standard library, pydantic and each other, and only relatively (an absolute
``agentmem.wire`` import would not resolve inside the client's wheel)."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

WIRE = Path(__file__).resolve().parents[2] / "layers" / "agentmem" / "wire"
ALLOWED_TOP = {"pydantic", "__future__"}


def _absolute_imports(path: Path) -> set[str]:
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            out.add((node.module or "").split(".")[0])
    return out


def test_the_wire_imports_only_stdlib_pydantic_and_itself() -> None:
    files = sorted(WIRE.glob("*.py"))
    folders = [d.name for d in WIRE.iterdir() if d.is_dir() and d.name != "__pycache__"]
    assert len(files) >= 8 and folders == []  # flat: the client maps the folder as is
    bad = {
        p.name: sorted(
            n for n in _absolute_imports(p) if n not in ALLOWED_TOP and n not in sys.stdlib_module_names
        )
        for p in files
    }
    assert {k: v for k, v in bad.items() if v} == {}
    assert "pydantic" in _absolute_imports(WIRE / "models.py")  # the check can see an import


def test_the_client_ships_these_files_not_a_copy() -> None:
    """``clients/python/src/agentmem_client/wire`` is a link to this folder (the wheel copies the
    files at build), so there is one definition of every model."""
    shipped = WIRE.parents[2] / "clients" / "python" / "src" / "agentmem_client" / "wire"
    assert shipped.is_symlink() and shipped.resolve() == WIRE.resolve()
