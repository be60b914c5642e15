"""The conformance runner against hostile folders, arguments and implementations: one line or a failed vector.

Every case here once printed a traceback, hung, or read without end. Runs that could hang
on a regression go through a subprocess with a timeout, so that a regression fails instead.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from cmp.cli import main
from cmp.conformance import MAX_VECTOR_FILE_BYTES, compare
from tests.conformance.test_conformance import ROOT, VECTORS, run_against, write_adapter
from tests.support.cli import run_cli
from tests.support.vectors import committed_vectors, vector_folder

pytestmark = pytest.mark.slow  # nearly every test runs the runner, or an implementation, in a subprocess

SCHEMA = VECTORS / "vectors.schema.json"


def cli(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    """The real CLI in a subprocess, bounded in time: a hang is a failure, not a stuck test run."""
    return run_cli("conformance", *args, text=True, cwd=cwd, env=dict(os.environ, PYTHONPATH=str(ROOT)))


def assert_one_line(result: subprocess.CompletedProcess[str], *needles: str) -> None:
    """Exit 2 with exactly one ``cmp:`` line on stderr that says what is wrong."""
    assert result.returncode == 2, result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("cmp: "), result.stderr
    for needle in needles:
        assert needle in lines[0]


def vector(**changes: Any) -> dict[str, Any]:
    """A valid vector (an empty object is refused by version routing), with ``changes`` applied."""
    base: dict[str, Any] = {
        "id": "t/one",
        "description": "a test vector",
        "clause": "3.1",
        "input": "{}",
        "expect": {
            "conforming": False,
            "errors": [{"code": "version-missing", "path": "$.ltm_version", "keyword": None}],
        },
    }
    return {**base, **changes}


def folder_with(tmp_path: Path, *vectors: dict[str, Any], schema: bool = True) -> Path:
    """A vector folder holding the real schema (unless told not to) and one file of ``vectors``."""
    folder = tmp_path / "vectors"
    folder.mkdir()
    if schema:
        shutil.copy(SCHEMA, folder)
    if vectors:
        (folder / "t.json").write_text(json.dumps({"area": "t", "vectors": list(vectors)}))
    return folder


def test_the_test_vector_passes(tmp_path: Path) -> None:
    """The baseline the folder tests below break one thing of."""
    result = cli("--vectors", str(folder_with(tmp_path, vector())))
    assert (result.returncode, result.stdout) == (0, "1 passed, 0 failed\n"), result.stderr


# --- 1. the vector folder and its schema ---------------------------------------------


def test_folder_without_schema(tmp_path: Path) -> None:
    assert_one_line(cli("--vectors", str(folder_with(tmp_path, vector(), schema=False))), "vectors.schema.json")


def test_schema_that_is_a_directory(tmp_path: Path) -> None:
    folder = folder_with(tmp_path, vector(), schema=False)
    (folder / "vectors.schema.json").mkdir()
    assert_one_line(cli("--vectors", str(folder)), "vectors.schema.json: not a regular file")


def test_schema_that_is_a_symlink_loop(tmp_path: Path) -> None:
    folder = folder_with(tmp_path, vector(), schema=False)
    (folder / "vectors.schema.json").symlink_to("vectors.schema.json")
    assert_one_line(cli("--vectors", str(folder)), "vectors.schema.json: cannot open")


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0, reason="root reads any file")
def test_schema_without_read_permission(tmp_path: Path) -> None:
    folder = folder_with(tmp_path, vector())
    (folder / "vectors.schema.json").chmod(0)
    assert_one_line(cli("--vectors", str(folder)), "vectors.schema.json: cannot open")


@pytest.mark.parametrize(
    ("content", "says"),
    [
        (b"{", "not JSON"),
        (b"\xff{}", "not JSON"),  # not UTF-8
        (b"[" * 100_000, "not JSON: nested too deeply"),
        (b'{"type": 5}', "not a valid JSON Schema"),
        (b'{"$ref": "https://example.invalid/schema"}', "cannot be applied to t.json"),
        (b'{"$ref": "#"}', "cannot be applied to t.json"),
    ],
)
def test_schema_that_is_not_a_usable_schema(tmp_path: Path, content: bytes, says: str) -> None:
    folder = folder_with(tmp_path, vector(), schema=False)
    (folder / "vectors.schema.json").write_bytes(content)
    assert_one_line(cli("--vectors", str(folder)), "vectors.schema.json", says)


def test_folder_that_is_a_file(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("{}")
    assert_one_line(cli("--vectors", str(tmp_path / "file")), "no vector folder at")


def test_folder_without_vector_files_is_not_a_pass(tmp_path: Path) -> None:
    assert_one_line(cli("--vectors", str(folder_with(tmp_path))), "no vector files in")


def test_permissive_schema_does_not_let_a_malformed_vector_crash_the_runner(tmp_path: Path) -> None:
    folder = folder_with(tmp_path, schema=False)
    (folder / "vectors.schema.json").write_text("{}")
    for document, says in [
        ([], "t.json: not an object with a string area"),
        ({"area": "t", "vectors": {}}, "t.json: vectors is not a list"),
        ({"area": "t", "vectors": [{"id": "t/x"}]}, "t.json: vectors/0: expect is not an object"),
        ({"area": "t", "vectors": [{"id": "t/x", "expect": {"conforming": False}}]}, "vectors/0: neither input"),
        ({"area": "t", "vectors": [vector(expect={"conforming": True, "canonical": 5})]}, "canonical is not a string"),
        ({"area": "t", "vectors": [vector(expect={"conforming": False, "errors": 5})]}, "errors is not a list"),
    ]:
        (folder / "t.json").write_text(json.dumps(document))
        assert_one_line(cli("--vectors", str(folder)), says)


def test_deleted_working_directory(tmp_path: Path) -> None:
    """A working directory that is gone changes nothing: the vectors are never looked for there."""
    gone = tmp_path / "gone"
    gone.mkdir()
    script = 'cd "$1" && rmdir "$1" && exec "$2" -m cmp conformance --filter versioning'
    result = subprocess.run(
        ["sh", "-c", script, "sh", str(gone), sys.executable],
        capture_output=True,
        text=True,
        timeout=120,
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
    )
    assert "Traceback" not in result.stderr
    assert result.returncode == 0 and result.stdout.endswith(" passed, 0 failed\n"), result.stderr


# --- 5. vector files: endless devices, FIFOs, huge files, bad content ----------------


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="needs /dev/zero")
def test_vector_file_linked_to_an_endless_device(tmp_path: Path) -> None:
    folder = folder_with(tmp_path)
    (folder / "x.json").symlink_to("/dev/zero")
    assert_one_line(cli("--vectors", str(folder)), "x.json: not a regular file")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_vector_file_that_is_a_fifo_is_not_waited_on(tmp_path: Path) -> None:
    folder = folder_with(tmp_path)
    os.mkfifo(folder / "x.json")
    assert_one_line(cli("--vectors", str(folder)), "x.json: not a regular file")


def test_vector_file_that_is_a_directory(tmp_path: Path) -> None:
    folder = folder_with(tmp_path)
    (folder / "x.json").mkdir()
    assert_one_line(cli("--vectors", str(folder)), "x.json: not a regular file")


def test_vector_file_past_the_size_limit(tmp_path: Path) -> None:
    folder = folder_with(tmp_path)
    with (folder / "x.json").open("wb") as handle:  # sparse: costs no disk
        handle.truncate(MAX_VECTOR_FILE_BYTES + 1)
    assert_one_line(cli("--vectors", str(folder)), "x.json: larger than")


def test_size_limit_is_well_above_every_shipped_vector_file() -> None:
    largest = max(path.stat().st_size for path in VECTORS.glob("*.json"))
    assert largest * 4 < MAX_VECTOR_FILE_BYTES


def test_deeply_nested_vector_file(tmp_path: Path) -> None:
    folder = folder_with(tmp_path)
    (folder / "x.json").write_text("[" * 100_000)
    assert_one_line(cli("--vectors", str(folder)), "x.json: not JSON: nested too deeply")


@pytest.mark.parametrize(
    ("changes", "says"),
    [
        ({"input_base64": "!!!!", "input": None}, "vectors/0: input_base64 is not base64"),
        ({"input_base64": "e30", "input": None}, "vectors/0: input_base64 is not base64"),  # no padding
        ({"input": "\ud800"}, "vectors/0: input holds a lone surrogate"),
        (
            {"expect": {"conforming": True, "redactions": [], "canonical": "\ud800"}},
            "vectors/0: expect/canonical holds a lone surrogate",
        ),
    ],
)
def test_vector_content_that_cannot_be_used(tmp_path: Path, changes: dict[str, Any], says: str) -> None:
    """The schema does not check base64 (contentEncoding is only an annotation) nor UTF-8 writability."""
    bad = {k: v for k, v in vector(**changes).items() if v is not None}
    assert_one_line(cli("--vectors", str(folder_with(tmp_path, bad))), "t.json", says)


# --- 3 and 4. --impl and --timeout -------------------------------------------------


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "1e300", "0", "-1", "86401"])
def test_unusable_timeout(value: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["conformance", "--filter", "versioning", f"--timeout={value}"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err == [f"cmp: --timeout must be positive and at most 86400 seconds (one day), not {float(value):g}"]


def test_one_day_is_the_longest_timeout(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["conformance", "--filter", "versioning", "--timeout", "86400"]) == 0
    assert capsys.readouterr().out.endswith(" passed, 0 failed\n")


def test_unusable_timeout_with_an_implementation_is_one_line() -> None:
    """--timeout nan once reached the selector and raised there."""
    result = cli("--filter", "versioning", "--timeout", "nan", "--impl", f"{sys.executable} -c pass")
    assert_one_line(result, "--timeout must be positive")


def test_impl_with_unbalanced_quotes() -> None:
    assert_one_line(cli("--impl", "'unclosed"), "--impl cannot be split into a command: No closing quotation")


@pytest.mark.parametrize(
    ("command", "says"), [("", "--impl needs a command"), ("a\0b", "--impl holds a NUL character")]
)
def test_impl_that_is_empty_or_holds_nul(command: str, says: str, capsys: pytest.CaptureFixture[str]) -> None:
    """An empty --impl once ran the library instead; a NUL made Popen raise."""
    assert main(["conformance", "--filter", "versioning", "--impl", command]) == 2
    assert capsys.readouterr().err.splitlines() == [f"cmp: {says}"]


def test_impl_that_is_not_executable(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    script = tmp_path / "impl.py"
    script.write_text("print('never')\n")
    script.chmod(0o644)
    assert main(["conformance", "--filter", "versioning", "--impl", str(script)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith(f"cmp: --impl: cannot start {script}: not executable (chmod +x it")
    assert captured.err.count("\n") == 1  # one line, not one per vector


# --- 2. answers: deep, huge, odd, endless, missing ----------------------------------


def fake(tmp_path: Path, body: str) -> str:
    """A Python implementation whose whole program is ``body``; it logs each start in starts.log."""
    script = tmp_path / "fake.py"
    script.write_text(
        "import json, os, sys, time\n"
        f"open({str(tmp_path / 'starts.log')!r}, 'a').write('start\\n')\n" + textwrap.dedent(body)
    )
    return f"{sys.executable} {script}"


def starts(tmp_path: Path) -> int:
    return len((tmp_path / "starts.log").read_text().splitlines())


def test_deeply_nested_answer_fails_the_vector_and_restarts(tmp_path: Path) -> None:
    command = write_adapter(
        tmp_path,
        """\
        if count == 0:  # the first request this process sees
            open(sys.argv[0] + ".starts", "a").write("x")
        if request["id"] == "versioning/absent":
            print("[" * 100000, flush=True)
        else:
            print(json.dumps(answer), flush=True)
    """,
    )
    code, out = run_against(command)
    assert code == 1
    assert out[0] == 'FAIL versioning/absent: answer is not JSON (nested too deeply): "' + "[" * 80 + '"…'
    total = len(committed_vectors(["versioning"]))
    assert out[-1] == f"{total - 1} passed, 1 failed"
    assert (tmp_path / "broken.py.starts").read_text() == "xx"  # started again after the bad answer


def test_odd_json_answers_are_failed_vectors(tmp_path: Path) -> None:
    odd = {
        "versioning/absent": "1" * 5000,  # past Python's integer digit limit
        "versioning/missing-null": "1e999",  # a float that overflows to infinity
        "versioning/missing-number": "NaN",
        "versioning/missing-integer": '"a string"',
    }
    command = write_adapter(
        tmp_path,
        f"""\
        odd = {odd!r}
        if request["id"] in odd:
            print(odd[request["id"]], flush=True)
        elif request["id"] == "versioning/missing-true":
            print(json.dumps(dict(answer, errors=[[[1e999]]], redactions={{"a": None}})), flush=True)
        else:
            print(json.dumps(answer), flush=True)
    """,
    )
    code, out = run_against(command)
    assert code == 1
    failures = {line.split(": ", 1)[0]: line.split(": ", 1)[1] for line in out[:-1]}
    assert failures["FAIL versioning/absent"] == 'answer is not JSON: "' + "1" * 80 + '"…'
    assert failures["FAIL versioning/missing-null"] == "response is not a JSON object: Infinity"
    assert failures["FAIL versioning/missing-number"] == "response is not a JSON object: NaN"
    assert failures["FAIL versioning/missing-integer"] == 'response is not a JSON object: "a string"'
    assert failures["FAIL versioning/missing-true"] == (
        'errors: missing required [["version-missing", "$.ltm_version", null]]; '
        'errors: unexpected [["?", "?", [[Infinity]]]]'
    )
    assert out[-1].endswith(" passed, 5 failed")


def test_compare_survives_values_too_deep_to_render() -> None:
    deep: Any = "leaf"
    for _ in range(100_000):
        deep = [deep]
    want = committed_vectors(["versioning"])[0]
    problems = compare(want, {"conforming": deep, "errors": [deep, {"code": deep}], "redactions": deep})
    assert problems[0] == "conforming: expected false, got <list too deep or too large to show>"
    assert problems[1].startswith("errors: missing required")
    assert problems[2].startswith("errors: unexpected") and "<list too deep or too large to show>" in problems[2]
    assert compare(want, deep) == ["response is not a JSON object: <list too deep or too large to show>"]


def test_string_none_is_not_null() -> None:
    """Findings were compared through str(), so the string "None" matched an expected null keyword."""
    want = next(v for v in committed_vectors(["versioning"]) if v["id"] == "versioning/absent")
    errors = [dict(e, keyword="None") for e in want["expect"]["errors"]]
    problems = compare(want, {"conforming": False, "errors": errors})
    assert problems == [
        'errors: missing required [["version-missing", "$.ltm_version", null]]',
        'errors: unexpected [["version-missing", "$.ltm_version", "None"]]',
    ]
    assert compare(want, {"conforming": False, "errors": want["expect"]["errors"]}) == []


def test_implementation_that_closes_stdout_and_keeps_running(tmp_path: Path) -> None:
    """Once a wait without a limit: the run lasted as long as the implementation slept."""
    command = fake(tmp_path, "os.close(1)\ntime.sleep(60)\n")
    code, out = run_against(command, "--timeout", "0.5")
    assert code == 1
    assert out[0] == "FAIL versioning/absent: implementation closed its output without answering and kept running"
    assert "not run: the implementation failed 3 times in a row" in out[3]
    assert starts(tmp_path) == 3


def test_implementation_that_closes_stdout_and_exits(tmp_path: Path) -> None:
    code, out = run_against(fake(tmp_path, "os.close(1)\nsys.exit(4)\n"))
    assert code == 1
    assert out[0] == "FAIL versioning/absent: implementation exited (status 4) without answering"


def test_implementation_that_closes_stdin_and_keeps_running(tmp_path: Path) -> None:
    """It answers once, closing its input first, so the next request meets a closed pipe."""
    body = """\
        import base64
        from cmp.conformance import respond
        request = json.loads(sys.stdin.readline())
        os.close(0)
        answer = {"id": request["id"], **respond(base64.b64decode(request["input_base64"]))}
        print(json.dumps(answer), flush=True)
        time.sleep(60)
    """
    # Two vectors: every other request meets the closed pipe, and the runner waits out the
    # timeout on each such one before it starts the implementation again.
    folder = vector_folder(tmp_path / "vectors", committed_vectors(["versioning"])[:2])
    result = cli("--vectors", str(folder), "--impl", fake(tmp_path, body), "--timeout", "0.5")
    assert result.returncode == 1, result.stderr
    assert result.stdout.splitlines() == [
        "FAIL versioning/missing-null: implementation closed its input before reading the request and kept running",
        "1 passed, 1 failed",
    ]


def test_implementation_that_never_ends_its_line(tmp_path: Path) -> None:
    command = fake(tmp_path, "while True:\n    sys.stdout.write('x' * 65536)\n    sys.stdout.flush()\n")
    code, out = run_against(command, "--timeout", "30")
    assert code == 1
    assert out[0] == "FAIL versioning/absent: answer longer than 1 MiB"
    assert starts(tmp_path) == 3  # restarted after each, then given up on


def test_large_request_to_an_implementation_that_never_reads(tmp_path: Path) -> None:
    """A request larger than the pipe buffer once blocked the runner in write() with no timeout."""
    size_error = {"conforming": False, "errors": [{"code": "size", "path": "$", "keyword": None}]}
    folder = folder_with(tmp_path, vector(input="x" * 300_000, expect=size_error))
    result = cli("--vectors", str(folder), "--timeout", "0.5", "--impl", fake(tmp_path, "time.sleep(60)\n"))
    assert result.returncode == 1, result.stderr
    assert result.stdout.splitlines()[0] == "FAIL t/one: request not read within 0.5s"


def test_answer_written_before_the_whole_request_is_read(tmp_path: Path) -> None:
    """Reading and writing share one loop, so an early long answer cannot deadlock the pipes."""
    folder = folder_with(
        tmp_path,
        vector(
            input="x" * 300_000,
            expect={"conforming": False, "errors": [{"code": "size", "path": "$", "keyword": None}]},
        ),
    )
    answer = {"id": "t/one", "conforming": False, "errors": [{"code": "size", "path": "$", "keyword": None}]}
    body = f"""\
        sys.stdout.write(json.dumps({answer!r}) + " " * 500000 + "\\n")
        sys.stdout.flush()
        sys.stdin.readline()
        time.sleep(60)
    """
    result = cli("--vectors", str(folder), "--timeout", "30", "--impl", fake(tmp_path, body))
    assert (result.returncode, result.stdout) == (0, "1 passed, 0 failed\n"), result.stderr
