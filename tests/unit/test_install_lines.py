"""Every install line a user reads works as written, or says it is the form for a release.

No release is on a package index, so ``pip install core-memory-packet`` cannot work yet.
The lines are read where users meet them: README.md, SECURITY.md, docs/, examples/ and
the messages of cmp/ (the extras' hints). Each thing a line installs must be one of:

- the checkout: ``.``, ``'.[mcp]'``, ``-e .``, ``-e '.[test]'``, naming only extras that
  pyproject.toml defines;
- a requirement of one of those extras, word for word (what the hints name: it works in
  any environment the package is in, whether it came from a checkout or a wheel);
- anything else (the package by its name, a git URL) only on a line that says, itself or
  on the line before, that it is the form for a published release.

tests/integration/test_install_lines.py runs the example intake's line in a new virtual
environment. The Python versions pyproject.toml and the README claim are checked here
against the ones .ci/run tests.
"""

from __future__ import annotations

import ast
import re
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet

from tests.support.example_intake_lines import EXAMPLE_APP, example_commands

if sys.version_info >= (3, 11):
    import tomllib
else:  # the core's own dependency there
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
EXTRAS: dict[str, list[str]] = PYPROJECT["project"]["optional-dependencies"]
NAME = PYPROJECT["project"]["name"]

_INSTALL = re.compile(r"\b(?:uv pip|pipx|pip) install\b")
# Where a command ends inside a line of prose or code: a code span's end, the next command,
# a shell comment, a sentence's end after a quoted word (`pip install 'mcp>=2.3,<3'. Register it`).
# In Python source a double quote ends the string that holds the command.
_END = re.compile(r"`|&&|;|\||\s#|(?<=['\"])[.,:)](?=\s|$)")
_END_IN_PYTHON = re.compile(r"`|&&|;|\||\s#|(?<=')[.,:)](?=\s|$)|\"")
_LABEL = re.compile(r"no release|once a release|release is published|published release", re.IGNORECASE)
_CHECKOUT = re.compile(r"\.(?:\[(?P<extras>[A-Za-z0-9_,-]+)\])?")
# Options that take no value; a line with any other option is refused, so none slips past unread.
_FLAGS = {"-q", "--quiet", "-U", "--upgrade", "--no-cache-dir", "--user"}


@dataclass(frozen=True)
class InstallLine:
    where: str  # path:line
    command: str
    targets: tuple[str, ...]  # what it installs, shell quoting undone
    editable: tuple[str, ...]  # those given with -e
    labelled: bool  # the line, or the one before it, says it is the form for a release


def _sources() -> list[Path]:
    paths = [ROOT / "README.md", ROOT / "SECURITY.md", *sorted((ROOT / "docs").rglob("*.md"))]
    paths += sorted(p for p in (ROOT / "examples").rglob("*") if p.is_file() and p.suffix in {".py", ".md", ".sh"})
    paths += sorted((ROOT / "cmp").rglob("*.py"))
    return paths


def _parse(command: str) -> tuple[list[str], list[str]]:
    targets, editable = [], []
    words = iter(shlex.split(command))
    for word in words:
        if word in {"-e", "--editable"}:
            target = next(words)
            targets.append(target)
            editable.append(target)
        elif word.startswith("-"):
            assert word in _FLAGS, f"{command!r}: an option this reader does not know: {word}"
        else:
            targets.append(word)
    return targets, editable


def _install_lines() -> list[InstallLine]:
    found = []
    for path in _sources():
        lines = path.read_text(encoding="utf-8").splitlines()
        end = _END_IN_PYTHON if path.suffix == ".py" else _END
        for number, line in enumerate(lines, start=1):
            for match in _INSTALL.finditer(line):
                rest = line[match.start() :]
                stop = end.search(rest, match.end() - match.start())
                command = rest[: stop.start() if stop else len(rest)].strip()
                targets, editable = _parse(command.split(" install", 1)[1])
                if not targets:  # the command named in prose (`the pip install line`), not a line to run
                    continue
                context = line + "\n" + (lines[number - 2] if number > 1 else "")
                where = f"{path.relative_to(ROOT).as_posix()}:{number}"
                labelled = _LABEL.search(context) is not None
                found.append(InstallLine(where, command, tuple(targets), tuple(editable), labelled))
    return found


LINES = _install_lines()
_EXTRA_REQUIREMENTS = {str(Requirement(text)): extra for extra, texts in EXTRAS.items() for text in texts}


def _problems(line: InstallLine) -> list[str]:
    problems = []
    for target in line.targets:
        checkout = _CHECKOUT.fullmatch(target)
        if checkout:
            extras = (checkout.group("extras") or "").split(",") if checkout.group("extras") else []
            problems += [f"{target}: no extra {extra!r} in pyproject.toml" for extra in extras if extra not in EXTRAS]
            continue
        assert target not in line.editable, f"{line.where}: -e {target} is not the checkout"
        try:
            requirement = Requirement(target)
        except ValueError:
            problems.append(f"{target}: neither the checkout nor a requirement")
            continue
        if str(requirement) in _EXTRA_REQUIREMENTS:
            continue
        if requirement.name == NAME:
            problems += [f"{target}: no extra {e!r} in pyproject.toml" for e in requirement.extras if e not in EXTRAS]
        if not line.labelled:
            problems.append(f"{target}: works only once a release is published, and the line does not say so")
    return problems


@pytest.mark.parametrize("line", LINES, ids=lambda line: line.where)
def test_each_install_line_works_from_a_checkout_or_says_it_needs_a_release(line: InstallLine) -> None:
    assert not _problems(line), f"{line.where}: {line.command}: {_problems(line)}"


def test_the_reader_finds_the_lines_users_meet() -> None:
    """So that the test above cannot pass by reading nothing."""
    found = {(line.where.split(":")[0], line.command) for line in LINES}
    assert {
        ("README.md", "pip install -e '.[test]'"),
        ("README.md", "pip install '.[mcp]'"),
        ("README.md", "pip install 'core-memory-packet[mcp]'"),
        ("examples/intake-app/app.py", "pip install '.[fastapi]'"),
        ("docs/integrations.md", "pip install '.[fastapi]'"),
        ("cmp/cli/_mcp.py", "pip install 'mcp>=2.3,<3'"),
        ("cmp/cli/_args.py", "pip install 'mcp>=2.3,<3'"),
        ("cmp/cli/_dask.py", "pip install 'distributed>=2024.1'"),
        ("cmp/integrations/starlette.py", "pip install 'starlette>=0.37'"),
    } <= found, sorted(found)


def test_the_reader_tells_each_kind_of_line_apart() -> None:
    def line(command: str, labelled: bool = False) -> InstallLine:
        targets, editable = _parse(command.split(" install", 1)[1])
        return InstallLine("x:1", command, tuple(targets), tuple(editable), labelled)

    assert _problems(line("pip install -q -e '.[test,mcp]'")) == []
    assert _problems(line("pip install 'mcp>=2.3,<3'")) == []
    assert _problems(line("pip install '.[dask,nope]'")) == [".[dask,nope]: no extra 'nope' in pyproject.toml"]
    assert _problems(line("pip install 'mcp>=2'")) == [
        "mcp>=2: works only once a release is published, and the line does not say so"
    ]
    assert _problems(line("pip install 'core-memory-packet[mcp]'", labelled=True)) == []
    assert _problems(line("pip install 'core-memory-packet[gui]'", labelled=True)) == [
        "core-memory-packet[gui]: no extra 'gui' in pyproject.toml"
    ]
    assert _problems(line("pip install core-memory-packet")) == [
        "core-memory-packet: works only once a release is published, and the line does not say so"
    ]


# A hint: "mcp needs the MCP SDK (the mcp extra): pip install 'mcp>=2.3,<3'".
_HINT = re.compile(r"\(the (?P<extra>[a-z0-9-]+) extra\): pip install (?P<requirements>'[^']+'(?: '[^']+')*)")


def test_each_hint_installs_exactly_its_extra() -> None:
    hints = [
        (path.relative_to(ROOT).as_posix(), match)
        for path in sorted((ROOT / "cmp").rglob("*.py"))
        for match in _HINT.finditer(path.read_text(encoding="utf-8"))
    ]
    assert {extra.group("extra") for _, extra in hints} == {"mcp", "dask", "starlette", "server", "client"}
    for where, hint in hints:
        named = {str(Requirement(text)) for text in shlex.split(hint.group("requirements"))}
        assert named == {str(Requirement(text)) for text in EXTRAS[hint.group("extra")]}, where
    # Every hint in cmp/ has that form: one naming the unreleased package would not match it.
    assert not [line for line in LINES if line.where.startswith("cmp/") and NAME in line.command]


def test_the_intake_example_installs_an_extra_that_brings_fastapi_and_a_server() -> None:
    install, serve = example_commands()
    assert (install, serve) == ("pip install '.[fastapi]'", "uvicorn app:app")
    brought = {Requirement(text).name for text in EXTRAS["fastapi"]}
    assert {"fastapi", "uvicorn", "starlette", "pydantic"} <= brought
    # The app imports nothing but the standard library, cmp and what the extra brings.
    imported = set()
    for node in ast.walk(ast.parse(EXAMPLE_APP.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            imported |= {alias.name.partition(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            imported.add(node.module.partition(".")[0])
    assert imported - set(sys.stdlib_module_names) - {"cmp"} <= brought
    # docs/integrations.md shows the same two lines.
    integrations = (ROOT / "docs" / "integrations.md").read_text(encoding="utf-8")
    assert f"```sh\n{install}\ncd examples/intake-app && {serve}\n```" in integrations


def _ci_versions() -> tuple[str, list[str]]:
    """The Python of the whole suite (as the README names it) and the others .ci/run runs."""
    run = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    (others,) = re.findall(r'^other_pythons="([0-9. ]+)"$', run, re.MULTILINE)
    readme = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    claim = re.search(
        r"Python (\S+) to (\S+), as CI proves them: the whole suite on (\S+), "
        r"the quick subset \(`-m \"not slow\"`\) on ([0-9., and]+)\.",
        readme,
    )
    assert claim, "README.md's Install section says which Python versions CI runs"
    low, high, whole, quick = claim.groups()
    assert re.split(r", | and ", quick) == others.split(), "the README names the versions .ci/run runs"
    versions = sorted([whole, *others.split()], key=lambda v: tuple(map(int, v.split("."))))
    assert (low, high) == (versions[0], versions[-1])
    return whole, others.split()


def test_the_python_versions_claimed_are_the_ones_ci_runs() -> None:
    whole, others = _ci_versions()
    claimed = {whole, *others}
    prefix = "Programming Language :: Python :: "
    classified = {c[len(prefix) :] for c in PYPROJECT["project"]["classifiers"] if re.fullmatch(r".*:: 3\.\d+", c)}
    assert classified == claimed
    lowest = min(claimed, key=lambda v: tuple(map(int, v.split("."))))
    assert PYPROJECT["project"]["requires-python"] == f">={lowest}"
    assert all(f"{v}.0" in SpecifierSet(PYPROJECT["project"]["requires-python"]) for v in claimed)
    # Whichever of them runs this test is one of them.
    assert f"{sys.version_info.major}.{sys.version_info.minor}" in claimed


def test_the_package_says_it_is_typed_and_ships_its_marker() -> None:
    assert "Typing :: Typed" in PYPROJECT["project"]["classifiers"]
    assert (ROOT / "cmp" / "py.typed").is_file()
    assert "py.typed" in PYPROJECT["tool"]["setuptools"]["package-data"]["cmp"]
