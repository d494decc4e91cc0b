"""Real engines on loopback for the AWS adapters: OpenSearch with k-NN, a Gremlin server and a
DynamoDB/SQS server, fetched with Maven into a git-ignored cache (``.engines/``) and started by the
project (``make engines``, ``agentmem engines up|down|status``, and the test plugin in
``tests/conftest.py``). What each engine is and why: :mod:`agentmem_dev.engines.catalog`.
"""
