"""``agentmem serve --backend engines``: the local server over the AWS adapters and the engines.

The api λ, the ingest and projector λs and the schedule run in this process (``--workers 0``),
as with the embedded backend, but the container is :func:`~agentmem.adapters.aws.wiring.build_aws`
on the laptop stack (:mod:`agentmem_dev.engines.stack`): DynamoDB and SQS on moto's server,
OpenSearch, the Gremlin server, and the laptop's embedder unless ``AGENTMEM_EMBEDDER`` names
one (``auto`` would mean Bedrock there). The stack's names are fixed (``agentmem-...``), so the engines
``make engines`` started keep the data across server restarts; engines started for the server
(none were running) are stopped with it.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

from agentmem.adapters.embedders import build_embedder
from agentmem.bootstrap import bootstrap
from agentmem.settings import load_settings
from agentmem_dev.emulator.service import LocalService
from agentmem_dev.engines.runner import attached
from agentmem_dev.engines.sources import AwsEventSources
from agentmem_dev.engines.stack import aws_environment, clients, create_stack

PREFIX = "agentmem"


@contextmanager
def engines_service(host: str, port: int, data_dir: Path) -> Iterator[LocalService]:
    """A :class:`LocalService` (not started) on the engines; they stay up for the block."""
    with ExitStack() as stack:
        urls = stack.enter_context(attached())
        url = urls["AGENTMEM_DYNAMODB_URL"]
        stack.enter_context(aws_environment(url))
        boto = clients(url)
        laptop = create_stack(boto, PREFIX, urls)
        settings = load_settings(
            data_dir=data_dir, local_projection_dir=data_dir / "projections", **laptop.settings
        )
        # ``auto`` means Bedrock on the aws backend; on a laptop, the local default
        embedder = build_embedder("auto") if settings.embedder == "auto" else None
        container = bootstrap(settings, embedder=embedder)
        sources = AwsEventSources(
            container,
            sqs=boto["sqs"],
            streams=boto["dynamodbstreams"],
            queue_url=laptop.queue_url,
            stream_arn=laptop.stream_arn,
        )
        yield LocalService(settings, host, port, 0, container=container, runner=sources)
