"""The friction a new user met (issue 29): shipped examples that failed the project's own
checks, no summary line, `check` with no FILE, lines with no FILE:LINE:COLUMN, a missing
--impl program, FORCE_COLOR, and a JSON error that said its place twice."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

import cmp
from cmp._canonical import file_bytes
from tests.support.cli import run_cli, run_main
from tests.support.packets import encode, full, put

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
LEAKY = EXAMPLES / "leaky-v0.2.json"  # holds a key on purpose: what check and scrub are shown on
SGR = re.compile(rb"\x1b\[[0-9;]*m")


def _examples() -> list[Path]:
    return sorted(EXAMPLES.rglob("*.json"))


@pytest.fixture
def good(tmp_path: Path) -> Path:
    path = tmp_path / "good.json"
    path.write_bytes(file_bytes(cmp.dumps(cmp.loads(encode(full())))))  # canonical
    return path


@pytest.fixture
def bad(tmp_path: Path) -> Path:
    path = tmp_path / "bad.json"
    path.write_bytes(encode(put(full(), "tags[0]", "Bad")))
    return path


# 1. The shipped examples pass the project's own checks.


def test_the_examples_are_found() -> None:
    names = {path.relative_to(EXAMPLES).as_posix() for path in _examples()}
    assert {"typical-v0.2.json", "minimal-v0.1.json", "leaky-v0.2.json", "chain/1-plan.json"} <= names


@pytest.mark.parametrize("path", _examples(), ids=lambda path: path.relative_to(EXAMPLES).as_posix())
def test_every_shipped_example_is_canonical_and_checks(path: Path, capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    data = path.read_bytes()
    assert data == file_bytes(cmp.dumps(cmp.loads(data))), "canonical bytes and one final newline"
    # The leaky example is refused by fmt unless told: formatting it anyway must change nothing.
    assert run_main(capsysbinary, "fmt", "--check", "--allow-unredacted", str(path)) == (0, b"", b"")
    status, out, err = run_main(capsysbinary, "check", str(path))
    if path == LEAKY:
        assert status == 1 and err == b""
        assert [line.split(": ", 1)[1] for line in out.decode().splitlines()] == [
            "redaction constraints[0]/aws-key: AKIA… (20 chars) at 15"
        ]
    else:
        assert (status, out, err) == (0, f"{path}: ok\n".encode(), b"")


def test_audit_of_the_examples_finds_only_the_planted_key(capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    status, out, err = run_main(capsysbinary, "audit", str(EXAMPLES))
    assert (status, err) == (1, b"cmp: audit: 6 packets, 1 with findings: 1 redaction aws-key\n")
    assert out.decode().splitlines() == [f"{LEAKY}: redaction constraints[0]/aws-key: AKIA… (20 chars) at 15"]
    assert run_main(capsysbinary, "audit", str(EXAMPLES / "chain"))[0] == 0


# 2. A summary line: on stderr, once, only in the line formats, not with -q, not for one source.


def test_check_ends_with_a_summary_on_stderr(good: Path, bad: Path, capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    status, out, err = run_main(capsysbinary, "check", str(good), str(bad), str(good.parent / "missing.json"))
    assert status == 2
    assert out.decode().splitlines()[0] == f"{good}: ok"  # stdout holds the results alone
    assert err.decode().splitlines() == [
        f"cmp: {good.parent / 'missing.json'}: cannot open: No such file or directory",
        "cmp: check: 2 packets, 1 accepted, 1 failed; 1 file not read",
    ]


def test_check_summary_counts_json_lines_packets(tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    batch = tmp_path / "batch.jsonl"
    batch.write_bytes(encode(full()) + b"\n" + encode(full()) + b"\n{\n")
    status, _, err = run_main(capsysbinary, "check", "--jsonl", str(batch))
    assert (status, err) == (1, b"cmp: check: 3 packets, 2 accepted, 1 failed\n")


@pytest.mark.parametrize("args", [["-q"], ["--format", "json"], ["--format", "sarif"]])
def test_no_summary_with_quiet_or_in_a_document(
    good: Path, bad: Path, capsysbinary: pytest.CaptureFixture[bytes], args: list[str]
) -> None:
    status, out, err = run_main(capsysbinary, "check", *args, str(good), str(bad))
    assert (status, err) == (1, b"")
    if "--format" in args:
        json.loads(out)  # the whole of stdout is the document


def test_github_format_keeps_its_commands_on_stdout(
    good: Path, bad: Path, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    status, out, err = run_main(capsysbinary, "check", "--format", "github", str(good), str(bad))
    assert status == 1 and all(line.startswith("::") for line in out.decode().splitlines())
    assert err == b"cmp: check: 2 packets, 1 accepted, 1 failed\n"


def test_one_source_has_no_summary(good: Path, capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    assert run_main(capsysbinary, "check", str(good)) == (0, f"{good}: ok\n".encode(), b"")


def test_fmt_summaries(good: Path, tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    loose = tmp_path / "loose.json"
    loose.write_bytes(json.dumps(full()).encode())
    status, out, err = run_main(capsysbinary, "fmt", "--check", str(good), str(loose))
    assert (status, out) == (1, f"{loose}:1:2: not canonical: expected a line end, found '\"'\n".encode())
    assert err == b"cmp: fmt: 2 files, 1 canonical, 1 not canonical\n"
    assert run_main(capsysbinary, "fmt", "--check", "-q", str(good), str(loose)) == (1, out, b"")
    status, out, err = run_main(capsysbinary, "fmt", "--write", str(good), str(loose))
    assert (status, out) == (0, f"{loose}: rewritten\n".encode())
    assert err == b"cmp: fmt: 2 files, 1 canonical, 1 rewritten\n"
    # Printing a packet, stdout is its bytes and nothing else goes anywhere.
    assert run_main(capsysbinary, "fmt", str(loose)) == (0, loose.read_bytes(), b"")


def test_lint_summary(good: Path, bad: Path, tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    linty = tmp_path / "linty.json"
    linty.write_bytes(encode(put(full(), "goal", "see http://localhost")))
    status, out, err = run_main(capsysbinary, "lint", str(good), str(linty), str(bad))
    assert status == 1 and out.decode().splitlines()[0] == f"{good}: ok"
    assert err == b"cmp: lint: 3 files, 1 ok, 1 with advice, 1 failed\n"
    assert run_main(capsysbinary, "lint", "-q", str(good), str(linty), str(bad))[2] == b""
    assert run_main(capsysbinary, "lint", "--format", "json", str(good), str(linty))[2] == b""


# 3. check with nothing to read says how to read stdin.


def test_check_without_a_file_names_stdin(capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    status, out, err = run_main(capsysbinary, "check")
    assert (status, out) == (2, b"")
    assert err == b"cmp: check needs a FILE or --jsonl FILE; - reads stdin (check - < packet.json)\n"


def test_check_dash_reads_stdin(good: Path) -> None:
    result = run_cli("check", "-", input=good.read_bytes())
    assert (result.returncode, result.stdout, result.stderr) == (0, b"-: ok\n", b"")


# 4. scrub, migrate and chain place their lines as check does.


def test_scrub_says_where_each_replaced_match_was(capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    status, out, err = run_main(capsysbinary, "scrub", str(LEAKY))
    assert status == 0 and cmp.check(out).ok
    _, check_out, _ = run_main(capsysbinary, "check", str(LEAKY))
    where = check_out.decode().split(": ", 1)[0]  # check's FILE:LINE:COLUMN of the key
    assert where == f"{LEAKY}:7:21"
    assert err.decode() == f"cmp: {where}: constraints[0]: aws-key replaced by [redacted:aws-key]\n"


def test_scrub_and_migrate_refusals_read_as_checks_lines(bad: Path, capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    _, check_out, _ = run_main(capsysbinary, "check", str(bad))
    assert re.match(rf"{re.escape(str(bad))}:1:\d+: \$\.tags\[0\]: ", check_out.decode())
    for command in (["scrub", str(bad)], ["migrate", str(bad), "--to", "0.1"]):
        assert run_main(capsysbinary, *command) == (1, check_out, b"")


def test_migrate_places_each_member_the_target_version_lacks(capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    typical = EXAMPLES / "typical-v0.2.json"
    lines = typical.read_text(encoding="utf-8").splitlines()
    status, out, _ = run_main(capsysbinary, "migrate", str(typical), "--to", "0.1")
    assert status == 1
    for line in out.decode().splitlines():
        found = re.match(rf"{re.escape(str(typical))}:(\d+):(\d+): \$\.(?:[a-z_]+\[0\]\.)?([a-z_]+): ", line)
        assert found, line
        row, column, member = int(found[1]), int(found[2]), found[3]
        assert lines[row - 1][column - 1 :].startswith(f'"{member}"'), line
    status, _, err = run_main(capsysbinary, "migrate", str(typical), "--to", "0.1", "--drop")
    assert status == 0
    assert f"cmp: {typical}:4:3: dropped $.parent_id (version 0.1 has no such member)" in err.decode().splitlines()


def test_chain_lines_are_placed(tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    packet = full()
    (tmp_path / "a.json").write_bytes(file_bytes(cmp.dumps(cmp.loads(encode(packet)))))
    (tmp_path / "b.json").write_bytes(file_bytes(cmp.dumps(cmp.loads(encode(packet)))))  # the same id again
    (tmp_path / "c.json").write_bytes(encode(put(full(), "tags[0]", "Bad")))
    status, out, _ = run_main(capsysbinary, "chain", str(tmp_path))
    assert status == 1
    text = out.decode()
    duplicate = re.search(rf"^{re.escape(str(tmp_path / 'b.json'))}:(\d+):(\d+): \(id [^)]+\) \$\.id: ", text, re.M)
    assert duplicate, text
    row, column = int(duplicate[1]), int(duplicate[2])
    written = (tmp_path / "b.json").read_text(encoding="utf-8").splitlines()[row - 1]
    assert written[column - 1 :].startswith(json.dumps(packet["id"])), "at the id's value"
    left_out = re.search(rf"^{re.escape(str(tmp_path / 'c.json'))}:1:\d+: not a conforming packet", text, re.M)
    assert left_out, text


# 5. conformance --impl with a program that cannot be started.


@pytest.mark.parametrize("kind", ["not-on-path", "no-file", "not-executable", "folder"])
def test_an_impl_that_cannot_start_is_one_line_and_exit_2(
    kind: str, tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    script = tmp_path / "adapter.sh"
    script.write_text("#!/bin/sh\nexit 0\n")
    script.chmod(0o644)
    program, why = {
        "not-on-path": ("cmp-no-such-adapter-program", "no such program on PATH"),
        "no-file": (str(tmp_path / "missing"), "no such file"),
        "not-executable": (str(script), "not executable (chmod +x it"),
        "folder": (str(tmp_path), "it is a folder"),
    }[kind]
    status, out, err = run_main(capsysbinary, "conformance", "--impl", f"{program} --flag")
    assert (status, out) == (2, b"")
    assert err.decode().startswith(f"cmp: --impl: cannot start {program}: {why}")
    assert err.count(b"\n") == 1


def test_an_impl_that_starts_is_still_run(tmp_path: Path) -> None:
    script = tmp_path / "adapter.sh"
    script.write_text("#!/bin/sh\nexit 0\n")
    script.chmod(0o755)
    result = run_cli("conformance", "--filter", "versioning", "--impl", str(script), text=True)
    assert result.returncode == 1 and "FAIL versioning/" in result.stdout  # started, then failed each vector


# 6. FORCE_COLOR colours text lines that do not go to a terminal; NO_COLOR wins.


def test_force_color_colours_text_lines(
    good: Path, bad: Path, capsysbinary: pytest.CaptureFixture[bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)
    plain = run_main(capsysbinary, "check", str(good), str(bad))[1]
    assert b"\x1b[" not in plain, "no colour into a pipe or a file by default"
    monkeypatch.setenv("FORCE_COLOR", "1")
    coloured = run_main(capsysbinary, "check", str(good), str(bad))[1]
    assert b"\x1b[32m" in coloured and b"\x1b[31m" in coloured
    assert SGR.sub(b"", coloured) == plain
    monkeypatch.setenv("TERM", "dumb")  # forced is forced
    assert run_main(capsysbinary, "check", str(good), str(bad))[1] == coloured


@pytest.mark.parametrize("args", [["check", "--format", "github"], ["check", "--format", "json"], ["fmt"]])
def test_force_color_leaves_machine_output_alone(
    args: list[str], good: Path, bad: Path, capsysbinary: pytest.CaptureFixture[bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FORCE_COLOR", "1")
    out = run_main(capsysbinary, *args, str(good if args == ["fmt"] else bad))[1]
    assert out and b"\x1b" not in out


@pytest.mark.parametrize(("force", "no"), [("1", "1"), ("", None), ("0", "yes")])
def test_no_color_wins_and_an_empty_force_color_is_unset(
    force: str, no: str | None, good: Path, capsysbinary: pytest.CaptureFixture[bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FORCE_COLOR", force)
    if no is None:
        monkeypatch.delenv("NO_COLOR", raising=False)
    else:
        monkeypatch.setenv("NO_COLOR", no)
    assert run_main(capsysbinary, "check", str(good))[1] == f"{good}: ok\n".encode()


def test_force_color_in_a_subprocess(good: Path) -> None:
    env = {key: value for key, value in os.environ.items() if key != "NO_COLOR"}
    result = run_cli("check", str(good), env={**env, "FORCE_COLOR": "true"})
    assert result.stdout == b"\x1b[32m" + f"{good}: ok".encode() + b"\x1b[0m\n"


# 7. A JSON error says its place once, the file's own.


def test_a_json_lines_error_says_the_files_place_once(
    tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    batch = tmp_path / "batch.jsonl"
    batch.write_bytes((encode(full()) + b"\n") * 6 + b"{x}\n")
    status, out, _ = run_main(capsysbinary, "check", "-q", "--jsonl", str(batch))
    assert status == 1
    assert out.decode() == f"{batch}:7:2: $: invalid json: Expecting property name enclosed in double quotes\n"


def test_a_json_error_in_a_file_keeps_its_words_not_its_place(
    tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    path = tmp_path / "cut.json"
    path.write_bytes(b'{\n  "goal": "unterminated\n')
    status, out, _ = run_main(capsysbinary, "check", str(path))
    # The newline that ends line 2 inside the string: said by check in front, not again after.
    assert (status, out.decode()) == (1, f"{path}:2:24: $: invalid json: Invalid control character\n")
    entry = json.loads(run_main(capsysbinary, "check", "--format", "json", str(path))[1])["results"][0]
    assert entry["errors"][0] | {"message": None} == {
        "code": "json",
        "path": "$",
        "keyword": None,
        "message": None,
        "line": 2,
        "column": 24,
    }
    assert entry["errors"][0]["message"] == "invalid json: Invalid control character"
    # The library's own finding, with no position of its own, still says where.
    [finding] = cmp.check(path.read_bytes()).errors
    assert finding.message == "invalid json: Invalid control character at line 2 column 24"
