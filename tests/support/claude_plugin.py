"""The Claude Code plugin of this repository (.claude-plugin/), as its tests drive it: each hook's
command read from the manifest and run as Claude Code runs it (``/bin/sh -c``, the event's JSON on
stdin, the project's folder as the working directory), and the real ``claude`` CLI when it is here."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.extras import IN_CI

ROOT = Path(__file__).resolve().parents[2]
PLUGIN = ROOT / ".claude-plugin" / "plugin.json"
MARKETPLACE = ROOT / ".claude-plugin" / "marketplace.json"
SKILL = ROOT / "skills" / "handoff" / "SKILL.md"


def manifest() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(PLUGIN.read_text(encoding="utf-8"))
    return loaded


def hook_commands(event: str) -> list[str]:
    """The command of each hook the plugin runs at ``event``."""
    return [hook["command"] for group in manifest()["hooks"].get(event, []) for hook in group["hooks"]]


def cli_folder() -> Path:
    """The folder of the ``core-memory-packet`` script beside this interpreter (put first on the hooks' PATH)."""
    folder = Path(sys.executable).parent
    if not (folder / "core-memory-packet").exists():
        message = f"no core-memory-packet script in {folder}: install the package (pip install -e '.[test]')"
        if IN_CI:
            pytest.fail(message, pytrace=False)
        pytest.skip(message)
    return folder


def hook_env(folder: Path, **more: str) -> dict[str, str]:
    """The hooks' environment: the CLI on PATH, config folders under ``folder``, no login, no push."""
    dropped = ("CMP_SERVER", "CMP_TOKEN", "CMP_STORE", "CMP_PUSH", "CMP_TEAM", "LTM_HOST", "LTM_CONFIG_DIR")
    env = {key: value for key, value in os.environ.items() if key not in dropped}
    env.update(
        PATH=os.pathsep.join([str(cli_folder()), env.get("PATH", "")]),
        HOME=str(folder / "home"),
        XDG_CONFIG_HOME=str(folder / "config-home"),
        CMP_CONFIG_DIR=str(folder / "cmp-config"),
        LTM_CONFIG_DIR=str(folder / "ltm-config"),
        **more,
    )
    return env


def event(name: str, project: Path, **fields: Any) -> dict[str, Any]:
    """An event's input as Claude Code documents it (and as ``claude`` 2.1 sends it)."""
    return {
        "session_id": "8f2c1d7e-0b4a-4c55-9e3f-2a6d1c0b7e91",
        "transcript_path": str(project / "transcript.jsonl"),
        "cwd": str(project),
        "hook_event_name": name,
        **fields,
    }


def run_hook(
    event_name: str, given: dict[str, Any], project: Path, env: dict[str, str]
) -> subprocess.CompletedProcess[str]:
    """The plugin's one hook at ``event_name``, run on ``given`` as Claude Code runs a command hook."""
    (command,) = hook_commands(event_name)
    return subprocess.run(
        ["/bin/sh", "-c", command],
        input=json.dumps(given),
        capture_output=True,
        text=True,
        cwd=project,
        env=env,
        timeout=120,
    )


def claude() -> str:
    """The real ``claude`` CLI (npm's @anthropic-ai/claude-code): ``$CMP_CLAUDE``, else on PATH. Without
    it the test is skipped, except under CI, where .ci/run installs it and its absence fails."""
    found = os.environ.get("CMP_CLAUDE") or shutil.which("claude")
    if not found:
        message = "the claude CLI is not installed (npm install -g @anthropic-ai/claude-code)"
        if IN_CI:
            pytest.fail(f"{message}; under CI .ci/run installs it", pytrace=False)
        pytest.skip(message)
    return found
