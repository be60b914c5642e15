"""``gate``: check, canonical form and lint in one pass, the recommended pre-commit hook,
where each finding is said once (issue 29, item 5)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import cmp
from cmp._canonical import file_bytes
from tests.support.cli import run_main
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
