"""``AgentMemStack``: the whole agentmem deployment of one environment."""

from __future__ import annotations

from typing import Any

from aws_cdk import CfnOutput, Stack, Tags
from aws_cdk import aws_kms as kms
from constructs import Construct

from agentmem_infra.api import Api
from agentmem_infra.compute import Functions
from agentmem_infra.config import EnvConfig
from agentmem_infra.data import Queues, Tables
from agentmem_infra.event_bus import EventBus
from agentmem_infra.graph import GraphCluster
from agentmem_infra.index_setup import IndexSetup
from agentmem_infra.monitoring import Alarms
from agentmem_infra.network import Network
from agentmem_infra.search import SearchDomain
from agentmem_infra.suppressions import acknowledge_findings


class AgentMemStack(Stack):
    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        config: EnvConfig,
        skip_bundling: bool = False,
        create_service_linked_role: bool = False,
        **kwargs: Any,
    ) -> None:
        super().__init__(scope, id, **kwargs)
        self.config = config
        Tags.of(self).add("project", "agentmem")
        Tags.of(self).add("environment", config.name)

        self.key: kms.Key | None = None
        if config.customer_managed_key:
            self.key = kms.Key(
                self,
                "DataKey",
                alias=f"alias/agentmem-{config.name}-data",
                description=f"agentmem {config.name}: DynamoDB, OpenSearch and Neptune at rest",
                enable_key_rotation=True,
                removal_policy=config.removal_policy,
            )
        self.network = Network(self, "Network", config=config)
        self.tables = Tables(self, "Tables", config=config, key=self.key)
        self.queues = Queues(self, "Queues", config=config)
        self.search = SearchDomain(
            self,
            "Search",
            config=config,
            network=self.network,
            key=self.key,
            create_service_linked_role=create_service_linked_role,
        )
        self.graph = GraphCluster(self, "Graph", config=config, network=self.network, key=self.key)
        self.compute = Functions(
            self,
            "Functions",
            config=config,
            network=self.network,
            tables=self.tables,
            queues=self.queues,
            search=self.search,
            graph=self.graph,
            key=self.key,
            skip_bundling=skip_bundling,
        )
        self.event_bus = EventBus(self, "Events", config=config, functions=self.compute.functions)
        self.index_setup = IndexSetup(
            self,
            "IndexSetup",
            config=config,
            network=self.network,
            search=self.search,
            layer=self.compute.layer,
        )
        self.search.finalize()
        self.index_setup.after(self.search.role_mapping)
        for fn in self.compute.functions.values():  # no event source starts before the index exists
            fn.node.add_dependency(self.index_setup.resource)
        self.api = Api(
            self, "Api", config=config, handler=self.compute.functions["api"], skip_bundling=skip_bundling
        )
        self.alarms = Alarms(
            self,
            "Alarms",
            config=config,
            queues=self.queues,
            tables=self.tables,
            search=self.search,
            graph=self.graph,
            event_sources=self.compute.event_sources,
            functions={**self.compute.functions, "authorizer": self.api.authorizer_function},
            rest_api=self.api.rest_api,
        )
        self._outputs()
        acknowledge_findings(self)

    def _outputs(self) -> None:
        outputs = {
            "ApiUrl": (self.api.rest_api.url, "REST API base URL (routes under v1/)"),
            "UserPoolId": (self.api.user_pool.user_pool_id, "Cognito user pool of the API's callers"),
            "UserPoolClientId": (self.api.client.user_pool_client_id, "app client callers sign in with"),
            "IngestQueueUrl": (self.queues.ingest.queue_url, "SendMessage finished turns here"),
            "IngestDlqUrl": (self.queues.ingest_dlq.queue_url, "dead-lettered turns"),
            "MemoryTableName": (self.tables.memory.table_name, "AGENTMEM_TABLE_MEMORY"),
            "SessionTableName": (self.tables.session.table_name, "AGENTMEM_TABLE_SESSION"),
            "AuditTableName": (self.tables.audit.table_name, "AGENTMEM_TABLE_AUDIT"),
            "OpenSearchEndpoint": (self.search.endpoint, "AGENTMEM_OPENSEARCH_ENDPOINT (in the VPC)"),
            "NeptuneEndpoint": (self.graph.endpoint, "AGENTMEM_NEPTUNE_ENDPOINT (in the VPC)"),
        }
        for name, (value, description) in outputs.items():
            CfnOutput(self, name, value=value, description=description)
