"""Regular expressions compiled on their first use, not at import.

The guards hold some four hundred module-level patterns; compiling them all at import cost a
Lambda cold start (and every process that only reads memories) over half a second, and most of
them sit behind a cheap stem test that benign text never passes. :func:`lazy_compile` takes the
arguments of :func:`re.compile` and returns a :class:`LazyPattern`: the same methods as a
``re.Pattern[str]`` (``search``, ``match``, ``fullmatch``, ``finditer``, ``findall``, ``sub``,
``subn``, ``split``, ``pattern``, ``flags``, ``groups``, ``groupindex``), the same results, the
pattern compiled once when one of them is first called. After that the compiled pattern's own
bound methods answer (they are installed on the instance), so a lazy pattern costs nothing more
per call than a compiled one.

A typo in a pattern no longer fails the import: :func:`compile_all` compiles every lazy pattern
made so far and is what the guard tests call (``tests/unit/test_lazy_re.py``). Pure: no I/O.
"""

from __future__ import annotations

import re
import sys
import weakref
from collections.abc import Callable, Iterator
from typing import Any

__all__ = ["LazyPattern", "Regex", "compile_all", "lazy_compile"]

# Every lazy pattern made (module-level ones live as long as their module).
_MADE: weakref.WeakSet[LazyPattern] = weakref.WeakSet()

_METHODS = ("search", "match", "fullmatch", "finditer", "findall", "sub", "subn", "split")


class LazyPattern:
    """A ``re.Pattern[str]`` compiled on first use; see the module docstring."""

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self.pattern = pattern
        self._flags = flags
        self._compiled: re.Pattern[str] | None = None
        _MADE.add(self)

    def __repr__(self) -> str:
        return f"lazy_compile({self.pattern!r}, {self._flags!r})"

    def compiled(self) -> re.Pattern[str]:
        """The compiled pattern (compiled now if this is the first use)."""
        compiled = self._compiled
        if compiled is None:
            compiled = re.compile(self.pattern, self._flags)
            # Instance attributes shadow the methods below: later calls go straight to ``re``.
            for name in _METHODS:
                setattr(self, name, getattr(compiled, name))
            self._compiled = compiled
        return compiled

    @property
    def is_compiled(self) -> bool:
        return self._compiled is not None

    @property
    def flags(self) -> int:
        return self.compiled().flags

    @property
    def groups(self) -> int:
        return self.compiled().groups

    @property
    def groupindex(self) -> Any:
        return self.compiled().groupindex

    def search(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> re.Match[str] | None:
        return self.compiled().search(string, pos, endpos)

    def match(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> re.Match[str] | None:
        return self.compiled().match(string, pos, endpos)

    def fullmatch(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> re.Match[str] | None:
        return self.compiled().fullmatch(string, pos, endpos)

    def finditer(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> Iterator[re.Match[str]]:
        return self.compiled().finditer(string, pos, endpos)

    def findall(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> list[Any]:
        return self.compiled().findall(string, pos, endpos)

    def sub(self, repl: str | Callable[[re.Match[str]], str], string: str, count: int = 0) -> str:
        return self.compiled().sub(repl, string, count)

    def subn(
        self, repl: str | Callable[[re.Match[str]], str], string: str, count: int = 0
    ) -> tuple[str, int]:
        return self.compiled().subn(repl, string, count)

    def split(self, string: str, maxsplit: int = 0) -> list[str | Any]:
        return self.compiled().split(string, maxsplit)


# What a function that takes "a pattern" accepts: a compiled one or a lazy one.
Regex = re.Pattern[str] | LazyPattern


def lazy_compile(pattern: str, flags: int = 0) -> LazyPattern:
    """:func:`re.compile`, deferred to the pattern's first use."""
    return LazyPattern(pattern, flags)


def compile_all() -> int:
    """Compile every lazy pattern made so far (raising :class:`re.error` on a bad one, as the
    import used to); returns how many there are."""
    made = list(_MADE)
    for pattern in made:
        pattern.compiled()
    return len(made)
