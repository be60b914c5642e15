"""The Node.js adapter example (examples/node-adapter/adapter.mjs) against the real runner and on its own.

The adapter wraps a command-line implementation; here that is this project's CLI, run by
the test interpreter, so a full run checks the example end to end: runner, protocol,
adapter, CLI. Every exchange starts one or two Python processes, so the runner is given a
vector of every kind of answer in every area (about fifty), not all of them: every vector
goes through the CLI the same way in tests/cli/test_cli_vectors.py.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from cmp.conformance import respond, vector_input
from tests.support.vectors import committed_vectors, vector_folder

ROOT = Path(__file__).resolve().parents[2]
ADAPTER = ROOT / "examples" / "node-adapter" / "adapter.mjs"
EXAMPLES = ROOT / "examples"
NODE = shutil.which("node")

pytestmark = pytest.mark.skipif(NODE is None, reason="node is not on PATH (the adapter example needs Node.js 18+)")

# Only a guard against a hung child; nothing here asserts how long anything takes.
HANG_GUARD_SECONDS = 1800


# The adapter starts a Python process or two per exchange; they share one bytecode cache
# (tests/conftest.py), as every process the suite starts does.
def environment(cli: str) -> dict[str, str]:
    return {**os.environ, "CMP_CLI": cli}


# This project's CLI under the interpreter running the tests, as the adapter should find it.
OUR_CLI = f"{sys.executable} -m cmp"


def answer_kind(vector: dict[str, Any]) -> tuple[object, ...]:
    """What an answer to the vector is made of: its area, whether the packet conforms, the
    categories its redactions name and the (code, keyword) pairs of its errors."""
    answer = respond(vector_input(vector))
    categories = sorted({text.split(": ", 1)[0].rsplit("/", 1)[1] for text in answer["redactions"]})
    errors = sorted({(error["code"], error["keyword"] or "") for error in answer["errors"]})
    return (vector["area"], answer["conforming"], tuple(categories), tuple(errors))


# Every vector through the CLI is tests/cli/test_cli_vectors.py, in two processes; through the
# adapter, which starts one or two a vector, the runner is given the first vector of every
# kind of answer, in file order.
VECTORS = committed_vectors()
KINDS: dict[tuple[object, ...], dict[str, Any]] = {}
for _vector in VECTORS:
    KINDS.setdefault(answer_kind(_vector), _vector)
SAMPLE = list(KINDS.values())


def ask(lines: list[str], cli: str = OUR_CLI) -> list[dict[str, Any]]:
    """Send request lines to one adapter process; its answers, one per line, in order."""
    assert NODE is not None
    result = subprocess.run(
        [NODE, str(ADAPTER)],
        input="".join(line + "\n" for line in lines).encode("utf-8"),
        capture_output=True,
        env=environment(cli),
        timeout=HANG_GUARD_SECONDS,
    )
    assert result.returncode == 0, result.stderr.decode("utf-8", "replace")
    answers = result.stdout.decode("utf-8").split("\n")
    assert answers[-1] == "", "every answer ends with a newline"
    return [json.loads(answer) for answer in answers[:-1]]


def request(vector_id: str, data: bytes) -> str:
    return json.dumps({"id": vector_id, "input_base64": base64.b64encode(data).decode("ascii")})


def expected(vector_id: str, data: bytes) -> dict[str, Any]:
    """The answer the Python adapter gives: the library's own verdict."""
    return {"id": vector_id, **respond(data)}


def assert_error_answer(answer: dict[str, Any], vector_id: str | None) -> None:
    assert set(answer) == {"id", "error"}
    assert answer["id"] == vector_id
    assert isinstance(answer["error"], str) and answer["error"] and "\n" not in answer["error"]


def test_the_sample_holds_every_area_and_kind_of_answer() -> None:
    assert {vector["area"] for vector in SAMPLE} == {vector["area"] for vector in VECTORS}
    assert [answer_kind(vector) for vector in SAMPLE] == list(KINDS)
    kinds = {kind[1:] for kind in KINDS}
    assert (True, (), ()) in kinds and any(categories for _, categories, _ in kinds), "clean and leaky packets"
    assert len(SAMPLE) < len(VECTORS) / 10


def test_a_vector_of_every_kind_passes_through_the_node_adapter(tmp_path: Path) -> None:
    # The command implementers are shown, with a longer per-exchange limit than the
    # default 10 s so that a heavily loaded machine does not fail vectors for slowness.
    folder = vector_folder(tmp_path / "vectors", SAMPLE)
    impl = "node examples/node-adapter/adapter.mjs"
    command = ["conformance", "--impl", impl, "--timeout", "60", "--vectors", str(folder)]
    result = subprocess.run(
        [sys.executable, "-m", "cmp", *command],
        cwd=ROOT,
        capture_output=True,
        env=environment(OUR_CLI),
        timeout=HANG_GUARD_SECONDS,
    )
    out = result.stdout.decode("utf-8", "replace")
    assert result.returncode == 0, out[-3000:] + result.stderr.decode("utf-8", "replace")
    assert out.splitlines() == [f"{len(SAMPLE)} passed, 0 failed"]


def test_unreadable_requests_get_error_answers_and_the_next_request_is_still_answered() -> None:
    good = (EXAMPLES / "typical-v0.2.json").read_bytes()
    answers = ask(
        [
            "this is not JSON",
            json.dumps({"id": "unpadded", "input_base64": "e30"}),
            json.dumps({"id": "url-safe-alphabet", "input_base64": "-_8="}),
            json.dumps({"id": "pad-bits-set", "input_base64": "e31="}),
            json.dumps({"id": "line-break", "input_base64": "e30=\n"}),
            json.dumps({"id": "not-a-string", "input_base64": 7}),
            json.dumps({"input_base64": "e30="}),
            json.dumps(["id", "input_base64"]),
            "",
            request("good", good),
        ]
    )
    assert len(answers) == 10
    # The id is echoed whenever the request had a string id; otherwise it is null.
    echoed = [None, "unpadded", "url-safe-alphabet", "pad-bits-set", "line-break", "not-a-string", None, None, None]
    for answer, vector_id in zip(answers[:9], echoed, strict=True):
        assert_error_answer(answer, vector_id)
    assert answers[9] == expected("good", good)
    assert answers[9]["conforming"] is True and answers[9]["canonical_base64"] is not None


def test_answers_match_the_library_for_refused_leaky_and_non_utf8_packets() -> None:
    inputs = {
        "leaky": (EXAMPLES / "leaky-v0.2.json").read_bytes(),
        "minimal": (EXAMPLES / "minimal-v0.1.json").read_bytes(),
        "duplicate": b'{"a": 1, "a": 2}',
        "not-utf8": b'{"goal": "\xff"}',
        "empty": b"",
    }
    answers = ask([request(name, data) for name, data in inputs.items()])
    assert answers == [expected(name, data) for name, data in inputs.items()]
    assert answers[0]["redactions"] == ["constraints[0]/aws-key: AKIAIOSFODNN7EXAMPLE"]
    assert answers[0]["canonical_base64"] is not None, "a conforming packet with findings still has canonical bytes"
    assert all(a["canonical_base64"] is None for a in answers if not a["conforming"])


# A stand-in for an implementer's CLI, run as `python fake_cli.py MODE ARGS...`. The modes
# that wrap this project's CLI differ only in whether fmt ends its output with a newline.
FAKE_CLI = textwrap.dedent(
    """\
    import subprocess, sys

    mode, args = sys.argv[1], sys.argv[2:]
    if mode == "exit-3":
        sys.stderr.write("fake cli: something broke\\n")
        sys.exit(3)
    if mode == "garbage":
        print("this is not a report")
        sys.exit(0)
    real = subprocess.run([sys.executable, "-m", "cmp", *args], stdin=sys.stdin, capture_output=True)
    out = real.stdout
    if args[0] == "fmt":
        out = out.removesuffix(b"\\n") + (b"\\n" if mode == "fmt-newline" else b"")
    sys.stdout.buffer.write(out)
    sys.stderr.buffer.write(real.stderr)
    sys.exit(real.returncode)
    """
)


@pytest.fixture
def fake_cli(tmp_path: Path) -> str:
    path = tmp_path / "fake_cli.py"
    path.write_text(FAKE_CLI, encoding="utf-8")
    return f"{sys.executable} {path}"


@pytest.mark.parametrize("mode", ["fmt-newline", "fmt-bare"])
def test_canonical_bytes_are_the_same_whether_fmt_ends_with_a_newline_or_not(fake_cli: str, mode: str) -> None:
    data = (EXAMPLES / "typical-v0.2.json").read_bytes()
    answers = ask([request("typical", data)], cli=f"{fake_cli} {mode}")
    assert answers == [expected("typical", data)]


def test_a_cli_exit_status_other_than_0_or_1_is_an_error_answer_for_that_id(fake_cli: str) -> None:
    answers = ask([request("first", b"{}"), request("second", b"{}")], cli=f"{fake_cli} exit-3")
    assert_error_answer(answers[0], "first")
    assert_error_answer(answers[1], "second")
    assert "exit status 3" in answers[0]["error"]
    assert "fake cli: something broke" in answers[0]["error"]


def test_unparsable_cli_output_is_an_error_answer(fake_cli: str) -> None:
    answers = ask([request("only", b"{}")], cli=f"{fake_cli} garbage")
    assert_error_answer(answers[0], "only")


def test_a_cli_that_cannot_start_is_an_error_answer(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-cli"
    answers = ask([request("first", b"{}"), request("second", b"{}")], cli=str(missing))
    assert_error_answer(answers[0], "first")
    assert_error_answer(answers[1], "second")
    assert "ENOENT" in answers[0]["error"]
