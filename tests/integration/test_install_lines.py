"""The example intake's install line, run as written in a new virtual environment.

examples/intake-app/app.py says how to run it: ``pip install '.[fastapi]'`` from the
checkout's root, then ``uvicorn app:app`` from its folder. Both lines run here as written,
in a copy of the checkout (the build leaves nothing in the real one), with a new virtual
environment (``python -m venv``) first on PATH. pip installs the package with the extra
and every dependency from the package index, building it in its own isolated
environment, as a user's pip does; its cache keeps later runs short. Then the server the
second line starts takes a packet, hands its canonical bytes back and refuses a leaky one.

tests/unit/test_install_lines.py reads every other install line; this is the one that
installs an extra for real.
"""

from __future__ import annotations

import http.client
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

import cmp
from tests.support.example_intake_lines import example_commands

ROOT = Path(__file__).resolve().parents[2]
# What a copy of the checkout leaves out: version control, environments, caches, build output.
NOT_COPIED = shutil.ignore_patterns(
    ".git", ".venv*", "build", "dist", "*.egg-info", "__pycache__", ".*_cache", ".hypothesis"
)


@dataclass(frozen=True)
class Environment:
    venv: Path
    checkout: Path

    def env(self) -> dict[str, str]:
        """The user's environment with the venv activated; nothing of the test's own Python."""
        env = {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV"}}
        env["PATH"] = f"{self.venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
        env["VIRTUAL_ENV"] = str(self.venv)
        env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
        return env

    def shell(self, line: str, cwd: Path, timeout: float) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["bash", "-c", line], cwd=cwd, env=self.env(), capture_output=True, text=True, timeout=timeout
        )


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Environment]:
    """A new venv holding what the example's install line installs, run from a copy of the checkout."""
    base = tmp_path_factory.mktemp("install-lines")
    checkout = base / "checkout"
    shutil.copytree(ROOT, checkout, ignore=NOT_COPIED, symlinks=True)
    venv = base / "venv"
    subprocess.run([sys.executable, "-m", "venv", venv], check=True, capture_output=True, timeout=300)
    environment = Environment(venv, checkout)
    install, _ = example_commands()
    result = environment.shell(install, cwd=checkout, timeout=900)
    assert result.returncode == 0, f"{install}:\n{result.stdout}\n{result.stderr}"
    yield environment


def test_the_extra_brings_what_the_example_imports(installed: Environment) -> None:
    probe = "import cmp, fastapi, pydantic, starlette, uvicorn; print(cmp.__file__)"
    result = installed.shell(f"python -c '{probe}'", cwd=installed.checkout / "examples", timeout=120)
    assert result.returncode == 0, result.stderr
    # The installed package, not the copy's source: the line installs, it does not point at the checkout.
    assert Path(result.stdout.strip()).is_relative_to(installed.venv)


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _request(port: int, method: str, path: str, body: bytes | None = None) -> tuple[int, bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        headers = {"Content-Type": "application/json"} if body is not None else {}
        connection.request(method, path, body=body, headers=headers)
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


def test_the_example_serves_packets_under_the_line_that_runs_it(installed: Environment, tmp_path: Path) -> None:
    _, serve = example_commands()
    port = _free_port()
    env = {**installed.env(), "UVICORN_PORT": str(port)}  # uvicorn reads its options from UVICORN_*
    log = tmp_path / "server.log"
    with log.open("wb") as output:
        # exec: the signal below reaches uvicorn itself, not the shell that started it.
        server = subprocess.Popen(
            ["bash", "-c", f"exec {serve}"], cwd=installed.checkout / "examples" / "intake-app", env=env,
            stdout=output, stderr=subprocess.STDOUT,
        )  # fmt: skip
    try:
        for _ in range(600):  # while it starts, a connection is refused
            assert server.poll() is None, log.read_text(errors="replace")
            try:
                status, _ = _request(port, "GET", "/packets/none")
                break
            except OSError:
                time.sleep(0.1)
        else:
            raise AssertionError("the server never answered:\n" + log.read_text(errors="replace"))
        assert status == 404
        packet = (ROOT / "examples" / "typical-v0.2.json").read_bytes()
        status, body = _request(port, "POST", "/packets", packet)
        assert status == 201, body
        stored_id = json.loads(body)["id"]
        assert _request(port, "GET", f"/packets/{stored_id}") == (200, cmp.dumps(cmp.loads(packet)))
        status, body = _request(port, "POST", "/packets", (ROOT / "examples" / "leaky-v0.2.json").read_bytes())
        assert status == 422
        assert b"AKIAIOSFODNN7EXAMPLE" not in body and b"aws-key" in body  # refused, the key not echoed
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=30)
    assert "Traceback" not in log.read_text(errors="replace")


def _actions_install_line() -> str:
    """The ``pip install`` line of the GitHub Actions snippet in docs/integrations.md."""
    page = (ROOT / "docs" / "integrations.md").read_text(encoding="utf-8")
    (line,) = [line for line in page.splitlines() if "- run: pip install" in line and "git+" in line]
    return line.split("- run: ", 1)[1]


def test_the_actions_snippet_s_git_requirement_installs(installed: Environment, tmp_path: Path) -> None:
    # The snippet installs from the project's git repository; here the same requirement names a
    # clone of this checkout (committed work only, as from a host) at its commit, in place of main.
    line = _actions_install_line()
    assert line.startswith('pip install "core-memory-packet @ git+https://') and line.endswith('@main"')
    clone = tmp_path / "repository"
    subprocess.run(["git", "clone", "--quiet", str(ROOT), str(clone)], check=True, capture_output=True, timeout=300)
    commit = subprocess.run(
        ["git", "-C", str(clone), "rev-parse", "HEAD"], check=True, capture_output=True, text=True
    ).stdout.strip()
    url = line.split("git+", 1)[1].rsplit("@", 1)[0]
    # file://localhost/...: pip before 23.3 takes a VCS URL only with a host in it.
    local = line.replace(url, "file://localhost" + clone.as_posix()).replace("@main", f"@{commit}")
    result = installed.shell(f"{local} --force-reinstall --no-deps", cwd=tmp_path, timeout=600)
    assert result.returncode == 0, f"{local}:\n{result.stdout}\n{result.stderr}"
    packets = tmp_path / "packets"
    packets.mkdir()
    shutil.copy(ROOT / "examples" / "typical-v0.2.json", packets)
    checked = installed.shell("core-memory-packet check --format github packets/", cwd=tmp_path, timeout=120)
    assert (checked.returncode, checked.stdout) == (0, ""), checked.stderr
