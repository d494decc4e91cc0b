"""AWS CDK (Python) infrastructure of agentmem: one stack per environment (dev | staging | prod).

``app.build_app(app)`` is the entry used by ``infra_cdk/app.py`` and by the synthesis tests.
"""

from __future__ import annotations

from pathlib import Path

INFRA_DIR = Path(__file__).resolve().parent.parent  # infra_cdk/
REPO_ROOT = INFRA_DIR.parent  # the repository: functions/, layers/, infra_cdk/
FUNCTIONS_DIR = REPO_ROOT / "functions"
LAYERS_DIR = REPO_ROOT / "layers"
