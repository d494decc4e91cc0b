"""The HTTP routes, one Powertools ``Router`` per resource; :mod:`agentmem.api.app` includes them.
Each route parses (the request model), calls one service, and maps the result to a response model."""
