"""``save``, ``ls`` and ``show``: the local store through the real program."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

import cmp
from tests.support.cli import run_cli

KEY = "AKIAIOSFODNN7EXAMPLE"  # AWS's documented example key: synthetic


def ulid(number: int) -> str:
    return f"01J9X8K2QZ7N4M0WXY{number:08d}"


def packet_file(folder: Path, number: int, **members: object) -> Path:
    values: dict[str, object] = {
        "ltm_version": "0.2",
        "id": ulid(number),
        "created_at": f"2026-04-21T10:00:{number:02d}Z",
        "goal": f"Ship export fix {number}.",
        "next_step": "Time it on a snapshot.",
    }
    values.update(members)
    path = folder / f"p{number}.json"
    path.write_text(json.dumps(values))  # conforming, not canonical
    return path


def environment(**more: str) -> dict[str, str]:
    env = {name: value for name, value in os.environ.items() if name != "CMP_STORE"}
    env.update(more)
    return env


def test_save_prints_the_id_and_stores_the_canonical_file(tmp_path: Path) -> None:
    store = tmp_path / "store"
    source = packet_file(tmp_path, 1)
    done = run_cli("save", str(source), "--store", str(store), text=True)
    assert (done.returncode, done.stdout, done.stderr) == (0, ulid(1) + "\n", "")
    stored = store / f"{ulid(1)}.json"
    assert stored.read_bytes() == cmp.dumps(cmp.loads(source.read_bytes())) + b"\n"
    again = run_cli("save", "-", "--store", str(store), input=source.read_bytes())
    assert (again.returncode, again.stdout) == (0, ulid(1).encode() + b"\n")
    assert os.listdir(store) == [stored.name]


def test_the_store_is_found_through_the_environment_or_the_project(tmp_path: Path) -> None:
    source = packet_file(tmp_path, 1)
    named = run_cli("save", str(source), env=environment(CMP_STORE=str(tmp_path / "env")))
    assert named.returncode == 0 and (tmp_path / "env" / f"{ulid(1)}.json").exists()
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    (project / "src").mkdir()
    found = run_cli("save", str(source), cwd=project / "src", env=environment())
    assert found.returncode == 0 and (project / ".cmp" / "packets" / f"{ulid(1)}.json").exists()
    listed = run_cli("ls", cwd=project / "src", env=environment(), text=True)
    assert listed.stdout.startswith(ulid(1))


def test_save_refuses_what_check_refuses_with_checks_lines(tmp_path: Path) -> None:
    store = tmp_path / "store"
    source = packet_file(tmp_path, 1, goal="")
    done = run_cli("save", str(source), "--store", str(store), text=True)
    assert done.returncode == 1 and done.stdout == ""
    lines = done.stderr.splitlines()
    assert lines[0].startswith(f"cmp: {source}:1:") and "$.goal" in lines[0]
    assert lines[-1] == f"cmp: save: {source}: not stored"
    assert not store.exists()


def test_a_redaction_hit_refuses_the_packet_and_is_never_shown(tmp_path: Path) -> None:
    store = tmp_path / "store"
    source = packet_file(tmp_path, 1, goal=f"Rotate {KEY} today.")
    refused = run_cli("save", str(source), "--store", str(store), text=True)
    assert refused.returncode == 1 and "redaction goal/aws-key: AKIA… (20 chars)" in refused.stderr
    assert not store.exists()
    kept = run_cli("save", str(source), "--store", str(store), "--allow-unredacted", text=True)
    assert kept.returncode == 0 and KEY in (store / f"{ulid(1)}.json").read_text()
    listed = run_cli("ls", "--store", str(store), text=True)
    shown = run_cli("show", ulid(1), "--store", str(store), text=True)
    as_json = run_cli("ls", "--store", str(store), "--format", "json", text=True)
    assert "goal: Rotate [redacted:aws-key] today." in shown.stdout.splitlines()
    assert "Rotate [redacted:aws-key] today." in listed.stdout
    for run in (refused, kept, listed, shown, as_json):
        assert KEY not in run.stdout + run.stderr


def test_a_different_packet_under_a_stored_id_is_refused(tmp_path: Path) -> None:
    store = tmp_path / "store"
    run_cli("save", str(packet_file(tmp_path, 1)), "--store", str(store))
    before = (store / f"{ulid(1)}.json").read_bytes()
    other = packet_file(tmp_path, 1, goal="Another goal.")
    done = run_cli("save", str(other), "--store", str(store), text=True)
    assert done.returncode == 1
    assert done.stderr == (
        f"cmp: save: {other}: not stored: a different packet with id {ulid(1)} is already stored at "
        f"{store / (ulid(1) + '.json')}\n"
    )
    assert (store / f"{ulid(1)}.json").read_bytes() == before


def test_save_io_errors_are_one_line_exit_2(tmp_path: Path) -> None:
    source = packet_file(tmp_path, 1)
    missing = run_cli("save", str(tmp_path / "nope.json"), "--store", str(tmp_path / "s"), text=True)
    assert (missing.returncode, missing.stderr.count("\n")) == (2, 1)
    assert "cannot open: No such file or directory" in missing.stderr
    blocker = tmp_path / "file"
    blocker.write_text("mine")
    blocked = run_cli("save", str(source), "--store", str(blocker), text=True)
    assert blocked.returncode == 2
    assert blocked.stderr == f"cmp: save: cannot save to store {blocker}: it is not a folder\n"
    assert blocker.read_text() == "mine"
    large = tmp_path / "large.json"
    large.write_bytes(b" " * 40_000)
    too_large = run_cli("save", str(large), "--store", str(tmp_path / "s"), text=True)
    assert too_large.returncode == 1 and "32,768" in too_large.stderr.replace("32768", "32,768")
    assert not (tmp_path / "s").exists()


def test_ls_lists_newest_first_filters_and_reports_problems(tmp_path: Path) -> None:
    store = tmp_path / "store"
    empty = run_cli("ls", "--store", str(store), text=True)
    assert (empty.returncode, empty.stdout, empty.stderr) == (0, "", f"cmp: ls: store {store} holds no packets yet\n")
    as_json = run_cli("ls", "--store", str(store), "--format", "json", text=True)
    assert (as_json.returncode, as_json.stderr) == (0, "") and json.loads(as_json.stdout)["packets"] == []
    long_goal = "Make the nightly export finish before the backup window opens at two, every night."
    for number, members in ((1, {"tags": ["export"]}), (2, {"goal": long_goal}), (3, {"tags": ["export"]})):
        assert run_cli("save", str(packet_file(tmp_path, number, **members)), "--store", str(store)).returncode == 0
    listed = run_cli("ls", "--store", str(store), text=True)
    assert listed.returncode == 0 and listed.stderr == ""
    assert listed.stdout.splitlines() == [
        f"{ulid(3)}  2026-04-21T10:00:03Z  Ship export fix 3.",
        f"{ulid(2)}  2026-04-21T10:00:02Z  {long_goal[:71]}…",
        f"{ulid(1)}  2026-04-21T10:00:01Z  Ship export fix 1.",
    ]
    tagged = run_cli("ls", "--store", str(store), "--tag", "export", "--limit", "1", text=True)
    assert tagged.stdout.splitlines() == [f"{ulid(3)}  2026-04-21T10:00:03Z  Ship export fix 3."]
    unmatched = run_cli("ls", "--store", str(store), "--grep", "no such goal", text=True)
    assert (unmatched.returncode, unmatched.stdout) == (0, "")
    assert unmatched.stderr == f"cmp: ls: no packet in store {store} matches\n"
    grepped = run_cli("ls", "--store", str(store), "--grep", "NIGHTLY", "--format", "json", text=True)
    assert json.loads(grepped.stdout) == {
        "packets": [
            {"id": ulid(2), "created_at": "2026-04-21T10:00:02Z", "goal": long_goal, "tags": [], "parent_id": None}
        ],
        "problems": [],
    }
    (store / "notes.txt").write_text("mine")
    (store / f"{ulid(4)}.json").write_text("{}")
    troubled = run_cli("ls", "--store", str(store), text=True)
    assert troubled.returncode == 1 and len(troubled.stdout.splitlines()) == 3
    assert troubled.stderr.splitlines() == [
        f"cmp: {store / (ulid(4) + '.json')}: not a conforming packet: $.ltm_version: missing required field "
        "'ltm_version'",
        f"cmp: {store / 'notes.txt'}: not a packet file: the store holds only <ULID>.json files",
    ]
    assert (store / "notes.txt").read_text() == "mine"


def test_ls_usage_and_store_errors_exit_2(tmp_path: Path) -> None:
    negative = run_cli("ls", "--store", str(tmp_path), "--limit", "-1", text=True)
    assert (negative.returncode, negative.stderr) == (2, "cmp: ls: --limit is a count, not -1\n")
    blocker = tmp_path / "file"
    blocker.write_text("mine")
    blocked = run_cli("ls", "--store", str(blocker), text=True)
    assert (blocked.returncode, blocked.stderr) == (2, f"cmp: ls: cannot read store {blocker}: it is not a folder\n")


def test_show_summarises_one_packet_a_field_a_line(tmp_path: Path) -> None:
    store = tmp_path / "store"
    source = packet_file(
        tmp_path,
        1,
        goal="Ship it.\nfake: forged line",
        parent_id=ulid(9),
        tags=["export", "perf"],
        decisions=[{"what": "Use RE2.", "why": "Linear time.", "locked": True}, {"what": "Keep Go.", "why": "Ref."}],
        attempts=[{"tried": "Regex.", "outcome": "failed", "learned": "Too slow."}],
        provenance={"author_human": "Ada", "author_model": "model-x"},
    )
    assert run_cli("save", str(source), "--store", str(store)).returncode == 0
    shown = run_cli("show", ulid(1), "--store", str(store), text=True)
    assert (shown.returncode, shown.stderr) == (0, "")
    assert shown.stdout.splitlines() == [
        f"id: {ulid(1)}",
        "goal: Ship it.\\nfake: forged line",
        "next step: Time it on a snapshot.",
        "decisions: 2 (1 locked)",
        "attempts: 1",
        "open questions: 0",
        "tags: export, perf",
        f"parent: {ulid(9)}",
        "created: 2026-04-21T10:00:01Z",
        "author: Ada (with model-x)",
        "version: 0.2",
    ]


def test_show_of_a_missing_or_malformed_id_is_one_line_exit_2(tmp_path: Path) -> None:
    missing = run_cli("show", ulid(1), "--store", str(tmp_path), text=True)
    assert (missing.returncode, missing.stdout, missing.stderr) == (
        2,
        "",
        f"cmp: show: no packet {ulid(1)} in store {tmp_path}\n",
    )
    escaping = run_cli("show", "../../etc/passwd", "--store", str(tmp_path), text=True)
    assert escaping.returncode == 2 and escaping.stderr.count("\n") == 1
    assert "a stored packet's id is a ULID" in escaping.stderr


@pytest.mark.parametrize("command", ["save", "ls", "show"])
def test_each_store_command_has_help_that_fits_80_columns(command: str) -> None:
    done = run_cli(command, "--help", env={**environment(), "COLUMNS": "80"}, text=True)
    assert done.returncode == 0 and "--store PATH" in done.stdout
    assert max(len(line) for line in done.stdout.splitlines()) <= 80
    assert f"\nexamples:\n  python -m cmp {command if command != 'save' else 'new'} " in done.stdout


def test_ls_and_resume_answer_the_same_with_the_index_as_without(tmp_path: Path) -> None:
    """The index in the cache folder changes no answer: not once written, not after a hand edit
    that keeps a file's size and mtime, not when the index itself is garbage."""
    store = tmp_path / "store"
    for number in range(12):
        members: dict[str, object] = {"tags": ["export"] if number % 3 else []}
        if number % 4:
            members["parent_id"] = ulid(number - 1)
        saved = run_cli("save", str(packet_file(tmp_path, number, **members)), "--store", str(store))
        assert saved.returncode == 0
    (store / f"{ulid(40)}.json").write_text("{}")
    time.sleep(2.1)  # the files settle: the index records them
    cache, no_cache = tmp_path / "cache", tmp_path / "blocker"
    no_cache.write_text("a file: no cache folder can be made under it\n")
    runs = [
        ("ls",),
        ("ls", "--limit", "3"),
        ("ls", "--tag", "export", "--grep", "FIX 1"),
        ("ls", "--format", "json"),
        ("resume", "--quiet"),
        ("resume", ulid(5), "--style", "xml", "--quiet"),
    ]

    def answers(where: Path) -> list[tuple[int, str, str]]:
        env = environment(XDG_CACHE_HOME=str(where))
        done = [run_cli(*run, "--store", str(store), env=env, text=True) for run in runs]
        return [(one.returncode, one.stdout, one.stderr) for one in done]

    plain = answers(no_cache / "cache")
    assert plain[0][0] == 1 and plain[0][1].startswith(ulid(11)) and "Traceback" not in "".join(map(str, plain))
    assert answers(cache) == plain
    (index,) = (cache / "core-memory-packet" / "stores").iterdir()
    assert len(index.read_text().splitlines()) == 1 + 12
    assert answers(cache) == plain  # read from the index
    # A hand edit: the oldest packet made the newest, in as many bytes, its mtime put back.
    oldest = store / f"{ulid(0)}.json"
    before = oldest.stat()
    oldest.write_bytes(oldest.read_bytes().replace(b"2026-04-21T10:00:00Z", b"2026-04-21T10:59:00Z"))
    os.utime(oldest, ns=(before.st_atime_ns, before.st_mtime_ns))
    edited = answers(no_cache / "cache")
    assert edited[0][1].startswith(ulid(0)) and edited != plain
    assert answers(cache) == edited
    index.write_bytes(b"core-memory-packet store index 1\n" + b"\x00garbage " * 50)
    assert answers(cache) == edited
