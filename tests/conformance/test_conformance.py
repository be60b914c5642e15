"""The conformance vectors and runner: self-conformance, the generator contract, broken implementations."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import textwrap
from collections import Counter
from fnmatch import fnmatchcase
from pathlib import Path

import pytest

from cmp.cli import main
from tests.support.vectors import committed_vectors

ROOT = Path(__file__).resolve().parents[2]
VECTORS = ROOT / "conformance-vectors"


def test_library_passes_every_vector(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["conformance"]) == 0
    out = capsys.readouterr().out.splitlines()
    total = len(committed_vectors())
    assert out == [f"{total} passed, 0 failed"]


def test_enough_vectors_in_every_area() -> None:
    vectors = committed_vectors()
    assert len(vectors) >= 400
    areas = {v["area"] for v in vectors}
    assert areas == {"intake", "versioning", "schema-v0.1", "schema-v0.2", "created-at", "redaction", "canonical"}


def test_readme_counts_match_the_vector_files() -> None:
    """The README's totals, its table of files and its table of differences from the reference."""
    text = (VECTORS / "README.md").read_text("utf-8")
    vectors = committed_vectors()
    assert f"{len(vectors)} vectors in seven areas" in text
    files = re.findall(r"^\| `[a-z0-9.-]+\.json` \| ([a-z0-9.-]+) \| (\d+) \|", text, re.MULTILINE)
    assert {area: int(count) for area, count in files} == Counter(v["area"] for v in vectors)
    ids = [v["id"] for v in vectors]
    differences = re.findall(r"^\| (`[^|]+`) \| (\d+) \|", text, re.MULTILINE)
    assert len(differences) == 5
    for cell, count in differences:
        patterns = re.findall(r"`([^`]+)`", cell)
        assert len([i for i in ids if any(fnmatchcase(i, p) for p in patterns)]) == int(count), cell
    assert f"{sum(int(count) for _, count in differences)} vectors in all" in text


@pytest.mark.slow
def test_generator_and_committed_files_agree() -> None:
    generator = VECTORS.parent / "tools" / "generate_vectors.py"
    result = subprocess.run([sys.executable, str(generator), "--check"], capture_output=True, timeout=120)
    assert result.returncode == 0, result.stderr.decode()


def write_adapter(tmp_path: Path, body: str) -> str:
    """An adapter that wraps the real one's answers with ``body`` deciding what to send."""
    path = tmp_path / "broken.py"
    path.write_text(
        textwrap.dedent(
            """\
            import base64, json, sys, time
            from cmp.conformance import respond

            for count, line in enumerate(sys.stdin):
                request = json.loads(line)
                answer = {"id": request["id"], **respond(base64.b64decode(request["input_base64"]))}
            """
        )
        + textwrap.indent(textwrap.dedent(body), "    ")
    )
    return f"{sys.executable} {path}"


def run_against(command: str, *extra: str) -> tuple[int, list[str]]:
    result = subprocess.run(
        [sys.executable, "-m", "cmp", "conformance", "--filter", "versioning", "--impl", command, *extra],
        capture_output=True,
        timeout=120,
        cwd=ROOT,
    )
    return result.returncode, result.stdout.decode().splitlines()


@pytest.mark.slow
def test_wrong_answers_are_reported_per_vector(tmp_path: Path) -> None:
    command = write_adapter(
        tmp_path,
        """\
        if answer["canonical_base64"]:
            answer["canonical_base64"] = base64.b64encode(b"{}").decode()
        answer["errors"] = [dict(e, path="$.elsewhere") for e in answer["errors"]]
        print(json.dumps(answer), flush=True)
    """,
    )
    code, out = run_against(command)
    assert code == 1
    total = len(committed_vectors(["versioning"]))
    assert out[-1] == f"0 passed, {total} failed"
    minimal = next(line for line in out if line.startswith("FAIL versioning/minimal-0.2: "))
    assert re.fullmatch(
        r"FAIL versioning/minimal-0\.2: canonical: 2 bytes where \d+ were expected, first different at byte 1: "
        r'expected "\{\\n  \\"ltm_version\\": \\"0\.2\\",.*"…, got "\{\}"',
        minimal,
    ), minimal
    absent = next(line for line in out if line.startswith("FAIL versioning/absent: "))
    assert absent == (
        'FAIL versioning/absent: errors: missing required [["version-missing", "$.ltm_version", null]]; '
        'errors: unexpected [["version-missing", "$.elsewhere", null]]'
    )


@pytest.mark.slow
def test_a_canonical_difference_is_shown_where_it_is(tmp_path: Path) -> None:
    """Canonical forms run to kilobytes: the line shows the first differing byte, not two equal starts."""
    command = write_adapter(
        tmp_path,
        """\
        if answer["canonical_base64"]:
            data = base64.b64decode(answer["canonical_base64"]) + b"\\n"
            answer["canonical_base64"] = base64.b64encode(data).decode()
        print(json.dumps(answer), flush=True)
    """,
    )
    code, out = run_against(command)
    assert code == 1
    full = next(v for v in committed_vectors(["versioning"]) if v["id"] == "versioning/full-0.2")
    size = len(full["expect"]["canonical"].encode())
    line = next(line for line in out if line.startswith("FAIL versioning/full-0.2: "))
    assert line.startswith(
        f"FAIL versioning/full-0.2: canonical: {size + 1} bytes where {size} were expected, "
        f"first different at byte {size}: expected …"
    ), line
    expected, got = line.split(": expected ", 1)[1].split(", got ", 1)
    # Both end where the forms end: the expected one at its last brace, ours one newline later.
    assert expected.endswith('\\n}"') and got.endswith('\\n}\\n"'), line


@pytest.mark.slow
def test_silent_implementation_times_out_and_runner_gives_up(tmp_path: Path) -> None:
    command = write_adapter(tmp_path, "time.sleep(60)\n")
    code, out = run_against(command, "--timeout", "0.5")
    assert code == 1
    assert out[0].endswith("no answer within 0.5s")
    assert "not run: the implementation failed 3 times in a row" in out[3]


@pytest.mark.slow
def test_crash_on_one_vector_fails_only_that_vector(tmp_path: Path) -> None:
    command = write_adapter(
        tmp_path,
        """\
        if request["id"] == "versioning/absent":
            raise SystemExit(3)
        print(json.dumps(answer), flush=True)
    """,
    )
    code, out = run_against(command)
    assert code == 1
    assert out[0] == "FAIL versioning/absent: implementation exited (status 3) without answering"
    total = len(committed_vectors(["versioning"]))
    assert out[-1] == f"{total - 1} passed, 1 failed"


@pytest.mark.slow
def test_garbage_and_wrong_ids_are_failures(tmp_path: Path) -> None:
    command = write_adapter(
        tmp_path,
        """\
        if request["id"] == "versioning/absent":
            print("not json", flush=True)
        elif request["id"] == "versioning/missing-null":
            print(json.dumps(dict(answer, id="other")), flush=True)
        else:
            print(json.dumps(answer), flush=True)
    """,
    )
    code, out = run_against(command)
    assert code == 1
    assert out[0] == 'FAIL versioning/absent: answer is not JSON: "not json"'
    assert 'answer is for id "other"' in out[1]
    assert out[-1].endswith(" passed, 2 failed")


@pytest.mark.slow
def test_missing_command_is_one_line_and_exit_2_not_a_traceback() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "cmp", "conformance", "--impl", "/nonexistent/implementation"],
        capture_output=True,
        timeout=120,
        cwd=ROOT,
    )
    assert (result.returncode, result.stdout) == (2, b"")
    assert result.stderr == b"cmp: --impl: cannot start /nonexistent/implementation: no such file\n"


def test_json_format_and_filter(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["conformance", "--filter", "created-at", "--format", "json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document == {"passed": len(committed_vectors(["created-at"])), "failed": 0, "failures": []}


def test_unknown_area_and_bad_folder_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["conformance", "--filter", "nope"]) == 2
    assert "no vectors for area nope" in capsys.readouterr().err
    assert main(["conformance", "--vectors", str(tmp_path / "missing")]) == 2


def test_malformed_vector_file_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    shutil.copy(VECTORS / "vectors.schema.json", tmp_path)
    (tmp_path / "bad.json").write_text(json.dumps({"area": "bad", "vectors": [{"id": "bad/x"}]}))
    assert main(["conformance", "--vectors", str(tmp_path)]) == 2
    assert "bad.json" in capsys.readouterr().err


def test_a_wrong_expectation_fails(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    shutil.copy(VECTORS / "vectors.schema.json", tmp_path)
    vector = committed_vectors(["versioning"])[0]
    vector.pop("area")
    vector["expect"] = {"conforming": True, "redactions": [], "canonical": "{}"}
    (tmp_path / "one.json").write_text(json.dumps({"area": "one", "vectors": [vector]}))
    assert main(["conformance", "--vectors", str(tmp_path)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith(f"FAIL {vector['id']}: conforming: expected true, got false")
    assert out[-1] == "0 passed, 1 failed"


def test_bad_runner_arguments_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["conformance", "--timeout", "0"]) == 2
    assert "--timeout must be positive" in capsys.readouterr().err
    assert main(["conformance", "--impl", "   "]) == 2
    assert "--impl needs a command" in capsys.readouterr().err
