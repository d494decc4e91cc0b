"""HTTP API: Powertools resolver, pydantic schemas."""
