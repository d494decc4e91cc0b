"""Helpers of the AWS adapter tests (imported by name: ``conftest`` is ambiguous across
directories). They live in :mod:`support.aws`, shared with the contract suites."""

from __future__ import annotations

from support.aws import REGION, Moto, client, moto_tables

__all__ = ["REGION", "Moto", "client", "moto_tables"]
