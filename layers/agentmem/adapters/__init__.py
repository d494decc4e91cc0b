"""Adapters: implementations of :mod:`agentmem.ports` (``aws`` for the cloud, ``local`` embedded).

:mod:`agentmem.adapters.codec` is the one serializer of records and turns that both share.
"""
