"""cdk-nag (AwsSolutions pack) wiring and the one way this project acknowledges a finding.

cdk-nag 3.x runs as a CDK policy-validation plugin: ``Validations.of(app).add_plugins(...)``;
any unacknowledged finding makes ``app.synth()`` raise and writes the report into the cloud
assembly. An acknowledgement is scoped to a construct and its children and names one finding
(``AwsSolutions-IAM5[Resource::*]`` is distinct from ``AwsSolutions-IAM5[Action::s3:*]``).
Every acknowledgement in this package goes through :func:`acknowledge` with a written reason.
"""

from __future__ import annotations

from aws_cdk import Acknowledgment, App, Validations
from constructs import IConstruct


def acknowledge(scope: IConstruct, rule: str, reason: str) -> None:
    if len(reason.strip()) < 20:
        raise ValueError(f"acknowledging {rule} needs a real reason, not {reason!r}")
    Validations.of(scope).acknowledge(Acknowledgment(id=rule, reason=reason))


def add_nag(app: App) -> None:
    from cdk_nag import AwsSolutionsChecks

    Validations.of(app).add_plugins(AwsSolutionsChecks(app, verbose=True))
