"""The Claude Code plugin (.claude-plugin/): its manifest by the documented rules, each hook fed
the event JSON Claude Code documents, and the real ``claude`` CLI (npm's @anthropic-ai/claude-code,
skipped where it is missing, except under CI): ``plugin validate --strict``, an install from the
repository's marketplace, and a session (``claude -p``, no account: it stops at the login, after
the SessionStart hooks and before the SessionEnd ones) whose hooks resume and save."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

import cmp
from tests.support.claude_plugin import (
    MARKETPLACE,
    PLUGIN,
    ROOT,
    SKILL,
    claude,
    event,
    hook_commands,
    hook_env,
    manifest,
    run_hook,
)

KEBAB = re.compile(r"[a-z0-9]+(-[a-z0-9]+)*")
GOAL = "Make the nightly export finish in under two hours."


def _project(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    (project / ".cmp").mkdir(parents=True)
    (project / "src").mkdir()
    return project


def _draft(project: Path, next_step: str) -> None:
    draft = {"goal": GOAL, "next_step": next_step, "tags": ["export"]}
    (project / ".cmp" / "handoff.json").write_text(json.dumps(draft), encoding="utf-8")


def _context(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 0, done.stderr
    answer: dict[str, Any] = json.loads(done.stdout)
    assert answer["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    context: str = answer["hookSpecificOutput"]["additionalContext"]
    return context


def test_the_manifests_follow_the_documented_rules() -> None:
    plugin = manifest()
    assert KEBAB.fullmatch(plugin["name"]) and plugin["version"] == cmp.__version__
    assert plugin["description"] and plugin["author"]["name"]
    # Only the manifests live in .claude-plugin/; the skill is at the plugin's root, in skills/<name>/.
    assert sorted(path.name for path in PLUGIN.parent.iterdir()) == ["marketplace.json", "plugin.json"]
    assert set(plugin["hooks"]) == {"SessionStart", "PreCompact", "SessionEnd"}
    for groups in plugin["hooks"].values():
        # No matcher: SessionStart at every source (startup, resume, clear, compact), PreCompact at
        # both triggers, SessionEnd at every reason.
        assert [sorted(group) for group in groups] == [["hooks"]]
        assert all(hook["type"] == "command" for group in groups for hook in group["hooks"])
    assert all(command.endswith("core-memory-packet resume --hook claude") for command in hook_commands("SessionStart"))
    for name in ("PreCompact", "SessionEnd"):
        assert all(command.startswith("core-memory-packet save --hook claude") for command in hook_commands(name))
    assert plugin["mcpServers"] == {"core-memory-packet": {"command": "core-memory-packet", "args": ["mcp"]}}

    market = json.loads(MARKETPLACE.read_text(encoding="utf-8"))
    assert KEBAB.fullmatch(market["name"]) and market["owner"]["name"]
    (entry,) = market["plugins"]
    assert (entry["name"], entry["source"], entry["version"]) == (plugin["name"], "./", plugin["version"])

    front = re.match(r"---\nname: (\S+)\ndescription: (.+)\n---\n", SKILL.read_text(encoding="utf-8"))
    assert front and front.group(1) == SKILL.parent.name and ".cmp/handoff.json" in front.group(2)


def test_each_hook_on_the_documented_events_resumes_and_saves(tmp_path: Path) -> None:
    project = _project(tmp_path)
    env = hook_env(tmp_path)
    store = cmp.Store(project / ".cmp" / "packets")
    # The first session: an empty store is no context, and no draft is nothing to save.
    started = run_hook("SessionStart", event("SessionStart", project, source="startup"), project, env)
    assert (started.returncode, started.stdout) == (0, "")
    ended = run_hook("SessionEnd", event("SessionEnd", project, reason="other"), project, env)
    assert ended.returncode == 0 and store.list() == []
    # The agent keeps its draft; before a compaction it becomes the first packet.
    _draft(project, "Time the batched writer on last night's snapshot.")
    compacting = event("PreCompact", project, trigger="auto", custom_instructions="")
    saved = run_hook("PreCompact", compacting, project, env)
    assert saved.returncode == 0, saved.stderr
    first = store.latest()
    assert first is not None and saved.stdout == first.id + "\n" and first.next_step.startswith("Time the")
    # After the compaction, and at any later start, the session begins from it.
    for source in ("compact", "startup", "resume", "clear"):
        context = _context(run_hook("SessionStart", event("SessionStart", project, source=source), project, env))
        assert context.startswith("# Resuming from a Core Memory Packet") and GOAL in context
        assert f"End of the Core Memory Packet {first.id}." in context
    # At the end, the draft as it now stands continues the chain; the same draft again adds nothing.
    _draft(project, "Profile the writer with 5,000-row batches.")
    ended = run_hook("SessionEnd", event("SessionEnd", project, reason="prompt_input_exit"), project, env)
    assert ended.returncode == 0, ended.stderr
    second = store.latest()
    assert second is not None and second.parent_id == first.id and second.next_step.startswith("Profile")
    again = run_hook("SessionEnd", event("SessionEnd", project, reason="clear"), project, env)
    assert again.returncode == 0 and "holds this hand-off already" in again.stderr and len(store.list()) == 2
    # A session working in a subfolder finds the same project.
    deeper = event("SessionStart", project / "src", source="startup")
    assert "Profile the writer" in _context(run_hook("SessionStart", deeper, project / "src", env))


def test_a_hand_off_holding_a_credential_is_not_saved_and_the_user_is_told(tmp_path: Path) -> None:
    project = _project(tmp_path)
    key = "AKIA" + "IOSFODNN7EXAMPLE"
    _draft(project, f"Rotate {key} before the export runs.")
    done = run_hook("SessionEnd", event("SessionEnd", project, reason="other"), project, hook_env(tmp_path))
    assert done.returncode == 1 and "aws-key" in done.stderr and key not in done.stderr + done.stdout
    assert cmp.Store(project / ".cmp" / "packets").list() == []


def _claude(*args: str, cwd: Path, home: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    isolated = {
        **env,
        "HOME": str(home),
        "CLAUDE_CONFIG_DIR": str(home / ".claude"),
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_AUTOUPDATER": "1",
    }
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN"):
        isolated.pop(name, None)
    return subprocess.run(
        [claude(), *args], cwd=cwd, env=isolated, capture_output=True, text=True, timeout=180, stdin=subprocess.DEVNULL
    )


@pytest.mark.parametrize("path", [PLUGIN, MARKETPLACE], ids=["plugin", "marketplace"])
def test_claude_plugin_validate_strict_passes(tmp_path: Path, path: Path) -> None:
    done = _claude("plugin", "validate", "--strict", str(path), cwd=tmp_path, home=tmp_path, env=hook_env(tmp_path))
    assert done.returncode == 0, done.stdout + done.stderr
    kind = "plugin" if path == PLUGIN else "marketplace"
    assert f"Validating {kind} manifest" in done.stdout and "Validation passed" in done.stdout


def test_it_installs_from_the_repository_as_a_marketplace(tmp_path: Path) -> None:
    env = hook_env(tmp_path)
    added = _claude("plugin", "marketplace", "add", str(ROOT), cwd=tmp_path, home=tmp_path, env=env)
    assert added.returncode == 0, added.stdout + added.stderr
    installed = _claude(
        "plugin", "install", "core-memory-packet@core-memory-packet", cwd=tmp_path, home=tmp_path, env=env
    )
    assert installed.returncode == 0, installed.stdout + installed.stderr
    listed = _claude("plugin", "list", "--json", cwd=tmp_path, home=tmp_path, env=env)
    (plugin,) = json.loads(listed.stdout)
    assert (plugin["id"], plugin["version"], plugin["enabled"]) == (
        "core-memory-packet@core-memory-packet",
        cmp.__version__,
        True,
    )
    assert plugin["mcpServers"] == manifest()["mcpServers"]
    copied = Path(plugin["installPath"])
    assert (copied / ".claude-plugin" / "plugin.json").read_bytes() == PLUGIN.read_bytes()
    assert (copied / "skills" / "handoff" / "SKILL.md").read_bytes() == SKILL.read_bytes()


def test_a_claude_session_runs_the_hooks_and_registers_the_mcp_server(tmp_path: Path) -> None:
    project = _project(tmp_path)
    env = hook_env(tmp_path)
    store = cmp.Store(project / ".cmp" / "packets")
    first = store.save(cmp.Packet.new(goal=GOAL, next_step="Time the batched writer.")).id
    _draft(project, "Profile the writer with 5,000-row batches.")
    args = ("-p", "Continue.", "--plugin-dir", str(ROOT), "--output-format", "stream-json", "--verbose")
    done = _claude(*args, cwd=project, home=tmp_path / "home", env=env)
    messages = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    (started,) = [m for m in messages if m.get("subtype") == "hook_response" and m["hook_event"] == "SessionStart"]
    assert started["exit_code"] == 0 and started["outcome"] == "success", started
    context = json.loads(started["stdout"])["hookSpecificOutput"]["additionalContext"]
    assert GOAL in context and f"End of the Core Memory Packet {first}." in context
    (init,) = [m for m in messages if m.get("subtype") == "init"]
    assert {"name": "plugin:core-memory-packet:core-memory-packet"}.items() <= init["mcp_servers"][0].items()
    assert "core-memory-packet:handoff" in init["skills"]
    # The session ends (at the login, here): SessionEnd saved the draft, continuing the first packet.
    latest = store.latest()
    assert latest is not None and latest.parent_id == first and latest.next_step.startswith("Profile")
