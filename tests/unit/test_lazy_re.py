"""Lazily compiled patterns (agentmem.domain.lazy_re): the same answers as ``re``, compiled on
first use, and every guard pattern still checked (the import no longer does it)."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap

import pytest

from agentmem.domain.lazy_re import LazyPattern, compile_all, lazy_compile

TEXT = "Call Alice at 555-0100, or BOB at 555-0199; alice@example.org"


@pytest.mark.parametrize(
    ("source", "flags"),
    [
        (r"(?P<area>\d{3})-(?P<line>\d{4})", 0),
        (r"\balice\b", re.IGNORECASE),
        (r"[;,]\s*", 0),
        (r"^call", re.IGNORECASE | re.MULTILINE),
    ],
)
def test_same_results_as_a_compiled_pattern(source: str, flags: int) -> None:
    lazy, compiled = lazy_compile(source, flags), re.compile(source, flags)

    def same(a: re.Match[str] | None, b: re.Match[str] | None) -> bool:
        return (a is None and b is None) or (a is not None and b is not None and a.span() == b.span())

    assert not lazy.is_compiled
    assert same(lazy.search(TEXT), compiled.search(TEXT))  # first use compiles...
    assert lazy.is_compiled
    assert same(lazy.search(TEXT), compiled.search(TEXT))  # ...later uses go straight to re
    assert same(lazy.search(TEXT, 20, 40), compiled.search(TEXT, 20, 40))
    assert same(lazy.match(TEXT), compiled.match(TEXT))
    assert same(lazy.fullmatch("555-0100"), compiled.fullmatch("555-0100"))
    assert [m.span() for m in lazy.finditer(TEXT)] == [m.span() for m in compiled.finditer(TEXT)]
    assert lazy.findall(TEXT) == compiled.findall(TEXT)
    assert lazy.sub("#", TEXT) == compiled.sub("#", TEXT)
    assert lazy.sub(lambda m: m.group(0).upper(), TEXT, 1) == compiled.sub(
        lambda m: m.group(0).upper(), TEXT, 1
    )
    assert lazy.subn("#", TEXT) == compiled.subn("#", TEXT)
    assert lazy.split(TEXT) == compiled.split(TEXT)
    assert (lazy.pattern, lazy.flags, lazy.groups, dict(lazy.groupindex)) == (
        compiled.pattern,
        compiled.flags,
        compiled.groups,
        dict(compiled.groupindex),
    )


@pytest.mark.parametrize("method", ["search", "match", "fullmatch", "findall", "split"])
def test_every_method_compiles_on_first_use(method: str) -> None:
    lazy = lazy_compile(r"a+")

    def seen(result: object) -> object:
        return result.span() if isinstance(result, re.Match) else result

    assert seen(getattr(lazy, method)("baaa")) == seen(getattr(re.compile(r"a+"), method)("baaa"))
    assert lazy.is_compiled


def test_a_bad_pattern_fails_on_first_use_and_in_compile_all() -> None:
    broken = lazy_compile(r"(unclosed")  # no error yet: nothing compiled
    with pytest.raises(re.error):
        broken.search("x")
    with pytest.raises(re.error):
        compile_all()
    del broken  # the registry holds patterns weakly: a dropped one is no longer checked
    import gc

    gc.collect()
    compile_all()


def test_every_guard_pattern_compiles() -> None:
    """What importing the guards used to check: each of their patterns is a valid regex."""
    import agentmem.domain.guards  # noqa: F401  (imports every guard module)

    assert compile_all() >= 300


def test_importing_the_guards_compiles_almost_no_pattern() -> None:
    """The point of it: ``import agentmem.domain.guards`` compiles almost none of its ~400
    patterns (the few that normalise the injection lexicons at import), and the first scan
    compiles only the ones it reaches."""
    code = textwrap.dedent(
        """
        import agentmem.domain.guards as guards
        from agentmem.domain import lazy_re
        made = list(lazy_re._MADE)
        print(len(made), sum(p.is_compiled for p in made))
        guards.detect_injection("I like green tea and live in Lisbon.")
        print(sum(p.is_compiled for p in made))
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.split()
    made, compiled_at_import, compiled_after_scan = map(int, out)
    assert made >= 300
    assert compiled_at_import <= 5
    assert 0 < compiled_after_scan < made


def test_a_lazy_pattern_is_not_a_compiled_one() -> None:
    assert not isinstance(lazy_compile("x"), re.Pattern)
    assert isinstance(lazy_compile("x"), LazyPattern)
    assert repr(lazy_compile("a|b", re.I)) == "lazy_compile('a|b', re.IGNORECASE)"
