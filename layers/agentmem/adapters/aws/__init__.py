"""AWS adapters behind the same ports as the embedded ones (table design in docs/aws.md).

* :mod:`.dynamodb_store` — :class:`~agentmem.ports.MemoryStore` on DynamoDB (Streams = the outbox),
  and :mod:`.dynamodb_bookkeeping` its :class:`~agentmem.ports.ScopeLedger` over the same table;
* :mod:`.dynamodb_turn_log`, :mod:`.dynamodb_runtime_state` — the L0 turn log and the runtime
  state (sessions table); :mod:`.dynamodb_audit` — the audit trail;
* :mod:`.sqs_queue` — :class:`~agentmem.ports.TurnQueue` on SQS;
* :mod:`.opensearch_index` — :class:`~agentmem.ports.SearchIndex` on OpenSearch (k-NN + BM25);
* :mod:`.neptune_graph` — :class:`~agentmem.ports.GraphStore` on Neptune (Gremlin, IAM SigV4);
* :mod:`.bedrock` — Titan embeddings and the Converse-based LLM helpers;
* :mod:`.wiring` — ``build_aws(settings)``, the composition root of the AWS backend;
* :mod:`.smoke` — the in-process moto smoke run behind ``agentmem smoke --moto``.

Nothing here opens a connection at import time; every client is built on first use.
:mod:`.testing` holds the fake OpenSearch and Gremlin backends the offline tests drive.
"""
