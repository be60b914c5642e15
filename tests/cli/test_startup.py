"""What a one-file check loads at start-up, and the parser's answers.

Nothing here times anything (benchmarks/run.py does): these tests hold the module lists
and the parser's answers, which are what the start-up figures follow from.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from cmp.cli._args import build_parser, command_in, terminal_columns
from cmp.cli._main import _COMMANDS

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "typical-v0.2.json"

# Each of these a one-file check with the default rules never needs; the comment says who does.
NOT_AT_START_UP = (
    "concurrent.futures",  # worker pools (--jobs), not a run in this process
    "logging",  # concurrent.futures's
    "hashlib",  # state_digest, source_hash, baselines
    "rfc3339_validator",  # the wording of a refused created_at
    "tomllib",  # a pyproject.toml that names the project
    "shutil",  # argparse's help width (cmp.cli._args.terminal_columns answers as it does)
    "threading",  # the parser's per-thread state is _thread's local, threading.local itself
    "datetime",  # Packet.created_at_datetime
    "zlib",  # the extended rules' checksummed tokens
    "cmp.cli._fmt",
    "cmp.cli._difference",
    "cmp.cli._rewrite",
    "cmp._redaction._extended",  # --rule-set extended, --select and --ignore
    "cmp._deepjson",  # a text nested deeper than the C decoder reads
    "typing",  # mypy's: the package reads it under TYPE_CHECKING = False (cmp.findings makes its Literals on use)
)


def _without_site() -> dict[str, str]:
    """The environment of a probe run with ``-S``: no site, whose .pth files (an editable
    install's) load typing and more before the probe starts; the package folders on the path."""
    import site

    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), *site.getsitepackages()])}


def loaded_by(argv: list[str], cwd: Path) -> tuple[int, set[str]]:
    """The exit status of ``python -m cmp ARGV`` run in ``cwd``, and the modules it had loaded."""
    probe = (
        "import json, runpy, sys\n"
        "sys.argv = ['cmp', *json.loads(sys.argv[1])]\n"
        "try:\n"
        "    runpy.run_module('cmp', run_name='__main__')\n"
        "except SystemExit as exc:\n"
        "    status = exc.code\n"
        "sys.stderr.write(json.dumps([status, sorted(sys.modules)]))\n"
    )
    result = subprocess.run(
        [sys.executable, "-S", "-c", probe, json.dumps(argv)],
        cwd=cwd,
        env=_without_site(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    status, modules = json.loads(result.stderr.splitlines()[-1])
    return status, set(modules)


def interpreter_modules() -> set[str]:
    """What the interpreter has loaded before any of cmp runs (3.13 starts with linecache)."""
    probe = "import json, runpy, sys; sys.stderr.write(json.dumps(sorted(sys.modules)))"
    result = subprocess.run(
        [sys.executable, "-S", "-c", probe], env=_without_site(), capture_output=True, text=True, timeout=60
    )
    return set(json.loads(result.stderr))


def test_a_one_file_check_loads_nothing_it_does_not_use(tmp_path: Path) -> None:
    shutil.copy(EXAMPLE, tmp_path / "typical.json")
    status, modules = loaded_by(["check", "typical.json"], tmp_path)
    assert status == 0
    modules -= interpreter_modules()
    packages = tuple(f"{name}." for name in NOT_AT_START_UP)  # a module, or one inside it
    assert sorted(m for m in modules if m in NOT_AT_START_UP or m.startswith(packages)) == []
    assert "cmp._pipeline" in modules  # the probe sees what the check loaded


def test_importing_the_package_loads_nothing_but_the_package() -> None:
    """Without site (which loads typing and more for an editable install), so the list can fail."""
    probe = "import sys; before = set(sys.modules); import cmp; print(' '.join(sorted(set(sys.modules) - before)))"
    result = subprocess.run(
        [sys.executable, "-S", "-c", probe], env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    loaded = set(result.stdout.split())
    assert loaded == {"cmp", "__future__"}


def test_the_parsers_thread_state_is_threading_local() -> None:
    import threading

    from cmp import _intake

    assert _intake.thread_local is threading.local


def test_what_the_probe_calls_unused_is_loaded_when_used(tmp_path: Path) -> None:
    """The list above can fail: each entry is loaded by the run that needs it."""
    leaky = ROOT / "examples" / "leaky-v0.2.json"
    (tmp_path / "pyproject.toml").write_text('[tool.core-memory-packet]\nrule-set = "extended"\n', encoding="utf-8")
    argv = ["check", "--jobs", "2", "--ignore", "redaction/aws-key", str(EXAMPLE), str(leaky)]
    status, modules = loaded_by(argv, tmp_path)
    assert status in (0, 1)
    toml = "tomllib" if sys.version_info >= (3, 11) else "tomli"  # tomli on 3.10
    assert {"concurrent.futures", toml, "cmp._redaction._extended"} <= modules
    _, modules = loaded_by(["fmt", "--diff", str(EXAMPLE)], tmp_path)
    assert {"cmp.cli._fmt", "cmp.cli._difference"} <= modules
    deep = tmp_path / "deep.json"
    deep.write_text('{"goal": ' + "[" * 12_000 + "]" * 12_000 + "}", encoding="utf-8")
    status, modules = loaded_by(["check", str(deep)], tmp_path)
    assert status == 1 and "cmp._deepjson" in modules


# Command lines for each command, good and bad; the one-command parser must read each as the whole one does.
COMMAND_LINES = [
    ["check", "a.json", "--format", "json", "-q", "--jobs", "2", "--no-lenient", "--ignore", "redaction/aws-key"],
    ["check", "-", "--jsonl", "b.jsonl", "--rule-set", "extended", "--show-found", "--exit-zero"],
    ["check", "--show-config"],
    ["check", "--format", "yaml", "a.json"],
    ["check", "--bogus"],
    ["fmt", "--write", "--force", "a.json"],
    ["fmt", "--check", "--diff", "a.json"],
    ["fmt"],
    ["lint", "a.json", "--strict", "--ignore", "lint/sentences"],
    ["conformance", "--filter", "versioning", "--format", "junit"],
    ["new", "--goal", "Ship it"],
    ["schema", "--version", "0.1"],
    ["save", "a.json", "--store", "s"],
    ["ls", "--store", "s"],
    ["audit", "--jobs", "3"],
    ["rules"],
    ["mcp", "--store", "s", "extra"],
]


def parsed(argv: list[str], *, only: str | None) -> tuple[str, object]:
    try:
        return "ok", vars(build_parser("cmp", only=only).parse_args(argv))
    except SystemExit as exc:
        return "exit", exc.code


@pytest.mark.parametrize("argv", COMMAND_LINES, ids=lambda argv: " ".join(argv))
def test_the_one_command_parser_reads_what_the_whole_parser_reads(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert command_in(argv) == argv[0]
    whole = parsed(argv, only=None)
    whole_err = capsys.readouterr().err
    one = parsed(argv, only=command_in(argv))
    assert one == whole
    assert capsys.readouterr().err == whole_err


def test_every_command_that_runs_has_its_parser_and_only_a_command_picks_one() -> None:
    whole = build_parser("cmp")
    (choices,) = (action.choices for action in whole._actions if getattr(action, "choices", None))
    assert choices is not None
    assert sorted(choices) == sorted(_COMMANDS)
    assert command_in(["-V"]) is None
    assert command_in(["--help"]) is None
    assert command_in(["chek", "a.json"]) is None  # the whole parser answers: its choices, listed
    assert command_in(["check", "fmt"]) == "check"


@pytest.mark.parametrize("columns", [None, "100", " 72 ", "0", "-5", "wide", ""])
def test_the_help_width_is_what_shutil_says(columns: str | None, monkeypatch: pytest.MonkeyPatch) -> None:
    import shutil

    if columns is None:
        monkeypatch.delenv("COLUMNS", raising=False)
    else:
        monkeypatch.setenv("COLUMNS", columns)
    assert terminal_columns() == shutil.get_terminal_size().columns


def test_the_help_width_of_a_terminal_is_what_shutil_says() -> None:
    """On a pseudo-terminal of 97 columns, with COLUMNS unset: both ask the terminal."""
    import pty

    probe = (
        "import fcntl, shutil, struct, sys, termios\n"
        "fcntl.ioctl(sys.stdout.fileno(), termios.TIOCSWINSZ, struct.pack('HHHH', 30, 97, 0, 0))\n"
        "from cmp.cli._args import terminal_columns\n"
        "sys.stderr.write(f'{terminal_columns()} {shutil.get_terminal_size().columns}')\n"
    )
    leader, follower = pty.openpty()
    environment = {key: value for key, value in os.environ.items() if key != "COLUMNS"}
    result = subprocess.run(
        [sys.executable, "-c", probe], stdout=follower, stderr=subprocess.PIPE, env=environment, timeout=60
    )
    os.close(follower)
    os.close(leader)
    assert result.stderr.decode().split() == ["97", "97"]


# main replaced before the entry point runs it: what the collector's state is once the program is loaded.
_GC_PROBE = """
import gc, sys
from cmp.cli import _main
def probe(**_):
    print(gc.isenabled(), gc.get_freeze_count() > 0)
    return 0
_main.main = probe
from cmp.cli import module_exit
module_exit()
"""


@pytest.mark.parametrize("collecting", [True, False])
def test_the_program_loads_without_collections_and_runs_with_the_collector_as_it_was(collecting: bool) -> None:
    """cmp.cli._load: the objects loading makes are frozen, and main runs with the
    collector on (off only where the process had turned it off)."""
    probe = ("" if collecting else "import gc; gc.disable()\n") + _GC_PROBE
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert (result.returncode, result.stdout, result.stderr) == (0, f"{collecting} True\n", "")


def test_loading_the_program_starts_no_collection() -> None:
    probe = (
        "import gc; from cmp.cli import _load\n"
        "started = []; gc.callbacks.append(lambda phase, info: started.append(phase))\n"
        "_load(); print(started.count('start'))"
    )
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert (result.returncode, result.stdout, result.stderr) == (0, "0\n", "")


def test_fmt_loads_the_differ_only_to_show_a_difference(tmp_path: Path) -> None:
    """fmt printing a packet's canonical bytes (what implementers' adapters run per vector)
    loads no diff machinery; --diff does."""
    status, modules = loaded_by(["fmt", str(EXAMPLE)], tmp_path)
    assert status == 0 and "difflib" not in modules and "cmp.cli._fmt" in modules
    bare = tmp_path / "bare.json"
    bare.write_bytes((EXAMPLE).read_bytes().rstrip(b"\n"))  # not canonical: no final newline
    status, modules = loaded_by(["fmt", "--diff", str(bare)], tmp_path)
    assert status == 1 and "difflib" in modules
