"""The three engines as processes on 127.0.0.1: how each is laid out, started and asked if ready.

Each start assembles a fresh home under a run folder (a temporary directory): unzipping is a
second's work, every run begins with empty data, and the files can be made readable by the
unprivileged user OpenSearch needs. OpenSearch refuses to run as root, so under root it runs as
``nobody`` (``setpriv``); the others run as the caller.
"""

from __future__ import annotations

import os
import shutil
import socket
import sys
import urllib.request
import zipfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from agentmem_dev.engines.catalog import (
    KNN_VERSION,
    OPENSEARCH_MODULES,
    OPENSEARCH_VERSION,
    TINKERPOP_VERSION,
)
from agentmem_dev.engines.maven import bundle_dir

HOST = "127.0.0.1"


class EngineUnavailable(RuntimeError):
    """An engine cannot be started here (no Java, nothing fetched, a missing tool)."""


@dataclass(frozen=True)
class Launch:
    """How to start one engine: the command, where, with which environment, as whom."""

    argv: Sequence[str]
    cwd: Path
    env: Mapping[str, str] = field(default_factory=dict)
    log: Path | None = None


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


def port_free(port: int) -> bool:
    with socket.socket() as sock:
        try:
            sock.bind((HOST, port))
        except OSError:
            return False
    return True


def java_home() -> Path:
    """The Java the engines run on: ``JAVA_HOME`` or the ``java`` on PATH."""
    home = os.environ.get("JAVA_HOME")
    if home and (Path(home) / "bin" / "java").exists():
        return Path(home)
    java = shutil.which("java")
    if java is None:
        raise EngineUnavailable("no Java on PATH (the engines need Java 17)")
    return Path(os.path.realpath(java)).parent.parent


def _unzip(archive: Path, target: Path) -> Path:
    """Extracts ``archive`` into ``target``; returns its single top-level folder."""
    with zipfile.ZipFile(archive) as zipped:
        zipped.extractall(target)
        top = {Path(n).parts[0] for n in zipped.namelist()}
    (root,) = top
    home = target / root
    for path in home.rglob("*"):  # zipfile drops the execute bits
        if path.is_file() and (path.parent.name == "bin" or path.suffix == ".sh"):
            path.chmod(0o755)
    return home


def _one(folder: Path, pattern: str) -> Path:
    found = sorted(folder.glob(pattern))
    if not found:
        raise EngineUnavailable(f"{folder} has no {pattern}: run `agentmem engines fetch`")
    return found[0]


def _as_unprivileged(argv: list[str]) -> list[str]:
    if os.geteuid() != 0:
        return argv
    if shutil.which("setpriv") is None:
        raise EngineUnavailable("OpenSearch will not run as root and setpriv is missing")
    return ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", *argv]


def _give_to_nobody(root: Path) -> None:
    if os.geteuid() != 0:
        return
    import pwd

    nobody = pwd.getpwnam("nobody")
    for path in [root, *root.rglob("*")]:
        os.chown(path, nobody.pw_uid, nobody.pw_gid, follow_symlinks=False)
    for parent in root.parents:  # the run folder's ancestors must be traversable
        if parent == Path(parent.anchor):
            break
        mode = parent.stat().st_mode
        if not mode & 0o001:
            raise EngineUnavailable(f"{parent} is not traversable by the user OpenSearch runs as")


class OpenSearch:
    name = "opensearch"
    version = OPENSEARCH_VERSION
    env_var = "AGENTMEM_OPENSEARCH_URL"

    def __init__(self, port: int) -> None:
        self.port = port
        self.url = f"http://{HOST}:{port}"

    def prepare(self, cache: Path, run: Path) -> Launch:
        home = _unzip(_one(bundle_dir(cache, "opensearch"), "opensearch-*.zip"), run)
        for module in OPENSEARCH_MODULES:
            target = home / "modules" / module.name
            target.mkdir(parents=True)
            shipped = {p.name for p in (home / "lib").glob("*.jar")}
            for jar in bundle_dir(cache, module.name).glob("*.jar"):
                if jar.name not in shipped:
                    shutil.copy2(jar, target / jar.name)
            (target / "plugin-descriptor.properties").write_text(
                f"description={module.description}\nversion={OPENSEARCH_VERSION}\nname={module.name}\n"
                f"classname={module.classname}\njava.version=11\nopensearch.version={OPENSEARCH_VERSION}\n"
                f"extended.plugins={module.extended}\nhas.native.controller=false\n",
                encoding="utf-8",
            )
            if module.policy:
                (target / "plugin-security.policy").write_text(
                    f"grant {{\n  {module.policy}\n}};\n", encoding="utf-8"
                )
        knn = home / "plugins" / "opensearch-knn"
        knn.mkdir(parents=True)
        with zipfile.ZipFile(_one(bundle_dir(cache, "opensearch-knn"), "opensearch-knn-*.zip")) as zipped:
            zipped.extractall(knn)
        with (home / "config" / "opensearch.yml").open("a", encoding="utf-8") as config:
            config.write(
                f"\ncluster.name: agentmem-engines\nnode.name: agentmem\ndiscovery.type: single-node\n"
                f"network.host: {HOST}\nhttp.port: {self.port}\ntransport.port: {free_port()}\n"
                # a nearly full CI disk must not turn the test indices read-only
                "cluster.routing.allocation.disk.threshold_enabled: false\n"
                "action.destructive_requires_name: false\n"
            )
        _give_to_nobody(run)
        return Launch(
            argv=_as_unprivileged([str(home / "bin" / "opensearch")]),
            cwd=home,
            env={
                "OPENSEARCH_JAVA_HOME": str(java_home()),
                "OPENSEARCH_JAVA_OPTS": os.environ.get("AGENTMEM_OPENSEARCH_HEAP", "-Xms512m -Xmx512m"),
            },
        )

    def ready(self) -> bool:
        try:
            with urllib.request.urlopen(f"{self.url}/_cluster/health", timeout=2) as reply:
                body = reply.read().decode()
        except OSError:
            return False
        return '"status":"green"' in body or '"status":"yellow"' in body

    def describe(self) -> str:
        return f"OpenSearch {OPENSEARCH_VERSION} + k-NN {KNN_VERSION} (Lucene engine)"


GREMLIN_YAML = """host: {host}
port: {port}
evaluationTimeout: 30000
channelizer: org.apache.tinkerpop.gremlin.server.channel.WebSocketChannelizer
graphs: {{ graph: conf/agentmem-graph.properties }}
scriptEngines: {{
  gremlin-groovy: {{
    plugins: {{ org.apache.tinkerpop.gremlin.server.jsr223.GremlinServerGremlinPlugin: {{}},
               org.apache.tinkerpop.gremlin.tinkergraph.jsr223.TinkerGraphGremlinPlugin: {{}},
               org.apache.tinkerpop.gremlin.jsr223.ScriptFileGremlinPlugin: {{files: [scripts/empty-sample.groovy]}}}}}}}}
serializers:
  - {{ className: org.apache.tinkerpop.gremlin.util.ser.GraphBinaryMessageSerializerV1 }}
  - {{ className: org.apache.tinkerpop.gremlin.util.ser.GraphSONMessageSerializerV3 }}
processors:
  - {{ className: org.apache.tinkerpop.gremlin.server.op.traversal.TraversalOpProcessor }}
metrics: {{ jmxReporter: {{enabled: false}} }}
strictTransactionManagement: false
maxContentLength: 10485760
"""

# Like Neptune where TinkerGraph can be: ids are the strings the client gives, and the default
# property cardinality is Neptune's `set`, so a write that forgets `Cardinality.single` shows up
# as a second value instead of passing unseen. Plain TinkerGraph, not TinkerTransactionGraph
# (which would model Neptune's per-request rollback): in 3.7.3 a vertex dropped with its edges
# poisons its id for good ("Conflict: element modified in another transaction").
GREMLIN_GRAPH = """gremlin.graph=org.apache.tinkerpop.gremlin.tinkergraph.structure.TinkerGraph
gremlin.tinkergraph.vertexIdManager=ANY
gremlin.tinkergraph.edgeIdManager=ANY
gremlin.tinkergraph.vertexPropertyIdManager=ANY
gremlin.tinkergraph.defaultVertexPropertyCardinality=set
"""


class GremlinServer:
    name = "gremlin"
    version = TINKERPOP_VERSION
    env_var = "AGENTMEM_GREMLIN_URL"

    def __init__(self, port: int) -> None:
        self.port = port
        self.url = f"ws://{HOST}:{port}/gremlin"

    def prepare(self, cache: Path, run: Path) -> Launch:
        home = _unzip(_one(bundle_dir(cache, "gremlin-server"), "gremlin-server-*-distribution.zip"), run)
        (home / "conf" / "agentmem.yaml").write_text(
            GREMLIN_YAML.format(host=HOST, port=self.port), encoding="utf-8"
        )
        (home / "conf" / "agentmem-graph.properties").write_text(GREMLIN_GRAPH, encoding="utf-8")
        java = java_home()
        return Launch(
            argv=[str(home / "bin" / "gremlin-server.sh"), "conf/agentmem.yaml"],
            cwd=home,
            env={"JAVA_HOME": str(java), "JAVA_OPTIONS": "-Xms256m -Xmx512m"},
        )

    def ready(self) -> bool:
        try:
            with socket.create_connection((HOST, self.port), timeout=1):
                return True
        except OSError:
            return False

    def describe(self) -> str:
        return (
            f"Apache TinkerPop Gremlin Server {TINKERPOP_VERSION} (TinkerGraph, string ids, set cardinality)"
        )


class MotoServer:
    name = "dynamodb"
    version = ""
    env_var = "AGENTMEM_DYNAMODB_URL"

    def __init__(self, port: int) -> None:
        self.port = port
        self.url = f"http://{HOST}:{port}"
        from importlib.metadata import version

        self.version = version("moto")

    def prepare(self, cache: Path, run: Path) -> Launch:
        try:
            import flask  # noqa: F401  # moto's server needs moto[server]
        except ImportError as exc:
            raise EngineUnavailable("moto's server needs `pip install 'moto[server]'`") from exc
        return Launch(argv=[sys.executable, "-m", "moto.server", "-H", HOST, "-p", str(self.port)], cwd=run)

    def ready(self) -> bool:
        try:
            with urllib.request.urlopen(f"{self.url}/moto-api/", timeout=2):
                return True
        except OSError:
            return False

    def describe(self) -> str:
        return f"moto {self.version} server (DynamoDB, DynamoDB Streams, SQS)"


Engine = OpenSearch | GremlinServer | MotoServer
KINDS: dict[str, type[OpenSearch] | type[GremlinServer] | type[MotoServer]] = {
    "opensearch": OpenSearch,
    "gremlin": GremlinServer,
    "dynamodb": MotoServer,
}
DEFAULT_PORTS = {"opensearch": 9200, "gremlin": 8182, "dynamodb": 4566}
