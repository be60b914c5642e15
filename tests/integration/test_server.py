"""Packets over HTTP: the example intake app (examples/intake-app) through FastAPI's test
client, the raw-bytes dependency's streaming cap, and cmp.Packet as a pydantic type."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import cmp
from tests.support.extras import require
from tests.support.intake import load_example_app
from tests.support.packets import encode, full, put

pydantic = require("pydantic")

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")  # starlette's notice about httpx

ROOT = Path(__file__).resolve().parents[2]
AWS = "AKIAIOSFODNN7EXAMPLE"
GOOD = encode(full())
PROBLEM = "application/problem+json"


@pytest.fixture(scope="module")
def client() -> Iterator[Any]:
    require("fastapi")
    require("httpx")  # the test client's transport
    from fastapi.testclient import TestClient

    module = load_example_app()
    # The example's raw-bytes routes take application/json only (tests/integration/test_intake_hostile.py).
    with TestClient(module.app, headers={"content-type": "application/json"}) as test_client:
        yield test_client
    del sys.modules["intake_app"]


def _problem(response: Any, status: int) -> dict[str, Any]:
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == PROBLEM
    problem: dict[str, Any] = response.json()
    assert problem["status"] == status and problem["title"] and problem["detail"]
    return problem


def test_a_good_packet_is_stored_and_read_back_canonical(client: Any) -> None:
    response = client.post("/packets", content=GOOD)
    assert response.status_code == 201 and response.json()["conforming"] is True
    stored = client.get(f"/packets/{response.json()['id']}")
    assert stored.status_code == 200 and stored.content == cmp.dumps(cmp.loads(GOOD))


@pytest.mark.parametrize(
    ("body", "code"),
    [
        (b"", "json"),
        (b"{not json", "json"),
        (b"\xef\xbb\xbf" + GOOD, "json"),
        (b"[1, 2]", "not-object"),
        (encode({**full(), "ltm_version": "9.9"}), "version-unsupported"),
        (encode({k: v for k, v in full().items() if k != "ltm_version"}), "version-missing"),
        (encode(put(full(), "tags[0]", "Bad Tag")), "schema"),
        (GOOD[:-1] + b', "goal": "smuggled"}', "duplicate-key"),
    ],
)
def test_every_intake_failure_is_a_problem_listing_the_findings(client: Any, body: bytes, code: str) -> None:
    problem = _problem(client.post("/packets", content=body), 422)
    assert problem["conforming"] is False
    assert code in {error["code"] for error in problem["errors"]}
    assert all({"code", "path", "message", "line", "column"} <= set(error) for error in problem["errors"])


def test_duplicate_key_smuggling_is_caught_on_the_bytes_and_missed_by_a_typed_body(client: Any) -> None:
    smuggled = GOOD[:-1] + b', "goal": "a second goal"}'
    problem = _problem(client.post("/packets", content=smuggled), 422)
    (error,) = problem["errors"]
    assert (error["code"], error["path"]) == ("duplicate-key", "$.goal")
    typed = client.post("/packets/typed", content=smuggled, headers={"content-type": "application/json"})
    assert typed.status_code == 201, "the framework's JSON parser kept the last goal: why the bytes intake exists"


def test_a_leaky_packet_is_refused_with_its_secret_masked(client: Any) -> None:
    response = client.post("/packets", content=encode(put(full(), "constraints[0]", f"Key {AWS} here.")))
    problem = _problem(response, 422)
    assert problem["conforming"] is True and problem["errors"] == []
    (hit,) = problem["redactions"]
    assert hit["category"] == "aws-key" and hit["found"] == "AKIA…" and hit["line"] >= 1
    assert AWS[4:] not in response.text


def test_an_oversize_body_sent_in_chunks_is_413(client: Any) -> None:
    def chunks() -> Iterator[bytes]:
        for _ in range(10):
            yield b" " * 8192

    problem = _problem(client.post("/packets", content=chunks()), 413)
    assert problem["limit"] == cmp.MAX_PACKET_BYTES


def test_the_body_is_read_only_to_one_byte_past_the_limit() -> None:
    """The dependency stops asking for the body once it passes the limit: the rest is never read."""
    require("starlette")
    from starlette.requests import Request

    from cmp.integrations.starlette import PacketRejected, read_body

    asked = 0

    async def receive() -> dict[str, Any]:
        nonlocal asked
        asked += 1
        return {"type": "http.request", "body": b" " * 4096, "more_body": asked < 1000}

    request = Request({"type": "http", "method": "POST", "headers": []}, receive)
    with pytest.raises(PacketRejected) as refused:
        asyncio.run(read_body(request))
    assert refused.value.status == 413
    assert asked == cmp.MAX_PACKET_BYTES // 4096 + 1, "one chunk past the limit, then no more"


def test_lenient_mode_accepts_schema_findings_and_flags_them(client: Any) -> None:
    body = GOOD[:-1] + b', "x_unknown": 1}'
    response = client.post("/packets/lenient", content=body)
    assert response.status_code == 202
    result = response.json()
    assert result["conforming"] is False
    assert [(w["code"], w["keyword"], w["path"]) for w in result["warnings"]] == [
        ("schema", "additionalProperties", "$.x_unknown")
    ]
    assert client.get(f"/packets/{result['id']}").content == body, "stored as it came"
    leaky = encode(put(put(full(), "constraints[0]", f"Key {AWS}."), "x_unknown", 1))
    assert _problem(client.post("/packets/lenient", content=leaky), 422)["redactions"], "redactions still block"
    assert _problem(client.post("/packets/lenient", content=b"[]"), 422)["errors"][0]["code"] == "not-object"


def test_the_typed_body_validates_through_the_library(client: Any) -> None:
    bad = {"ltm_version": "9.9", "created_at": "yesterday", "goal": "", "tags": ["Bad Tag\n"]}
    response = client.post("/packets/typed", json=bad)
    assert response.status_code == 422
    (detail,) = response.json()["detail"]
    assert detail["type"] == "cmp_packet"
    assert [f["code"] for f in detail["ctx"]["findings"]] == ["version-unsupported"]
    good = client.post("/packets/typed", content=GOOD, headers={"content-type": "application/json"})
    assert good.status_code == 201
    schema = client.get("/openapi.json").json()
    packet_schema = json.dumps(schema)
    assert "https://ltm-cli.dev/schema/core-memory.v0.2.json" in packet_schema, "the OpenAPI body schema is ours"


# --- cmp.Packet as a pydantic type ------------------------------------------------------------


def test_pydantic_refuses_what_the_library_refuses_with_its_findings() -> None:
    adapter = pydantic.TypeAdapter(cmp.Packet)
    bad = {"ltm_version": "0.2", "id": "x", "created_at": "yesterday", "goal": "", "next_step": "n"}
    with pytest.raises(pydantic.ValidationError) as refused:
        adapter.validate_python(bad)
    (error,) = refused.value.errors()
    expected = [f.to_json() for f in cmp.validate(bad)]
    assert error["type"] == "cmp_packet" and error["ctx"]["findings"] == expected
    assert str(cmp.validate(bad)[0]) in error["msg"]
    for not_a_packet in ("text", 7, None, [GOOD]):
        with pytest.raises(pydantic.ValidationError):
            adapter.validate_python(not_a_packet)


def test_pydantic_takes_a_conforming_packet_and_writes_it_back() -> None:
    adapter = pydantic.TypeAdapter(cmp.Packet)
    packet = adapter.validate_json(GOOD)
    assert packet == cmp.loads(GOOD) and adapter.validate_python(packet) is packet
    assert adapter.dump_python(packet, mode="json") == packet.to_dict()
    assert json.loads(adapter.dump_json(packet)) == packet.to_dict()

    class Envelope(pydantic.BaseModel):
        sender: str
        packet: cmp.Packet

    envelope = Envelope.model_validate({"sender": "agent", "packet": json.loads(GOOD)})
    assert envelope.packet == packet
    with pytest.raises(pydantic.ValidationError) as refused:
        Envelope.model_validate({"sender": "agent", "packet": {**json.loads(GOOD), "goal": 5}})
    assert refused.value.errors()[0]["loc"] == ("packet",)


def test_the_pydantic_json_schema_is_the_shipped_schemas() -> None:
    from cmp.schema import SUPPORTED_VERSIONS, load_schema

    schema = pydantic.TypeAdapter(cmp.Packet).json_schema()
    assert schema["oneOf"] == [load_schema(version) for version in SUPPORTED_VERSIONS]


def test_the_core_never_imports_pydantic() -> None:
    import subprocess

    code = (
        "import cmp, sys; cmp.check(b'{}'); cmp.loads(open(sys.argv[1], 'rb').read()); print('pydantic' in sys.modules)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code, str(ROOT / "examples" / "typical-v0.2.json")], capture_output=True, text=True
    )
    assert result.stdout.strip() == "False", result.stderr


# --- found by a red-team review -----------------------------------------------------------------


def test_a_typed_body_is_refused_for_a_secret_as_check_refuses_it(client: Any) -> None:
    leaky = put(full(), "constraints[0]", f"key {AWS} old")
    adapter = pydantic.TypeAdapter(cmp.Packet)
    with pytest.raises(pydantic.ValidationError) as refused:
        adapter.validate_python(leaky)
    (error,) = refused.value.errors(include_input=False)
    assert error["ctx"]["findings"] == [] and error["ctx"]["redactions"][0]["found"] == "AKIA…"
    with pytest.raises(pydantic.ValidationError):
        adapter.validate_python(cmp.Packet.new(goal=f"use {AWS}", next_step="x"))
    response = client.post("/packets/typed", json=leaky)
    assert response.status_code == 422 and AWS not in response.text, "installed: no input echoed"


@pytest.mark.parametrize(
    "body",
    [
        b'{"goal": "a\\ud800b", "tags": ["AKIAIOSFODNN7EXAMPLE"]}',
        b'{"ltm_version": "0.2", "x": NaN}',
        b'["AKIAIOSFODNN7EXAMPLE"]',
        b'"AKIAIOSFODNN7EXAMPLE"',
    ],
)
def test_a_typed_body_that_fails_is_422_without_its_input(client: Any, body: bytes) -> None:
    response = client.post("/packets/typed", content=body, headers={"content-type": "application/json"})
    assert response.status_code == 422, response.text
    assert AWS not in response.text and all("input" not in error for error in response.json()["detail"])


def test_a_declared_oversize_body_is_refused_before_it_is_read() -> None:
    require("starlette")
    from starlette.requests import Request

    from cmp.integrations.starlette import PacketRejected, read_body

    asked = 0

    async def receive() -> dict[str, Any]:
        nonlocal asked
        asked += 1
        return {"type": "http.request", "body": b" " * 50_000_000, "more_body": False}

    scope = {"type": "http", "method": "POST", "headers": [(b"content-length", b"50000000")]}
    with pytest.raises(PacketRejected) as refused:
        asyncio.run(read_body(Request(scope, receive)))
    assert refused.value.status == 413 and asked == 0


def test_messages_do_not_repeat_a_secret_given_as_an_option() -> None:
    with pytest.raises(ValueError) as refused:
        cmp.check(GOOD, rule_set=AWS)  # type: ignore[arg-type]
    assert AWS[4:] not in str(refused.value)
    with pytest.raises(ValueError) as refused:
        cmp.migrate(cmp.loads(GOOD), "https://user:hunter2@host.example/")
    assert "hunter2" not in str(refused.value)
