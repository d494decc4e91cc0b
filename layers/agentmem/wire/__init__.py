"""``agentmem.wire``: the wire contract of the HTTP API and the ingest queue, as a leaf.

The request and response models every route states (:mod:`.models`, :mod:`.conflicts`,
:mod:`.history`, :mod:`.operator`), their OpenAPI examples (:mod:`.examples`), the SQS turn
message (:mod:`.messages`) and the vocabulary they share with the domain (:mod:`.vocabulary`,
:mod:`.session_state`).

A leaf: its modules import the standard library, pydantic and each other (relative imports),
nothing else of agentmem (tests/unit/test_wire_leaf.py). So the same files are

* ``agentmem.wire`` here, read by the API, the domain (its vocabulary) and ``agentmem.messages``;
* ``agentmem_client.wire`` in the light client distribution (``clients/python``), which maps
  this directory into its wheel: one definition, no copied model file.

The API's OpenAPI plumbing (error tables, ``responses``) is :mod:`agentmem.api.openapi`; the
converters from service results are :mod:`agentmem.api.convert`.
"""
