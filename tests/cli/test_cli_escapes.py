"""Text output: control characters in file names and quoted packet text are printed as escapes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from cmp.cli import main, render_line
from tests.support.packets import encode, full, put

GOOD = encode(full())
UNPRINTABLE = [*range(0x20), 0x7F, *range(0x80, 0xA0), 0x2028, 0x2029, *range(0x202A, 0x202F), *range(0x2066, 0x206A)]


@pytest.mark.parametrize("code", UNPRINTABLE)
def test_render_line_is_always_one_visible_line(code: int) -> None:
    rendered = render_line(f"a{chr(code)}b")
    text = rendered.decode("utf-8")
    assert text.endswith("\n") and len(text[:-1].splitlines()) == 1
    assert chr(code) not in text[:-1]
    assert text.startswith("a\\") and text.endswith("b\n")
    assert render_line(text[:-1]) == rendered  # an escape is plain text: escaping twice changes nothing


def test_render_line_names_the_common_escapes_and_keeps_ordinary_text() -> None:
    assert render_line("a\nb\rc\td\x1be\x85f\u2028g\u202eh") == b"a\\nb\\rc\\td\\x1be\\x85f\\u2028g\\u202eh\n"
    assert render_line("café: ok ✓ C:\\temp") == "café: ok ✓ C:\\temp\n".encode()


def test_newline_in_a_file_name_cannot_forge_a_result(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    forged = tmp_path / "x.json: ok\nfake"
    forged.write_bytes(encode(put(full(), "tags[0]", "Bad")))
    assert main(["check", str(forged)]) == 1
    out = capsys.readouterr().out
    assert out == f"{tmp_path}/x.json: ok\\nfake:1:596: $.tags[0]: 'Bad' does not match ^[a-z0-9][a-z0-9-]{{0,31}}$\n"


def test_carriage_returns_in_found_text_cannot_hide_the_line_prefix(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "key.json"
    path.write_bytes(encode(put(full(), "goal", "key ssh-rsa\r\rAAAAB3NzaC1yc2EAAAADAQABAAABAQ")))
    assert main(["check", str(path)]) == 1
    out = capsys.readouterr().out
    assert "\r" not in out
    assert out == f"{path}:1:111: redaction goal/ssh-public-key: ssh-rsa\\r… (39 chars) at 4\n"
    assert main(["check", "--show-found", str(path)]) == 1
    out = capsys.readouterr().out
    assert "\r" not in out
    assert out == f"{path}:1:111: redaction goal/ssh-public-key: ssh-rsa\\r\\rAAAAB3NzaC1yc2EAAAADAQA…\n"


def test_error_lines_on_stderr_are_escaped_too(tmp_path: Path) -> None:
    missing = tmp_path / "gone\n\x1b[2Kcmp: all good\u2028.json"
    result = subprocess.run([sys.executable, "-m", "cmp", "check", str(missing)], capture_output=True, timeout=60)
    assert result.returncode == 2
    expected = f"cmp: {tmp_path}/gone\\n\\x1b[2Kcmp: all good\\u2028.json: cannot open: No such file or directory\n"
    assert result.stderr.decode() == expected


def test_json_output_keeps_the_real_name(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    odd = tmp_path / "a\nb\x1b.json"
    odd.write_bytes(GOOD)
    assert main(["check", "--format", "json", str(odd)]) == 0
    assert json.loads(capsys.readouterr().out)["results"][0]["file"] == str(odd)
