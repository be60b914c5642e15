"""A file named for a credential (issue #26, C15): its name is withheld in every format,
whether it was found by walking a folder or given as an argument, and the file is still
read and rewritten under its real name."""

from __future__ import annotations

import json
import urllib.parse
from pathlib import Path

import pytest

import cmp
from tests.support.cli import run_main
from tests.support.packets import AWS, encode, full

WITHHELD = "(not shown: 25 characters matching aws-key)"  # AKIA….json
BAD = "(not shown: 29 characters matching aws-key)"  # AKIA….bad.json


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    packets = tmp_path / "packets"
    packets.mkdir()
    (packets / f"{AWS}.json").write_bytes(encode(full()))
    (packets / f"{AWS}.bad.json").write_bytes(b"{}")  # findings: every format names the file
    (packets / f"x{AWS}_v2.jsonl").write_bytes(encode(full()) + b"\n")
    return packets


@pytest.mark.parametrize("fmt", ["text", "json", "github", "sarif"])
def test_a_name_found_by_walking_a_folder_is_withheld(
    capsysbinary: pytest.CaptureFixture[bytes], folder: Path, fmt: str
) -> None:
    status, out, err = run_main(capsysbinary, "check", str(folder), "--format", fmt)
    printed = (out + err).decode()
    assert status == 1, printed
    assert AWS[4:] not in printed
    shown = {"github": BAD.replace(":", "%3A"), "sarif": urllib.parse.quote(BAD)}.get(fmt, BAD)
    assert shown in (json.dumps(json.loads(out)) if fmt in ("json", "sarif") else printed)


def test_a_jsonl_name_is_withheld_with_workers_too(capsysbinary: pytest.CaptureFixture[bytes], folder: Path) -> None:
    lines = folder / f"x{AWS}_v2.jsonl"
    for jobs in ([], ["--jobs", "2"]):
        status, out, err = run_main(capsysbinary, "check", "--jsonl", str(lines), *jobs)
        printed = (out + err).decode()
        assert status == 0 and AWS[4:] not in printed, printed
        assert "(not shown: 30 characters matching aws-key):1: ok" in printed


def test_a_file_named_for_a_key_is_still_rewritten(capsysbinary: pytest.CaptureFixture[bytes], folder: Path) -> None:
    path = folder / f"{AWS}.json"
    status, out, err = run_main(capsysbinary, "fmt", "--write", str(path))
    assert status == 0, err
    assert out.decode().endswith(f"{WITHHELD}: rewritten\n") and AWS[4:] not in (out + err).decode()
    assert path.read_bytes() == cmp.dumps(cmp.loads(encode(full()))) + b"\n"


def test_a_plain_name_is_shown_as_it_is() -> None:
    from cmp._display import display_name

    assert display_name("packets/AKIA-notes.json") == "packets/AKIA-notes.json"
    assert display_name(f"a/{AWS}/b.json") == "a/(not shown: 20 characters matching aws-key)/b.json"
