#!/usr/bin/env python3
"""CDK entry point: ``cdk synth -c env=dev|staging|prod`` (see README.md)."""

from aws_cdk import App

from agentmem_infra.app import build_app

app = App()
build_app(app)
app.synth()
