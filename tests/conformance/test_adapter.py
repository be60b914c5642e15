"""`python -m cmp.adapter`: this library behind the conformance protocol."""

from __future__ import annotations

import base64
import json
import shlex
import shutil
import subprocess
import sys

import pytest

from cmp.adapter import answer
from cmp.cli import main
from cmp.conformance import respond, vector_input
from tests.conformance.test_conformance import ROOT
from tests.support.vectors import committed_vectors

pytestmark = pytest.mark.slow  # every test starts the adapter in a subprocess

ADAPTER = [sys.executable, "-m", "cmp.adapter"]


def test_the_adapter_passes_every_vector(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["conformance", "--impl", shlex.join(ADAPTER)]) == 0
    assert capsys.readouterr().out.splitlines() == [f"{len(committed_vectors())} passed, 0 failed"]


def exchange(*lines: bytes) -> list[dict[str, object]]:
    """Each line sent to a real adapter process, and its answers, one per line."""
    result = subprocess.run(ADAPTER, input=b"".join(lines), capture_output=True, timeout=60, cwd=ROOT)
    assert (result.returncode, result.stderr) == (0, b"")
    return [json.loads(line) for line in result.stdout.splitlines()]


def request(vector_id: object, data: object) -> bytes:
    return json.dumps({"id": vector_id, "input_base64": data}).encode() + b"\n"


def test_it_answers_with_the_library_verdict() -> None:
    vector = next(v for v in committed_vectors(["versioning"]) if v["id"] == "versioning/full-0.2")
    data = vector_input(vector)
    [got] = exchange(request(vector["id"], base64.b64encode(data).decode()))
    assert got == {"id": vector["id"], **respond(data)}
    assert got["conforming"] is True and isinstance(got["canonical_base64"], str)


GOOD = base64.b64encode(b"{}").decode()


@pytest.mark.parametrize(
    ("line", "answer_id", "error"),
    [
        (b"not json\n", None, "bad request: not JSON"),
        (b"\n", None, "bad request: not JSON"),
        (b'{"id": "a", "input_base64": "\xff"}\n', None, "bad request: not JSON"),  # not UTF-8
        (b"[" * 100_000 + b"\n", None, "bad request: not JSON (nested too deeply)"),
        (b'["a", "e30="]\n', None, "bad request: not a JSON object"),
        (request(5, GOOD), None, "bad request: id is not a string"),
        (b'{"input_base64": "e30="}\n', None, "bad request: id is not a string"),
        (b'{"id": "a"}\n', "a", "bad request: input_base64 is not standard padded base64 (RFC 4648)"),
        (request("a", 5), "a", "bad request: input_base64 is not standard padded base64 (RFC 4648)"),
        (request("a", "e30"), "a", "bad request: input_base64 is not standard padded base64 (RFC 4648)"),
        (request("a", "e3\n0="), "a", "bad request: input_base64 is not standard padded base64 (RFC 4648)"),
        (request("a", "e31="), "a", "bad request: input_base64 is not standard padded base64 (RFC 4648)"),
        (request("a", "Pz8_"), "a", "bad request: input_base64 is not standard padded base64 (RFC 4648)"),
    ],
)
def test_a_request_it_cannot_read_gets_an_error_answer(line: bytes, answer_id: str | None, error: str) -> None:
    """The answer carries the id when there is a readable one, and the next request is answered as usual."""
    assert answer(line) == {"id": answer_id, "error": error}
    got = exchange(line, request("next", GOOD))
    assert got[0] == {"id": answer_id, "error": error}
    assert got[1] == {"id": "next", **respond(b"{}")}


@pytest.mark.skipif(not (shutil.which("sh") and shutil.which("head")), reason="needs sh and head")
def test_a_reader_that_goes_away_ends_it_quietly() -> None:
    lines = request("a", GOOD) * 1000
    script = 'exec "$1" -m cmp.adapter | head -n 1'
    result = subprocess.run(
        ["sh", "-c", script, "sh", sys.executable], input=lines, capture_output=True, timeout=60, cwd=ROOT
    )
    assert result.stdout.count(b"\n") == 1 and json.loads(result.stdout)["id"] == "a"
    assert result.stderr == b""
