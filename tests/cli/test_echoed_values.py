"""A credential given where a file name or a value goes (issue 47, item 5): a file named for a key,
a key pasted as an option's value, a setting or its key, is withheld in every message, as check,
save and fmt withhold a file name already. Each error stays one line with its exit status."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import pytest

import cmp
from tests.cli.test_masking import leaks
from tests.support.cli import run_cli
from tests.support.packets import encode, full

# Synthetic: AWS's documented example key id, and a made-up GitHub token (ghp_ + 36).
SECRETS = [
    pytest.param("AKIAIOSFODNN7EXAMPLE", "AKIA", id="aws-key"),
    pytest.param("ghp_" + "Zq4Wn8Rt2Yb6Lm0Xc3Vd7Kf1Hs5Gj9Pa2Ue4", "ghp_", id="gh-token"),
]


@dataclass(frozen=True)
class Case:
    """One command line naming ``KEY`` (the secret), run in a folder holding ``files``."""

    args: tuple[str, ...]
    status: int
    env: dict[str, str] = field(default_factory=dict)
    files: dict[str, bytes] = field(default_factory=dict)
    lines: int | None = 1  # the lines on stderr: an error is one; None: not counted


PACKET = encode(full())
NEW = ("new", "--goal", "Ship the fix.", "--next-step", "Time it.")

CASES: dict[str, Case] = {
    # file names
    "resume a missing file": Case(("resume", "gone/KEY.json"), 2),
    "resume a file that is no packet": Case(("resume", "KEY.json"), 1, files={"KEY.json": b"{}"}),
    "new --parent": Case((*NEW, "--parent", "gone/KEY.json"), 2),
    "new --draft missing": Case(("new", "--draft", "gone/KEY.json"), 2),
    "new --draft no object": Case(("new", "--draft", "KEY.json"), 2, files={"KEY.json": b"[]"}),
    "new -o into no folder": Case((*NEW, "-o", "gone/KEY.json"), 2),
    "new -o over a file": Case((*NEW, "-o", "KEY.json"), 2, files={"KEY.json": PACKET}),
    "check --baseline missing": Case(("check", "--baseline", "gone/KEY.json", "p.json"), 2),
    "check --baseline no baseline": Case(("check", "--baseline", "KEY.json", "p.json"), 2, files={"KEY.json": PACKET}),
    "gate --baseline": Case(("gate", "--baseline", "gone/KEY.json", "p.json"), 2),
    "lint --baseline": Case(("lint", "--baseline", "gone/KEY.json", "p.json"), 2),
    "baseline -o into no folder": Case(("baseline", "p.json", "-o", "gone/KEY.json"), 2),
    "baseline -o over a packet": Case(("baseline", "p.json", "-o", "KEY.json"), 2, files={"KEY.json": PACKET}),
    "baseline -o written": Case(("baseline", "p.json", "-o", "out/KEY.json"), 0, files={"out/keep": b""}),
    "CMP_CONFIG": Case(("check", "p.json"), 2, env={"CMP_CONFIG": "KEY.toml"}),
    # option values, argparse's own errors among them
    "check --ignore": Case(("check", "--ignore", "KEY", "p.json"), 2),
    "check --select": Case(("check", "--select", "KEY", "p.json"), 2),
    "lint --ignore": Case(("lint", "--ignore", "KEY", "p.json"), 2),
    "check --format": Case(("check", "--format", "KEY", "p.json"), 2),
    "check --format=": Case(("check", "--format=KEY", "p.json"), 2),
    "check --rule-set": Case(("check", "--rule-set", "KEY", "p.json"), 2),
    "check --jobs": Case(("check", "--jobs", "KEY", "p.json"), 2),
    "resume --max-chars": Case(("resume", "--max-chars", "KEY", "p.json"), 2),
    "new --version": Case((*NEW, "--version", "KEY"), 2),
    "an unknown argument": Case(("check", "p.json", "--KEY"), 2),
    "a word too many": Case(("example", "KEY"), 2),
    "a command": Case(("KEY",), 2),
    "an include glob matching nothing": Case(("check", "--include", "KEY.json", "d"), 2, files={"d/a.json": PACKET}),
    "a glob that is none": Case(("check", "--exclude", "[z-a]KEY", "p.json"), 2),
    # the environment and the settings table
    "CMP_IGNORE": Case(("check", "p.json"), 2, env={"CMP_IGNORE": "KEY"}),
    "CMP_SELECT": Case(("lint", "p.json"), 2, env={"CMP_SELECT": "KEY"}),
    "CMP_RULE_SET": Case(("check", "p.json"), 2, env={"CMP_RULE_SET": "KEY"}),
    "CMP_FORMAT": Case(("lint", "p.json"), 2, env={"CMP_FORMAT": "KEY"}),
    "an unknown key": Case(("check", "p.json"), 2, files={"pyproject.toml": b'"KEY" = 1'}),
    "a choice": Case(("check", "p.json"), 2, files={"pyproject.toml": b'rule-set = "KEY"'}),
    "a list that is a string": Case(("check", "p.json"), 2, files={"pyproject.toml": b'exclude = "KEY"'}),
    "a switch that is a list": Case(("check", "p.json"), 2, files={"pyproject.toml": b'lenient = ["KEY"]'}),
    "a config file's name": Case(("check", "p.json"), 2, files={"KEY/pyproject.toml": b"lenient = 3"}),
    "--show-config": Case(("check", "--show-config"), 0, files={"pyproject.toml": b'baseline = "KEY.json"'}, lines=0),
}


def _run(tmp_path: Path, case: Case, secret: str) -> tuple[int, str, str]:
    folder = tmp_path / "run"
    folder.mkdir(parents=True)
    (folder / "p.json").write_bytes(PACKET)
    cwd = folder
    for name, data in case.files.items():
        path = folder / name.replace("KEY", secret)
        path.parent.mkdir(parents=True, exist_ok=True)
        if name.endswith("pyproject.toml"):
            data = b"[tool.core-memory-packet]\n" + data
            cwd = path.parent
            (cwd / "p.json").write_bytes(PACKET)
        path.write_bytes(data.replace(b"KEY", secret.encode()))
    env = {key: value for key, value in os.environ.items() if not key.startswith("CMP_")}
    env.update({name: value.replace("KEY", secret) for name, value in case.env.items()})
    args = [arg.replace("KEY", secret) for arg in case.args]
    result = run_cli(*args, cwd=cwd, env=env, text=True)
    return result.returncode, result.stdout, result.stderr


@pytest.mark.parametrize(("secret", "prefix"), SECRETS)
def test_no_file_name_or_value_given_is_echoed(tmp_path: Path, secret: str, prefix: str) -> None:
    wrong = []
    for number, (name, case) in enumerate(CASES.items()):
        status, out, err = _run(tmp_path / str(number), case, secret)
        if leaks(out + err, secret, prefix):
            wrong.append(f"{name}: shows {leaks(out + err, secret, prefix)}: {err!r}")
        if status != case.status:
            wrong.append(f"{name}: exit {status}, not {case.status}: {err!r}")
        if case.lines is not None and err.count("\n") != case.lines:
            wrong.append(f"{name}: {err.count(chr(10))} lines on stderr, not {case.lines}: {err!r}")
        if status == 2 and out:
            wrong.append(f"{name}: an error with output: {out!r}")
        if case.lines and "not shown: " not in err:
            wrong.append(f"{name}: says nothing of what it withheld: {err!r}")
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize(("secret", "prefix"), SECRETS)
def test_the_library_names_an_unknown_version_as_it_names_values(secret: str, prefix: str) -> None:
    for call in (lambda: cmp.draft_schema(secret), lambda: cmp.Packet.from_draft({}, version=secret)):
        with pytest.raises(ValueError, match=r"supported: 0\.1, 0\.2") as caught:
            call()
        assert not leaks(str(caught.value), secret, prefix) and "not shown: " in str(caught.value)
    with pytest.raises(ValueError, match=r"^no schema for version '0\.3'; supported: 0\.1, 0\.2$"):
        cmp.draft_schema("0.3")  # a version that is no key is named as it is
