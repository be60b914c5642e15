"""The writer's commands: new, example, scrub and migrate, with their bad inputs."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

import cmp
from cmp.cli import main
from tests.support.cli import run_main
from tests.support.packets import encode, full, minimal, put
from tests.unit.test_redaction import AWS

ROOT = Path(__file__).resolve().parents[2]


def run(capsys: pytest.CaptureFixture[bytes], *args: str) -> tuple[int, bytes, list[str]]:
    status, out, err = run_main(capsys, *args)
    return status, out, err.decode().splitlines()


def _says(said: str, line: str) -> bool:
    """The line, or for one ending in … (argparse's wording of choices varies by Python), its start."""
    return said.startswith(line[:-1]) if line.endswith("…") else said == line


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_new_writes_a_conforming_canonical_packet(capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    status, out, err = run(
        capsysbinary,
        "new",
        "--goal",
        "Ship it.",
        "--next-step",
        "Write the test.",
        "--tag",
        "a",
        "--tag",
        "b",
        "--constraint",
        "No network.",
        "--success-criterion",
        "The suite passes.",
        "--open-question",
        "Why?",
    )
    assert (status, err) == (0, [])
    packet = cmp.loads(out)
    assert out == cmp.dumps(packet) + b"\n"
    assert (packet.goal, packet.next_step, packet.tags) == ("Ship it.", "Write the test.", ("a", "b"))
    assert (packet.constraints, packet.success_criteria, packet.open_questions) == (
        ("No network.",),
        ("The suite passes.",),
        ("Why?",),
    )
    assert packet.ltm_version == "0.2" and len(packet.id) == 26


def test_new_with_a_parent_and_an_output_file(here: Path, capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    (here / "first.json").write_bytes(encode(full()))
    status, out, err = run(
        capsysbinary, "new", "--goal", "g", "--next-step", "n", "--parent", "first.json", "-o", "next.json"
    )
    assert (status, out, err) == (0, b"", [])
    packet = cmp.loads((here / "next.json").read_bytes())
    assert packet.parent_id == full()["id"]
    # An existing file is not replaced without --force.
    status, out, err = run(capsysbinary, "new", "--goal", "h", "--next-step", "n", "-o", "next.json")
    assert (status, err) == (2, ["cmp: next.json: exists; --force replaces it"])
    assert cmp.loads((here / "next.json").read_bytes()) == packet
    assert run(capsysbinary, "new", "--goal", "h", "--next-step", "n", "-o", "next.json", "--force")[0] == 0
    assert cmp.loads((here / "next.json").read_bytes()).goal == "h"
    assert [p.name for p in here.iterdir() if p.name.startswith(".cmp-")] == []  # no temporary left


@pytest.mark.parametrize(
    ("args", "lines"),
    [
        (["--goal", "", "--next-step", "n"], ["cmp: new: $.goal: is 0 characters, shorter than 1"]),
        (
            ["--goal", "g", "--next-step", "n", "--tag", "Bad Tag"],
            ["cmp: new: $.tags[0]: 'Bad Tag' does not match ^[a-z0-9][a-z0-9-]{0,31}$"],
        ),
        (
            ["--goal", "g", "--next-step", "n", "--version", "0.1", "--success-criterion", "x"],
            ["cmp: new: $.success_criteria: unexpected member 'success_criteria'"],
        ),
        (
            ["--goal", "g", "--next-step", "n", "--parent", "missing.json"],
            ["cmp: --parent missing.json: cannot open: No such file or directory"],
        ),
        (
            ["--goal", "g", "--next-step", "n", "--parent", "broken.json"],
            ["cmp: --parent broken.json: not a packet: $: invalid json: Expecting value at line 1 column 1"],
        ),
        (["--goal", "g"], ["cmp: new: --next-step is required (or --draft FILE)"]),
        ([], ["cmp: new: --goal and --next-step are required (or --draft FILE)"]),
        (
            ["--goal", "g", "--next-step", "n", "--version", "0.3"],
            ["cmp: argument --version: invalid choice: '0.3' (choose from …"],
        ),
    ],
)
def test_new_refuses_bad_options_in_one_line_each(
    here: Path, capsysbinary: pytest.CaptureFixture[bytes], args: list[str], lines: list[str]
) -> None:
    (here / "broken.json").write_bytes(b"")
    status, out, err = run(capsysbinary, "new", *args)
    assert (status, out) == (2, b"")
    assert len(err) == len(lines) and all(_says(said, line) for said, line in zip(err, lines, strict=True))


def test_new_will_not_write_a_secret_unless_told(capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    args = ["new", "--goal", "g", "--next-step", f"Revoke {AWS} today."]
    status, out, err = run(capsysbinary, *args)
    assert (status, out) == (1, b"")
    assert err == ["cmp: new: next_step: aws-key found; scrub replaces it, --allow-unredacted keeps it"]
    assert AWS[4:] not in "\n".join(err)
    status, out, _ = run(capsysbinary, *args, "--allow-unredacted")
    assert status == 0 and cmp.loads(out).next_step == f"Revoke {AWS} today."


@pytest.mark.parametrize("version", ["0.1", "0.2"])
def test_example_is_a_good_packet(capsysbinary: pytest.CaptureFixture[bytes], version: str) -> None:
    status, out, err = run(capsysbinary, "example", "--version", version)
    assert (status, err) == (0, [])
    report = cmp.check(out)
    assert report.ok and report.version == version and report.redactions == ()
    assert cmp.lint(report.packet) == []  # type: ignore[arg-type]
    assert out == cmp.dumps(report.packet) + b"\n"  # type: ignore[arg-type]


def test_scrub_prints_the_clean_packet_and_says_what_it_replaced(
    here: Path, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    (here / "leaky.json").write_bytes(encode(put(full(), "constraints[0]", f"The key {AWS} is old.")))
    status, out, err = run(capsysbinary, "scrub", "leaky.json")
    assert status == 0
    assert err == ["cmp: leaky.json:1:306: constraints[0]: aws-key replaced by [redacted:aws-key]"]
    assert cmp.loads(out).constraints[0] == "The key [redacted:aws-key] is old."
    assert cmp.check(out).ok
    assert AWS not in out.decode() and AWS[4:] not in "\n".join(err)


def test_scrub_write_rewrites_only_what_changed(here: Path, capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    leaky = here / "leaky.json"
    leaky.write_bytes(encode(put(full(), "goal", f"Rotate {AWS} now.")))
    clean = here / "clean.json"
    clean.write_bytes(json.dumps(full()).encode())  # not canonical: scrub leaves the layout alone
    before = clean.read_bytes()
    status, out, err = run(capsysbinary, "scrub", "--write", "leaky.json", "clean.json")
    assert (status, err) == (0, [])
    assert out.decode().splitlines() == [
        "leaky.json:1:114: goal: aws-key replaced by [redacted:aws-key]",  # where the key was
        "leaky.json: rewritten",
        "clean.json: unchanged",
    ]
    assert cmp.check(leaky.read_bytes()).ok and leaky.read_bytes().endswith(b"}\n")
    assert clean.read_bytes() == before


def test_scrub_reports_a_packet_it_cannot_fix(here: Path, capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    (here / "long.json").write_bytes(encode(put(minimal(), "goal", " ".join(["/home/a"] * 128))))
    (here / "bad.json").write_bytes(encode(put(minimal(), "goal", "")))
    status, out, err = run(capsysbinary, "scrub", "--write", "long.json", "bad.json")
    assert status == 1 and err == []
    assert out.decode().splitlines() == [
        "long.json:1:106: $.goal: is 2559 characters, longer than 1024",
        "bad.json:1:106: $.goal: is 0 characters, shorter than 1",
    ]


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (["scrub", "a.json", "b.json"], "cmp: scrub prints one packet; use --write to rewrite several files"),
        (["scrub", "--write", "-"], "cmp: scrub --write cannot rewrite stdin"),
        (["scrub", "--force", "a.json"], "cmp: scrub --force only applies to --write"),
        (["scrub", "missing.json"], "cmp: missing.json: cannot open: No such file or directory"),
        (["scrub", "."], "cmp: .: cannot read: is a directory"),
        (["migrate", "a.json"], "cmp: the following arguments are required: --to"),
        (["migrate", "a.json", "--to", "1.0"], "cmp: argument --to: invalid choice: '1.0' (choose from …"),
        (
            ["migrate", "a.json", "b.json", "--to", "0.2"],
            "cmp: migrate prints one packet; use --write to rewrite several files",
        ),
    ],
)
def test_usage_and_io_errors_are_one_line_and_exit_2(
    here: Path, capsysbinary: pytest.CaptureFixture[bytes], args: list[str], line: str
) -> None:
    (here / "a.json").write_bytes(encode(full()))
    status, out, err = run(capsysbinary, *args)
    assert (status, out, len(err)) == (2, b"", 1) and _says(err[0], line)


def test_migrate_up_down_and_drop(here: Path, capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    (here / "old.json").write_bytes(encode(full("0.1")))
    (here / "new.json").write_bytes(encode(full("0.2")))
    status, out, err = run(capsysbinary, "migrate", "old.json", "--to", "0.2")
    assert (status, err) == (0, ["cmp: old.json: version 0.1 -> 0.2"])
    assert cmp.loads(out).to_dict() == {**cmp.loads(encode(full("0.1"))).to_dict(), "ltm_version": "0.2"}
    status, out, err = run(capsysbinary, "migrate", "new.json", "--to", "0.1")
    assert status == 1 and err == []
    assert out.decode().splitlines()[0] == (
        "new.json:1:804: $.parent_id: version 0.1 has no member 'parent_id'; drop=True (--drop) leaves it out"
    )
    status, out, err = run(capsysbinary, "migrate", "--write", "--drop", "new.json", "old.json", "--to", "0.1")
    assert (status, err) == (0, [])
    lines = out.decode().splitlines()
    assert (
        lines[0] == "new.json: version 0.2 -> 0.1"
        and "new.json:1:900: dropped $.methods (version 0.1 has no such member)" in lines
    )
    assert lines[-2:] == ["new.json: rewritten", "old.json: unchanged"]
    assert cmp.loads((here / "new.json").read_bytes()).ltm_version == "0.1"


def test_a_writers_session(here: Path, capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    """new, then lint, scrub, check and fmt, as docs/cli.md shows it."""
    args = ["new", "--goal", "Rotate the CI deploy key.", "--next-step", f"Revoke {AWS} in the console."]
    assert run(capsysbinary, *args, "--allow-unredacted", "-o", "next.json")[0] == 0
    assert run(capsysbinary, "lint", "next.json")[0] == 1  # check's redaction hit fails it first
    status, out, _ = run(capsysbinary, "check", "next.json")
    assert status == 1 and b"aws-key" in out
    assert run(capsysbinary, "scrub", "--write", "next.json")[0] == 0
    assert run(capsysbinary, "check", "next.json")[:2] == (0, b"next.json: ok\n")
    assert run(capsysbinary, "lint", "--strict", "next.json")[:2] == (0, b"next.json: ok\n")
    assert run(capsysbinary, "fmt", "--check", "next.json")[:2] == (0, b"")
    assert os.path.getsize(here / "next.json") > 0


def test_the_commands_on_the_shipped_examples(here: Path, capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    examples = ROOT / "examples"
    status, out, err = run(capsysbinary, "scrub", str(examples / "leaky-v0.2.json"))
    assert status == 0 and cmp.check(out).ok
    assert [line.split(": ", 2)[2] for line in err] == ["constraints[0]: aws-key replaced by [redacted:aws-key]"]
    status, out, err = run(capsysbinary, "migrate", str(examples / "minimal-v0.1.json"), "--to", "0.2")
    assert status == 0 and cmp.check(out).version == "0.2"
    status, out, _ = run(capsysbinary, "migrate", str(examples / "typical-v0.2.json"), "--to", "0.1")
    assert status == 1 and b"$.methods: version 0.1 has no member 'methods'" in out
    status, out, _ = run(capsysbinary, "migrate", str(examples / "typical-v0.2.json"), "--to", "0.1", "--drop")
    assert status == 0 and cmp.check(out).version == "0.1"
    typical = cmp.loads((examples / "typical-v0.2.json").read_bytes())
    status, out, _ = run(
        capsysbinary, "new", "--goal", "Go on.", "--next-step", "Next.", "--parent", str(examples / "typical-v0.2.json")
    )
    assert status == 0 and cmp.loads(out).parent_id == typical.id


def test_the_readme_session_prints_what_the_readme_says(here: Path, capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    """Every command of docs/cli.md's writer's session, run in order, prints exactly the lines shown."""
    import shlex

    readme = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    block = readme[readme.index("### Writing packets") :]
    block = block[block.index("```console\n") + len("```console\n") :]
    block = block[: block.index("\n```")]
    steps: list[tuple[str, list[str]]] = []
    for line in block.replace("\\\n", "").splitlines():
        if line.startswith("$ "):
            steps.append((line[2:], []))
        else:
            steps[-1][1].append(line)
    assert [command.split()[1] for command, _ in steps] == ["new", "new", "scrub", "lint", "check", "fmt", "migrate"]
    for command, shown in steps:
        words = shlex.split(command)
        assert words[0] == "core-memory-packet"
        main(words[1:])
        captured = capsysbinary.readouterr()
        assert captured.err.decode().splitlines() + captured.out.decode().splitlines() == shown, command
