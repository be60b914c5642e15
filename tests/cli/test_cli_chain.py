"""The chain command: the tree as text, the JSON document, folders, JSON Lines, and bad input."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from cmp.cli import main
from tests.support.cli import run_cli
from tests.support.packets import encode, minimal, put

ROOT = Path(__file__).resolve().parents[2]


def packet(name: str, parent: str = "", at: str = "2026-01-01T10:00:00Z", **more: Any) -> dict[str, Any]:
    obj = put(minimal(), "id", f"packet-{name}".ljust(10, "0"))
    obj = put(obj, "created_at", at)
    if parent:
        obj = put(obj, "parent_id", f"packet-{parent}".ljust(10, "0"))
    for key, value in more.items():
        obj = put(obj, key, value)
    return obj


def write(folder: Path, name: str, obj: dict[str, Any]) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(encode(obj))
    return path


def test_the_example_chain_as_a_tree(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(ROOT)
    assert main(["chain", "examples/chain", "examples/typical-v0.2.json", "examples/minimal-v0.1.json"]) == 0
    captured = capsys.readouterr()
    assert captured.err == "cmp: chain: 5 packets, 3 roots, 3 heads, 0 cycles, 0 findings, 0 left out\n"
    assert captured.out.splitlines() == [
        "01HZY3M7R2K9V4T6W8X0A1B2C3  2025-11-02T08:15:30.25+01:00  examples/minimal-v0.1.json",
        "01J9X8K2QZ7N4M0WXYZV3R8ABC  2026-04-21T10:30:00Z  examples/typical-v0.2.json"
        "  (parent 01J9X3K2QZ7N4M0WXYZV3R8Z01 is not in the set)",
        "01JTD3M8Q0A4V7K2N9R5X1C6B0  2026-05-04T09:00:00Z  examples/chain/1-plan.json",
        "  01JTDC2W8S6F3H1Y7E4G0M9P2R  2026-05-04T13:30:00+02:00  examples/chain/2-worker.json",
        "    01JTFQ5Z3K8B6N2D9T1V4X7A0C  2026-05-05T08:15:00.25-04:00  examples/chain/3-retries.json",
    ]


def test_the_readme_shows_what_chain_prints() -> None:
    readme = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    block = readme[readme.index("$ core-memory-packet chain ") :]
    block = block[: block.index("```")]
    command, *shown = block.splitlines()
    result = run_cli(*command.split()[2:], cwd=ROOT)
    assert result.returncode == 0
    assert result.stdout.decode().splitlines() + result.stderr.decode().splitlines() == shown


def test_the_example_chain_as_json(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(ROOT)
    assert main(["chain", "--format", "json", "examples/chain", "examples/typical-v0.2.json"]) == 0
    assert json.loads(capsys.readouterr().out) == {
        "packets": 4,
        "roots": [
            {
                "file": "examples/typical-v0.2.json",
                "id": "01J9X8K2QZ7N4M0WXYZV3R8ABC",
                "parent_id": "01J9X3K2QZ7N4M0WXYZV3R8Z01",
            },
            {"file": "examples/chain/1-plan.json", "id": "01JTD3M8Q0A4V7K2N9R5X1C6B0", "parent_id": None},
        ],
        "heads": [
            {"file": "examples/typical-v0.2.json", "id": "01J9X8K2QZ7N4M0WXYZV3R8ABC"},
            {"file": "examples/chain/3-retries.json", "id": "01JTFQ5Z3K8B6N2D9T1V4X7A0C"},
        ],
        "cycles": [],
        "findings": [],
        "left_out": [],
    }


def test_every_example_chain_packet_passes_check() -> None:
    files = sorted(str(path.relative_to(ROOT)) for path in (ROOT / "examples" / "chain").glob("*.json"))
    assert len(files) == 3
    result = run_cli("check", *files, cwd=ROOT)
    assert (result.returncode, result.stdout.decode().splitlines()) == (0, [f"{f}: ok" for f in files])
    assert run_cli("fmt", "--check", *files, cwd=ROOT).returncode == 0


@pytest.fixture
def broken(tmp_path: Path) -> Path:
    """A folder whose packets break every rule once."""
    how = "Replay last month's requests at 4x against staging."
    write(tmp_path, "a-root.json", packet("root", methods=[{"name": "replay", "when_applicable": "w", "how": how}]))
    renamed = [{"name": "replay-load", "when_applicable": "w", "how": how}]
    write(tmp_path, "b-child.json", packet("child", "root", "2026-01-01T11:00:00+02:00", methods=renamed))
    write(tmp_path, "c-copy.json", packet("root", at="2026-01-01T12:00:00Z"))
    write(tmp_path, "sub/d-self.json", packet("self", "self"))
    return tmp_path


def test_findings_name_file_id_path_and_rule(broken: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["chain", str(broken)]) == 1
    name = f"{broken}{os.sep}"
    captured = capsys.readouterr()
    assert captured.err == "cmp: chain: 4 packets, 2 roots, 1 head, 1 cycle, 4 findings, 0 left out\n"
    assert captured.out.splitlines() == [
        f"packet-root  2026-01-01T10:00:00Z  {name}a-root.json",
        f"  packet-child  2026-01-01T11:00:00+02:00  {name}b-child.json",
        f"packet-root  2026-01-01T12:00:00Z  {name}c-copy.json",
        f"packet-self  2026-01-01T10:00:00Z  {name}sub/d-self.json  (in a cycle)",
        f"{name}b-child.json:1:60: (id packet-child) $.created_at: created_at is not later than the parent's "
        f"('packet-root'): 1 hour earlier [not-newer; see {name}a-root.json]",
        f"{name}b-child.json:1:254: (id packet-child) $.methods[0].name: method 'replay' is renamed 'replay-load'; "
        f"its how is the parent's, unchanged [method-renamed; see {name}a-root.json]",
        f"{name}c-copy.json:1:30: (id packet-root) $.id: id 'packet-root' is also the id of an earlier packet "
        f"[duplicate-id; see {name}a-root.json]",
        f"{name}sub/d-self.json:1:212: (id packet-self) $.parent_id: parent_id names the packet itself, "
        "so it is its own ancestor [cycle]",
    ]


def test_findings_as_json(broken: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["chain", "--format", "json", str(broken)]) == 1
    document = json.loads(capsys.readouterr().out)
    assert [(f["file"][len(str(broken)) + 1 :], f["id"], f["path"], f["keyword"]) for f in document["findings"]] == [
        ("b-child.json", "packet-child", "$.created_at", "not-newer"),
        ("b-child.json", "packet-child", "$.methods[0].name", "method-renamed"),
        ("c-copy.json", "packet-root", "$.id", "duplicate-id"),
        ("sub/d-self.json", "packet-self", "$.parent_id", "cycle"),
    ]
    first = document["findings"][0]
    assert set(first) == {"file", "id", "code", "path", "keyword", "message", "other"}
    assert first["code"] == "chain" and first["other"] == {"file": str(broken / "a-root.json"), "id": "packet-root"}
    assert document["cycles"] == [[{"file": str(broken / "sub" / "d-self.json"), "id": "packet-self"}]]
    assert [r["id"] for r in document["roots"]] == ["packet-root", "packet-root"]
    # A head is a packet whose id no packet names as parent: the copy's id is named, though not its tree.
    assert [h["id"] for h in document["heads"]] == ["packet-child"]


def test_a_folder_is_read_in_sorted_order_and_only_its_json_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Not-conforming packets are reported in input order: that order shows.
    for name in ("b/x.json", "a.json", "c/d/e.json", "b.json", "a/z.json"):
        write(tmp_path, name, {"not": "a packet"})
    write(tmp_path, "notes.txt", {"not": "read"})
    (tmp_path / "dir.json").mkdir()
    (tmp_path / "loop").symlink_to(tmp_path)  # not followed
    assert main(["chain", "--format", "json", str(tmp_path)]) == 1
    document = json.loads(capsys.readouterr().out)
    assert [entry["file"][len(str(tmp_path)) + 1 :] for entry in document["left_out"]] == [
        "a/z.json",  # step by step: folder a before a.json, so each folder's files stay together
        "a.json",
        "b/x.json",
        "b.json",
        "c/d/e.json",
    ]
    assert document["packets"] == 0
    entry = document["left_out"][0]
    assert entry["error"] is None and entry["errors"][0]["code"] == "version-missing"


def test_a_packet_that_does_not_conform_is_one_line_and_left_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good = write(tmp_path, "good.json", packet("good"))
    bad = write(tmp_path, "bad.json", packet("bad", tags=["Bad", "Worse", "X Y", "no_underscore"], goal=""))
    assert main(["chain", str(good), str(bad)]) == 1
    captured = capsys.readouterr()
    out = captured.out.splitlines()
    assert out[0] == f"packet-good  2026-01-01T10:00:00Z  {good}"
    assert out[1].startswith(f"{bad}:1:90: not a conforming packet, left out of the chain: $.goal: ")
    assert out[1].endswith(" (and 2 more)") and out[1].count("; ") == 2
    assert len(out) == 2
    assert captured.err == "cmp: chain: 1 packet, 1 root, 1 head, 0 cycles, 0 findings, 1 left out\n"


def test_redaction_hits_do_not_leave_a_packet_out(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    assert main(["chain", "examples/leaky-v0.2.json"]) == 0


def test_an_unreadable_source_is_one_line_on_stderr_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good = write(tmp_path, "good.json", packet("good"))
    missing = tmp_path / "missing.json"
    assert main(["chain", str(missing), str(good)]) == 2
    captured = capsys.readouterr()
    assert captured.err.splitlines() == [
        f"cmp: {missing}: cannot open: No such file or directory",
        "cmp: chain: 1 packet, 1 root, 1 head, 0 cycles, 0 findings, 1 left out",
    ]
    assert captured.out.splitlines() == [f"packet-good  2026-01-01T10:00:00Z  {good}"]


def test_a_fifo_in_a_folder_is_refused_not_waited_on(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    os.mkfifo(tmp_path / "pipe.json")
    write(tmp_path, "good.json", packet("good"))
    assert main(["chain", "--format", "json", str(tmp_path)]) == 2
    assert capsys.readouterr().err == f"cmp: {tmp_path / 'pipe.json'}: cannot read: not a regular file\n"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([], "cmp: chain needs a DIR, a FILE or --jsonl"),
        (["--format", "xml", "x"], "cmp: argument --format: invalid choice: 'xml' (choose from 'text', 'json')"),
        (["--jsonl"], "cmp: argument --jsonl: expected one argument"),
        (["--close", "x"], "cmp: unrecognized arguments: --close"),
        (["missing.json"], "cmp: missing.json: cannot open: No such file or directory"),
        (["empty"], "cmp: empty: no *.json file below it"),
        (["--jsonl", "empty"], "cmp: empty: cannot read: is a directory"),
    ],
    ids=["nothing", "format", "jsonl-without-file", "abbreviation", "missing", "empty-folder", "jsonl-folder"],
)
def test_bad_input_is_one_line_and_exit_2(tmp_path: Path, args: list[str], message: str) -> None:
    (tmp_path / "empty").mkdir()
    result = run_cli("chain", *args, cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.decode().splitlines() == [message]
    assert b"Traceback" not in result.stderr


def test_jsonl_names_each_line_and_indentation_stops_growing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = [encode(packet(f"{n:04d}", f"{n - 1:04d}" if n else "", f"2026-01-01T10:00:{n:02d}Z")) for n in range(40)]
    stream = tmp_path / "chain.jsonl"
    stream.write_bytes(b"\n".join(lines[:10]) + b"\n\n" + b"\n".join(lines[10:]) + b"\n")  # a blank line 11
    assert main(["chain", "--jsonl", str(stream)]) == 0
    captured = capsys.readouterr()
    out = captured.out.splitlines()
    assert out[0] == f"packet-0000  2026-01-01T10:00:00Z  {stream}:1"
    assert out[1] == f"  packet-0001  2026-01-01T10:00:01Z  {stream}:2"
    assert out[10] == "  " * 10 + f"packet-0010  2026-01-01T10:00:10Z  {stream}:12"
    assert out[32] == "  " * 32 + f"packet-0032  2026-01-01T10:00:32Z  {stream}:34"
    assert out[33] == "  " * 32 + f"[33] packet-0033  2026-01-01T10:00:33Z  {stream}:35"
    assert out[39] == "  " * 32 + f"[39] packet-0039  2026-01-01T10:00:39Z  {stream}:41"
    assert len(out) == 40
    assert captured.err == "cmp: chain: 40 packets, 1 root, 1 head, 0 cycles, 0 findings, 0 left out\n"


def test_jsonl_from_stdin_with_a_line_number_in_json(tmp_path: Path) -> None:
    data = encode(packet("one")) + b"\n" + encode(packet("two", "one", "2026-01-01T09:00:00Z")) + b"\n"
    result = run_cli("chain", "--jsonl", "-", "--format", "json", input=data)
    assert result.returncode == 1
    (finding,) = json.loads(result.stdout)["findings"]
    assert (finding["file"], finding["line"], finding["keyword"]) == ("-", 2, "not-newer")
    assert finding["other"] == {"file": "-", "line": 1, "id": "packet-one"}


def test_closed_makes_a_missing_parent_a_finding(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(tmp_path, "orphan.json", packet("orphan", "gone"))
    assert main(["chain", str(tmp_path)]) == 0
    assert "(parent packet-gone is not in the set)" in capsys.readouterr().out
    assert main(["chain", "--closed", str(tmp_path)]) == 1
    assert (
        f"{tmp_path / 'orphan.json'}:1:214: (id packet-orphan) $.parent_id: parent_id 'packet-gone' names no packet "
        "[parent-missing]" in capsys.readouterr().out.splitlines()
    )


def test_chain_help_shows_its_own_examples_and_fits_80_columns() -> None:
    env = {**os.environ, "COLUMNS": "80"}
    result = subprocess.run(
        [sys.executable, "-m", "cmp", "chain", "--help"], capture_output=True, text=True, env=env, timeout=60
    )
    assert result.returncode == 0
    assert result.stdout.startswith("usage: python -m cmp chain ")
    assert max(len(line) for line in result.stdout.splitlines()) <= 80
    examples = result.stdout[result.stdout.index("examples:") :]
    assert "python -m cmp chain examples/chain" in examples and "check packet" not in examples
    assert "chain" in run_cli("--help").stdout.decode()
