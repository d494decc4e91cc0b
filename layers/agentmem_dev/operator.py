"""Operator commands of the ``agentmem`` CLI: ``consolidate``, ``reconcile``, ``dlq list|redrive``,
``export``, ``import`` and ``erase`` (docs/operations.md).

Each command builds the container from the same settings as the Lambdas and the local server
(:func:`~agentmem.settings.load_settings` + :func:`~agentmem.bootstrap.bootstrap`):
``AGENTMEM_BACKEND`` decides whether it works on the embedded stores under ``--data-dir`` or on
DynamoDB / SQS / OpenSearch / Neptune. The long ones show a progress bar on stderr (tqdm, off
when stderr is not a terminal); results go to stdout as JSON (``export``: NDJSON).

Exit codes: 0 done; 1 done in part (some items refused, an unknown message id, an erase not
confirmed); 2 bad usage or configuration (an :class:`~agentmem.errors.AgentMemError`, reported by
:func:`agentmem_dev.cli.main`).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, TypeVar

from agentmem.api import convert
from agentmem.domain.models import Scope, Status
from agentmem.errors import ValidationFailed

if TYPE_CHECKING:
    from agentmem.bootstrap import Container
    from agentmem.services.transfer import ImportItem

T = TypeVar("T")
ACTOR = "cli:operator"
IMPORT_BATCH = 100  # the import route's limit: one batch is one request's worth


def _container(args: argparse.Namespace) -> Container:
    from agentmem.bootstrap import bootstrap
    from agentmem.settings import load_settings

    return bootstrap(load_settings(data_dir=Path(args.data_dir)))


def _progress(items: Iterable[T], *, desc: str, total: int | None = None, unit: str = "it") -> Iterator[T]:
    from tqdm import tqdm

    yield from tqdm(
        items, desc=desc, total=total, unit=unit, file=sys.stderr, disable=not sys.stderr.isatty()
    )


def _bar(desc: str, total: int | None, unit: str = "it") -> Any:
    from tqdm import tqdm

    return tqdm(desc=desc, total=total, unit=unit, file=sys.stderr, disable=not sys.stderr.isatty())


def _scope(args: argparse.Namespace, *, required: bool) -> Scope | None:
    if args.tenant is None and args.user is None and not required:
        return None
    if not args.tenant or not args.user:
        raise ValidationFailed(f"{args.command}: --tenant and --user go together")
    return Scope(args.tenant, args.user)


def _print(data: Any) -> None:
    print(json.dumps(data, ensure_ascii=False, indent=2, default=str))


# ---------------------------------------------------------------------------- consolidate / reconcile


def consolidate(args: argparse.Namespace) -> int:
    """Consolidate the scopes with pending writes (all of them with --force), or one user."""
    from agentmem.services.consolidation import ConsolidationReport

    c = _container(args)
    now = c.clock.now()
    scope = _scope(args, required=False)
    report = ConsolidationReport()
    if scope is not None:
        c.consolidation.consolidate(scope, now=now, report=report)
        c.ledger.clear_pending(scope)
    else:
        # run_pending's walk, one scope at a time so the bar can follow it
        due = [
            s
            for s, count in c.ledger.pending_scopes(args.max_scopes)
            if args.force or count >= c.consolidation.trigger_every
        ]
        for s in _progress(due, desc="consolidate", unit="user"):
            c.consolidation.consolidate(s, now=now, report=report)
            c.ledger.clear_pending(s)
    _print(report.to_dict())
    return 0


def reconcile(args: argparse.Namespace) -> int:
    """A full reconciliation pass now over every scope of the segment (or one user); the
    scheduled reconciler's saved cursor is left as it is."""
    from agentmem.services.reconcile import ReconcileReport

    c = _container(args)
    now = c.clock.now()
    scope = _scope(args, required=False)
    report = ReconcileReport(segment=args.segment, segments=args.segments)
    scopes = [scope] if scope is not None else _all_scopes(c, args.segment, args.segments)
    for s in _progress(scopes, desc="reconcile", unit="user"):
        c.reconciler.reconcile_scope(s, now=now, report=report)
        report.scopes_checked += 1
    report.pass_completed = scope is None
    _print({k: v for k, v in report.to_dict().items() if k != "repair_keys"})
    return 1 if report.failed else 0


def _all_scopes(c: Container, segment: int, segments: int) -> Iterator[Scope]:
    cursor: str | None = None
    while True:
        scopes, cursor = c.ledger.all_scopes(500, cursor, segment=segment, segments=segments)
        yield from scopes
        if cursor is None:
            return


# ---------------------------------------------------------------------------- dead letters


def dlq(args: argparse.Namespace) -> int:
    c = _container(args)
    scope = _scope(args, required=False)
    if args.action == "list":
        entries = list(c.dead_letters.every(scope))
        _print(
            [
                {
                    "message_id": e.message_id,
                    "tenant_id": e.scope.tenant_id if e.scope else None,
                    "user_id": e.scope.user_id if e.scope else None,
                    "session_id": e.session_id,
                    "reason": e.reason,
                    "attempts": e.attempts,
                    "failed_at": e.failed_at.isoformat(),
                }
                for e in entries
            ]
        )
        return 0
    if args.all == bool(args.message_id):
        print("agentmem dlq redrive: give one MESSAGE_ID or --all", file=sys.stderr)
        return 2
    ids = None if args.all else [args.message_id]
    with _bar("redrive", None, "turn") as bar:

        def moved(done: int, total: int) -> None:
            bar.total = total
            bar.n = done
            bar.refresh()

        redriven = c.dead_letters.redrive_all(
            scope, now=c.clock.now(), actor=ACTOR, message_ids=ids, progress=moved
        )
    _print({"redriven": redriven})
    if ids is not None and not redriven:
        print(f"agentmem dlq redrive: no dead letter {args.message_id!r}", file=sys.stderr)
        return 1
    return 0


def webhooks(args: argparse.Namespace) -> int:
    """Dead-lettered webhook deliveries (docs/events.md): list them, or make them pending again."""
    c = _container(args)
    if args.action == "dead":
        _print(
            [
                {
                    "id": d.delivery_id,
                    "tenant_id": d.tenant_id,
                    "webhook_id": d.webhook_id,
                    "event_id": d.event_id,
                    "event_type": d.event_type,
                    "attempts": d.attempts,
                    "last_error": d.last_error,
                    "last_attempt_at": d.last_attempt_at,
                }
                for d in c.webhooks.dead(args.tenant, args.limit)
            ]
        )
        return 0
    if args.all == bool(args.ids):
        print("agentmem webhooks redrive: give delivery IDs or --all", file=sys.stderr)
        return 2
    redriven = c.webhooks.redrive(args.tenant, None if args.all else args.ids, now=c.clock.now())
    _print({"redriven": redriven})
    return 0 if redriven or args.all else 1


# ---------------------------------------------------------------------------- export / import / erase


def export(args: argparse.Namespace) -> int:

    c = _container(args)
    scope = _scope(args, required=True)
    assert scope is not None
    out: IO[str] = open(args.output, "w", encoding="utf-8") if args.output else sys.stdout  # noqa: SIM115
    count = 0
    try:
        for record in _progress(c.transfer.export_all(scope, status=Status(args.status)), desc="export"):
            out.write(convert.memory_out(record).model_dump_json() + "\n")
            count += 1
    finally:
        if out is not sys.stdout:
            out.close()
    print(f"agentmem export: {count} memories", file=sys.stderr)
    return 0


def read_import_file(path: Path) -> tuple[list[tuple[int, ImportItem]], list[tuple[int, list[str]]]]:
    """The items of a JSONL file (an export's lines, or ``{"content": ...}`` objects; fields other
    than the import's are ignored) with their line numbers (from 1), and the lines refused."""
    from pydantic import ValidationError

    from agentmem.services.transfer import ImportItem
    from agentmem.wire.operator import ImportItemIn

    items: list[tuple[int, ImportItem]] = []
    refused: list[tuple[int, list[str]]] = []
    with path.open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                data = json.loads(line)
                if not isinstance(data, dict):
                    raise ValueError("not an object")
                fields = {k: data[k] for k in ImportItemIn.model_fields if data.get(k) is not None}
                item = ImportItemIn.model_validate(fields)
            except ValidationError as exc:
                refused.append((number, [f"invalid:{'.'.join(map(str, e['loc']))}" for e in exc.errors()]))
                continue
            except ValueError:
                refused.append((number, ["invalid:json"]))
                continue
            items.append(
                (
                    number,
                    ImportItem(item.content, item.category, item.importance, item.pinned, tuple(item.tags)),
                )
            )
    return items, refused


def import_(args: argparse.Namespace) -> int:
    c = _container(args)
    scope = _scope(args, required=True)
    assert scope is not None
    items, refused = read_import_file(Path(args.file))
    imported = 0
    now = c.clock.now()
    with _bar("import", len(items), "memory") as bar:
        for start in range(0, len(items), IMPORT_BATCH):
            batch = items[start : start + IMPORT_BATCH]
            report = c.transfer.import_items(
                scope,
                [item for _, item in batch],
                now=now,
                request_id=f"import:{Path(args.file).name}:{start}",
                may_write_policy=True,  # the operator's own command
            )
            imported += report.imported
            refused += [(batch[index][0], reasons) for index, reasons in report.rejected]
            bar.update(len(batch))
    refused.sort()
    _print({"imported": imported, "rejected": [{"line": n, "reasons": r} for n, r in refused]})
    return 0 if all(r == ["duplicate"] for _, r in refused) else 1


def erase(args: argparse.Namespace) -> int:
    scope = _scope(args, required=True)
    assert scope is not None
    if not args.yes:
        if not sys.stdin.isatty():
            print("agentmem erase: not confirmed (pass --yes when not at a terminal)", file=sys.stderr)
            return 1
        answer = input(f"Erase everything stored about {scope.tenant_id}/{scope.user_id}? Type the user id: ")
        if answer.strip() != scope.user_id:
            print("agentmem erase: not confirmed, nothing erased", file=sys.stderr)
            return 1
    c = _container(args)
    report = c.admin.erase_user(scope, now=c.clock.now(), actor=ACTOR, queue=c.queue)
    _print(
        {
            "memories": report.memories,
            "turns": report.turns,
            "runtime_states": report.runtime_states,
            "index_documents": report.index_documents,
            "graph_vertices": report.graph_vertices,
            "queued_turns_dropped": report.queued_turns_dropped,
            "degraded": list(report.degraded),
            "erased_at": report.erased_at.isoformat() if report.erased_at else None,
        }
    )
    return 0


# ---------------------------------------------------------------------------- parsers


def add_parsers(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """The operator subcommands, on the ``agentmem`` parser."""
    data_dir = os.environ.get("AGENTMEM_DATA_DIR", ".agentmem")

    def command(name: str, help_: str, func: Any, *, scope: str | None) -> argparse.ArgumentParser:
        parser = sub.add_parser(name, help=help_)
        parser.add_argument("--data-dir", default=data_dir, help="embedded backend: the stores' directory")
        if scope is not None:
            required = scope == "required"
            parser.add_argument("--tenant", required=required, help="the user's tenant id")
            parser.add_argument("--user", required=required, help="the user id")
        parser.set_defaults(func=func)
        return parser

    cons = command(
        "consolidate",
        "consolidate users with pending writes (or --tenant/--user)",
        consolidate,
        scope="optional",
    )
    cons.add_argument("--force", action="store_true", help="every user with pending writes, however few")
    cons.add_argument("--max-scopes", type=int, default=1000, help="users at most (default 1000)")

    rec = command(
        "reconcile", "repair projections against the source of truth, now", reconcile, scope="optional"
    )
    rec.add_argument("--segment", type=int, default=0)
    rec.add_argument("--segments", type=int, default=1)

    dead = command("dlq", "dead-lettered turns: list, redrive", dlq, scope="optional")
    dead.add_argument("action", choices=["list", "redrive"])
    dead.add_argument("message_id", nargs="?", help="redrive: the turn's message id")
    dead.add_argument("--all", action="store_true", help="redrive: every dead letter (of --tenant/--user)")

    hooks = command("webhooks", "dead-lettered webhook deliveries: list, redrive", webhooks, scope=None)
    hooks.add_argument("action", choices=["dead", "redrive"])
    hooks.add_argument("ids", nargs="*", help="redrive: the delivery ids")
    hooks.add_argument("--all", action="store_true", help="redrive: every dead delivery (of --tenant)")
    hooks.add_argument("--tenant", help="one tenant's deliveries (default: every tenant's)")
    hooks.add_argument("--limit", type=int, default=100, help="dead: at most this many (default 100)")

    exp = command("export", "a user's memories as NDJSON (redacted content)", export, scope="required")
    exp.add_argument("-o", "--output", help="file to write (default stdout)")
    exp.add_argument("--status", default="active", choices=[s.value for s in Status])

    imp = command("import", "import a JSONL file of memories through the guards", import_, scope="required")
    imp.add_argument("file", help='JSONL: an export\'s lines or {"content": ...} objects')

    era = command("erase", "erase everything stored about a user (GDPR)", erase, scope="required")
    era.add_argument("--yes", action="store_true", help="do not ask for confirmation")
