"""What only the embedded search index does: a second instance on the same file sees writes
through the generation counter, and many rewrites compact the cache. The port's behaviour is in
``contracts/test_contract_search_index.py``."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np

from agentmem.adapters.embedded.search_index import LocalSearchIndex
from agentmem.domain.models import Category, MemoryRecord, Scope
from agentmem.ports import Hit

S1 = Scope("t1", "u1")
T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
MODEL = "hash-test"
DIM = 8


def unit(*components: float) -> tuple[float, ...]:
    vec = np.zeros(DIM, dtype=np.float32)
    vec[: len(components)] = components
    vec /= np.linalg.norm(vec)
    return tuple(float(x) for x in vec)


def rec(memory_id: str, content: str, vec: tuple[float, ...] | None = None, **changes: Any) -> MemoryRecord:
    record = MemoryRecord(
        scope=S1,
        memory_id=memory_id,
        content=content,
        category=Category.FACT,
        embedding=vec if vec is not None else unit(1.0),
        embedding_model=MODEL,
        created_at=T0,
    )
    return replace(record, **changes, content_hash="") if changes else record


def bump(record: MemoryRecord, **changes: Any) -> MemoryRecord:
    return record.evolve(now=T0 + timedelta(hours=record.version), **changes)


def ids(hits: list[Hit]) -> list[str]:
    return [h.memory_id for h in hits]


def test_a_second_instance_sees_writes_through_the_generation_counter(tmp_path: Path) -> None:
    path = tmp_path / "search.sqlite3"
    writer, reader = LocalSearchIndex(path), LocalSearchIndex(path)
    writer.upsert(rec("m1", "alpha", vec=unit(1.0)))
    assert ids(reader.keyword(S1, "alpha", 5)) == ["m1"]  # cache loaded
    writer.upsert(rec("m2", "alpha beta", vec=unit(1.0, 1.0)))
    assert ids(reader.keyword(S1, "beta", 5)) == ["m2"]
    assert ids(reader.knn(S1, np.asarray(unit(1.0)), 5, MODEL)) == ["m1", "m2"]
    writer.delete(S1, "m1", 1)
    assert ids(reader.keyword(S1, "alpha", 5)) == ["m2"]
    reader.upsert(rec("m3", "gamma"))
    assert ids(writer.keyword(S1, "gamma", 5)) == ["m3"]
    writer.erase_scope(S1)
    assert reader.keyword(S1, "gamma", 5) == []


def test_many_rewrites_compact_the_cache(tmp_path: Path) -> None:
    index = LocalSearchIndex(":memory:")
    record = rec("m1", "word0")
    index.upsert(record)
    assert ids(index.keyword(S1, "word0", 5)) == ["m1"]
    for i in range(1, 1100):
        record = bump(record, content=f"word{i}")
        index.upsert(record)
    assert ids(index.keyword(S1, "word1099", 5)) == ["m1"]
    assert index.keyword(S1, "word5", 5) == []


def test_first_query_limits_the_blas_pools_to_the_configured_threads(tmp_path: Path) -> None:
    """One k-NN query is one matrix-vector product: spread over every core, its idle threads
    spin and take the caller's core when the machine is busy, so the index keeps BLAS to
    ``blas_threads`` (1 by default) from its first query on."""
    import threadpoolctl

    blas = [p for p in threadpoolctl.threadpool_info() if p["user_api"] == "blas"]
    if not blas:
        return  # numpy without a BLAS library: nothing to limit
    before = {p["filepath"]: p["num_threads"] for p in blas}
    with threadpoolctl.threadpool_limits(limits=2, user_api="blas"):
        index = LocalSearchIndex(tmp_path / "a.db")
        index.upsert(rec("m1", "the lighthouse review 灯塔评审"))
        index.knn(S1, np.asarray(unit(1.0)), 5, MODEL)
        after = [p["num_threads"] for p in threadpoolctl.threadpool_info() if p["user_api"] == "blas"]
        assert after == [1] * len(after)
    restored = {
        p["filepath"]: p["num_threads"] for p in threadpoolctl.threadpool_info() if p["user_api"] == "blas"
    }
    assert restored == before


def test_blas_threads_none_leaves_the_pools_alone(tmp_path: Path) -> None:
    import threadpoolctl

    if not [p for p in threadpoolctl.threadpool_info() if p["user_api"] == "blas"]:
        return
    with threadpoolctl.threadpool_limits(limits=2, user_api="blas"):
        index = LocalSearchIndex(tmp_path / "b.db", blas_threads=None)
        index.upsert(rec("m1", "budget 预算"))
        index.knn(S1, np.asarray(unit(1.0)), 5, MODEL)
        threads = [p["num_threads"] for p in threadpoolctl.threadpool_info() if p["user_api"] == "blas"]
        assert threads == [2] * len(threads)


def test_another_writers_changes_are_taken_into_the_loaded_cache(tmp_path: Path) -> None:
    """A reader that loaded a scope takes what another process wrote since (the rows stamped
    with later generations) into its cache instead of loading the scope again."""
    path = tmp_path / "search.sqlite3"
    writer, reader = LocalSearchIndex(path), LocalSearchIndex(path)
    writer.upsert(rec("m1", "alpha", vec=unit(1.0)))
    writer.upsert(rec("m2", "alpha beta", vec=unit(0.0, 1.0)))
    assert sorted(ids(reader.keyword(S1, "alpha", 5))) == ["m1", "m2"]
    assert ids(reader.knn(S1, np.asarray(unit(1.0)), 1, MODEL)) == ["m1"]
    loaded = reader._caches[S1.key]
    text, vectors = loaded.text, loaded.vectors
    writer.upsert(rec("m3", "gamma alpha", vec=unit(1.0, 0.1)))
    writer.delete(S1, "m1", 1)
    writer.upsert(bump(rec("m2", "alpha beta", vec=unit(0.0, 1.0)), content="delta", embedding=unit(1.0)))
    assert ids(reader.keyword(S1, "alpha", 5)) == ["m3"]
    assert ids(reader.keyword(S1, "delta", 5)) == ["m2"]
    assert ids(reader.knn(S1, np.asarray(unit(1.0)), 3, MODEL)) == ["m2", "m3"]
    cache = reader._caches[S1.key]
    assert cache is loaded and cache.text is text and cache.vectors is vectors  # nothing reloaded


def test_an_erase_or_too_many_changes_reload_the_scope(tmp_path: Path, monkeypatch: Any) -> None:
    from agentmem.adapters.embedded import search_index

    path = tmp_path / "search.sqlite3"
    writer, reader = LocalSearchIndex(path), LocalSearchIndex(path)
    writer.upsert(rec("m1", "alpha"))
    assert ids(reader.keyword(S1, "alpha", 5)) == ["m1"]
    writer.erase_scope(S1)  # deleted rows leave no stamp: the reset generation says so
    writer.upsert(rec("m2", "beta"))
    assert reader.keyword(S1, "alpha", 5) == []
    assert ids(reader.keyword(S1, "beta", 5)) == ["m2"]
    monkeypatch.setattr(search_index, "CATCH_UP_LIMIT", 2)
    before = reader._caches[S1.key]
    for i in range(3):
        writer.upsert(rec(f"n{i}", "beta"))
    assert sorted(ids(reader.keyword(S1, "beta", 5))) == ["m2", "n0", "n1", "n2"]
    assert reader._caches[S1.key] is not before


def test_a_file_without_generation_stamps_is_upgraded(tmp_path: Path) -> None:
    import sqlite3

    path = tmp_path / "old.sqlite3"
    old = sqlite3.connect(path)
    old.executescript(
        """
        CREATE TABLE docs (pk TEXT NOT NULL, memory_id TEXT NOT NULL, version INTEGER NOT NULL,
            content_hash TEXT NOT NULL, model TEXT, vector BLOB, doc_len INTEGER NOT NULL,
            PRIMARY KEY (pk, memory_id)) WITHOUT ROWID;
        CREATE TABLE postings (pk TEXT NOT NULL, term TEXT NOT NULL, memory_id TEXT NOT NULL,
            tf INTEGER NOT NULL, PRIMARY KEY (pk, term, memory_id)) WITHOUT ROWID;
        CREATE TABLE tombstones (pk TEXT NOT NULL, memory_id TEXT NOT NULL, version INTEGER NOT NULL,
            PRIMARY KEY (pk, memory_id)) WITHOUT ROWID;
        CREATE TABLE generations (pk TEXT PRIMARY KEY, gen INTEGER NOT NULL);
        """
    )
    vector = np.asarray(unit(1.0), dtype="<f4").tobytes()
    old.execute("INSERT INTO docs VALUES (?, 'm1', 1, 'h', ?, ?, 1)", (S1.key, MODEL, vector))
    old.execute("INSERT INTO postings VALUES (?, 'alpha', 'm1', 1)", (S1.key,))
    old.execute("INSERT INTO generations VALUES (?, 4)", (S1.key,))
    old.commit()
    old.close()
    index, other = LocalSearchIndex(path), LocalSearchIndex(path)
    assert ids(index.keyword(S1, "alpha", 5)) == ["m1"]
    assert ids(index.knn(S1, np.asarray(unit(1.0)), 5, MODEL)) == ["m1"]
    other.upsert(rec("m2", "alpha", vec=unit(1.0)))
    assert sorted(ids(index.keyword(S1, "alpha", 5))) == ["m1", "m2"]
    assert sorted(ids(other.knn(S1, np.asarray(unit(1.0)), 5, MODEL))) == ["m1", "m2"]
    assert index.listing(S1, "fact", 10) is None  # m1 has no card: the caller lists the store


def test_a_file_with_vectors_in_its_documents_is_upgraded_to_doc_vectors(tmp_path: Path) -> None:
    """The layout before ``doc_vectors`` (the vector in each ``docs`` row, readings and cards
    beside it): the vectors move out in place; k-NN, BM25, cards and readings answer as before,
    and later writes and deletes keep both tables in step."""
    import sqlite3

    path = tmp_path / "cards.sqlite3"
    index = LocalSearchIndex(path)
    index.upsert(rec("m0", "alpha one", vec=unit(1.0)))
    index.upsert(rec("m1", "beta two", vec=unit(0.0, 1.0)))
    index.upsert(rec("m2", "gamma", embedding=None))  # no vector: no doc_vectors row
    before = {
        "knn": ids(index.knn(S1, np.asarray(unit(1.0, 0.2)), 5, MODEL)),
        "bm25": ids(index.keyword(S1, "beta", 5)),
        "cards": index.cards(S1, ["m0", "m1", "m2"]),
        "readings": index.readings(S1, ["m0", "m1", "m2"]),
    }
    index.close()
    conn = sqlite3.connect(path)  # rewrite it in the old layout
    conn.executescript(
        """
        CREATE TABLE old_docs (pk TEXT NOT NULL, memory_id TEXT NOT NULL, version INTEGER NOT NULL,
            content_hash TEXT NOT NULL, model TEXT, vector BLOB, doc_len INTEGER NOT NULL,
            gen INTEGER NOT NULL DEFAULT 0, reading TEXT, card TEXT, PRIMARY KEY (pk, memory_id)) WITHOUT ROWID;
        INSERT INTO old_docs SELECT d.pk, d.memory_id, d.version, d.content_hash, v.model, v.vector,
            d.doc_len, d.gen, d.reading, d.card FROM docs AS d
            LEFT JOIN doc_vectors AS v ON v.pk = d.pk AND v.memory_id = d.memory_id;
        DROP TABLE docs; DROP TABLE doc_vectors; ALTER TABLE old_docs RENAME TO docs;
        CREATE INDEX docs_by_gen ON docs (pk, gen);
        """
    )
    conn.commit()
    conn.close()

    upgraded = LocalSearchIndex(path)
    assert ids(upgraded.knn(S1, np.asarray(unit(1.0, 0.2)), 5, MODEL)) == before["knn"] == ["m0", "m1"]
    assert ids(upgraded.keyword(S1, "beta", 5)) == before["bm25"] == ["m1"]
    assert upgraded.cards(S1, ["m0", "m1", "m2"]) == before["cards"]
    assert upgraded.readings(S1, ["m0", "m1", "m2"]) == before["readings"]
    cards = before["cards"]
    assert upgraded.listing(S1, "fact", 10) == [
        cards["m2"],
        cards["m1"],
        cards["m0"],
    ]  # category from the card
    check = sqlite3.connect(path)
    assert "vector" not in {r[1] for r in check.execute("PRAGMA table_info(docs)")}
    assert check.execute("SELECT memory_id FROM doc_vectors ORDER BY memory_id").fetchall() == [
        ("m0",),
        ("m1",),
    ]
    assert check.execute("SELECT name FROM sqlite_master WHERE name = 'docs_by_gen'").fetchone() is not None

    upgraded.upsert(rec("m0", "alpha one", embedding=None, version=2))  # its vector gone
    upgraded.delete(S1, "m1", 2)
    assert check.execute("SELECT COUNT(*) FROM doc_vectors").fetchone()[0] == 0
    assert ids(upgraded.knn(S1, np.asarray(unit(1.0)), 5, MODEL)) == []
    assert ids(LocalSearchIndex(path).knn(S1, np.asarray(unit(1.0)), 5, MODEL)) == []  # a fresh load agrees


def test_a_kept_listing_takes_another_writers_changes(tmp_path: Path) -> None:
    """The ids of a listing are kept per scope until a document of it changes, in this instance
    or through another writer (the workers of ``agentmem serve``)."""
    one, two = LocalSearchIndex(tmp_path / "i.sqlite3"), LocalSearchIndex(tmp_path / "i.sqlite3")
    try:
        first = rec("m1", "I like tea.", category=Category.PREFERENCE)
        one.upsert(first)
        assert [c.memory_id for c in two.listing(S1, "preference", 10) or []] == ["m1"]  # kept by two
        one.upsert(rec("m2", "I like coffee.", category=Category.PREFERENCE))
        one.upsert(bump(first, content="I like green tea."))
        listed = two.listing(S1, "preference", 10) or []
        assert [(c.memory_id, c.content) for c in listed] == [
            ("m2", "I like coffee."),
            ("m1", "I like green tea."),
        ]
        one.delete(S1, "m2", 5)
        assert [c.memory_id for c in two.listing(S1, "preference", 10) or []] == ["m1"]
        two.upsert(rec("m3", "I like cocoa.", category=Category.PREFERENCE))
        assert [c.memory_id for c in two.listing(S1, "preference", 10) or []] == ["m3", "m1"]
    finally:
        one.close()
        two.close()


def test_a_file_with_postings_is_upgraded_to_doc_terms(tmp_path: Path) -> None:
    """The layout before ``doc_terms`` (one ``postings`` row per term and document): the rows are
    gathered per document in place; BM25 answers as before, in both languages, and a second
    instance takes the new writes' terms."""
    import sqlite3

    path = tmp_path / "terms.sqlite3"
    index = LocalSearchIndex(path)
    texts = {"m0": "green tea every morning", "m1": "我每天早上喝绿茶", "m2": "tea tea tea and 绿茶"}
    for memory_id, text in texts.items():
        index.upsert(rec(memory_id, text))
    queries = ["tea", "绿茶", "morning 早上"]
    before = {q: index.keyword(S1, q, 5) for q in queries}
    index.close()
    conn = sqlite3.connect(path)  # rewrite it in the old layout
    conn.executescript(
        """
        CREATE TABLE postings (pk TEXT NOT NULL, term TEXT NOT NULL, memory_id TEXT NOT NULL,
            tf INTEGER NOT NULL, PRIMARY KEY (pk, term, memory_id)) WITHOUT ROWID;
        CREATE INDEX postings_by_doc ON postings (pk, memory_id);
        INSERT INTO postings SELECT t.pk, j.key, t.memory_id, j.value FROM doc_terms AS t, json_each(t.terms) AS j;
        DROP TABLE doc_terms;
        """
    )
    conn.commit()
    conn.close()

    upgraded, other = LocalSearchIndex(path), LocalSearchIndex(path)
    assert {q: upgraded.keyword(S1, q, 5) for q in queries} == before
    assert all(before[q] for q in queries)
    check = sqlite3.connect(path)
    assert check.execute("SELECT name FROM sqlite_master WHERE name = 'postings'").fetchone() is None
    assert check.execute("SELECT COUNT(*) FROM doc_terms").fetchone()[0] == 3
    assert check.execute("PRAGMA user_version").fetchone()[0] == 1  # stamped once upgraded
    other.upsert(rec("m3", "jasmine tea 茉莉花茶"))
    assert "m3" in ids(upgraded.keyword(S1, "jasmine", 5))  # taken through the generation stamps
    upgraded.delete(S1, "m0", 2)
    assert "m0" not in ids(other.keyword(S1, "morning", 5))
    assert check.execute("SELECT COUNT(*) FROM doc_terms").fetchone()[0] == 3
