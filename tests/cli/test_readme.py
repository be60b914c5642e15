"""Every example the README shows runs as shown (issue 47, items 10 and 16).

Each ```python block runs on its own, each ```console block command by command through a
shell (``core-memory-packet`` on PATH), in a fresh project holding a copy of ``examples/``;
a console block's output lines are the commands' stdout and stderr as a terminal shows them,
read with the ids, the project's own folder and the resume block's size set aside. The
packet it shows is valid and canonical, and the Claude Code plugin it installs is the repository's.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

import cmp
from tests.support.cli import run_cli

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")
_BLOCK = re.compile(r"^```(\w+)\n(.*?)^```$", re.MULTILINE | re.DOTALL)
BLOCKS = [(kind, body) for kind, body in _BLOCK.findall(README)]
PYTHON = [body for kind, body in BLOCKS if kind == "python"]
CONSOLE = [body for kind, body in BLOCKS if kind == "console"]
JSON = [json.loads(body) for kind, body in BLOCKS if kind == "json"]
assert len(PYTHON) >= 2 and len(CONSOLE) >= 2 and len(JSON) == 1, "the README's examples are found"

_ULID = re.compile(r"\b[0-7][0-9A-HJKMNP-TV-Z]{25}\b")


def _packet_shown() -> cmp.Packet:
    (shown,) = [block for block in JSON if "ltm_version" in block]
    return cmp.loads(json.dumps(shown))


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project (a git checkout's folder) with the examples, and the command on PATH."""
    folder = tmp_path / "project"
    (folder / ".git").mkdir(parents=True)
    shutil.copytree(ROOT / "examples", folder / "examples")
    command = tmp_path / "bin" / "core-memory-packet"
    command.parent.mkdir()
    command.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m cmp "$@"\n')
    command.chmod(command.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", f"{command.parent}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.delenv("CMP_STORE", raising=False)
    monkeypatch.chdir(folder)
    return folder


def test_the_packet_shown_is_valid_canonical_and_check_says_ok(tmp_path: Path) -> None:
    (shown,) = [body for kind, body in BLOCKS if kind == "json" and "ltm_version" in body]
    packet = tmp_path / "packet.json"
    packet.write_text(shown)
    result = run_cli("check", str(packet), text=True)
    assert (result.returncode, result.stdout) == (0, f"{packet}: ok\n")
    assert shown.encode() == cmp.dumps(_packet_shown()) + b"\n", "as fmt writes it"
    assert cmp.lint(_packet_shown()) == []


def test_the_plugin_install_shown_is_the_repositorys_plugin_and_marketplace() -> None:
    (shown,) = [body for kind, body in BLOCKS if kind == "text" and "/plugin install" in body]
    plugin = json.loads((ROOT / ".claude-plugin" / "plugin.json").read_bytes())
    marketplace = json.loads((ROOT / ".claude-plugin" / "marketplace.json").read_bytes())
    assert plugin["name"] in [entry["name"] for entry in marketplace["plugins"]]
    assert shown.splitlines() == [
        "/plugin marketplace add /path/to/core-memory-packet",
        f"/plugin install {plugin['name']}@{marketplace['name']}",
    ]


@pytest.mark.parametrize("number", range(len(PYTHON)))
def test_each_python_example_runs(project: Path, number: int) -> None:
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(PYTHON[number], f"README.md python block {number + 1}", "exec"), {"__name__": "__readme__"})
    if "report = cmp.check(" in PYTHON[number]:  # what its comment says it prints
        assert "constraints[0]/aws-key: AKIA… (20 chars) at 15" in printed.getvalue()
    if "cmp.store.Store()" in PYTHON[number]:  # the loop stored a packet and resumed from it
        (stored,) = cmp.Store(project / ".cmp" / "packets").list()
        assert stored.next_step == "Time the writer." and stored.parent_id == ""


def _commands(block: str) -> list[tuple[str, list[str]]]:
    """Each ``$ `` command of a console block (a line ending in ``\\`` goes on), with the lines shown after it."""
    found: list[tuple[str, list[str]]] = []
    lines = iter(block.splitlines())
    for line in lines:
        if line.startswith("$ "):
            command = line[2:]
            while command.endswith("\\"):
                command = command[:-1] + next(lines)
            found.append((command, []))
        else:
            found[-1][1].append(line)
    return found


def _as_read(text: str, folder: Path) -> str:
    text = text.replace(f"{folder}{os.sep}", "")
    text = _ULID.sub("<ID>", text)
    return re.sub(r"^cmp: resume: [0-9,]+ characters, about [0-9,]+ tokens", "cmp: resume: <SIZE>", text, flags=re.M)


def test_each_console_example_prints_what_it_shows(project: Path) -> None:
    # The hand-off the save-and-resume loop starts from: the draft of the packet the README shows.
    (project / "handoff.json").write_text(json.dumps(_packet_shown().to_draft(), indent=2))
    ran = 0
    for block in CONSOLE:
        for command, shown in _commands(block):
            result = subprocess.run(
                ["/bin/sh", "-c", command], cwd=project, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=120
            )
            said = _as_read(result.stdout.decode(), project)
            assert said.splitlines() == [_as_read(line, project) for line in shown], command
            ran += 1
    assert ran >= 7
    (saved,) = cmp.Store(project / ".cmp" / "packets").list()
    assert saved.to_draft() == _packet_shown().to_draft() and saved.parent_id == ""
    assert "Time the batched writer on last night's snapshot." in (project / "context.md").read_text()
