"""HTTP API: Powertools resolver, pydantic schemas.

Importing it defers the ``__init__`` of two Powertools packages whose other parts the API does
not use (:func:`agentmem.lazy.defer_package_init`: every other resolver, asyncio, ~30 event
classes), before :mod:`agentmem.api.app` imports the REST resolver from its own module."""

from agentmem.lazy import defer_package_init

for _package in ("aws_lambda_powertools.event_handler", "aws_lambda_powertools.utilities.data_classes"):
    defer_package_init(_package)
