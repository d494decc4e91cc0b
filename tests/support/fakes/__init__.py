"""Test doubles for the AWS backends moto does not serve: an in-process OpenSearch that speaks the
REST API subset the search adapter uses (:mod:`.fake_opensearch`), and a Gremlin server that
executes the bytecode the Neptune adapter sends (:mod:`.fake_gremlin`). Production code never
imports this package; the contract suites and the adapter tests do.
"""
