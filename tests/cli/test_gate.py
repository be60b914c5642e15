"""``gate``: check, canonical form and lint in one pass, the recommended pre-commit hook,
where each finding is said once (issue 29, item 5)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import cmp
from cmp._canonical import file_bytes
from tests.support.cli import run_cli, run_main
from tests.support.packets import encode, full, put

AWS = "AKIAIOSFODNN7EXAMPLE"  # AWS's documented example key id: synthetic


def _write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


def _canonical(packet: dict[str, object]) -> bytes:
    return file_bytes(cmp.dumps(cmp.loads(encode(packet))))


@pytest.fixture
def good(tmp_path: Path) -> Path:
    return _write(tmp_path / "good.json", _canonical(full()))


@pytest.fixture
def leaky(tmp_path: Path) -> Path:
    # Not canonical either: the key must still be all that is said about it.
    return _write(tmp_path / "leaky.json", encode(put(full(), "constraints[0]", f"The key {AWS} is old.")))


def test_a_clean_canonical_file_is_ok(good: Path, capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    assert run_main(capsysbinary, "gate", str(good)) == (0, f"{good}: ok\n".encode(), b"")


def test_a_leaked_key_is_said_once_where_three_commands_say_it_three_times(
    leaky: Path, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    status, out, err = run_main(capsysbinary, "gate", str(leaky))
    assert (status, err) == (1, b"")
    lines = out.decode().splitlines()
    assert [line for line in lines if "aws-key" in line] == lines and len(lines) == 1, lines
    assert lines[0].startswith(f"{leaky}:1:") and ": redaction constraints[0]/aws-key: AKIA… (20 chars)" in lines[0]
    assert AWS[4:] not in out.decode()
    # What the three hooks it replaces print for the same file: the key, three times.
    said = 0
    for command in (("check",), ("fmt", "--check"), ("lint",)):
        _, out, _ = run_main(capsysbinary, *command, str(leaky))
        said += out.decode().count("constraints[0]/aws-key")
    assert said == 3


def test_an_accepted_file_that_is_not_canonical_says_where_and_why(
    tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    path = _write(tmp_path / "one-line.json", json.dumps(full()).encode())
    status, out, err = run_main(capsysbinary, "gate", str(path))
    assert (status, err) == (1, b"")
    assert out.decode() == f"{path}:1:2: not canonical: expected a line end, found '\"' (fmt --write rewrites it)\n"
    assert path.read_bytes() == json.dumps(full()).encode()  # gate writes nothing


def test_a_refused_file_gets_checks_lines_and_no_word_on_its_form(
    tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    path = _write(tmp_path / "bad.json", encode(put(full(), "tags[0]", "Bad")))
    status, out, _ = run_main(capsysbinary, "gate", str(path))
    _, checked, _ = run_main(capsysbinary, "check", str(path))
    assert status == 1 and out == checked and b"not canonical" not in out


def test_lint_advice_warns_and_fails_only_with_strict(
    tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    path = _write(tmp_path / "advice.json", _canonical(put(full(), "goal", "Fix it. Then ship it.")))
    status, out, _ = run_main(capsysbinary, "gate", str(path))
    _, linted, _ = run_main(capsysbinary, "lint", str(path))
    assert status == 0 and out == linted and out.decode().rstrip().endswith("[sentences]")
    assert run_main(capsysbinary, "gate", "--strict", str(path))[:2] == (1, out)


def test_a_folder_is_walked_and_counted_and_an_unreadable_file_is_exit_2(
    tmp_path: Path, good: Path, leaky: Path, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    _write(tmp_path / "one-line.json", json.dumps(full()).encode())
    status, _, err = run_main(capsysbinary, "gate", str(tmp_path))
    assert status == 1
    assert err == b"cmp: gate: 3 files, 1 ok, 1 not canonical, 1 failed\n"
    assert run_main(capsysbinary, "gate", "-q", str(tmp_path))[2] == b""
    status, out, err = run_main(capsysbinary, "gate", str(good), str(tmp_path / "missing.json"))
    assert (status, out) == (2, f"{good}: ok\n".encode())
    assert err.startswith(f"cmp: {tmp_path / 'missing.json'}: ".encode())


# The repository's settings (pyproject.toml, CMP_*) and a baseline: gate judges as check and lint do.


def _project(tmp_path: Path, table: str, files: dict[str, bytes]) -> Path:
    (tmp_path / "pyproject.toml").write_text(f"[tool.core-memory-packet]\n{table}\n")
    for name, data in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return tmp_path


def test_gate_reads_the_repository_settings(tmp_path: Path) -> None:
    advice = _canonical(put(full(), "goal", "Fix it. Then ship it."))
    repo = _project(tmp_path, "lint-strict = true", {"packets/advice.json": advice})
    strict = run_cli("gate", "packets/advice.json", cwd=repo, text=True)
    assert strict.returncode == 1 and strict.stdout.rstrip().endswith("[sentences]"), strict
    assert run_cli("gate", "--no-strict", "packets/advice.json", cwd=repo).returncode == 0
    (repo / "pyproject.toml").write_text('[tool.core-memory-packet]\nlint-strict = true\nignore = ["lint/sentences"]\n')
    assert run_cli("gate", "packets/advice.json", cwd=repo, text=True).stdout == "packets/advice.json: ok\n"
    (repo / "pyproject.toml").write_text("[tool.core-memory-packet]\nlint-strict = 1\n")
    bad = run_cli("gate", "packets/advice.json", cwd=repo, text=True)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "lint-strict must be true or false" in bad.stderr


def test_gate_with_a_baseline_fails_only_on_new_findings(tmp_path: Path) -> None:
    known = _canonical(put(full(), "constraints[0]", f"The key {AWS} is old."))
    repo = _project(tmp_path, 'baseline = ".cmp-baseline.json"', {"packets/known.json": known})
    assert run_cli("baseline", "packets", cwd=repo).returncode == 0  # written where the setting says
    result = run_cli("gate", "packets/known.json", cwd=repo, text=True)
    assert result.returncode == 0, result
    assert (
        result.stdout.startswith("packets/known.json:")
        and ": known redaction constraints[0]/aws-key: " in result.stdout
    )
    assert result.stdout.endswith("packets/known.json: ok\n") and AWS[4:] not in result.stdout
    new = put(full(), "constraints[0]", f"The key {AWS} is old.")
    new["constraints"].append("The old key AKIAIOSFODNN7EXAMPLF is gone too.")
    (repo / "packets" / "known.json").write_bytes(_canonical(new))
    result = run_cli("gate", "packets/known.json", cwd=repo, text=True)
    assert result.returncode == 1
    said = [re.sub(r"^packets/known\.json:\d+:\d+: ", "", line) for line in result.stdout.splitlines()]
    # A file's hits of a rule are known while it holds the matches of it the baseline saw:
    # with one more key, both are new (the baseline's entry is stale).
    assert said == [
        "redaction constraints[0]/aws-key: AKIA… (20 chars) at 8",
        "redaction constraints[1]/aws-key: AKIA… (20 chars) at 12",
    ]
    assert "stale: redaction/aws-key in packets/known.json (constraints[0])" in result.stderr


def test_gate_ignore_and_select_choose_rules(leaky: Path, capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    canonical = _write(
        leaky.with_name("canonical-leaky.json"), _canonical(put(full(), "constraints[0]", f"The key {AWS} is old."))
    )
    assert run_main(capsysbinary, "gate", "--ignore", "redaction/aws-key", str(canonical)) == (
        0,
        f"{canonical}: ok\n".encode(),
        b"",
    )
    status, _, err = run_main(capsysbinary, "gate", "--ignore", "redaction/no-such-rule", str(canonical))
    assert status == 2 and err.count(b"\n") == 1
    # --select: only the named rules' findings are reported.
    selected = run_main(capsysbinary, "gate", "--select", "redaction/gh-token", str(canonical))
    assert selected == (0, f"{canonical}: ok\n".encode(), b"")


def test_a_key_behind_a_schema_error_is_said_too(tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    packet = put(put(full(), "tags[0]", "Bad"), "constraints[0]", f"The key {AWS} is old.")
    path = _write(tmp_path / "refused.json", encode(packet))
    status, out, _ = run_main(capsysbinary, "gate", str(path))
    lines = out.decode().splitlines()
    assert status == 1 and len(lines) == 2, lines
    assert (
        "$.tags[0]" in lines[0] and ": redaction (refused packet) constraints[0]/aws-key: AKIA… (20 chars)" in lines[1]
    )
    assert AWS[4:] not in out.decode()


# --format: the formats of check (issue 47, item 14), each finding once as in text.


@pytest.fixture
def mixed(tmp_path: Path, good: Path, leaky: Path) -> list[str]:
    """A clean file, a leaky one (refused), one not canonical, one lint advises on, one missing."""
    one_line = _write(tmp_path / "one-line.json", json.dumps(full()).encode())
    advised = _write(tmp_path / "advice.json", _canonical(put(full(), "goal", "Fix it. Then ship it.")))
    return [str(good), str(leaky), str(one_line), str(advised), str(tmp_path / "missing.json")]


def test_gate_offers_the_formats_check_offers() -> None:
    from cmp.cli.reporters import offered

    assert offered("gate") == offered("check") == ("text", "json", "github", "sarif")
    result = run_cli("gate", "--format", "junit", "x.json", text=True)
    assert result.returncode == 2 and "invalid choice: 'junit'" in result.stderr


def test_gate_json_is_lints_results_with_canonical_and_validates(mixed: list[str]) -> None:
    import jsonschema

    from tests.cli.test_cli_contracts import _report_schema

    result = run_cli("gate", "--format", "json", *mixed, text=True)
    assert result.returncode == 2 and AWS[4:] not in result.stdout
    assert result.stderr == f"cmp: {mixed[-1]}: cannot open: No such file or directory\n"  # no summary: a document
    document = json.loads(result.stdout)
    jsonschema.Draft202012Validator(_report_schema()).validate(document)
    found = {
        Path(r["file"]).name: (r["accepted"], r["canonical"], [f["keyword"] for f in r["lint"]], r["error"] is None)
        for r in document["results"]
    }
    assert found == {
        "good.json": (True, True, [], True),
        "leaky.json": (False, None, [], True),
        "one-line.json": (True, False, [], True),
        "advice.json": (True, True, ["sentences"], True),
        "missing.json": (False, None, [], False),
    }


def test_gate_sarif_places_each_result_on_a_catalogued_rule(mixed: list[str]) -> None:
    import jsonschema

    from tests.cli.test_cli_formats import _sarif_schema

    result = run_cli("gate", "--format", "sarif", *mixed, text=True)
    assert result.returncode == 2 and AWS[4:] not in result.stdout
    log = json.loads(result.stdout)
    jsonschema.Draft4Validator(_sarif_schema()).validate(log)
    (run,) = log["runs"]
    rules = run["tool"]["driver"]["rules"]
    found = []
    for item in run["results"]:
        assert rules[item["ruleIndex"]]["id"] == item["ruleId"]
        location = item["locations"][0]["physicalLocation"]
        found.append((item["ruleId"], item["level"], Path(location["artifactLocation"]["uri"]).name))
    assert found == [
        ("redaction/aws-key", "error", "leaky.json"),
        ("gate", "error", "one-line.json"),
        ("lint/sentences", "warning", "advice.json"),
    ]
    (formed,) = [item for item in run["results"] if item["ruleId"] == "gate"]
    assert formed["locations"][0]["physicalLocation"]["region"] == {"startLine": 1, "startColumn": 2}
    assert formed["properties"] == {"keyword": "not-canonical"}
    assert run["invocations"][0]["executionSuccessful"] is False


def test_gate_github_annotates_each_finding_once(mixed: list[str]) -> None:
    result = run_cli("gate", "--format", "github", "--strict", *mixed, text=True)
    assert result.returncode == 2 and AWS[4:] not in result.stdout
    lines = result.stdout.splitlines()
    shown = [re.sub(r"file=[^,:]*/", "file=", re.sub(r",line=\d+,col=\d+", "", line)).split("::")[1] for line in lines]
    assert shown == [
        "error file=leaky.json,title=cmp redaction (aws-key)",
        "error file=one-line.json,title=cmp gate (not-canonical)",
        "error file=advice.json,title=cmp lint (sentences)",
        "error file=missing.json,title=cmp%3A not checked",
    ]
    assert ",line=1,col=2," in lines[1]
    assert result.stderr.splitlines()[-1] == (
        "cmp: gate: 4 files, 1 ok, 1 with advice, 1 not canonical, 1 failed; 1 file not read"
    )
