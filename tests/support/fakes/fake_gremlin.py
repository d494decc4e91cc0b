"""A Gremlin "server" for offline tests: a gremlinpython ``RemoteConnection`` that executes the
bytecode it is sent against an in-memory property graph, one request = one transaction (an error
rolls the whole request back, as Neptune does).

It serves exactly the steps the Neptune adapter uses, with TinkerPop semantics — ``V``/``E`` (at
the start or mid-traversal), ``has``/``hasLabel`` (values and ``P`` predicates), ``fold``,
``unfold``, ``coalesce``, ``addV``/``addE`` with ``to`` and ``property(T.id, ...)``,
``property`` (Neptune's default *set* cardinality unless ``Cardinality.single``), ``id``,
``label``, ``values``, ``elementMap``, ``bothE``/``outE``/``inE``, ``inV``/``outV``, ``both``,
``not``, ``sideEffect``, ``drop``, ``constant``, ``order().by()``, ``project().by()``, ``limit``,
``count`` — and raises ``ValueError`` for anything else, so an adapter change that needs a new
step shows up here instead of being silently mis-executed. Results come back as gremlinpython
gives them (``elementMap`` keys ``T.id`` / ``T.label`` / ``Direction.IN|OUT``).

:meth:`FakeGremlinServer.fail_next` injects Neptune-shaped errors (e.g.
``ConcurrentModificationException``); :attr:`FakeGremlinServer.submitted` keeps every bytecode.
"""

from __future__ import annotations

import copy
import json
import uuid
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from gremlin_python.driver.protocol import GremlinServerError
from gremlin_python.driver.remote_connection import RemoteConnection, RemoteTraversal
from gremlin_python.process.traversal import Bytecode, Cardinality, Direction, Order, P, T, Traverser
from gremlin_python.structure import graph as structure


@dataclass
class _V:
    id: str
    label: str
    props: dict[str, list[Any]] = field(default_factory=dict)

    def value(self, key: str) -> Any:
        values = self.props.get(key)
        return values[0] if values else None


@dataclass
class _E:
    id: str
    label: str
    out_id: str
    in_id: str
    props: dict[str, Any] = field(default_factory=dict)

    def value(self, key: str) -> Any:
        return self.props.get(key)


def neptune_error(
    code: str, message: str = "conflicting concurrent operations. Please retry."
) -> GremlinServerError:
    """A GremlinServerError as the driver raises it for a Neptune failure."""
    body = {"requestId": str(uuid.uuid4()), "code": code, "detailedMessage": message}
    return GremlinServerError({"code": 500, "message": json.dumps(body), "attributes": {}})


def _value_of(element: _V | _E, *, key: str) -> Any:
    return element.value(key)


def _matches(value: Any, wanted: Any) -> bool:
    if not isinstance(wanted, P):
        return bool(value == wanted)
    op, arg = wanted.operator, wanted.value
    if op == "within":
        return value in (arg if isinstance(arg, list | tuple | set) else [arg])
    if value is None:
        return False
    tests = {"eq": value == arg, "neq": value != arg}
    if op in tests:
        return bool(tests[op])
    comparisons = {
        "lt": lambda: value < arg,
        "lte": lambda: value <= arg,
        "gt": lambda: value > arg,
        "gte": lambda: value >= arg,
    }
    if op in comparisons:
        return bool(comparisons[op]())
    raise ValueError(f"predicate {op} not served by the fake")


class FakeGremlinServer(RemoteConnection):  # type: ignore[misc]
    """In-memory TinkerPop graph behind gremlinpython's remote-connection interface."""

    def __init__(self) -> None:
        super().__init__("fake://neptune:8182/gremlin", "g")
        self.vertices: dict[str, _V] = {}
        self.edges: dict[str, _E] = {}
        self.submitted: list[Bytecode] = []
        self.closed = False
        self._faults: list[GremlinServerError] = []
        self._fresh: Any = None

    def fail_next(self, code: str = "ConcurrentModificationException", times: int = 1) -> None:
        self._faults.extend(neptune_error(code) for _ in range(times))

    def is_closed(self) -> bool:
        return self.closed

    def close(self) -> None:
        self.closed = True

    def submit(self, bytecode: Bytecode) -> RemoteTraversal:
        self.submitted.append(bytecode)
        if self._faults:
            raise self._faults.pop(0)
        saved = copy.deepcopy((self.vertices, self.edges))
        try:
            results = self._run(bytecode, None)
        except (GremlinServerError, ValueError, KeyError, IndexError):
            self.vertices, self.edges = saved
            raise
        return RemoteTraversal(iter([Traverser(self._out(r), 1) for r in results]))

    @staticmethod
    def _out(value: Any) -> Any:
        if isinstance(value, _V):
            return structure.Vertex(value.id, value.label)
        if isinstance(value, _E):
            return structure.Edge(
                value.id, structure.Vertex(value.out_id), value.label, structure.Vertex(value.in_id)
            )
        return value

    # ------------------------------------------------------------------ execution

    def _run(self, bytecode: Bytecode, start: list[Any] | None) -> list[Any]:
        steps = [list(s) for s in bytecode.step_instructions]
        cur: list[Any] = [None] if start is None else list(start)
        root = start is None
        i = 0
        while i < len(steps):
            name, args, first = steps[i][0], steps[i][1:], root and i == 0
            mods: list[list[Any]] = []
            while i + 1 < len(steps) and steps[i + 1][0] in self._modulators(name):
                i += 1
                mods.append(steps[i])
            cur = self._step(name, args, mods, cur, first)
            i += 1
        return cur

    @staticmethod
    def _modulators(name: str) -> tuple[str, ...]:
        return {"order": ("by",), "project": ("by",), "addE": ("to", "from")}.get(name, ())

    def _ids(self, args: list[Any]) -> list[str]:
        ids: list[Any] = []
        for a in args:
            ids.extend(a if isinstance(a, list | tuple) else [a])
        return [str(x) for x in ids]

    def _step(
        self, name: str, args: list[Any], mods: list[list[Any]], cur: list[Any], first: bool
    ) -> list[Any]:
        if name in ("V", "E"):
            table: dict[str, Any] = self.vertices if name == "V" else self.edges
            ids = self._ids(args)
            found = [table[x] for x in ids if x in table] if ids else list(table.values())
            return list(found) if first else [f for _ in cur for f in found]
        handler = getattr(self, f"_s_{name}", None)
        if handler is None:
            raise ValueError(f"step {name} not served by the fake Gremlin server")
        result: list[Any] = handler(args, mods, cur)
        return result

    def _child(self, child: Any, value: Any) -> list[Any]:
        if not isinstance(child, Bytecode):
            raise ValueError("expected an anonymous traversal")
        return self._run(child, [value])

    # filters and maps
    def _s_has(self, args: list[Any], mods: list[Any], cur: list[Any]) -> list[Any]:
        label, key, wanted = (None, *args) if len(args) == 2 else args
        out = []
        for e in cur:
            if label is not None and e.label != label:
                continue
            values = e.props.get(key, []) if isinstance(e, _V) else ([e.props[key]] if key in e.props else [])
            if any(_matches(v, wanted) for v in values):
                out.append(e)
        return out

    def _s_hasLabel(self, args: list[Any], mods: list[Any], cur: list[Any]) -> list[Any]:
        return [e for e in cur if e.label in args]

    def _s_not(self, args: list[Any], mods: list[Any], cur: list[Any]) -> list[Any]:
        return [t for t in cur if not self._child(args[0], t)]

    def _s_fold(self, args: list[Any], mods: list[Any], cur: list[Any]) -> list[Any]:
        return [list(cur)]

    def _s_unfold(self, args: list[Any], mods: list[Any], cur: list[Any]) -> list[Any]:
        return [x for t in cur for x in (t if isinstance(t, list) else [t])]

    def _s_coalesce(self, args: list[Any], mods: list[Any], cur: list[Any]) -> list[Any]:
        out: list[Any] = []
        for t in cur:
            for child in args:
                got = self._child(child, t)
                if got:
                    out.extend(got)
                    break
        return out

    def _s_sideEffect(self, args: list[Any], mods: list[Any], cur: list[Any]) -> list[Any]:
        for t in cur:
            self._child(args[0], t)
        return cur

    def _s_constant(self, args: list[Any], mods: list[Any], cur: list[Any]) -> list[Any]:
        return [args[0] for _ in cur]

    def _s_limit(self, args: list[Any], mods: list[Any], cur: list[Any]) -> list[Any]:
        return cur[: int(args[0])]

    def _s_count(self, args: list[Any], mods: list[Any], cur: list[Any]) -> list[Any]:
        return [len(cur)]

    def _s_id(self, args: list[Any], mods: list[Any], cur: list[Any]) -> list[Any]:
        return [e.id for e in cur]

    def _s_label(self, args: list[Any], mods: list[Any], cur: list[Any]) -> list[Any]:
        return [e.label for e in cur]

    def _s_values(self, args: list[Any], mods: list[Any], cur: list[Any]) -> list[Any]:
        out: list[Any] = []
        for e in cur:
            for key in args:
                out.extend(
                    e.props.get(key, []) if isinstance(e, _V) else ([e.props[key]] if key in e.props else [])
                )
        return out

    def _s_elementMap(self, args: list[Any], mods: list[Any], cur: list[Any]) -> list[Any]:
        out = []
        for e in cur:
            row: dict[Any, Any] = {T.id: e.id, T.label: e.label}
            if isinstance(e, _E):
                row[Direction.IN] = {T.id: e.in_id, T.label: self.vertices[e.in_id].label}
                row[Direction.OUT] = {T.id: e.out_id, T.label: self.vertices[e.out_id].label}
            for key in args or list(e.props):
                if key in e.props:
                    row[key] = e.value(key)
            out.append(row)
        return out

    def _s_project(self, args: list[Any], mods: list[Any], cur: list[Any]) -> list[Any]:
        out = []
        for t in cur:
            row = {}
            for key, by in zip(args, mods, strict=True):
                spec = by[1]
                got = self._child(spec, t) if isinstance(spec, Bytecode) else [t.value(spec)]
                row[key] = got[0]
            out.append(row)
        return out

    def _s_order(self, args: list[Any], mods: list[Any], cur: list[Any]) -> list[Any]:
        out = list(cur)
        for by in reversed(mods):
            key, order = by[1], by[2] if len(by) > 2 else Order.asc
            out.sort(key=partial(_value_of, key=key), reverse=order == Order.desc)
        return out

    # navigation
    def _incident(self, v: _V, direction: str, labels: list[Any]) -> list[_E]:
        return [
            e
            for e in self.edges.values()
            if (not labels or e.label in labels)
            and (
                (direction in ("out", "both") and e.out_id == v.id)
                or (direction in ("in", "both") and e.in_id == v.id)
            )
        ]

    def _s_bothE(self, args: list[Any], mods: list[Any], cur: list[Any]) -> list[Any]:
        return [e for v in cur for e in self._incident(v, "both", args)]

    def _s_outE(self, args: list[Any], mods: list[Any], cur: list[Any]) -> list[Any]:
        return [e for v in cur for e in self._incident(v, "out", args)]

    def _s_inE(self, args: list[Any], mods: list[Any], cur: list[Any]) -> list[Any]:
        return [e for v in cur for e in self._incident(v, "in", args)]

    def _s_both(self, args: list[Any], mods: list[Any], cur: list[Any]) -> list[Any]:
        return [
            self.vertices[e.in_id if e.out_id == v.id else e.out_id]
            for v in cur
            for e in self._incident(v, "both", args)
        ]

    def _s_inV(self, args: list[Any], mods: list[Any], cur: list[Any]) -> list[Any]:
        return [self.vertices[e.in_id] for e in cur]

    def _s_outV(self, args: list[Any], mods: list[Any], cur: list[Any]) -> list[Any]:
        return [self.vertices[e.out_id] for e in cur]

    # mutations
    def _s_addV(self, args: list[Any], mods: list[Any], cur: list[Any]) -> list[Any]:
        out = []
        for _ in cur:
            v = _V(str(uuid.uuid4()), str(args[0]) if args else "vertex")
            self.vertices[v.id] = v
            self._fresh = v
            out.append(v)
        return out

    def _s_addE(self, args: list[Any], mods: list[Any], cur: list[Any]) -> list[Any]:
        out = []
        for t in cur:
            ends = {"from": t, "to": t}
            for mod in mods:
                got = self._child(mod[1], t) if isinstance(mod[1], Bytecode) else []
                if not got:
                    raise GremlinServerError(
                        {
                            "code": 500,
                            "message": "The provided traverser does not map to a value",
                            "attributes": {},
                        }
                    )
                ends[mod[0]] = got[0]
            e = _E(str(uuid.uuid4()), str(args[0]), ends["from"].id, ends["to"].id)
            self.edges[e.id] = e
            self._fresh = e
            out.append(e)
        return out

    def _s_property(self, args: list[Any], mods: list[Any], cur: list[Any]) -> list[Any]:
        for e in cur:
            if args[0] == T.id:
                if e is not self._fresh:
                    raise ValueError("property(T.id) outside addV/addE")
                table: dict[str, Any] = self.vertices if isinstance(e, _V) else self.edges
                new_id = str(args[1])
                if new_id in table:
                    raise neptune_error(
                        "ConstraintViolationException", f"Vertex or edge with id already exists: {new_id}"
                    )
                del table[e.id]
                e.id = new_id
                table[new_id] = e
                continue
            cardinality = args[0] if isinstance(args[0], Cardinality) else None
            key, value = (args[1], args[2]) if cardinality is not None else (args[0], args[1])
            if isinstance(e, _E) or cardinality == Cardinality.single:
                if isinstance(e, _E):
                    e.props[key] = value
                else:
                    e.props[key] = [value]
            elif value not in e.props.setdefault(key, []):
                e.props[key].append(value)  # Neptune's default cardinality is set
        return cur

    def _s_drop(self, args: list[Any], mods: list[Any], cur: list[Any]) -> list[Any]:
        for e in cur:
            if isinstance(e, _V) and e.id in self.vertices:
                for edge in self._incident(e, "both", []):
                    self.edges.pop(edge.id, None)
                del self.vertices[e.id]
            elif isinstance(e, _E):
                self.edges.pop(e.id, None)
        return []
