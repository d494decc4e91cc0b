"""Schema-Guided Dialogue train split → labelled statement pairs for the reader's revision head
(``python -m agentmem_dev.reading.public.sgd_pairs DIR > ../data/public/sgd_pairs.tsv``).

A pair is two user turns of one dialogue, the earlier first, each informing at least one slot (by
SGD's own dialogue acts). ``same``: the later turn gives a slot the earlier one informed a *different*
value (a changed date, city, count or name; most with no change word). ``other``: the later turn
informs only slots the earlier did not (a return date after a departure date, a destination after
an origin, a time after a restaurant) — or repeats the earlier value. So the head learns "the same
slot, another value" from how people actually revise requests, not from change words.

Rows are ``label<TAB>earlier<TAB>later``; at most ``--per-label`` of each, picked by a hash (stable).
Source: google-research-datasets/dstc8-schema-guided-dialogue, train split, CC BY-SA 4.0 (the rows
keep that licence: ``data/public/NOTICE.md``)."""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path
from typing import Any

Informs = dict[tuple[str, str], str]


def _informs(turn: dict[str, Any]) -> Informs:
    folded = turn["utterance"].casefold()
    out: Informs = {}
    for frame in turn["frames"]:
        for act in frame.get("actions", []):
            informs = act["act"] == "INFORM" and act.get("values") and act["slot"] != "intent"
            if informs and act["values"][0].casefold() in folded:
                out[(frame["service"], act["slot"])] = act["canonical_values"][0]
    return out


def pairs(dialogue: dict[str, Any]) -> list[tuple[str, str, str]]:
    said = [
        (" ".join(t["utterance"].split()), _informs(t)) for t in dialogue["turns"] if t["speaker"] == "USER"
    ]
    said = [(text, informs) for text, informs in said if informs]
    out = []
    for j, (later, new) in enumerate(said):
        for earlier, old in said[:j]:
            shared = set(new) & set(old)
            if any(new[k] != old[k] for k in shared):
                out.append(("same", earlier, later))
            else:
                out.append(("other", earlier, later))
    return out


def collect(directory: Path, per_label: int) -> list[tuple[str, str, str]]:
    found: dict[str, list[tuple[str, str, str]]] = {"same": [], "other": []}
    for path in sorted((directory / "train").glob("dialogues_*.json")):
        for dialogue in json.loads(path.read_text()):
            for row in pairs(dialogue):
                found[row[0]].append(row)
    out = []
    for rows in found.values():
        rows.sort(key=lambda r: hashlib.sha256((r[1] + "\t" + r[2]).encode()).hexdigest())
        out.extend(rows[:per_label])
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("directory", type=Path, help="a checkout of dstc8-schema-guided-dialogue")
    parser.add_argument("--per-label", type=int, default=2000)
    args = parser.parse_args(argv)
    sys.stdout.write("# SGD train (CC BY-SA 4.0), derived pairs: see NOTICE.md\n")
    for row in collect(args.directory, args.per_label):
        sys.stdout.write("\t".join(row) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
