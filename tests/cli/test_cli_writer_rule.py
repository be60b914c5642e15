"""The writer's rule on the command line (issue #47, A1): a credential outside the fields the
format's pre-flight reads is a warning to the reading commands (exit 0) and a redaction finding
to the writing ones (exit 1 unless --allow-unredacted), masked everywhere."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import cmp
from tests.support.cli import run_main
from tests.support.packets import AWS, SLACK_TAG, encode, full, put
from tests.unit.test_writer_rule import GHP, REF

pytestmark = pytest.mark.slow


def _leaks(text: bytes) -> bool:
    return any(secret.encode() in text for secret in (AWS[4:], GHP[4:], SLACK_TAG[5:]))


@pytest.fixture
def leaky(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A conforming, canonical packet with a token in project.ref and a key as provenance.author_human."""
    monkeypatch.chdir(tmp_path)
    packet = put(put(full(), "project.ref", REF), "provenance.author_human", AWS)
    path = tmp_path / "leaky.cmp.json"
    path.write_bytes(cmp.dumps(cmp.loads(encode(packet))) + b"\n")
    return path


@pytest.mark.parametrize("format", ["text", "json", "github", "sarif"])
def test_check_warns_keeps_the_verdict_and_masks(
    leaky: Path, format: str, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    status, out, err = run_main(capsysbinary, "check", "--format", format, leaky.name)
    assert status == 0, err
    assert not _leaks(out + err)
    assert out.count(b"credential") >= 2
    if format == "text":
        assert b"leaky.cmp.json:" in out and b": warning: $.project.ref: gh-token ghp_\xe2\x80\xa6 (40 chars)" in out
    if format == "json":
        [result] = json.loads(out)["results"]
        assert result["ok"] and [w["path"] for w in result["warnings"]] == [
            "$.project.ref",
            "$.provenance.author_human",
        ]
    if format == "sarif":
        results = json.loads(out)["runs"][0]["results"]
        assert [(r["ruleId"], r["level"]) for r in results] == [("credential", "warning")] * 2


def test_check_and_lint_with_writer_fail_it(leaky: Path, capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    for command in (["check", "--writer"], ["lint", "--writer"]):
        status, out, err = run_main(capsysbinary, *command, leaky.name)
        assert status == 1, (command, out, err)
        assert b"redaction project.ref/gh-token: ghp_\xe2\x80\xa6 (40 chars)" in out and not _leaks(out + err)
    status, out, err = run_main(capsysbinary, "check", "--writer", "--allow-unredacted", leaky.name)
    assert status == 0, err


def test_lint_warns_and_fails_with_strict(leaky: Path, capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    status, out, err = run_main(capsysbinary, "lint", leaky.name)
    assert status == 0 and b"[credential]" in out and not _leaks(out + err)
    status, out, err = run_main(capsysbinary, "lint", "--strict", leaky.name)
    assert status == 1
    status, out, _ = run_main(capsysbinary, "lint", "--format", "json", leaky.name)
    [result] = json.loads(out)["results"]
    assert "warnings" not in result and [f["code"] for f in result["lint"]][:2] == ["credential", "credential"]


def test_the_writing_commands_refuse_it(
    leaky: Path, tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    store = tmp_path / "store"
    for command in (["gate"], ["fmt"], ["fmt", "--write"], ["save", "--store", str(store)]):
        status, out, err = run_main(capsysbinary, *command, leaky.name)
        assert status == 1, (command, out, err)
        assert b"project.ref" in out + err and not _leaks(out + err), command
    assert not store.exists() or not any(store.glob("*.json")), "nothing was stored"
    status, out, err = run_main(capsysbinary, "save", "--store", str(store), "--allow-unredacted", leaky.name)
    assert status == 0, err
    assert len(list(store.glob("*.json"))) == 1


def test_new_refuses_a_draft_with_a_key_as_a_tag(tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    draft = tmp_path / "draft.json"
    draft.write_text(json.dumps({"goal": "Ship the thing.", "next_step": "Open the PR.", "tags": [SLACK_TAG]}))
    status, out, err = run_main(capsysbinary, "new", "--draft", str(draft))
    assert status == 1 and out == b""
    assert b"new: tags[0]: slack-token found" in err and not _leaks(err)
    status, out, err = run_main(capsysbinary, "new", "--draft", str(draft), "--allow-unredacted")
    assert status == 0 and cmp.loads(out).tags == (SLACK_TAG,)


def test_scrub_leaves_a_packet_every_writer_accepts(tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    path = tmp_path / "tagged.cmp.json"
    path.write_bytes(encode(put(put(full(), "tags", ["gpu", SLACK_TAG]), "project.ref", REF)))
    status, out, err = run_main(capsysbinary, "scrub", str(path))
    assert status == 0, err
    assert b"tags[1]: slack-token replaced by redacted-slack-token" in err and not _leaks(out + err)
    assert cmp.loads(out).tags == ("gpu", "redacted-slack-token")
    clean = tmp_path / "clean.cmp.json"
    clean.write_bytes(out)
    status, out, err = run_main(capsysbinary, "gate", str(clean))
    assert status == 0, out + err
