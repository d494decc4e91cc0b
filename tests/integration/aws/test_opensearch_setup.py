"""Deploy-time OpenSearch setup (``opensearch_setup`` + ``infra_cdk/lambdas/index_setup``): template and index
once per deploy, replicas per environment, idempotent reruns, transient errors retried, a
dimension change refused. A recording stub stands in for ``client.indices`` (it raises the real
opensearch-py exceptions); the last test runs against a real cluster when
``AGENTMEM_OPENSEARCH_URL`` is set."""

from __future__ import annotations

import copy
import importlib.util
import logging
import uuid
from pathlib import Path
from typing import Any

import pytest
from opensearchpy.exceptions import AuthorizationException, ConnectionError, RequestError, TransportError

from agentmem.adapters.aws import opensearch_dsl as dsl
from agentmem.adapters.aws import opensearch_setup as setup
from agentmem.errors import ConfigurationError, StoreUnavailable
from support.fakes import live

REPO = Path(__file__).resolve().parents[3]
INDEX = "agentmem-memories"
SPEC = setup.IndexSpec(index=INDEX, dimension=4, replicas=0)


class StubIndices:
    """``client.indices``: remembers templates and indices, fails the next calls on demand."""

    def __init__(self) -> None:
        self.templates: dict[str, dict[str, Any]] = {}
        self.indices: dict[str, dict[str, Any]] = {}
        self.calls: list[str] = []
        self.faults: list[Exception] = []

    def _call(self, name: str) -> None:
        self.calls.append(name)
        if self.faults:
            raise self.faults.pop(0)

    def put_index_template(self, *, name: str, body: dict[str, Any]) -> dict[str, Any]:
        self._call("put_index_template")
        self.templates[name] = copy.deepcopy(body)
        return {"acknowledged": True}

    def exists(self, *, index: str) -> bool:
        self._call("exists")
        return index in self.indices

    def create(self, *, index: str, body: dict[str, Any]) -> dict[str, Any]:
        self._call("create")
        if index in self.indices:
            raise RequestError(400, "resource_already_exists_exception", {})
        self.indices[index] = copy.deepcopy(body)
        return {"acknowledged": True, "index": index}

    def get_mapping(self, *, index: str) -> dict[str, Any]:
        self._call("get_mapping")
        return {index: {"mappings": self.indices[index]["mappings"]}}

    def put_mapping(self, *, index: str, body: dict[str, Any]) -> dict[str, Any]:
        self._call("put_mapping")
        self.indices[index]["mappings"]["properties"].update(copy.deepcopy(body["properties"]))
        return {"acknowledged": True}

    def get_settings(self, *, index: str) -> dict[str, Any]:
        self._call("get_settings")
        replicas = self.indices[index]["settings"]["index"]["number_of_replicas"]
        return {index: {"settings": {"index": {"number_of_replicas": str(replicas)}}}}

    def put_settings(self, *, index: str, body: dict[str, Any]) -> dict[str, Any]:
        self._call("put_settings")
        self.indices[index]["settings"]["index"].update(body["index"])
        return {"acknowledged": True}


class StubClient:
    def __init__(self) -> None:
        self.indices = StubIndices()


def no_sleep(_: float) -> None:
    return None


def test_template_and_index_carry_the_requested_replicas() -> None:
    for replicas in (0, 2):
        spec = setup.IndexSpec(index=INDEX, dimension=4, replicas=replicas)
        template = setup.index_template(spec)
        assert template["template"]["settings"]["index"]["number_of_replicas"] == replicas
        assert setup.index_body(spec)["settings"]["index"]["number_of_replicas"] == replicas
        # everything else is the adapter's own template
        assert template["template"]["mappings"] == dsl.index_mappings(4)
        assert template["index_patterns"] == [INDEX, f"{INDEX}-*"]
    assert dsl.index_settings()["index"]["number_of_replicas"] == 1  # the dsl itself is untouched


def test_template_hash_changes_with_what_is_put_and_only_with_it() -> None:
    base = setup.template_hash(SPEC)
    assert setup.template_hash(setup.IndexSpec(INDEX, 4, 0)) == base
    assert setup.template_hash(setup.IndexSpec(INDEX, 4, 1)) != base
    assert setup.template_hash(setup.IndexSpec(INDEX, 8, 0)) != base
    assert setup.template_hash(setup.IndexSpec("other", 4, 0)) != base


def test_first_deploy_puts_the_template_and_creates_the_index(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)  # the log records themselves must be valid (no reserved keys)
    client = StubClient()
    result = setup.apply(client, SPEC, sleep=no_sleep)
    assert any(r.message == "opensearch index ready" for r in caplog.records)
    assert result.created and not result.replicas_changed
    assert client.indices.templates[INDEX] == setup.index_template(SPEC)
    assert client.indices.indices[INDEX] == setup.index_body(SPEC)


def test_a_rerun_changes_nothing() -> None:
    client = StubClient()
    setup.apply(client, SPEC, sleep=no_sleep)
    client.indices.calls.clear()
    again = setup.apply(client, SPEC, sleep=no_sleep)
    assert not again.created and not again.replicas_changed
    assert "create" not in client.indices.calls and "put_settings" not in client.indices.calls


def test_an_update_aligns_the_replicas_of_the_live_index() -> None:
    client = StubClient()
    setup.apply(client, setup.IndexSpec(INDEX, 4, 1), sleep=no_sleep)  # made with the old default
    result = setup.apply(client, SPEC, sleep=no_sleep)
    assert result.replicas_changed
    assert client.indices.indices[INDEX]["settings"]["index"]["number_of_replicas"] == 0
    assert client.indices.templates[INDEX]["template"]["settings"]["index"]["number_of_replicas"] == 0


def test_an_index_made_before_a_field_was_added_gets_it_once() -> None:
    client = StubClient()
    setup.apply(client, SPEC, sleep=no_sleep)
    for name in dsl.ADDED_FIELDS:  # as an older release made it
        del client.indices.indices[INDEX]["mappings"]["properties"][name]
    client.indices.calls.clear()
    setup.apply(client, SPEC, sleep=no_sleep)
    assert client.indices.calls.count("put_mapping") == 1
    properties = client.indices.indices[INDEX]["mappings"]["properties"]
    assert all(properties[name] == spec for name, spec in dsl.ADDED_FIELDS.items())
    client.indices.calls.clear()
    setup.apply(client, SPEC, sleep=no_sleep)
    assert "put_mapping" not in client.indices.calls


def test_a_dimension_change_fails_the_deploy_with_the_way_out() -> None:
    client = StubClient()
    setup.apply(client, SPEC, sleep=no_sleep)
    with pytest.raises(ConfigurationError, match="new AGENTMEM_OPENSEARCH_INDEX"):
        setup.apply(client, setup.IndexSpec(INDEX, 8, 0), sleep=no_sleep)


def test_a_concurrent_create_is_not_an_error() -> None:
    client = StubClient()
    client.indices.exists = lambda *, index: False  # type: ignore[method-assign]
    client.indices.indices[INDEX] = setup.index_body(SPEC)  # a cold start got there between the calls
    result = setup.apply(client, SPEC, sleep=no_sleep)
    assert not result.created and "create" in client.indices.calls


def test_transient_answers_are_retried_with_bounded_backoff() -> None:
    client = StubClient()
    client.indices.faults = [
        AuthorizationException(403, "security_exception", {}),  # FGAC mapping not there yet
        TransportError(429, "es_rejected_execution_exception", {}),
        ConnectionError("N/A", "timed out", Exception("timeout")),
    ]
    delays: list[float] = []
    result = setup.apply(client, SPEC, sleep=delays.append)
    assert result.created and len(delays) == 3
    assert all(0 <= d <= setup.MAX_DELAY_S for d in delays)


def test_a_persistent_or_client_error_is_store_unavailable() -> None:
    client = StubClient()
    client.indices.faults = [TransportError(503, "unavailable", {})] * setup.ATTEMPTS
    with pytest.raises(StoreUnavailable):
        setup.apply(client, SPEC, sleep=no_sleep)
    client = StubClient()
    client.indices.faults = [RequestError(400, "mapper_parsing_exception", {})]
    with pytest.raises(StoreUnavailable) as caught:
        setup.apply(client, SPEC, sleep=no_sleep)
    assert client.indices.calls == ["put_index_template"]  # a 400 is never retried
    assert caught.value.details["status"] == "400"


def test_properties_come_as_strings_from_cloudformation() -> None:
    spec = setup.spec_from_properties(
        {"Index": INDEX, "Dimension": "1024", "Replicas": "0", "ServiceToken": "x"}
    )
    assert spec == setup.IndexSpec(INDEX, 1024, 0)
    with pytest.raises(ConfigurationError):
        setup.spec_from_properties({"Index": INDEX, "Dimension": "many", "Replicas": "0"})
    with pytest.raises(ConfigurationError):
        setup.spec_from_properties({"Index": "Upper", "Dimension": "4", "Replicas": "0"})


# ----------------------------------------------------------------------------- the handler


@pytest.fixture
def handler_module() -> Any:
    spec = importlib.util.spec_from_file_location(
        "agentmem_setup_handler", REPO / "infra_cdk/lambdas/index_setup/handler.py"
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def event(request_type: str, **properties: str) -> dict[str, Any]:
    return {
        "RequestType": request_type,
        "PhysicalResourceId": INDEX,
        "ResourceProperties": {
            "ServiceToken": "arn",
            "Index": INDEX,
            "Dimension": "4",
            "Replicas": "0",
            **properties,
        },
    }


def test_handler_create_and_update_apply_the_properties(handler_module: Any) -> None:
    client = StubClient()
    created = handler_module.handle(event("Create"), client, sleep=no_sleep)
    assert created["PhysicalResourceId"] == INDEX
    assert created["Data"] == {"Index": INDEX, "Created": "true", "TemplateHash": setup.template_hash(SPEC)}
    updated = handler_module.handle(event("Update", Replicas="1"), client, sleep=no_sleep)
    assert updated["Data"]["Created"] == "false"
    assert client.indices.indices[INDEX]["settings"]["index"]["number_of_replicas"] == 1


def test_handler_delete_keeps_the_index(handler_module: Any) -> None:
    client = StubClient()
    assert handler_module.handle(event("Delete"), client, sleep=no_sleep) == {"PhysicalResourceId": INDEX}
    assert client.indices.calls == []


def test_handler_without_endpoint_refuses_clearly(
    handler_module: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("AGENTMEM_OPENSEARCH_ENDPOINT", raising=False)
    with pytest.raises(ConfigurationError, match="AGENTMEM_OPENSEARCH_ENDPOINT"):
        handler_module.handle(event("Create"), None, sleep=no_sleep)


# ----------------------------------------------------------------------------- a real cluster


@pytest.mark.opensearch
@pytest.mark.skipif(not live.opensearch_url(), reason="set AGENTMEM_OPENSEARCH_URL to run against a cluster")
def test_a_real_cluster_accepts_the_setup_and_its_rerun() -> None:
    client = live.opensearch_client(str(live.opensearch_url()))
    name = f"agentmem-setup-{uuid.uuid4().hex[:12]}"
    try:
        first = setup.apply(client, setup.IndexSpec(name, 4, 1), sleep=no_sleep)
        again = setup.apply(client, setup.IndexSpec(name, 4, 0), sleep=no_sleep)
        assert first.created and not again.created and again.replicas_changed
        stored = client.indices.get_settings(index=name)[name]["settings"]["index"]
        assert int(stored["number_of_replicas"]) == 0
        template = client.indices.get_index_template(name=name)["index_templates"][0]["index_template"]
        assert int(template["template"]["settings"]["index"]["number_of_replicas"]) == 0
        with pytest.raises(ConfigurationError, match="4-dimensional"):
            setup.apply(client, setup.IndexSpec(name, 8, 0), sleep=no_sleep)
    finally:
        client.indices.delete(index=name, ignore_unavailable=True)
        client.indices.delete_index_template(name=name, ignore=[404])
