"""HTTP API: Powertools resolver, pydantic schemas. Importing it has no side effect: what the
api λ's cold start leaves unimported is arranged by its handler (:mod:`agentmem.coldstart`)."""
