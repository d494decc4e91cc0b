"""``python -m agentmem_dev.eval.guards fold ...`` (``make eval``); the eval itself is
``agentmem eval guards``."""

import sys

from agentmem_dev.eval.guards.report import fold

if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "fold":
        sys.exit(fold(sys.argv[2:]))
    print(
        "usage: python -m agentmem_dev.eval.guards fold --guards FILE --json-out FILE --md-out FILE",
        file=sys.stderr,
    )
    sys.exit(2)
