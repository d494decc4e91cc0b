"""Shared SQLite plumbing of the embedded adapters.

One :class:`SqliteDatabase` per store file. The connection is opened lazily on first use (which
also creates the schema), in WAL mode with a busy timeout so several processes can share a file,
and with ``check_same_thread=False`` guarded by a re-entrant lock because the local server is
threaded. The connection runs in autocommit mode; :meth:`SqliteDatabase.write` wraps a block in
``BEGIN IMMEDIATE`` … ``COMMIT`` (rolled back on any exception) and :meth:`SqliteDatabase.read` in a
deferred read transaction, so a block sees one snapshot. Every ``sqlite3.Error`` leaves as
:class:`~agentmem.errors.StoreUnavailable` (chained); domain errors raised inside a block (a
version conflict, say) roll back and propagate unchanged.

Every connection runs with ``PRAGMA secure_delete = ON``: deleted rows are overwritten with zeros
in their pages, so erased or acknowledged text does not linger in free pages. In WAL mode the old
page images stay in the ``-wal`` file until a checkpoint; :meth:`SqliteDatabase.checkpoint`
(``wal_checkpoint(TRUNCATE)``) copies the zeroed pages back and empties the WAL, and the stores call
it after deletes that must leave no trace (an erase, a batch of acknowledged queue messages).

Every file carries the format of the embedded layout (``PRAGMA user_version``, :data:`FORMAT`;
0 in files from before the stamp, which ``migrate`` brings up to date). A store never opens a file
of a newer format (its schema script would create the old tables in it again): the check and the
schema script run in one ``BEGIN IMMEDIATE`` transaction, and a newer version stamps its format
before it migrates, so an older process opening the file meanwhile is refused. A statement of a
running older process that fails on a table or column the upgrade removed or renamed says so,
instead of SQLite's bare "no such table" (an upgrade that only adds is not noticed: nothing of
the older process fails). Stop the old processes and run the new version (docs/operations.md,
"Upgrades").

``":memory:"`` gives a private in-memory database (tests).
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, suppress
from pathlib import Path
from typing import Any

from agentmem.errors import StoreUnavailable
from agentmem.ports import ProjectionState

MEMORY = ":memory:"
FORMAT = 1
"""The embedded files' format (``PRAGMA user_version``). One number for every file, since several
stores share one (the memory store, turn log, runtime state, conflicts and summaries): raise it
whenever a store's ``migrate`` makes a file unreadable to the code before it."""
IN_CHUNK = 500  # ids per "IN (...)" query, well under SQLite's variable limit


def placeholders(count: int) -> str:
    return ",".join("?" * count)


def bump_generation(conn: Any, pk: str, *, reset: bool = False) -> int:
    """Move a scope's generation in the database's ``generations`` table (``reset``: caches must
    start over) and return it; the rows a write changes are stamped with it, so a process's cache
    can take just those."""
    row = conn.execute(
        "INSERT INTO generations (pk, gen, reset_gen) VALUES (?, 1, ?)"
        " ON CONFLICT (pk) DO UPDATE SET gen = gen + 1,"
        " reset_gen = CASE WHEN excluded.reset_gen > 0 THEN gen + 1 ELSE reset_gen END"
        " RETURNING gen",
        (pk, 1 if reset else 0),
    ).fetchone()
    return int(row[0])


def _file_format(conn: sqlite3.Connection) -> int:
    return int(conn.execute("PRAGMA user_version").fetchone()[0])


def statements(script: str) -> list[str]:
    """The statements of a schema script, each whole (a trigger's body keeps its semicolons)."""
    out: list[str] = []
    pending = ""
    for part in script.split(";"):
        pending += part + ";"
        if sqlite3.complete_statement(pending):
            if pending.strip(" \t\r\n;"):
                out.append(pending.strip())
            pending = ""
    return out


def chunks(values: Sequence[Any], size: int = IN_CHUNK) -> Iterator[Sequence[Any]]:
    for start in range(0, len(values), size):
        yield values[start : start + size]


class SqliteDatabase:
    """A lazily opened, lock-guarded SQLite connection with a schema."""

    def __init__(
        self,
        path: str | Path,
        schema: str,
        *,
        name: str = "sqlite",
        busy_timeout_ms: int = 30000,
        migrate: Callable[[sqlite3.Connection], None] | None = None,
        file_format: int = FORMAT,
    ) -> None:
        self._path = str(path)
        self._format = file_format
        self._schema = schema
        self._name = name
        self._busy_timeout_ms = busy_timeout_ms
        self._migrate = migrate
        self._conn: sqlite3.Connection | None = None
        self._writes = 0  # write blocks run through this instance (see change_stamp)
        self.lock = threading.RLock()

    @property
    def path(self) -> str:
        return self._path

    def _unavailable(self, exc: BaseException) -> StoreUnavailable:
        newer = self._newer_format(exc)
        if newer is not None:
            return self._too_new(newer)
        return StoreUnavailable(f"{self._name} store unavailable: {exc}", details={"store": self._name})

    def _too_new(self, found: int) -> StoreUnavailable:
        return StoreUnavailable(
            f"{self._name} store file {self._path} is in format {found}, newer than this process reads"
            f" ({self._format}): a newer agentmem upgraded it; stop this process and run the new version",
            details={"store": self._name, "file_format": found, "reads_up_to": self._format},
        )

    def _newer_format(self, exc: BaseException) -> int | None:
        """The file's format when ``exc`` (a missing table or column) comes from a file that a
        newer version upgraded after this process opened it; None otherwise."""
        message = str(exc)
        conn = self._conn
        if conn is None or not isinstance(exc, sqlite3.OperationalError):
            return None
        if "no such table" not in message and "no such column" not in message:
            return None
        try:
            found = _file_format(conn)
        except sqlite3.Error:
            return None
        return found if found > self._format else None

    def _connection(self) -> sqlite3.Connection:
        if self._conn is not None:
            return self._conn
        try:
            if self._path != MEMORY:
                Path(self._path).parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(
                self._path,
                timeout=self._busy_timeout_ms / 1000,
                isolation_level=None,
                check_same_thread=False,
            )
            try:
                self._prepare(conn)
            except BaseException:
                conn.close()
                raise
        except (sqlite3.Error, OSError) as exc:
            raise self._unavailable(exc) from exc
        self._conn = conn
        return conn

    def _prepare(self, conn: sqlite3.Connection) -> None:
        """Pragmas, format and schema of a new connection. Two connections opening one file at
        once can meet SQLITE_BUSY where SQLite does not call the busy handler (the switch to WAL),
        so "database is locked" here is retried for up to the busy timeout. The file's format is
        checked before anything touches it and stamped (when older) before ``migrate`` (the
        store's upgrade of a file an older version wrote, in its own transactions, a no-op on a
        current file) runs; the schema statements run in one transaction with the check again."""
        conn.execute(f"PRAGMA busy_timeout = {int(self._busy_timeout_ms)}")
        conn.execute("PRAGMA secure_delete = ON")
        deadline = time.monotonic() + self._busy_timeout_ms / 1000
        while True:
            try:
                self._refuse_newer(conn)
                if self._path != MEMORY:
                    conn.execute("PRAGMA journal_mode = WAL")
                    conn.execute("PRAGMA synchronous = NORMAL")
                self._checked(conn, self._stamp)  # an older process opening from now on is refused
                if self._migrate is not None:
                    self._migrate(conn)
                self._checked(conn, self._create_schema)
                return
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) or time.monotonic() > deadline:
                    raise
                time.sleep(0.01)

    def _refuse_newer(self, conn: sqlite3.Connection) -> None:
        found = _file_format(conn)
        if found > self._format:  # its schema script would bring back the old tables
            raise self._too_new(found)

    def _stamp(self, conn: sqlite3.Connection) -> None:
        if _file_format(conn) < self._format:
            conn.execute(f"PRAGMA user_version = {int(self._format)}")

    def _create_schema(self, conn: sqlite3.Connection) -> None:
        for statement in statements(self._schema):
            conn.execute(statement)

    def _checked(self, conn: sqlite3.Connection, step: Callable[[sqlite3.Connection], Any]) -> None:
        """``step`` in one ``BEGIN IMMEDIATE`` transaction with the format checked first."""
        conn.execute("BEGIN IMMEDIATE")
        try:
            self._refuse_newer(conn)
            step(conn)
            conn.execute("COMMIT")
        except BaseException:
            with suppress(sqlite3.Error):
                conn.execute("ROLLBACK")
            raise

    @contextmanager
    def _transaction(self, begin: str) -> Iterator[sqlite3.Connection]:
        with self.lock:
            conn = self._connection()
            try:
                if conn.in_transaction:  # nested use inside an open block: join it
                    yield conn
                    return
                conn.execute(begin)
            except sqlite3.Error as exc:
                raise self._unavailable(exc) from exc
            try:
                yield conn
            except BaseException as exc:
                with suppress(sqlite3.Error):
                    conn.execute("ROLLBACK")
                if isinstance(exc, sqlite3.Error):
                    raise self._unavailable(exc) from exc
                raise
            try:
                conn.execute("COMMIT")
            except sqlite3.Error as exc:
                with suppress(sqlite3.Error):
                    conn.execute("ROLLBACK")
                raise self._unavailable(exc) from exc

    @contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        """Context manager: one ``BEGIN IMMEDIATE`` transaction, committed unless it raises."""
        with self.lock:
            try:
                with self._transaction("BEGIN IMMEDIATE") as conn:
                    yield conn
            finally:
                self._writes += 1  # committed or not: a cache keyed on the stamp starts over

    def change_stamp(self, conn: sqlite3.Connection) -> tuple[int, int]:
        """A value that changes whenever the file's contents may have: SQLite's
        ``PRAGMA data_version`` (moves when another connection, in this process or another,
        commits) and this instance's own write blocks (which the pragma does not count). Read on
        ``conn``, this instance's connection, inside a block: a cache of query results stamped
        with it is current while the stamp is unchanged."""
        return int(conn.execute("PRAGMA data_version").fetchone()[0]), self._writes

    def read(self) -> AbstractContextManager[sqlite3.Connection]:
        """Context manager: one read snapshot."""
        return self._transaction("BEGIN")

    def checkpoint(self) -> bool:
        """Copy the WAL into the database file and truncate it to zero bytes, so no old page image
        (a deleted row's text) is left in the ``-wal`` file. True when the WAL was emptied; False
        when another connection's open read kept part of it (retried by the next call)."""
        if self._path == MEMORY:
            return True
        with self.lock:
            conn = self._connection()
            if conn.in_transaction:
                return False
            try:
                busy, _, _ = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
            except sqlite3.Error as exc:
                raise self._unavailable(exc) from exc
            return int(busy) == 0

    def compact(self, min_free_fraction: float) -> bool:
        """The file's space policy, run after a retention pass: ``VACUUM`` when at least
        ``min_free_fraction`` of its pages are free (rows deleted by retention or an erase; SQLite
        reuses free pages for new rows, so a file in steady state needs none), then the WAL
        checkpointed and truncated. True when it vacuumed. ``VACUUM`` holds the write lock while it
        rewrites the file (other processes wait, up to the busy timeout)."""
        if self._path == MEMORY:
            return False
        with self.lock:
            conn = self._connection()
            if conn.in_transaction:
                return False
            try:
                pages = int(conn.execute("PRAGMA page_count").fetchone()[0])
                free = int(conn.execute("PRAGMA freelist_count").fetchone()[0])
                vacuum = pages > 0 and free / pages >= min_free_fraction
                if vacuum:
                    conn.execute("VACUUM")
                    self._writes += 1
                conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
            except sqlite3.OperationalError as exc:  # busy: the next pass tries again
                if "locked" in str(exc) or "busy" in str(exc):
                    return False
                raise self._unavailable(exc) from exc
            except sqlite3.Error as exc:
                raise self._unavailable(exc) from exc
            return vacuum

    def close(self) -> None:
        with self.lock:
            if self._conn is not None:
                try:
                    self._conn.close()
                finally:
                    self._conn = None


def projection_states(
    db: SqliteDatabase, select: str, pk: str, ids: Sequence[str] | None = None
) -> list[ProjectionState]:
    """Version and hash of projected memories (both projections keep them for the reconciler).

    ``select`` is ``SELECT <id>, version, content_hash FROM <table> WHERE pk = ?`` plus any fixed
    condition, with the id column first; ``ids`` None means every one of the scope, in id order."""
    id_column = select.split()[1].rstrip(",")
    with db.read() as conn:
        if ids is None:
            rows = conn.execute(f"{select} ORDER BY {id_column}", (pk,)).fetchall()
        else:
            rows = []
            for part in chunks(list(dict.fromkeys(ids))):
                rows += conn.execute(
                    f"{select} AND {id_column} IN ({placeholders(len(part))})", (pk, *part)
                ).fetchall()
    return [ProjectionState(str(i), int(v), str(h)) for i, v, h in rows]
