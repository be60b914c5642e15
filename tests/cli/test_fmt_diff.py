"""``fmt --diff`` (a unified diff against the canonical bytes, nothing written), and the
"not canonical" line of ``fmt --check``, which says where a file first differs and why
without quoting the packet (issue 29, item 5)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import cmp
from cmp._canonical import file_bytes
from tests.support.cli import run_main
from tests.support.packets import encode, full, put

AWS = "AKIAIOSFODNN7EXAMPLE"  # AWS's documented example key id: synthetic
URL_PASSWORD = "https://deploy:Zq8vLk2mTw@example.org/app"  # made up; only the extended rules find it


def _canonical(packet: dict[str, object]) -> bytes:
    return file_bytes(cmp.dumps(cmp.loads(encode(packet))))


def _new_text(diff: str) -> str:
    """The text after a one-hunk unified diff over a whole file: its context and added lines."""
    lines = diff.splitlines()
    assert lines[2].startswith("@@ -1,") or lines[2].startswith("@@ -1 "), diff
    kept = [line[1:] for line in lines[3:] if line[:1] in (" ", "+")]
    ends_without_newline = lines[-1] == "\\ No newline at end of file" and lines[-2][:1] in (" ", "+")
    return "\n".join(kept) + ("" if ends_without_newline else "\n")


def test_a_canonical_file_has_no_diff(tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    path = tmp_path / "good.json"
    path.write_bytes(_canonical(full()))
    assert run_main(capsysbinary, "fmt", "--diff", str(path)) == (0, b"", b"")


def test_the_diff_turns_the_file_into_its_canonical_bytes_and_writes_nothing(
    tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    path = tmp_path / "one-line.json"
    data = json.dumps(full()).encode()  # conforming, on one line and without a final newline
    path.write_bytes(data)
    status, out, err = run_main(capsysbinary, "fmt", "--diff", str(path))
    assert (status, err) == (1, b"")
    text = out.decode()
    assert text.startswith(f"--- {path}\n+++ {path}\n@@ -1 +1,")
    assert f"-{data.decode()}\n\\ No newline at end of file\n+{{\n" in text
    assert _new_text(text).encode() == _canonical(full())
    assert path.read_bytes() == data  # nothing written


@pytest.mark.parametrize(
    ("ending", "tail"),
    [(b"", "-}\n\\ No newline at end of file\n+}\n"), (b"\n\n", " }\n-\n")],
    ids=["no-final-newline", "two-final-newlines"],
)
def test_the_diff_of_a_file_end(
    tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes], ending: bytes, tail: str
) -> None:
    path = tmp_path / "packet.json"
    path.write_bytes(cmp.dumps(cmp.loads(encode(full()))) + ending)
    status, out, _ = run_main(capsysbinary, "fmt", "--diff", str(path))
    assert status == 1 and out.decode().endswith(tail)


def test_a_crlf_file_shows_its_carriage_returns(tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    path = tmp_path / "windows.json"
    path.write_bytes(_canonical(full()).replace(b"\n", b"\r\n"))
    status, out, _ = run_main(capsysbinary, "fmt", "--diff", str(path))
    assert status == 1
    assert "\n-{\\r\n" in out.decode() and "\n+{\n" in out.decode()  # the CR as an escape, never raw
    assert b"\r" not in out


def test_the_diff_escapes_what_could_disguise_a_line(
    tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    path = tmp_path / "bidi.json"
    path.write_bytes(encode(put(full(), "goal", "Fix the bug \u202e in the parser.")))
    status, out, _ = run_main(capsysbinary, "fmt", "--diff", str(path))
    assert status == 1
    assert "\u202e".encode() not in out and b'+  "goal": "Fix the bug \\u202e in the parser.",\n' in out


@pytest.mark.parametrize("allow", [(), ("--allow-unredacted",)], ids=["refused", "allow-unredacted"])
@pytest.mark.parametrize(
    ("text", "rules"),
    [(f"The key {AWS} is old.", "default"), (f"Deploy with {URL_PASSWORD} now.", "extended")],
    ids=["aws-key", "url-credentials"],
)
def test_a_packet_holding_a_credential_is_never_diffed(
    tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes], text: str, rules: str, allow: tuple[str, ...]
) -> None:
    # Whatever --allow-unredacted and --rules say: a diff's lines are the packet's text.
    path = tmp_path / "leaky.json"
    data = json.dumps(put(full(), "constraints[0]", text), indent=1).encode()
    path.write_bytes(data)
    status, out, err = run_main(capsysbinary, "fmt", "--diff", *allow, str(path))
    assert (status, err) == (1, b"")
    lines = out.decode().splitlines()
    assert len(lines) == 1, lines
    marked = "(extended) " if rules == "extended" else ""
    line = data[: data.index(text.encode())].count(b"\n") + 1
    said = f": not diffed: a diff would show what a redaction rule found: {marked}constraints[0]/"
    assert re.fullmatch(rf"{re.escape(f'{path}:{line}:')}\d+{re.escape(said)}.*", lines[0]), lines[0]
    assert "Zq8vLk2mTw" not in lines[0] and AWS[4:] not in lines[0]
    assert path.read_bytes() == data


def test_diff_takes_several_files_and_folders(tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    (tmp_path / "a.json").write_bytes(_canonical(full()))
    (tmp_path / "b.json").write_bytes(json.dumps(full()).encode())
    status, out, err = run_main(capsysbinary, "fmt", "--diff", str(tmp_path))
    assert status == 1
    assert out.decode().startswith(f"--- {tmp_path / 'b.json'}\n")
    assert err == b"cmp: fmt: 2 files, 1 canonical, 1 not canonical\n"


@pytest.mark.parametrize("other", ["--check", "--write"])
def test_diff_is_a_mode_of_its_own(tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes], other: str) -> None:
    path = tmp_path / "packet.json"
    path.write_bytes(_canonical(full()))
    status, out, err = run_main(capsysbinary, "fmt", "--diff", other, str(path))
    assert (status, out) == (2, b"")
    assert err.startswith(b"cmp: argument ") and err.count(b"\n") == 1


# "not canonical" says where and why.


def _not_canonical(capsysbinary: pytest.CaptureFixture[bytes], path: Path) -> str:
    status, out, err = run_main(capsysbinary, "fmt", "--check", str(path))
    assert (status, err) == (1, b"")
    return out.decode()


def test_members_out_of_order_are_placed_but_not_quoted(
    tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    lines = _canonical(full()).split(b"\n")
    lines[1], lines[2] = lines[2], lines[1]  # "id" before "ltm_version": both end with a comma
    path = tmp_path / "order.json"
    path.write_bytes(b"\n".join(lines))
    assert _not_canonical(capsysbinary, path) == (
        f"{path}:2:4: not canonical: the text differs from its canonical form here "
        "(the order of members or how a string is written)\n"
    )


def test_the_column_counts_code_points_and_no_text_is_quoted(
    tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    canonical = _canonical(put(full(), "goal", "Ship the café menu."))
    at = canonical.index(b'menu.",\n') + len(b'menu."')
    path = tmp_path / "space.json"
    path.write_bytes(canonical[:at] + b" " + canonical[at:])  # a space before the goal's comma
    line = canonical[:at].count(b"\n") + 1
    column = len('  "goal": "Ship the café menu."') + 1
    message = _not_canonical(capsysbinary, path)
    assert message == f"{path}:{line}:{column}: not canonical: expected ',', found a space\n"


def test_a_string_escaped_otherwise(tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    canonical = _canonical(put(full(), "goal", "Ship the fix."))
    path = tmp_path / "escaped.json"
    path.write_bytes(canonical.replace(b"Ship the fix.", b"Ship the \\u0066ix."))
    line = canonical[: canonical.index(b"Ship")].count(b"\n") + 1
    assert _not_canonical(capsysbinary, path) == (
        f"{path}:{line}:21: not canonical: the text differs from its canonical form here "
        "(the order of members or how a string is written)\n"
    )
