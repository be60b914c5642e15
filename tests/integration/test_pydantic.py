"""cmp.Packet as a pydantic type, safe by default: a refused packet's error shows no
credential on any documented path (a TypeAdapter, a model field, a FastAPI body), reads
as a Core Memory Packet error, and still carries every finding and redaction hit.

pydantic echoes each error's input into every surface it renders; the hooks raise over
a stand-in instead (cmp/integrations/pydantic.py), so the checks below render them all.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any, Optional

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import cmp
from tests.support.examples import examples
from tests.support.extras import require
from tests.support.packets import full, put

pydantic = require("pydantic")

AWS = "AKIAIOSFODNN7EXAMPLE"
GITHUB = "ghp_" + "x" * 36  # built here so that no scanner reads the source as holding a token
SECRETS = (AWS, GITHUB)


def _leaks(text: str) -> list[str]:
    """The secrets (or their first 12 characters) that ``text`` shows."""
    return [secret for secret in SECRETS if secret[:12] in text]


def _rendered(exc: Any) -> str:
    """Every surface a pydantic ValidationError renders, joined."""
    return "\n".join([str(exc), repr(exc), exc.json(), repr(exc.errors()), json.dumps(exc.errors(), default=str)])


def _refusal(validate: Any, value: Any) -> Any:
    with pytest.raises(pydantic.ValidationError) as refused:
        validate(value)
    return refused.value


class Envelope(pydantic.BaseModel):
    sender: str
    packet: cmp.Packet


class Batch(pydantic.BaseModel):
    packets: list[cmp.Packet]
    reply: Optional[cmp.Packet] = None  # noqa: UP045 (the spelling this test is about)


def _bad_inputs(secret: str) -> list[Any]:
    good = full()
    return [
        put(good, "goal", f"use {secret} now"),  # conforming, refused by the redaction pre-flight
        {**good, secret: "x"},  # a member name
        {**good, "project": {**good.get("project", {}), secret: 1}},  # a nested member name
        put(good, "tags[0]", secret),  # a list item that breaks the schema too
        {**good, "constraints": [[secret]]},  # deep, and the wrong type
        {"goal": secret},  # missing members
        {1: secret},  # a member name that is not a string
        secret,  # not a mapping at all
        [secret, {"goal": secret}],
    ]


@pytest.mark.parametrize("secret", SECRETS, ids=["aws", "github"])
def test_a_type_adapter_error_shows_no_credential(secret: str) -> None:
    adapter = pydantic.TypeAdapter(cmp.Packet)
    for value in _bad_inputs(secret):
        exc = _refusal(adapter.validate_python, value)
        assert _leaks(_rendered(exc)) == [], value
        (error,) = exc.errors()
        assert error["type"] == "cmp_packet" and error["loc"] == ()
        assert error["input"] == f"<{type(value).__name__} withheld>"
        if isinstance(value, (dict, str)) and not isinstance(next(iter(value), ""), int):
            text = json.dumps(value)
            assert _leaks(_rendered(_refusal(adapter.validate_json, text))) == [], value


def test_the_error_reads_as_a_packet_error_with_every_finding() -> None:
    adapter = pydantic.TypeAdapter(cmp.Packet)
    bad = {**full(), AWS: 1, "goal": "", "tags": ["Not A Tag"]}
    exc = _refusal(adapter.validate_python, bad)
    assert exc.title == "function-wrap[Core Memory Packet()]"
    assert "_pydantic_validate" not in str(exc) and "function-plain" not in str(exc)
    (error,) = exc.errors()
    expected = [finding.to_json() for finding in cmp.validate(bad)]
    assert len(expected) == 3 and error["ctx"]["findings"] == expected
    assert {"code", "path", "keyword", "message"} <= set(expected[0])
    assert str(cmp.PacketError(cmp.validate(bad))) in error["msg"]
    assert "input_value=<dict withheld>" in str(exc)

    leaky = put(full(), "constraints[0]", f"key {GITHUB} old")
    (error,) = _refusal(adapter.validate_python, leaky).errors()
    assert error["ctx"]["findings"] == [] and error["ctx"]["redactions"] == [
        hit.to_json() for hit in cmp.redact(cmp.Packet.from_dict(leaky))
    ]
    assert error["ctx"]["redactions"][0]["found"].startswith("ghp_") and error["msg"].startswith(
        "not a conforming packet: redaction"
    )


@pytest.mark.parametrize("secret", SECRETS, ids=["aws", "github"])
def test_a_model_field_error_shows_no_credential_and_names_the_field(secret: str) -> None:
    for value in _bad_inputs(secret):
        exc = _refusal(Envelope.model_validate, {"sender": "agent", "packet": value})
        assert _leaks(_rendered(exc)) == [] and exc.title == "Envelope"
        assert [error["loc"] for error in exc.errors()] == [("packet",)]

        exc = _refusal(Batch.model_validate, {"packets": [full(), value], "reply": value})
        assert _leaks(_rendered(exc)) == []
        assert [error["loc"] for error in exc.errors()] == [("packets", 1), ("reply",)]
        assert all(error["type"] == "cmp_packet" for error in exc.errors())


def test_a_good_packet_still_validates_and_serializes_as_before() -> None:
    adapter = pydantic.TypeAdapter(cmp.Packet)
    packet = adapter.validate_python(full())
    assert packet == cmp.Packet.from_dict(full()) and adapter.validate_python(packet) is packet
    assert adapter.validate_json(json.dumps(full())) == packet
    assert adapter.dump_python(packet) == packet.to_dict() == adapter.dump_python(packet, mode="json")
    assert json.loads(adapter.dump_json(packet)) == packet.to_dict()
    batch = Batch.model_validate({"packets": [full()], "reply": None})
    assert batch.packets == [packet] and batch.reply is None
    assert json.loads(batch.model_dump_json()) == {"packets": [packet.to_dict()], "reply": None}


# --- FastAPI: a bare app, without cmp.integrations.starlette.install --------------------------------------------


@pytest.fixture(scope="module")
def fastapi_client() -> Iterator[tuple[Any, list[Any]]]:
    fastapi = require("fastapi")
    require("httpx")  # the test client's transport
    from fastapi.exception_handlers import request_validation_exception_handler
    from fastapi.exceptions import RequestValidationError
    from fastapi.testclient import TestClient

    app = fastapi.FastAPI()
    raised: list[Any] = []

    @app.exception_handler(RequestValidationError)
    async def record(request: Any, exc: RequestValidationError) -> Any:
        raised.append(exc)  # the exception itself, to render it too; FastAPI's own 422 after
        return await request_validation_exception_handler(request, exc)

    @app.post("/packets")
    async def take(packet: cmp.Packet) -> dict[str, str]:
        return {"id": packet.id}

    with TestClient(app) as client:
        yield client, raised


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # starlette's notice about httpx
@pytest.mark.parametrize("secret", SECRETS, ids=["aws", "github"])
def test_a_fastapi_body_error_shows_no_credential(fastapi_client: tuple[Any, list[Any]], secret: str) -> None:
    from fastapi.encoders import jsonable_encoder

    client, raised = fastapi_client
    values = [value for value in _bad_inputs(secret) if not isinstance(value, dict) or 1 not in value]
    bodies = [json.dumps(value).encode() for value in values]
    bodies.append(b'{"goal": "' + secret.encode() + b'", ')  # not JSON: FastAPI's own parse error
    for body in bodies:
        raised.clear()
        response = client.post("/packets", content=body, headers={"content-type": "application/json"})
        assert response.status_code == 422, response.text
        (exc,) = raised
        surfaces = [response.text, str(exc), repr(exc), json.dumps(jsonable_encoder(exc.errors()))]
        assert _leaks("\n".join(surfaces)) == [], body
    raised.clear()
    response = client.post("/packets", json=put(full(), "goal", f"use {secret}"))
    (error,) = response.json()["detail"]
    assert error["type"] == "cmp_packet" and error["loc"] == ["body"] and error["input"] == "<dict withheld>"
    assert error["ctx"]["redactions"][0]["field"] == "goal", "the client learns what to fix"
    assert client.post("/packets", json=full()).json() == {"id": full()["id"]}


# --- a credential anywhere -----------------------------------------------------------------------


def _placed(secret: str, where: str, key: str) -> Any:
    good = full()
    if where == "value":
        return {**good, key: f"a {secret} b"}
    if where == "name":
        return {**good, secret: key}
    if where == "nested name":
        return {**good, "decisions": [{"what": "w", "why": "y", secret: key}]}
    if where == "list item":
        return {**good, key: ["ok", secret]}
    if where == "nested list":
        return {**good, "attempts": [{"what": [[secret]], "result": key}]}
    return secret if where == "text" else [key, secret]


@settings(max_examples=examples(60))
@given(
    secret=st.sampled_from(SECRETS),
    where=st.sampled_from(["value", "name", "nested name", "list item", "nested list", "text", "list"]),
    # Not "id" or "parent_id": the pre-flight does not read them, so a key there is taken (no error to render).
    key=st.sampled_from(["goal", "next_step", "tags", "constraints", "unknown", "created_at"]),
)
def test_a_credential_anywhere_never_shows_in_the_error(secret: str, where: str, key: str) -> None:
    value = _placed(secret, where, key)
    adapter = pydantic.TypeAdapter(cmp.Packet)
    for exc in (
        _refusal(adapter.validate_python, value),
        _refusal(adapter.validate_json, json.dumps(value)),
        _refusal(Envelope.model_validate, {"sender": "s", "packet": value}),
    ):
        assert _leaks(_rendered(exc)) == []
        assert [error["type"] for error in exc.errors()] == ["cmp_packet"]
