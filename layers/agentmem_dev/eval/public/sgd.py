"""Schema-Guided Dialogue → update probes (``python -m agentmem_dev.eval.public.sgd DIR --split dev``).

SGD (google-research-datasets/dstc8-schema-guided-dialogue, CC BY-SA 4.0) annotates each user turn
with dialogue acts. A *change* is a user ``INFORM`` of a slot of a service whose canonical value
differs from the value the same user informed earlier for that slot, with both surface values in the
user's own words. Each dialogue with a change becomes one case: its turns (user turn and the
system's reply) in one session a minute apart, and per change an ``update`` probe asked after the
dialogue: the slot's schema description as the query, the new surface value expected in the top 5
and the old one in none of them. Cases whose old value is spoken again after the change (the
system repeating it, a user comparing) are skipped: there the old value is rightly still in memory.

The written file is derived from CC BY-SA 4.0 data and carries that licence and attribution in
``data/public/NOTICE.md``; it is a separate file from the project's Apache-2.0 data."""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

START = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


def _changes(dialogue: dict[str, Any]) -> list[tuple[int, str, str, str, str]]:
    """(turn index, service, slot, old surface, new surface) for each user change of a value."""
    told: dict[tuple[str, str], tuple[str, str]] = {}  # (service, slot) -> (canonical, surface)
    out = []
    for index, turn in enumerate(dialogue["turns"]):
        if turn["speaker"] != "USER":
            continue
        text = turn["utterance"].casefold()
        for frame in turn["frames"]:
            for act in frame.get("actions", []):
                if act["act"] != "INFORM" or not act.get("values") or act["slot"] == "intent":
                    continue
                canonical, surface = act["canonical_values"][0], act["values"][0]
                if surface.casefold() not in text:
                    continue
                key = (frame["service"], act["slot"])
                earlier = told.get(key)
                told[key] = (canonical, surface)
                if earlier is None or earlier[0] == canonical:
                    continue
                old, new = earlier[1], surface
                if old.casefold() in new.casefold() or new.casefold() in old.casefold():
                    continue
                if old.casefold() in text:
                    continue
                out.append((index, frame["service"], act["slot"], old, new))
    return out


def _said_later(dialogue: dict[str, Any], index: int, value: str) -> bool:
    return any(value.casefold() in t["utterance"].casefold() for t in dialogue["turns"][index + 1 :])


def convert(directory: Path, split: str, *, limit: int) -> list[dict[str, Any]]:
    folder = directory / split
    schema = {s["service_name"]: s for s in json.loads((folder / "schema.json").read_text())}
    cases = []
    for path in sorted(folder.glob("dialogues_*.json")):
        for dialogue in json.loads(path.read_text()):
            changes = [c for c in _changes(dialogue) if not _said_later(dialogue, c[0], c[3])]
            if not changes:
                continue
            turns: list[dict[str, str]] = []
            pending_user: str | None = None
            for turn in dialogue["turns"]:
                if turn["speaker"] == "USER":
                    pending_user = turn["utterance"]
                elif pending_user is not None:
                    at = START + timedelta(minutes=len(turns))
                    turns.append(
                        {
                            "session_id": "s1",
                            "at": at.isoformat().replace("+00:00", "Z"),
                            "user": pending_user,
                            "assistant": turn["utterance"],
                        }
                    )
                    pending_user = None
            if pending_user is not None:
                at = START + timedelta(minutes=len(turns))
                turns.append(
                    {
                        "session_id": "s1",
                        "at": at.isoformat().replace("+00:00", "Z"),
                        "user": pending_user,
                        "assistant": "",
                    }
                )
            probe_at = (START + timedelta(days=1)).isoformat().replace("+00:00", "Z")
            probes = []
            for _, service, slot, old, new in changes[:2]:
                description = next(s["description"] for s in schema[service]["slots"] if s["name"] == slot)
                probes.append(
                    {
                        "kind": "update",
                        "query": description,
                        "at": probe_at,
                        "k": 5,
                        "expect_any": [new],
                        "expect_none": [old],
                        "class": f"sgd:{slot}",
                    }
                )
            uid = hashlib.sha256(dialogue["dialogue_id"].encode()).hexdigest()[:10]
            cases.append(
                {
                    "id": f"sgd-{split}-{dialogue['dialogue_id']}",
                    "lang": "en",
                    "class": "task_update",
                    "source": "SGD (CC BY-SA 4.0)",
                    "split": split,
                    "scope": {"tenant_id": "t-sgd", "user_id": f"u-{uid}"},
                    "turns": turns,
                    "probes": probes,
                }
            )
            if len(cases) >= limit:
                return cases
    return cases


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("directory", type=Path, help="a checkout of dstc8-schema-guided-dialogue")
    parser.add_argument("--split", default="dev", choices=("train", "dev"))  # never "test"
    parser.add_argument("--limit", type=int, default=80)
    args = parser.parse_args(argv)
    for case in convert(args.directory, args.split, limit=args.limit):
        sys.stdout.write(json.dumps(case, ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
