"""The client's version (the ``User-Agent`` it sends: ``agentmem-client/<version>``)."""

__version__ = "0.1.0"
