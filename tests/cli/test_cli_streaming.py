"""``check --format json`` streams its document: same bytes as one json.dumps, flat memory, early results."""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
from pathlib import Path

import pytest

from cmp.cli import main
from tests.cli.test_cli import HIGH_WATER_MARK
from tests.support.packets import encode, full, put

GOOD = encode(full())
BAD = encode(put(full(), "tags[0]", "Bad"))
# A packet with a hundred schema errors: its result is some 140 KB of Python objects.
NOISY = b'{"ltm_version":"0.2","tags":[' + b",".join([b"1"] * 100) + b"]}"


def unreadable_result(error: str, **where: object) -> dict[str, object]:
    """What --format json says of a source it could not judge: a judged result's members,
    with no verdict, and the reason. Spelled out here, not taken from the code under test."""
    return {
        **where,
        "ok": False,
        "conforming": False,
        "accepted": False,
        "version": None,
        "errors": [],
        "redactions": [],
        "error": error,
    }


def as_one_dumps(results: list[dict[str, object]]) -> str:
    """What the CLI wrote before it streamed: the whole document in one ``json.dumps`` (its version first)."""
    return json.dumps({"version": 1, "results": results}, ensure_ascii=False, indent=2) + "\n"


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_json_document_is_byte_for_byte_one_dumps_and_in_input_order(
    tmp_path: Path, jobs: str, capsys: pytest.CaptureFixture[str]
) -> None:
    good, bad, missing, jsonl = (tmp_path / name for name in ("good.json", "bad.json", "missing.json", "p.jsonl"))
    good.write_bytes(GOOD)
    bad.write_bytes(BAD)
    jsonl.write_bytes(b"\n".join([GOOD, BAD, b"", "{\u2028é".encode()]))
    argv = ["check", "--format", "json", "--jobs", jobs, str(good), str(missing), str(bad), "--jsonl", str(jsonl)]
    assert main(argv) == 2
    captured = capsys.readouterr()
    results = json.loads(captured.out)["results"]
    assert captured.out == as_one_dumps(results)
    # The unreadable file keeps its place among the results, with workers too.
    assert [(r["file"], r.get("line"), r["ok"]) for r in results] == [
        (str(good), None, True),
        (str(missing), None, False),
        (str(bad), None, False),
        (str(jsonl), 1, True),
        (str(jsonl), 2, False),
        (str(jsonl), 4, False),
    ]
    # An unreadable source has the members of a judged one, and says why it has no verdict.
    assert results[1] == unreadable_result("cannot open: No such file or directory", file=str(missing))
    assert all(list(r) == list(results[1]) for r in results if "line" not in r)
    assert all(r["error"] is None for r in results if r is not results[1])
    assert captured.err == f"cmp: {missing}: cannot open: No such file or directory\n"


def test_json_document_without_results(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"\n\n")
    assert main(["check", "--format", "json", "--jsonl", str(empty)]) == 0
    assert capsys.readouterr().out == as_one_dumps([]) == '{\n  "version": 1,\n  "results": []\n}\n'


def read_until(fd: int, marker: bytes) -> bytes:
    """Bytes from ``fd`` until ``marker`` has arrived; fails (not hangs) if it never does."""
    data = b""
    while marker not in data:
        ready, _, _ = select.select([fd], [], [], 30)
        if not ready:
            pytest.fail(f"no {marker!r} in the output yet: {data!r}")
        chunk = os.read(fd, 65536)
        if not chunk:
            pytest.fail(f"output ended without {marker!r}: {data!r}")
        data += chunk
    return data


def test_json_results_are_written_before_the_input_ends() -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", "cmp", "check", "--format", "json", "--jsonl", "-"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdin is not None and process.stdout is not None
    try:
        process.stdin.write(GOOD + b"\n")
        process.stdin.flush()
        # The first result arrives while stdin is still open: nothing waits for the end.
        early = read_until(process.stdout.fileno(), b'"redactions": []')
        process.stdin.write(BAD + b"\n")
        out, err = process.communicate(timeout=60)
    finally:
        process.kill()
        process.wait(timeout=60)
    document = early + out
    results = json.loads(document)["results"]
    assert [(r["line"], r["ok"]) for r in results] == [(1, True), (2, False)]
    assert document.decode() == as_one_dumps(results)
    assert (process.returncode, err) == (1, b"")


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_json_output_memory_does_not_grow_with_the_number_of_results(tmp_path: Path, jobs: str) -> None:
    path = tmp_path / "noisy.jsonl"
    path.write_bytes(b"\n".join([NOISY] * 2000))  # held until the end, their results took 280 MB
    argv = [sys.executable, "-c", HIGH_WATER_MARK, "check", "--format", "json", "--jobs", jobs, "--jsonl", str(path)]
    result = subprocess.run(argv, capture_output=True, timeout=120)
    assert result.returncode == 1
    results = json.loads(result.stdout)["results"]
    assert [r["line"] for r in results] == list(range(1, 2001))
    assert all(len(r["errors"]) >= 100 for r in results)
    assert int(result.stderr) < 100_000  # KiB, the parent alone (each worker has its own)
