"""The Claude Code plugin's hooks with a team server (CMP_PUSH and CMP_TEAM set, docs/claude-code.md):
the hand-off saved at SessionEnd is pushed to the team's scope, and a session on another machine (its
own store) syncs at SessionStart, then resumes from it. Without CMP_PUSH nothing leaves the machine."""

from __future__ import annotations

import json
from pathlib import Path

import cmp
from cmp.client import Client
from tests.client.conftest import new_user
from tests.server.conftest import Running
from tests.support.claude_plugin import event, hook_env, run_hook

GOAL = "Move the nightly export to the batched writer."


def test_a_hand_off_goes_to_the_team_and_the_next_machine_resumes_from_it(team_server: Running, tmp_path: Path) -> None:
    token = new_user(team_server, "dana")
    with Client(team_server.base, token) as client:
        client.create_team("exports")
    login = {"CMP_SERVER": team_server.base, "CMP_TOKEN": token}
    laptop, desktop = tmp_path / "laptop", tmp_path / "desktop"
    for machine in (laptop, desktop):
        (machine / "project" / ".cmp").mkdir(parents=True)
    draft = {"goal": GOAL, "next_step": "Profile the writer with 5,000-row batches."}
    (laptop / "project" / ".cmp" / "handoff.json").write_text(json.dumps(draft), encoding="utf-8")

    # Local only: saved in the laptop's store, not pushed.
    project = laptop / "project"
    local = run_hook("PreCompact", event("PreCompact", project, trigger="manual"), project, hook_env(laptop, **login))
    assert local.returncode == 0 and "pushed" not in local.stderr, local.stderr
    with Client(team_server.base, token) as client:
        assert client.ls(team="exports").packets == []

    # With CMP_PUSH and CMP_TEAM: the next save goes to the team's scope too.
    (project / ".cmp" / "handoff.json").write_text(json.dumps({**draft, "tags": ["export"]}), encoding="utf-8")
    env = hook_env(laptop, CMP_PUSH="1", CMP_TEAM="exports", **login)
    ended = run_hook("SessionEnd", event("SessionEnd", project, reason="logout"), project, env)
    assert ended.returncode == 0, ended.stderr
    saved = cmp.Store(project / ".cmp" / "packets").latest()
    assert saved is not None and f"pushed {saved.id}" in ended.stderr and token not in ended.stderr
    with Client(team_server.base, token) as client:
        assert [listed.id for listed in client.ls(team="exports").packets] == [saved.id]

    # The desktop's store is empty; its session starts by syncing the team's scope, then resumes.
    project = desktop / "project"
    env = hook_env(desktop, CMP_PUSH="1", CMP_TEAM="exports", **login)
    started = run_hook("SessionStart", event("SessionStart", project, source="startup"), project, env)
    assert started.returncode == 0, started.stderr
    context = json.loads(started.stdout)["hookSpecificOutput"]["additionalContext"]
    assert GOAL in context and f"End of the Core Memory Packet {saved.id}." in context
    assert token not in started.stdout + started.stderr
    # An unreachable server does not keep a session from starting on what the store holds.
    gone = hook_env(desktop, CMP_PUSH="1", CMP_SERVER="http://127.0.0.1:9", CMP_TOKEN=token)
    again = run_hook("SessionStart", event("SessionStart", project, source="resume"), project, gone)
    assert again.returncode == 0 and saved.id in json.loads(again.stdout)["hookSpecificOutput"]["additionalContext"]
