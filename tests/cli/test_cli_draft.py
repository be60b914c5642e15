"""``schema --draft`` and ``new --draft FILE``: a model fills the draft schema, the CLI makes the packet."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import cmp
from cmp.cli._new import MAX_DRAFT_BYTES
from tests.support.cli import run_main
from tests.support.packets import encode, full
from tests.unit.test_redaction import AWS


def run(capsys: pytest.CaptureFixture[bytes], *args: str) -> tuple[int, bytes, list[str]]:
    status, out, err = run_main(capsys, *args)
    return status, out, err.decode().splitlines()


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize("version", cmp.SUPPORTED_VERSIONS)
def test_schema_draft_prints_the_draft_schema(capsysbinary: pytest.CaptureFixture[bytes], version: str) -> None:
    status, out, err = run(capsysbinary, "schema", "--draft", "--version", version)
    assert (status, err) == (0, [])
    assert json.loads(out) == cmp.draft_schema(version)
    status, _, err = run(capsysbinary, "schema", "--draft", "--annotated")
    assert status == 2 and "not allowed with argument" in err[-1]


def test_new_from_a_draft_keeps_every_member(here: Path, capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    packet = cmp.Packet.from_dict(full())
    (here / "draft.json").write_text(json.dumps(packet.to_draft(), indent=4))
    (here / "parent.json").write_bytes(encode(full()))
    status, out, err = run(capsysbinary, "new", "--draft", "draft.json", "--parent", "parent.json")
    assert (status, err) == (0, [])
    written = cmp.loads(out)
    assert out == cmp.dumps(written) + b"\n"
    assert written.parent_id == packet.id
    assert written.replace(id=packet.id, created_at=packet.created_at, parent_id=packet.parent_id) == packet


def test_new_from_a_draft_on_stdin(capsysbinary: pytest.CaptureFixture[bytes], monkeypatch: pytest.MonkeyPatch) -> None:
    import io
    import sys

    draft = {"goal": "Ship it.", "next_step": "Write the test.", "tags": None, "decisions": [], "project": None}
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(json.dumps(draft).encode())))
    status, out, err = run(capsysbinary, "new", "--draft", "-", "--version", "0.1")
    assert (status, err) == (0, [])
    written = cmp.loads(out)
    assert (written.ltm_version, written.goal, written.decisions, written.project) == ("0.1", "Ship it.", (), None)


@pytest.mark.parametrize(
    ("draft", "lines"),
    [
        (
            b'{"goal": "", "next_step": "n", "id": "mine", "tags": ["Bad Tag"]}',
            [
                "cmp: new: --draft draft.json: $.goal: is 0 characters, shorter than 1",
                "cmp: new: --draft draft.json: $.id: unexpected member 'id': the writer fills it in",
                "cmp: new: --draft draft.json: $.tags[0]: 'Bad Tag' does not match ^[a-z0-9][a-z0-9-]{0,31}$",
            ],
        ),
        (
            b'{"goal": "g", "next_step": "n", "decisions": [{"what": "w", "why": null}]}',
            [
                "cmp: new: --draft draft.json: $.decisions[0].why: expected string, got null",
            ],
        ),
        (
            b'{"goal": "g", "goal": "h"}',
            ["cmp: --draft draft.json: invalid json: member 'goal' appears more than once"],
        ),
        (b"[]", ["cmp: --draft draft.json: a draft is a JSON object, not an array"]),
        (b"\xef\xbb\xbf{}", ["cmp: --draft draft.json: invalid json: a UTF-8 byte order mark is not allowed"]),
        (
            b" " * (MAX_DRAFT_BYTES + 1),
            [f"cmp: --draft draft.json: over {MAX_DRAFT_BYTES:,} bytes, longer than any draft of a packet"],
        ),
    ],
)
def test_new_refuses_a_draft_with_every_reason_by_its_path(
    here: Path, capsysbinary: pytest.CaptureFixture[bytes], draft: bytes, lines: list[str]
) -> None:
    (here / "draft.json").write_bytes(draft)
    status, out, err = run(capsysbinary, "new", "--draft", "draft.json")
    assert (status, out, err) == (2, b"", lines)


def test_a_draft_takes_no_member_options_and_no_missing_file(
    here: Path, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    (here / "draft.json").write_text('{"goal": "g", "next_step": "n"}')
    status, out, err = run(capsysbinary, "new", "--draft", "draft.json", "--goal", "g", "--tag", "t")
    assert (status, out, err) == (
        2,
        b"",
        ["cmp: new: --draft gives the whole packet; --goal, --tag cannot be given with it"],
    )
    status, out, err = run(capsysbinary, "new", "--draft", "gone.json")
    assert (status, out, err) == (2, b"", ["cmp: --draft gone.json: cannot open: No such file or directory"])


def test_a_draft_holding_a_secret_is_not_written(here: Path, capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    (here / "draft.json").write_text(json.dumps({"goal": "g", "next_step": f"Revoke {AWS} today."}))
    status, out, err = run(capsysbinary, "new", "--draft", "draft.json")
    assert (status, out) == (1, b"")
    assert err == ["cmp: new: next_step: aws-key found; scrub replaces it, --allow-unredacted keeps it"]
