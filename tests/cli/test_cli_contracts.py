"""The machine-readable contracts: the rules command, the JSON document's shipped schema and
version, lint in every format check has (SARIF valid against the OASIS schema), and SARIF's
rules carrying their help inline with a link to docs/rules.md."""

from __future__ import annotations

import copy
import importlib.resources
import json
from functools import partial
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from cmp.cli._catalog import DOCUMENTATION_URL, by_id, catalog, catalog_json, catalog_lines
from tests.cli.test_cli_formats import _sarif_schema, parse_command
from tests.support.cli import run_cli
from tests.support.packets import encode, full, put

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
AWS = "AKIAIOSFODNN7EXAMPLE"
_cli = partial(run_cli, text=True)


def _report_schema() -> dict[str, Any]:
    """The schema as the package ships it (package data of cmp.cli)."""
    text = (importlib.resources.files("cmp.cli") / "schemas" / "check-report.schema.json").read_text(encoding="utf-8")
    schema: dict[str, Any] = json.loads(text)
    jsonschema.Draft202012Validator.check_schema(schema)
    return schema


def _valid(document: dict[str, Any]) -> None:
    jsonschema.Draft202012Validator(_report_schema()).validate(document)


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    """A failing packet, a leaky one, one lint advises on, a file that is not JSON, and a JSON Lines file."""
    made = {
        "bad": encode(put(full(), "tags[0]", "Bad")),
        "leaky": encode(put(full(), "goal", f"Key {AWS} in /home/me/x")),
        "advised": encode(put(full(), "next_step", "Read $HOME first.")),
        "broken": b'{"ltm_version": "0.2",\n  "goal": tru}',
    }
    out = {}
    for name, data in made.items():
        out[name] = tmp_path / f"{name}.json"
        out[name].write_bytes(data)
    out["jsonl"] = tmp_path / "packets.jsonl"
    out["jsonl"].write_bytes(b"\n".join([encode(full()), made["bad"], made["leaky"], b"", b"{nope"]) + b"\n")
    return out


# --- rules ----------------------------------------------------------------------------------------


def test_rules_lists_the_catalog_as_text_json_and_the_docs_page() -> None:
    text = _cli("rules")
    assert (text.returncode, text.stderr) == (0, "")
    assert text.stdout.splitlines() == catalog_lines()
    document = _cli("rules", "--format", "json")
    assert document.returncode == 0 and json.loads(document.stdout) == catalog_json()
    assert document.stdout.startswith('{\n  "version": 1,\n  "rules": [')
    ids = [rule["id"] for rule in json.loads(document.stdout)["rules"]]
    for expected in ("schema", "json", "redaction/aws-key", "redaction/extended/openai-key", "lint/env-var", "audit"):
        assert expected in ids
    markdown = run_cli("rules", "--format", "markdown")
    assert markdown.returncode == 0 and markdown.stdout == (ROOT / "docs" / "rules.md").read_bytes()
    wrong = _cli("rules", "--format", "xml")
    assert wrong.returncode == 2 and wrong.stdout == "" and wrong.stderr.count("\n") == 1
    assert wrong.stderr.startswith("cmp: ")


# --- the JSON document's schema and version -----------------------------------------------------


def test_check_json_validates_against_the_shipped_schema(files: dict[str, Path], tmp_path: Path) -> None:
    examples = [str(path) for path in sorted(EXAMPLES.glob("*.json"))]
    runs = [
        ("check", "--format", "json", *examples, str(EXAMPLES / "chain")),
        ("check", "--format", "json", str(files["bad"]), str(files["leaky"]), str(files["broken"])),
        ("check", "--format", "json", str(tmp_path / "missing.json"), str(files["bad"])),
        ("check", "--format", "json", "--jsonl", str(files["jsonl"])),
        ("check", "--format", "json", "--jsonl", str(files["jsonl"]), "--jobs", "2"),
        ("check", "--format", "json", "--rule-set", "extended", "--show-found", str(files["leaky"])),
        ("check", "--format", "json", "--lenient", "--allow-unredacted", str(files["bad"]), str(files["leaky"])),
        ("check", "--format", "json", "--jsonl", str(tmp_path / "missing.jsonl")),
    ]
    seen: set[str] = set()
    for args in runs:
        result = _cli(*args)
        assert result.returncode in (0, 1, 2), args
        document = json.loads(result.stdout)
        assert next(iter(document)) == "version" and document["version"] == 1, args
        _valid(document)
        for entry in document["results"]:
            seen.update(key for key in ("line", "rule_set") if key in entry)
            seen.update("error" for _ in [entry] if entry["error"] is not None)
            seen.update(item["code"] for item in entry["errors"])
            seen.update("redaction" for _ in entry["redactions"])
    # The runs reached what the schema has to describe.
    assert {"line", "rule_set", "error", "schema", "json", "redaction"} <= seen
    assert AWS[4:] not in _cli(*runs[1]).stdout, "secrets masked"


def test_refused_stage_and_baseline_output_validates(tmp_path: Path) -> None:
    """Real output with the members a policy adds: hits in a refused packet, a baseline's marks and stale entries."""
    folder = tmp_path / "packets"
    folder.mkdir()
    leaky, refused = folder / "leaky.json", folder / "refused.json"
    leaky.write_bytes(encode(put(full(), "goal", f"Ship it with {AWS} today.")))
    refused.write_bytes(encode(put(put(full(), "tags[0]", "Bad"), "constraints[0]", f"Deploy with {AWS} only.")))
    assert run_cli("baseline", "packets", "-o", "base.json", cwd=tmp_path).returncode == 0
    token = "ghp_" + "A1b2C3d4E5" * 3 + "f6G7h8"  # the GitHub token shape, made up
    leaky.write_bytes(encode(put(full(), "next_step", f"Then {token} again.")))  # new; the key's entry goes stale
    result = _cli("check", "--format", "json", "--baseline", "base.json", "packets", cwd=tmp_path)
    document = json.loads(result.stdout)
    _valid(document)
    hits = [hit for entry in document["results"] for hit in entry["redactions"]]
    assert {hit.get("stage") for hit in hits} == {None, "refused"}
    assert {hit["baseline"] for hit in hits} == {"new", "unchanged"}
    assert [(stale["field"], stale["category"]) for stale in document["baseline"]["stale"]] == [("goal", "aws-key")]
    assert list(document) == ["version", "results", "baseline"]
    assert AWS[4:] not in result.stdout and token[4:] not in result.stdout


def test_the_schema_takes_the_baseline_and_refused_stage_members_and_nothing_else(files: dict[str, Path]) -> None:
    document = json.loads(_cli("check", "--format", "json", str(files["leaky"])).stdout)
    hits = document["results"][0]["redactions"]
    stale = {"file": "a.json", "field": "goal", "category": "aws-key", "rule": "redaction/aws-key", "fingerprint": "0f"}
    marked = copy.deepcopy(document)
    marked["results"][0]["redactions"][0].update(stage="refused", baseline="unchanged")
    marked["baseline"] = {"path": ".cmp-baseline.json", "stale": [stale]}
    _valid(marked)
    for change in (
        lambda d: d["results"][0]["redactions"][0].update(stage="schema"),
        lambda d: d["results"][0]["redactions"][0].update(baseline="old"),
        lambda d: d.update(baseline={"path": "b.json"}),
        lambda d: d["results"][0].update(surprise=True),
        lambda d: d.update(version=2),
        lambda d: d.pop("version"),
    ):
        broken = copy.deepcopy(marked)
        change(broken)
        with pytest.raises(jsonschema.ValidationError):
            _valid(broken)
    assert [hit["category"] for hit in hits] == ["abs-path", "aws-key"]


def test_lint_json_validates_against_the_same_schema(files: dict[str, Path], tmp_path: Path) -> None:
    args = [
        str(files["advised"]),
        str(files["bad"]),
        str(tmp_path / "missing.json"),
        *map(str, EXAMPLES.glob("*.json")),
    ]
    result = _cli("lint", "--format", "json", *args)
    assert result.returncode == 2
    document = json.loads(result.stdout)
    assert next(iter(document)) == "version"
    _valid(document)
    assert [item["keyword"] for item in document["results"][0]["lint"]] == ["env-var"]


# --- lint in check's formats --------------------------------------------------------------------


def _lint_inputs(files: dict[str, Path], tmp_path: Path) -> list[str]:
    return [str(files["advised"]), str(files["bad"]), str(files["leaky"]), str(tmp_path / "gone.json")]


def test_lint_sarif_validates_against_the_oasis_schema(files: dict[str, Path], tmp_path: Path) -> None:
    result = _cli("lint", "--format", "sarif", *_lint_inputs(files, tmp_path))
    assert result.returncode == 2 and result.stderr.startswith(f"cmp: {tmp_path / 'gone.json'}: cannot open")
    log = json.loads(result.stdout)
    jsonschema.Draft4Validator(_sarif_schema()).validate(log)
    assert result.stdout == json.dumps(log, ensure_ascii=False, indent=2) + "\n"
    (run,) = log["runs"]
    rules = run["tool"]["driver"]["rules"]
    by_result = [
        (r["ruleId"], r["level"], Path(r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]).name)
        for r in run["results"]
    ]
    assert ("lint/env-var", "warning", "advised.json") in by_result
    assert ("schema", "error", "bad.json") in by_result, "a file check refuses gets check's results"
    assert ("redaction/aws-key", "error", "leaky.json") in by_result
    for item in run["results"]:
        assert rules[item["ruleIndex"]]["id"] == item["ruleId"]
        region = item["locations"][0]["physicalLocation"]["region"]
        assert region["startLine"] >= 1 and region["startColumn"] >= 1
    assert run["invocations"][0]["executionSuccessful"] is False
    assert AWS[4:] not in result.stdout, "secrets masked"
    strict = json.loads(_cli("lint", "--strict", "--format", "sarif", str(files["advised"])).stdout)
    jsonschema.Draft4Validator(_sarif_schema()).validate(strict)
    assert [(r["ruleId"], r["level"]) for r in strict["runs"][0]["results"]] == [("lint/env-var", "error")]
    clean = _cli("lint", "--format", "sarif", str(EXAMPLES / "typical-v0.2.json"))
    assert clean.returncode == 0 and json.loads(clean.stdout)["runs"][0]["results"] == []


def test_lint_github_commands(files: dict[str, Path], tmp_path: Path) -> None:
    result = _cli("lint", "--format", "github", *_lint_inputs(files, tmp_path))
    assert result.returncode == 2
    commands = [parse_command(line) for line in result.stdout.splitlines()]
    advised = [c for c in commands if Path(c[1]["file"]).name == "advised.json"]
    assert [(c[0], c[1]["title"]) for c in advised] == [("warning", "cmp lint (env-var)")]
    assert advised[0][1]["line"] == "1" and int(advised[0][1]["col"]) > 1
    assert ("error", "cmp schema (pattern)") in [(c[0], c[1]["title"]) for c in commands]
    assert ("error", "cmp redaction (aws-key)") in [(c[0], c[1]["title"]) for c in commands]
    assert commands[-1][0] == "error" and commands[-1][2].startswith("cannot open: ")
    assert AWS[4:] not in result.stdout
    strict = _cli("lint", "--strict", "--format", "github", str(files["advised"]))
    assert strict.returncode == 1 and strict.stdout.startswith("::error ")
    assert _cli("lint", "--format", "github", str(EXAMPLES / "typical-v0.2.json")).stdout == ""


def test_every_lint_format_renders_the_same_findings(files: dict[str, Path], tmp_path: Path) -> None:
    inputs = _lint_inputs(files, tmp_path)
    statuses = {fmt: _cli("lint", "--format", fmt, *inputs) for fmt in ("text", "json", "sarif", "github")}
    assert {result.returncode for result in statuses.values()} == {2}
    text = [line.rsplit(" [", 1)[1][:-1] for line in statuses["text"].stdout.splitlines() if line.endswith("]")]
    document = json.loads(statuses["json"].stdout)
    as_json = [item["keyword"] for entry in document["results"] for item in entry["lint"]]
    log = json.loads(statuses["sarif"].stdout)
    as_sarif = [r["ruleId"][len("lint/") :] for r in log["runs"][0]["results"] if r["ruleId"].startswith("lint/")]
    github = [parse_command(line)[1]["title"] for line in statuses["github"].stdout.splitlines()]
    as_github = [title[len("cmp lint (") : -1] for title in github if title.startswith("cmp lint (")]
    assert text == as_json == as_sarif == as_github == ["env-var"]


def test_a_capped_lint_report_renders_its_truncated_finding_in_every_format(tmp_path: Path) -> None:
    attempts = [{"tried": f"Run {i}.", "outcome": "failed", "learned": "", "confidence": "low"} for i in range(64)]
    paths = [f"Copy ~/x{i} now." for i in range(32)]
    packet = {**full(), "attempts": attempts, "constraints": paths, "open_questions": paths}
    path = tmp_path / "noisy.json"
    path.write_bytes(encode(packet))
    document = json.loads(_cli("lint", "--format", "json", str(path)).stdout)
    _valid(document)
    found = document["results"][0]["lint"]
    assert len(found) == 101 and found[-1]["code"] == "truncated"
    log = json.loads(_cli("lint", "--format", "sarif", str(path)).stdout)
    jsonschema.Draft4Validator(_sarif_schema()).validate(log)
    results = log["runs"][0]["results"]
    assert len(results) == 101 and results[-1]["ruleId"] == "truncated"
    assert {r["ruleId"] for r in results[:-1]} == {"lint/local-path", "lint/missing-learned"}
    github = _cli("lint", "--format", "github", str(path)).stdout.splitlines()
    assert len(github) == 101 and parse_command(github[-1])[1]["title"] == "cmp truncated"


# --- SARIF rules: help inline, a link to docs/rules.md ------------------------------------------


def test_sarif_rules_carry_their_help_and_link_to_the_rules_page(files: dict[str, Path]) -> None:
    log = json.loads(_cli("check", "--format", "sarif", str(files["bad"]), str(files["leaky"])).stdout)
    driver = log["runs"][0]["tool"]["driver"]
    assert [rule["id"] for rule in driver["rules"]] == [rule.id for rule in catalog()]
    for rule in driver["rules"]:
        entry = by_id()[rule["id"]]
        assert rule["helpUri"] == f"{DOCUMENTATION_URL}rules.md#{entry.anchor}"
        assert rule["help"]["text"] == rule["fullDescription"]["text"] == entry.help
        assert rule["shortDescription"]["text"] == entry.description
        assert "docs/specification.md" not in rule["help"]["text"], "no file the user's repository lacks"
    used = {result["ruleId"] for result in log["runs"][0]["results"]}
    assert {"schema", "redaction/aws-key", "redaction/abs-path"} <= used
