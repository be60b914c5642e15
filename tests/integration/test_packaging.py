"""The wheel as a user gets it: its console script, its package data, its licence.

The wheel is built from a copy of the checkout (so the build leaves nothing in it),
without build isolation, and installed without dependencies into a fresh virtual
environment; that environment borrows the test interpreter's installed packages
through PYTHONPATH, so nothing is downloaded. Every command runs outside the checkout,
and the tests make sure the ``cmp`` they import is the installed one.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import os
import shutil
import site
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

import cmp
from tests.support.extras import require

if sys.version_info >= (3, 11):
    import tomllib
else:  # the core's own dependency there
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]
VECTORS = ROOT / "conformance-vectors"
# What a copy of the checkout leaves out: version control, environments, caches, build output.
NOT_COPIED = shutil.ignore_patterns(
    ".git", ".venv*", "build", "dist", "*.egg-info", "__pycache__", ".*_cache", ".hypothesis"
)
# PEP 639 license expressions (`license = "MIT"`) need setuptools 77.
FIRST_SETUPTOOLS = (77, 0, 1)
require("setuptools", minversion="77.0.1")  # the build below runs without isolation: this one builds
SITE_PACKAGES = Path("lib") / f"python{sys.version_info.major}.{sys.version_info.minor}" / "site-packages"


@dataclass(frozen=True)
class Installed:
    wheel: Path
    venv: Path
    work: Path  # a folder outside the checkout, holding the example packets

    @property
    def bin(self) -> Path:
        return self.venv / "bin"

    def env(self) -> dict[str, str]:
        """The environment's own packages first, then the test interpreter's (for the dependencies)."""
        borrowed = os.pathsep.join(site.getsitepackages())
        return {**os.environ, "PYTHONPATH": borrowed, "PYTHONDONTWRITEBYTECODE": "1"}

    def run(self, *command: str | Path) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(part) for part in command], cwd=self.work, env=self.env(), capture_output=True, text=True, timeout=120
        )


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.split(".")[:3] if part.isdigit())


def _pip(*args: str | Path, python: str | Path = sys.executable) -> None:
    command = [str(python), "-m", "pip", "--disable-pip-version-check", *map(str, args)]
    result = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, f"{' '.join(command)}:\n{result.stdout}\n{result.stderr}"


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Installed]:
    setuptools = importlib.metadata.version("setuptools")
    assert _version(setuptools) >= FIRST_SETUPTOOLS, (
        f"setuptools {setuptools} cannot build this project; install the test extras: pip install -e '.[test]'"
    )
    base = tmp_path_factory.mktemp("packaging")
    source = base / "source"
    shutil.copytree(ROOT, source, ignore=NOT_COPIED, symlinks=True)
    _pip("wheel", "--quiet", "--no-deps", "--no-build-isolation", "--wheel-dir", base / "dist", source)
    (wheel,) = (base / "dist").glob("*.whl")
    venv = base / "venv"
    subprocess.run([sys.executable, "-m", "venv", venv], check=True, capture_output=True, timeout=300)
    _pip("install", "--quiet", "--no-deps", "--no-index", wheel, python=venv / "bin" / "python")
    work = base / "work"
    work.mkdir()
    for name in ("typical-v0.2.json", "leaky-v0.2.json"):
        shutil.copyfile(ROOT / "examples" / name, work / name)
    yield Installed(wheel, venv, work)


def test_the_console_script_is_core_memory_packet_and_there_is_no_cmp(installed: Installed) -> None:
    scripts = {path.name for path in installed.bin.iterdir()}
    assert "core-memory-packet" in scripts
    assert "cmp" not in scripts  # POSIX cmp(1) keeps its name


def test_the_installed_package_is_the_one_imported(installed: Installed) -> None:
    result = installed.run(installed.bin / "python", "-c", "import cmp; print(cmp.__file__)")
    assert result.returncode == 0, result.stderr
    imported = Path(result.stdout.strip()).resolve()
    assert imported == installed.venv.resolve() / SITE_PACKAGES / "cmp" / "__init__.py"


def test_the_installed_script_checks_packets(installed: Installed) -> None:
    script = installed.bin / "core-memory-packet"
    good = installed.run(script, "check", "typical-v0.2.json")
    assert (good.returncode, good.stdout, good.stderr) == (0, "typical-v0.2.json: ok\n", "")
    leaky = installed.run(script, "check", "leaky-v0.2.json")
    assert leaky.returncode == 1 and "redaction" in leaky.stdout
    version = installed.run(script, "--version")
    assert (version.returncode, version.stdout) == (0, f"core-memory-packet {cmp.__version__}\n")
    usage = installed.run(script, "fmt", "--help")
    assert usage.returncode == 0 and usage.stdout.startswith("usage: core-memory-packet fmt ")
    module = installed.run(installed.bin / "python", "-m", "cmp", "check", "--help")
    assert module.returncode == 0 and module.stdout.startswith("usage: python -m cmp check ")


def test_the_wheel_carries_the_licence_and_its_metadata(installed: Installed) -> None:
    with zipfile.ZipFile(installed.wheel) as wheel:
        names = wheel.namelist()
        (dist_info,) = {name.split("/")[0] for name in names if name.split("/")[0].endswith(".dist-info")}
        licence = wheel.read(f"{dist_info}/licenses/LICENSE").decode()
        metadata = wheel.read(f"{dist_info}/METADATA").decode()
        entry_points = wheel.read(f"{dist_info}/entry_points.txt").decode()
    assert licence == (ROOT / "LICENSE").read_text()
    assert licence.startswith("MIT License\n\nCopyright (c) 2026 the core-memory-packet authors\n")
    assert "License-Expression: MIT\n" in metadata and "License-File: LICENSE\n" in metadata
    scripts = entry_points.split("[console_scripts]\n", 1)[1].strip().splitlines()
    assert scripts == ["core-memory-packet = cmp.cli:main_exit"]


def test_the_wheel_carries_every_module_of_the_package(installed: Installed) -> None:
    """[tool.setuptools] packages lists each package: one left out is missing from the wheel only."""
    with zipfile.ZipFile(installed.wheel) as wheel:
        shipped = {name for name in wheel.namelist() if name.endswith(".py")}
    modules = {path.relative_to(ROOT).as_posix() for path in (ROOT / "cmp").rglob("*.py")}
    assert modules <= shipped, sorted(modules - shipped)


def test_the_wheel_carries_the_conformance_vectors_and_not_their_tools(installed: Installed) -> None:
    with zipfile.ZipFile(installed.wheel) as wheel:
        prefix = "cmp/vectors/"
        shipped = {name[len(prefix) :]: wheel.read(name) for name in wheel.namelist() if name.startswith(prefix)}
    vector_files = sorted(path.name for path in VECTORS.glob("*.json"))
    assert "vectors.schema.json" in vector_files and len(vector_files) >= 8
    for name in [*vector_files, "README.md"]:
        assert shipped.pop(name) == (VECTORS / name).read_bytes(), name
    # Data only: not adapters/, and not the generator (tools/generate_vectors.py).
    assert not shipped, sorted(shipped)


def test_the_wheel_carries_the_json_documents_schema_and_its_urls(installed: Installed) -> None:
    """The --format json document's schema is package data of cmp.cli; [project.urls] is in the metadata."""
    name = "cmp/cli/schemas/check-report.schema.json"
    with zipfile.ZipFile(installed.wheel) as wheel:
        assert wheel.read(name) == (ROOT / name).read_bytes()
        (metadata,) = [item for item in wheel.namelist() if item.endswith(".dist-info/METADATA")]
        text = wheel.read(metadata).decode()
    project = "https://github.com/core-memory-packet/core-memory-packet"
    assert f"Project-URL: Documentation, {project}/blob/main/docs/\n" in text


def test_the_vectors_are_resources_of_the_installed_package(installed: Installed) -> None:
    script = (
        "import hashlib, importlib.resources, json\n"
        "folder = importlib.resources.files('cmp.vectors')\n"
        "digests = {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in folder.iterdir() if p.is_file()}\n"
        "print(json.dumps(digests))\n"
    )
    result = installed.run(installed.bin / "python", "-c", script)
    assert result.returncode == 0, result.stderr
    found = {name: digest for name, digest in json.loads(result.stdout).items() if name.endswith(".json")}
    assert found == {path.name: hashlib.sha256(path.read_bytes()).hexdigest() for path in VECTORS.glob("*.json")}


def test_the_installed_conformance_command_runs_the_shipped_vectors(installed: Installed) -> None:
    result = installed.run(installed.bin / "core-memory-packet", "conformance", "--format", "json")
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    total = sum(
        len(json.loads(path.read_bytes())["vectors"])
        for path in VECTORS.glob("*.json")
        if path.name != "vectors.schema.json"
    )
    assert (document["passed"], document["failed"]) == (total, 0)


def test_the_installed_script_prints_both_schemas(installed: Installed) -> None:
    """The schema files and the annotations ship as package data."""
    script = installed.bin / "core-memory-packet"
    normative = installed.run(script, "schema", "--version", "0.1")
    assert (
        normative.returncode == 0
        and normative.stdout.encode() == (ROOT / "cmp" / "schema" / "core-memory.v0.1.json").read_bytes()
    )
    annotated = installed.run(script, "schema", "--annotated")
    assert annotated.returncode == 0, annotated.stderr
    assert json.loads(annotated.stdout)["properties"]["goal"]["description"].startswith("What the session is for")


def test_the_wheel_is_typed_and_classified(installed: Installed) -> None:
    """py.typed ships (PEP 561: type checkers read the package's own hints), and every classifier."""
    with zipfile.ZipFile(installed.wheel) as wheel:
        names = wheel.namelist()
        (dist_info,) = {name.split("/")[0] for name in names if name.split("/")[0].endswith(".dist-info")}
        metadata = wheel.read(f"{dist_info}/METADATA").decode()
    assert "cmp/py.typed" in names
    prefix = "Classifier: "
    classifiers = [line.removeprefix(prefix) for line in metadata.splitlines() if line.startswith(prefix)]
    assert "Typing :: Typed" in classifiers and "Programming Language :: Python :: 3.10" in classifiers
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert classifiers == pyproject["project"]["classifiers"]
