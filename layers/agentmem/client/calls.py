"""``agentmem.client.calls`` is ``agentmem_client.calls`` (the light client distribution): this module
replaces itself with it on import, so names and classes are the same objects."""

import importlib
import sys

sys.modules[__name__] = importlib.import_module("agentmem_client.calls")
