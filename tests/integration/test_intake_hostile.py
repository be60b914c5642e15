"""The HTTP intake against hostile clients, found by a red-team review: framing headers no
honest client sends, bodies of the wrong media type, bodies that trickle in or stop
halfway, and a store that fills up.

Each goes through the real ASGI app of examples/intake-app: a hand-built ASGI call where
the header must reach the app as it came, FastAPI's test client where that shows the
defect, and a real uvicorn on 127.0.0.1 spoken to over raw sockets where it takes a real
connection (tests/support/intake.py).
"""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import cmp
from tests.support.extras import require
from tests.support.intake import call_asgi, load_example_app, read_response, request_head, served
from tests.support.packets import encode, full, put

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")  # starlette's notice about httpx

AWS = "AKIAIOSFODNN7EXAMPLE"
GOOD = encode(full())
JSON = {"content-type": "application/json"}
PROBLEM = "application/problem+json"


@pytest.fixture(scope="module")
def example() -> Iterator[Any]:
    require("fastapi")
    yield load_example_app()


@pytest.fixture(scope="module")
def client(example: Any) -> Iterator[Any]:
    require("httpx")  # the test client's transport
    from fastapi.testclient import TestClient

    with TestClient(example.app) as test_client:
        yield test_client


def _problem(status: int, content_type: str, body: bytes) -> dict[str, Any]:
    assert content_type == PROBLEM, body
    problem: dict[str, Any] = json.loads(body)
    assert problem["status"] == status and problem["title"] and problem["detail"], problem
    return problem


def _asgi_post(example: Any, headers: list[tuple[bytes, bytes]], body: bytes = GOOD) -> Any:
    return call_asgi(example.app, "/packets", [(b"content-type", b"application/json"), *headers], [body])


# --- 12: the Content-Length header ---------------------------------------------------------------


@pytest.mark.parametrize(
    "values",
    [
        [b"\xb2"],  # '²' in latin-1, as ASGI servers decode: str.isdigit() takes it, int() refuses it
        [b"\xb9\xb3"],  # '¹³'
        [b"+3700"],
        [b"-1"],
        [b"0x10"],
        [b"1_000"],
        [b"37 00"],
        [b""],
        [b"3700", b"3701"],  # several Content-Length headers that disagree
        [b"3700, 3701"],  # a list that disagrees
        [b"3700,"],
        [f"{AWS}".encode()],
    ],
)
def test_a_content_length_that_is_not_one_decimal_number_is_400(example: Any, values: list[bytes]) -> None:
    answer = _asgi_post(example, [(b"content-length", value) for value in values])
    assert answer.status == 400, answer
    problem = _problem(400, answer.headers["content-type"], answer.body)
    assert "Content-Length" in problem["detail"]
    assert answer.headers["connection"] == "close", "the body is left unread: the connection cannot go on"
    assert AWS not in answer.body.decode()


def test_a_content_length_of_thousands_of_digits_is_413_not_a_crash(example: Any) -> None:
    """int() refuses a string of more than 4,300 digits (and would be slow on one): a long
    number is over the limit by its length alone."""
    answer = _asgi_post(example, [(b"content-length", b"9" * 5000)])
    assert _problem(413, answer.headers["content-type"], answer.body)["limit"] == cmp.MAX_PACKET_BYTES
    answer = _asgi_post(example, [(b"content-length", b"0" * 5000 + str(len(GOOD)).encode())])
    assert answer.status == 201, "leading zeros are still the number they write"


def test_the_declared_length_must_be_the_body_length(example: Any) -> None:
    """Several Content-Length headers that agree are one (RFC 9112 allows it), whitespace
    around the number is no part of it, and a body that is not the declared length is 400."""
    length = str(len(GOOD)).encode()
    for values in ([length, length], [length + b", " + length], [b" " + length + b"\t"]):
        answer = _asgi_post(example, [(b"content-length", value) for value in values])
        assert answer.status == 201, (values, answer)
    short = _asgi_post(example, [(b"content-length", str(len(GOOD) + 10).encode())])
    assert "Content-Length" in _problem(400, short.headers["content-type"], short.body)["detail"]
    long = _asgi_post(example, [(b"content-length", b"10")])
    assert long.status == 400, long


# --- 21: the media type --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "content_type",
    [
        None,
        "text/plain",  # what a page on another origin may post without a CORS preflight
        "text/plain; charset=utf-8",
        "application/x-www-form-urlencoded",
        "multipart/form-data; boundary=x",
        "application/jsonx",
        "application/json-seq",
        "application/json; charset=latin-1",
        "application/json; charset=utf-16",
        "application/json; charset",
        f"text/plain; x={AWS}",
    ],
)
def test_the_example_intake_takes_application_json_only(client: Any, content_type: str | None) -> None:
    headers = {"origin": "https://elsewhere.example"}
    if content_type is not None:
        headers["content-type"] = content_type
    unseen = put(full(), "id", "01J9X8K2QZ7N4M0WXYZV3R8415")
    for route in ("/packets", "/packets/lenient"):
        response = client.post(route, content=encode(unseen), headers=headers)
        assert response.status_code == 415, (route, response.text)
        problem = _problem(415, response.headers["content-type"], response.content)
        assert "application/json" in problem["detail"] and AWS not in response.text
    assert client.get(f"/packets/{unseen['id']}").status_code == 404, "nothing was stored"


@pytest.mark.parametrize(
    "content_type",
    ["application/json", "Application/JSON", "application/json; charset=utf-8", 'application/json;charset="UTF-8"'],
)
def test_application_json_is_taken_in_any_case_and_with_a_utf8_charset(client: Any, content_type: str) -> None:
    response = client.post("/packets", content=GOOD, headers={"content-type": content_type})
    assert response.status_code == 201, response.text
    assert client.post("/packets", content=GOOD, headers={"content-type": "text/plain"}).status_code == 415


# --- 21: the example app's store is bounded ------------------------------------------------------


def test_the_example_store_refuses_new_packets_at_its_cap_and_keeps_what_it_has(example: Any) -> None:
    require("httpx")
    from fastapi.testclient import TestClient

    packets = [encode(put(full(), "id", f"01J9X8K2QZ7N4M0WXYZV3R8AB{n}")) for n in range(3)]
    with TestClient(example.make_app(capacity=2)) as small:
        assert small.post("/packets", content=packets[0], headers=JSON).status_code == 201
        lenient = small.post("/packets/lenient", content=packets[1][:-1] + b', "x_unknown": 1}', headers=JSON)
        assert lenient.status_code == 202
        full_store = small.post("/packets", content=packets[2], headers=JSON)
        problem = _problem(507, full_store.headers["content-type"], full_store.content)
        assert problem["capacity"] == 2
        again = small.post("/packets/lenient", content=b'{"ltm_version": "0.2", "x": 1}', headers=JSON)
        assert again.status_code == 507, "the lenient route shares the cap"
        assert small.get(f"/packets/{json.loads(packets[0])['id']}").status_code == 200, "nothing dropped"
        assert small.get(f"/packets/{lenient.json()['id']}").status_code == 200
        assert small.post("/packets", content=packets[0], headers=JSON).status_code == 201, "a stored id is replaced"


# --- 11 and 13: the body's end, and its deadline ---------------------------------------------------


def test_a_client_gone_mid_body_is_answered_499_with_no_error_escaping_the_app(example: Any) -> None:
    """What an ASGI server hands on when the client left: an ``http.disconnect`` after part
    of the body. The app's answer goes nowhere (uvicorn drops it), but nothing escapes
    the app to be logged as an error."""
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(GOOD)).encode())]
    answer = call_asgi(example.app, "/packets", headers, [GOOD[:100]], more_body=True)
    assert answer.status == 499, answer
    assert _problem(499, answer.headers["content-type"], answer.body)["title"] == "Client closed the request"


@pytest.mark.parametrize("deadline", [0, -1, float("nan"), float("inf"), True, "10"])
def test_a_body_deadline_that_is_no_number_of_seconds_is_refused_when_the_intake_is_built(deadline: Any) -> None:
    require("starlette")
    from cmp.integrations.starlette import packet_intake

    with pytest.raises(ValueError, match="deadline"):
        packet_intake(body_deadline=deadline)


# --- 11 and 13: real connections -----------------------------------------------------------------


def test_a_client_that_disconnects_mid_body_ends_its_request_quietly(tmp_path: Path) -> None:
    require("uvicorn")
    with served(tmp_path / "server.log") as server:
        for _ in range(3):
            with socket.create_connection(server.address, timeout=30) as sock:
                sock.sendall(request_head("/packets", {**JSON, "content-length": str(len(GOOD))}) + GOOD[:100])
        with socket.create_connection(server.address, timeout=30) as sock:  # and it still serves
            sock.sendall(request_head("/packets", {**JSON, "content-length": str(len(GOOD))}) + GOOD)
            assert read_response(sock).status == 201
    log = server.stop()
    assert "GET /packets/ready" in log and "POST /packets" in log, f"the log was captured:\n{log}"
    assert "Exception in ASGI application" not in log and "Traceback" not in log, log
    assert "ERROR" not in log, log


def test_a_slow_body_is_408_at_the_deadline_and_its_connection_closed(tmp_path: Path) -> None:
    require("uvicorn")
    with served(tmp_path / "server.log", body_deadline=0.5) as server:
        with socket.create_connection(server.address, timeout=0.2) as sock:
            sock.sendall(request_head("/packets", {**JSON, "content-length": str(len(GOOD))}))
            received = _drip_until_answered(sock, GOOD)
            response = read_response(_blocking(sock), received)
            assert response.status == 408, response
            problem = _problem(408, response.headers["content-type"], response.body)
            assert problem["deadline"] == 0.5
            assert response.headers["connection"] == "close"
            assert _drip_until_closed(sock), "the server still holds the connection of a body it gave up on"
    assert "Traceback" not in server.stop()


DRIPS = 100  # a byte every 0.2 s: far past the 0.5 s deadline, a bound on a server that never answers


def _drip_until_answered(sock: socket.socket, body: bytes) -> bytes:
    """Send ``body`` a byte at a time, a recv timeout apart, until the server says something."""
    for index in range(DRIPS):
        sock.sendall(body[index : index + 1])
        try:
            data = sock.recv(65536)
        except TimeoutError:
            continue
        assert data, "the server closed the connection without an answer"
        return data
    raise AssertionError(f"no answer after {DRIPS} bytes sent slowly: the body is held for ever")


def _drip_until_closed(sock: socket.socket) -> bool:
    """Go on dripping after the answer; True once the server has closed the connection."""
    sock.settimeout(0.2)
    for _ in range(DRIPS):
        try:
            sock.sendall(b" ")
            if sock.recv(65536) == b"":
                return True
        except TimeoutError:
            continue
        except (BrokenPipeError, ConnectionResetError):
            return True
    return False


def _blocking(sock: socket.socket) -> socket.socket:
    sock.settimeout(30)
    return sock
