"""Embedded adapters: every port over SQLite files (plus numpy for vectors), one file per store.

The memory store writes an outbox table in the same transaction as each change, which plays the
part DynamoDB Streams play in AWS; the search index and graph are separate files because they are
projections that can be dropped and rebuilt from the store.
"""
