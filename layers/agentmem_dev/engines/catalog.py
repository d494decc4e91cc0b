"""What the real engines are: versions and the Maven coordinates they are assembled from.

Each :class:`Bundle` is one set of Maven artifacts copied into the engine cache (``.engines/``)
by :mod:`agentmem_dev.engines.maven`. Zips are copied as they are; a jar bundle is copied with
its runtime dependencies, then the jars OpenSearch already ships in ``lib/`` are dropped (two
copies of a class fail OpenSearch's jar-hell check).

* **OpenSearch 2.19.1** — the integration-test distribution
  (``org.opensearch.distribution.integ-test-zip:opensearch``) is OpenSearch with only the netty
  transport. Amazon OpenSearch Service domains also carry, and the adapter needs, three modules
  that Maven Central publishes only as jars: ``lang-painless`` (scripts: the ``similarities``
  query, and the k-NN plugin extends it), ``analysis-common`` (the ``cjk`` analyzer) and
  ``reindex`` (``_delete_by_query`` on erase). They are assembled into ``modules/`` with the
  descriptor each module's build would write (:data:`OPENSEARCH_MODULES`). The k-NN plugin
  (``org.opensearch.plugin:opensearch-knn``) is the zip the plugin installer takes; its Lucene
  engine needs no native library. 2.19.1 because it is the newest 2.19 for which Central serves
  the k-NN plugin (the plugin's version must match the engine's exactly).
* **Apache TinkerPop Gremlin Server 3.7.3** with TinkerGraph — the distribution zip (TinkerPop
  3.7 is the line Neptune's engine versions support).
* **DynamoDB** — DynamoDB Local is the vendor's binary under its own licence, which this project
  does not take; the DynamoDB (with Streams) and SQS engine is moto's standalone server, a separate
  process that boto3 reaches over HTTP exactly as it reaches AWS (``moto[server]``, from PyPI).
"""

from __future__ import annotations

from dataclasses import dataclass

OPENSEARCH_VERSION = "2.19.1"
KNN_VERSION = "2.19.1.0"
TINKERPOP_VERSION = "3.7.3"


@dataclass(frozen=True)
class Bundle:
    """Artifacts (``group:artifact:version[:type[:classifier]]``) copied into ``.engines/<name>``."""

    name: str
    artifacts: tuple[str, ...]
    transitive: bool = False


@dataclass(frozen=True)
class Module:
    """An OpenSearch module assembled from a jar bundle: what its ``plugin-descriptor`` says."""

    name: str
    classname: str
    description: str
    extended: str = ""
    policy: str = ""


BUNDLES: tuple[Bundle, ...] = (
    Bundle(
        "opensearch",
        (f"org.opensearch.distribution.integ-test-zip:opensearch:{OPENSEARCH_VERSION}:zip",),
    ),
    Bundle("opensearch-knn", (f"org.opensearch.plugin:opensearch-knn:{KNN_VERSION}:zip",)),
    Bundle("lang-painless", (f"org.opensearch.plugin:lang-painless:{OPENSEARCH_VERSION}",), transitive=True),
    Bundle(
        "analysis-common", (f"org.opensearch.plugin:analysis-common:{OPENSEARCH_VERSION}",), transitive=True
    ),
    Bundle("reindex", (f"org.opensearch.plugin:reindex-client:{OPENSEARCH_VERSION}",), transitive=True),
    Bundle(
        "gremlin-server",
        (f"org.apache.tinkerpop:gremlin-server:{TINKERPOP_VERSION}:zip:distribution",),
    ),
)

OPENSEARCH_MODULES: tuple[Module, ...] = (
    Module(
        "lang-painless",
        "org.opensearch.painless.PainlessPlugin",
        "An easy, safe and fast scripting language for OpenSearch",
        policy='permission java.lang.RuntimePermission "createClassLoader";\n'
        '  permission java.lang.RuntimePermission "getClassLoader";',
    ),
    Module(
        "analysis-common",
        "org.opensearch.analysis.common.CommonAnalysisPlugin",
        "Adds analysis components to OpenSearch",
        extended="lang-painless",
    ),
    Module(
        "reindex",
        "org.opensearch.index.reindex.ReindexPlugin",
        "The Reindex module adds APIs to reindex from one index to another or update documents in place.",
        # reindex-from-remote opens sockets; kept for parity with the module's own policy
        policy='permission java.net.SocketPermission "*", "connect";',
    ),
)
