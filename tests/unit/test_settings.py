"""Settings refuse to start on anything wrong, a misspelled variable included, and the
composition root lets explicit arguments win over what the settings would build."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentmem.adapters.embedders import HashEmbedder
from agentmem.bootstrap import bootstrap
from agentmem.clock import ManualClock
from agentmem.errors import ConfigurationError
from agentmem.settings import TOOLING_VARIABLES, Settings, load_settings, unknown_variables


def test_a_misspelled_variable_refuses_to_start_and_names_the_closest_setting(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("AGENTMEM_WEIGHT_SEMANTC", "0.6")
    with pytest.raises(ConfigurationError) as caught:
        load_settings()
    assert "AGENTMEM_WEIGHT_SEMANTC is not an agentmem setting" in caught.value.message
    assert "did you mean AGENTMEM_WEIGHT_SEMANTIC?" in caught.value.message


def test_every_setting_and_tooling_variable_is_accepted() -> None:
    environ = {f"AGENTMEM_{name.upper()}": "x" for name in Settings.model_fields}
    environ.update(dict.fromkeys(TOOLING_VARIABLES, "x"))
    environ["PATH"] = "/bin"  # not ours: never looked at
    assert unknown_variables(environ) == []
    assert unknown_variables({"AGENTMEM_NOTHING_LIKE_IT_AT_ALL": "1"}) == [
        "AGENTMEM_NOTHING_LIKE_IT_AT_ALL is not an agentmem setting"
    ]


@pytest.mark.parametrize(
    "overrides",
    [
        {"weight_semantic": 0.9},  # weights no longer sum to 1
        {"dedup_threshold": 0.5},  # below the merge threshold
        {"backend": "cassandra"},  # no such backend in the registry
        {"embedder_threads": 0},
        {"no_such_setting": 1},
    ],
)
def test_wrong_values_refuse_to_start(overrides: dict[str, object]) -> None:
    with pytest.raises(ConfigurationError):
        load_settings(**overrides)


def test_explicit_arguments_win_over_the_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("AGENTMEM_QUEUE_CAPACITY", "7")
    assert load_settings().queue_capacity == 7
    assert load_settings(queue_capacity=9).queue_capacity == 9
    clock = ManualClock()
    embedder = HashEmbedder()
    container = bootstrap(load_settings(data_dir=tmp_path), clock=clock, embedder=embedder)
    assert container.clock is clock and container.embedder is embedder
    assert container.pipeline.embedder is embedder and container.recall.embedder is embedder
    again = bootstrap(container.settings, container.adapters, clock)
    assert again.store is container.store and again.pipeline is not container.pipeline
    with pytest.raises(ValueError):
        bootstrap(container.settings, container.adapters, clock, embedder=embedder)
