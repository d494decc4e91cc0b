"""``agentmem calibrate``: the anchors a model needs, measured on the project's calibration pairs,
and for Titan the setting that stores them in the stack (on an account; here a fake Titan)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentmem.adapters.aws.bedrock import PLACEHOLDER_CALIBRATION, BedrockEmbedder
from agentmem.adapters.aws.errors import LazyClient
from agentmem.adapters.aws.wiring import build_aws
from agentmem.adapters.embedders import CALIBRATIONS, HashEmbedder
from agentmem.clock import SystemClock
from agentmem.domain.similarity import Calibration
from agentmem.errors import ConfigurationError
from agentmem.settings import load_settings
from agentmem_dev.calibrate import load_pairs, measure, report
from support.fakes.fake_bedrock import FakeTitan


def test_the_shipped_anchors_are_what_the_command_measures() -> None:
    calibration, documents, _ = measure(HashEmbedder(), load_pairs())
    shipped = CALIBRATIONS["hash/ngram-256"]
    assert calibration.unrelated == pytest.approx(shipped.unrelated, abs=1e-3)
    assert calibration.paraphrase == pytest.approx(shipped.paraphrase, abs=1e-3)
    assert documents.unrelated_median < documents.paraphrase_median


def test_titan_gets_the_setting_that_stores_its_anchors() -> None:
    titan = BedrockEmbedder(LazyClient(FakeTitan), dimension=256, workers=2)
    found = report(titan, load_pairs())
    (setting, deploy) = found["store"]
    assert (
        setting.startswith("AGENTMEM_BEDROCK_EMBED_CALIBRATION=") and "agentmem:embedCalibration=" in deploy
    )
    anchors = setting.split("=", 1)[1]
    assert Calibration.parse(titan.model_id, anchors).text() == anchors


def test_the_stack_setting_replaces_the_placeholders(tmp_path: Path) -> None:
    common = {
        "backend": "aws",
        "embedder": "bedrock",
        "bedrock_embed_dimension": 256,
        "search_backend": "local",
        "graph_backend": "local",
        "local_projection_dir": tmp_path,
        "queue_url": "https://sqs.us-east-1.amazonaws.com/123456789012/q",
        "aws_region": "us-east-1",
    }
    placeholder = build_aws(load_settings(**common), SystemClock()).embedder.calibration
    assert placeholder.unrelated == PLACEHOLDER_CALIBRATION["unrelated"]
    measured = build_aws(
        load_settings(**common, bedrock_embed_calibration="0.12,0.71,0.08,0.62"), SystemClock()
    ).embedder.calibration
    assert (measured.unrelated, measured.paraphrase, measured.query_unrelated, measured.query_paraphrase) == (
        0.12,
        0.71,
        0.08,
        0.62,
    )
    with pytest.raises(ConfigurationError, match="AGENTMEM_BEDROCK_EMBED_CALIBRATION"):
        build_aws(load_settings(**common, bedrock_embed_calibration="0.1,0.2"), SystemClock())
    with pytest.raises(ConfigurationError, match="AGENTMEM_BEDROCK_EMBED_CALIBRATION"):
        build_aws(load_settings(**common, bedrock_embed_calibration="0.9,0.1,0.0,0.5"), SystemClock())
