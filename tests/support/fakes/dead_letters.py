"""The in-memory :class:`~agentmem.ports.DeadLetterQueue`: the turns an
:class:`~support.fakes.memory.InMemoryTurnQueue` gave up on, by composition over that queue's
state (its lock, its switch, its :attr:`~support.fakes.memory.InMemoryTurnQueue.dead` table), as
the embedded queue keeps its dead letters in a table of its own file. Listed per scope, oldest
failure first, paged by an opaque cursor; a redrive sends the chosen turns back through the
queue, byte for byte, and an erase (the queue's ``purge_scope``) drops them."""

from __future__ import annotations

import builtins
from collections.abc import Sequence

from agentmem.domain.models import Scope
from agentmem.messages import TurnMessage
from agentmem.ports import DeadLetterEntry, DeadLetterPage, DeadLetterQueue
from support.fakes.cursors import decode_cursor, encode_cursor
from support.fakes.memory import InMemoryTurnQueue


class InMemoryDeadLetters(DeadLetterQueue):
    """:class:`~agentmem.ports.DeadLetterQueue` over ``queue``'s dead letters; down when it is."""

    def __init__(self, queue: InMemoryTurnQueue) -> None:
        self._queue = queue
        self._lock = queue._lock

    def _entries(self, scope: Scope | None) -> builtins.list[tuple[tuple[str, str], DeadLetterEntry]]:
        """The dead letters of ``scope`` (None: all), oldest failure first."""
        found = []
        for key, (body, reason, attempts, failed_at) in self._queue.dead.items():
            if scope is not None and key[0] != scope.key:
                continue
            turn = TurnMessage.from_body(body)
            entry = DeadLetterEntry(turn.message_id, turn.scope, turn.session_id, reason, attempts, failed_at)
            found.append((key, entry))
        return sorted(found, key=lambda pair: pair[1].failed_at)  # stable: ties keep their order

    def dead_letters_of(
        self, scope: Scope | None, limit: int = 50, cursor: str | None = None
    ) -> DeadLetterPage:
        with self._lock:
            self._queue._enter("dead_letters_of")
            entries = self._entries(scope)
            start = 0
            if cursor is not None:
                after = decode_cursor("dead-letter", cursor)
                keys = ["\x1f".join(key) for key, _ in entries]
                start = keys.index(after) + 1 if after in keys else len(entries)
            page = entries[start : start + max(0, limit)]
            more = start + len(page) < len(entries)
            last = "\x1f".join(page[-1][0]) if page and more else None
            return DeadLetterPage(
                items=[e for _, e in page],
                next_cursor=None if last is None else encode_cursor("dead-letter", last),
            )

    def dead_letter(self, scope: Scope, message_id: str) -> DeadLetterEntry | None:
        with self._lock:
            self._queue._enter("dead_letter")
            return next((e for key, e in self._entries(scope) if key[1] == message_id), None)

    def redrive(self, scope: Scope | None, message_ids: Sequence[str] | None = None) -> builtins.list[str]:
        with self._lock:
            self._queue._enter("redrive")
            chosen = [key for key, _ in self._entries(scope) if message_ids is None or key[1] in message_ids]
            bodies = [self._queue.dead.pop(key)[0] for key in chosen]
            if bodies:
                self._queue.send([TurnMessage.from_body(b) for b in bodies])
            return [key[1] for key in chosen]
