"""Synthetic-Persona-Chat validation split → ``other`` pairs for the revision pair head
(``python -m agentmem_dev.reading.public.spc_pairs DIR > ../data/public/spc_pairs.tsv``).

Open-domain chat, where two statements of one speaker in one conversation ("I love to bake
cookies and knit." / "I'm studying psychology.") are almost never a revision of each other. Task
dialogues alone taught the head that any two requests of a conversation may be one slot changed;
in chit-chat that reading retired a speaker's earlier facts. Each pair is two utterances of one
speaker, the earlier first, at least four words each; at most ``--limit`` pairs, picked by a hash.

Source: google-research-datasets/Synthetic-Persona-Chat, ``Synthetic-Persona-Chat_valid.csv``,
CC BY 4.0 (attribution in ``data/public/NOTICE.md``)."""

from __future__ import annotations

import argparse
import csv
import hashlib
import sys
from pathlib import Path


def pairs(conversation: str) -> list[tuple[str, str, str]]:
    said: dict[str, list[str]] = {}
    for line in conversation.splitlines():
        speaker, _, text = line.partition(":")
        text = " ".join(text.split())
        if speaker.strip() and len(text.split()) >= 4:
            said.setdefault(speaker.strip(), []).append(text)
    return [
        ("other", lines[i], lines[j]) for lines in said.values() for j in range(len(lines)) for i in range(j)
    ]


def collect(directory: Path, limit: int) -> list[tuple[str, str, str]]:
    rows = []
    with (directory / "data" / "Synthetic-Persona-Chat_valid.csv").open(encoding="utf-8") as f:
        for record in csv.DictReader(f):
            rows.extend(pairs(record["Best Generated Conversation"]))
    rows.sort(key=lambda r: hashlib.sha256((r[1] + "\t" + r[2]).encode()).hexdigest())
    return rows[:limit]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("directory", type=Path, help="a checkout of Synthetic-Persona-Chat")
    parser.add_argument("--limit", type=int, default=2000)
    args = parser.parse_args(argv)
    sys.stdout.write("# Synthetic-Persona-Chat valid (CC BY 4.0), derived pairs: see NOTICE.md\n")
    for row in collect(args.directory, args.limit):
        sys.stdout.write("\t".join(row) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
