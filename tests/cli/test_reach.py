"""What the rule sets read, through the command line (issue #26, A4 and A5)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.cli import run_main
from tests.support.packets import AWS, GOOGLE, STRIPE, beyond_the_default_fields, encode, full, put


@pytest.fixture
def beyond(tmp_path: Path) -> Path:
    path = tmp_path / "beyond.json"
    path.write_bytes(encode(put(beyond_the_default_fields(), "tags", ["gpu"])) + b"\n")
    return path


def test_check_with_the_extended_rules_finds_the_default_credentials_beyond_the_default_fields(
    capsysbinary: pytest.CaptureFixture[bytes], beyond: Path
) -> None:
    status, out, _ = run_main(capsysbinary, "check", str(beyond))
    assert status == 0, "the format's own rules do not read these fields"
    status, out, _ = run_main(capsysbinary, "check", str(beyond), "--rule-set", "extended", "--format", "json")
    assert status == 1
    (result,) = json.loads(out)["results"]
    found = [(hit["field"], hit["category"]) for hit in result["redactions"]]
    assert found == [("id", "aws-key"), ("project.ref", "stripe-key"), ("provenance.author_model", "google-api-key")]
    for secret in (AWS, STRIPE, GOOGLE):
        assert secret[8:] not in out.decode()


def test_scrub_with_the_extended_rules_replaces_them(capsysbinary: pytest.CaptureFixture[bytes], beyond: Path) -> None:
    status, out, err = run_main(capsysbinary, "scrub", str(beyond), "--rule-set", "extended")
    assert status == 0, err
    scrubbed = json.loads(out)
    assert scrubbed["id"] == "[redacted:aws-key]"
    assert scrubbed["project"]["ref"] == "[redacted:stripe-key]"
    assert scrubbed["provenance"]["author_model"] == "[redacted:google-api-key]"
    assert err.decode().count("replaced by") == 3
    for secret in (AWS, STRIPE, GOOGLE):
        assert secret[8:] not in (out + err).decode()


def test_lenient_check_blocks_a_key_in_an_unknown_member(
    capsysbinary: pytest.CaptureFixture[bytes], tmp_path: Path
) -> None:
    path = tmp_path / "notes.json"
    path.write_bytes(encode({**full(), "notes": f"key {AWS}"}) + b"\n")
    status, out, _ = run_main(capsysbinary, "check", str(path), "--lenient", "--format", "json")
    (result,) = json.loads(out)["results"]
    assert status == 1 and not result["accepted"]
    assert [(hit["field"], hit["category"]) for hit in result["redactions"]] == [("notes", "aws-key")]
