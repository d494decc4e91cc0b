"""``agentmem.client.clients`` is ``agentmem_client.clients`` (the light client distribution): this module
replaces itself with it on import, so names and classes are the same objects."""

import importlib
import sys

sys.modules[__name__] = importlib.import_module("agentmem_client.clients")
