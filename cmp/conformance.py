"""The conformance runner: our vectors against this library or any other implementation.

Protocol for ``--impl COMMAND`` (documented in conformance-vectors/README.md): the
command is started once and kept running; for each vector the runner writes one JSON
line ``{"id", "input_base64"}`` to its stdin and reads one JSON line back:
``{"id", "conforming", "errors": [{"code", "path", "keyword"}], "redactions": [str],
"canonical_base64": str | null}``. A crash, a malformed or missing answer, or a
timeout fails that vector; the implementation is restarted for the next one.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import selectors
import shlex
import subprocess
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from cmp.canonical import dumps
from cmp.check import check
from cmp.findings import PacketError

VECTOR_FILE_SUFFIX = ".json"
_NON_VECTOR_FILES = {"vectors.schema.json"}


@dataclass(frozen=True, slots=True)
class Outcome:
    vector_id: str
    area: str
    problems: tuple[str, ...] = field(default=())

    @property
    def passed(self) -> bool:
        return not self.problems


class VectorError(Exception):
    """The vector folder is missing or malformed."""


def default_vector_dir() -> Path | None:
    for candidate in (
        Path(__file__).resolve().parent.parent / "conformance-vectors",
        Path.cwd() / "conformance-vectors",
    ):
        if candidate.is_dir():
            return candidate
    return None


@lru_cache(maxsize=4)
def _file_validator(folder: Path) -> Any:
    from jsonschema import Draft202012Validator

    schema = json.loads((folder / "vectors.schema.json").read_text("utf-8"))
    return Draft202012Validator(schema)


def load_vectors(folder: Path, areas: Iterable[str] | None = None) -> list[dict[str, Any]]:
    """Every vector of the folder (or of the given areas), each checked against vectors.schema.json."""
    if not folder.is_dir():
        raise VectorError(f"no vector folder at {folder}")
    wanted = set(areas) if areas else None
    validator = _file_validator(folder)
    vectors: list[dict[str, Any]] = []
    seen: set[str] = set()
    for path in sorted(folder.glob("*" + VECTOR_FILE_SUFFIX)):
        if path.name in _NON_VECTOR_FILES:
            continue
        try:
            document = json.loads(path.read_text("utf-8"))
        except (OSError, ValueError) as exc:
            raise VectorError(f"{path.name}: {exc}") from None
        errors = sorted(validator.iter_errors(document), key=lambda e: list(e.absolute_path))
        if errors:
            where = "/".join(str(p) for p in errors[0].absolute_path)
            raise VectorError(f"{path.name}: {where}: {errors[0].message[:200]}")
        if wanted is not None and document["area"] not in wanted:
            continue
        for vector in document["vectors"]:
            if vector["id"] in seen:
                raise VectorError(f"{path.name}: duplicate vector id {vector['id']}")
            seen.add(vector["id"])
            vectors.append({**vector, "area": document["area"]})
    if wanted is not None:
        missing = wanted - {v["area"] for v in vectors}
        if missing:
            raise VectorError(f"no vectors for area {', '.join(sorted(missing))}")
    return vectors


def vector_input(vector: dict[str, Any]) -> bytes:
    if "input_base64" in vector:
        return base64.b64decode(vector["input_base64"], validate=True)
    text: str = vector["input"]
    return text.encode("utf-8")


def respond(data: bytes) -> dict[str, Any]:
    """This library's answer to one input, in the protocol's response shape."""
    report = check(data)
    canonical: str | None = None
    if report.packet is not None:
        try:
            canonical = base64.b64encode(dumps(report.packet)).decode("ascii")
        except PacketError:
            canonical = None
    return {
        "conforming": report.conforming,
        "errors": [{"code": f.code, "path": f.path, "keyword": f.keyword} for f in report.errors],
        "redactions": [str(r) for r in report.redactions],
        "canonical_base64": canonical,
    }


def _error_key(error: Any) -> tuple[str, str, str]:
    if not isinstance(error, dict):
        return ("?", "?", repr(error)[:40])
    return (str(error.get("code")), str(error.get("path")), str(error.get("keyword")))


def _short(value: Any, limit: int = 160) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[:limit] + "…"


def compare(vector: dict[str, Any], response: Any) -> list[str]:
    """What differs between a vector's expectation and an implementation's response."""
    if not isinstance(response, dict):
        return [f"response is not a JSON object: {_short(response)}"]
    expect = vector["expect"]
    problems: list[str] = []
    if response.get("conforming") is not expect["conforming"]:
        problems.append(f"conforming: expected {expect['conforming']}, got {_short(response.get('conforming'))}")
    if "errors" in expect:
        got_errors = response.get("errors")
        if not isinstance(got_errors, list):
            problems.append(f"errors: expected a list, got {_short(got_errors)}")
        else:
            want = sorted(_error_key(e) for e in expect["errors"])
            got = sorted(_error_key(e) for e in got_errors)
            if want != got:
                problems.append(f"errors: expected {_short(want)}, got {_short(got)}")
    if "redactions" in expect and response.get("redactions") != expect["redactions"]:
        problems.append(
            f"redactions: expected {_short(expect['redactions'])}, got {_short(response.get('redactions'))}"
        )
    if "canonical" in expect:
        want_bytes = expect["canonical"].encode("utf-8")
        got_b64 = response.get("canonical_base64")
        try:
            got_bytes = base64.b64decode(got_b64, validate=True) if isinstance(got_b64, str) else None
        except ValueError:
            got_bytes = None
        if got_bytes != want_bytes:
            shown = _short(got_bytes.decode("utf-8", "backslashreplace")) if got_bytes is not None else _short(got_b64)
            problems.append(f"canonical: expected {_short(expect['canonical'])}, got {shown}")
    return problems


class Implementation:
    """Another implementation behind the JSON-lines protocol, restarted after any failure."""

    def __init__(self, command: str, timeout: float) -> None:
        self.argv = shlex.split(command)
        self.timeout = timeout
        self.process: subprocess.Popen[bytes] | None = None
        self.buffer = b""

    def _start(self) -> subprocess.Popen[bytes]:
        if self.process is None or self.process.poll() is not None:
            self.buffer = b""
            self.process = subprocess.Popen(
                self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, bufsize=0
            )
        return self.process

    def stop(self) -> None:
        if self.process is not None:
            if self.process.poll() is None:
                self.process.kill()
            self.process.wait()
            for stream in (self.process.stdin, self.process.stdout):
                if stream is not None:
                    stream.close()
            self.process = None

    def ask(self, vector_id: str, data: bytes) -> tuple[Any, str | None]:
        """(response, None) or (None, why there is none)."""
        try:
            process = self._start()
        except OSError as exc:
            return None, f"cannot start implementation: {exc.strerror or exc}"
        request = json.dumps({"id": vector_id, "input_base64": base64.b64encode(data).decode("ascii")}) + "\n"
        assert process.stdin is not None and process.stdout is not None
        try:
            process.stdin.write(request.encode("ascii"))
            process.stdin.flush()
        except (BrokenPipeError, OSError):
            self.stop()
            return None, "implementation exited before reading the request"
        line, why = self._read_line(process)
        if line is None:
            self.stop()
            return None, why
        try:
            response = json.loads(line)
        except ValueError:
            self.stop()
            return None, f"answer is not JSON: {line[:80]!r}"
        if isinstance(response, dict) and response.get("id") != vector_id:
            self.stop()
            return None, f"answer is for id {_short(response.get('id'), 60)}, not {vector_id}"
        return response, None

    def _read_line(self, process: subprocess.Popen[bytes]) -> tuple[bytes | None, str]:
        assert process.stdout is not None
        deadline = time.monotonic() + self.timeout
        fd = process.stdout.fileno()
        with selectors.DefaultSelector() as selector:
            selector.register(fd, selectors.EVENT_READ)
            while b"\n" not in self.buffer:
                remaining = deadline - time.monotonic()
                if remaining <= 0 or not selector.select(remaining):
                    return None, f"no answer within {self.timeout:g}s"
                chunk = os.read(fd, 65536)
                if not chunk:
                    code = process.wait()
                    return None, f"implementation exited (status {code}) without answering"
                self.buffer += chunk
                if len(self.buffer) > 1 << 20:
                    return None, "answer longer than 1 MiB"
        line, _, self.buffer = self.buffer.partition(b"\n")
        return line, ""


# An implementation that dies this many times in a row without a single answer is
# not restarted again: the remaining vectors fail at once instead of one by one.
GIVE_UP_AFTER = 3


def run(vectors: list[dict[str, Any]], implementation: Implementation | None) -> list[Outcome]:
    outcomes: list[Outcome] = []
    silent_failures = 0
    try:
        for vector in vectors:
            data = vector_input(vector)
            if implementation is None:
                response: Any = respond(data)
                failure = None
            elif silent_failures >= GIVE_UP_AFTER:
                response, failure = None, f"not run: the implementation failed {GIVE_UP_AFTER} times in a row"
            else:
                response, failure = implementation.ask(vector["id"], data)
                silent_failures = silent_failures + 1 if failure else 0
            problems = [failure] if failure else compare(vector, response)
            outcomes.append(Outcome(vector["id"], vector["area"], tuple(problems)))
    finally:
        if implementation is not None:
            implementation.stop()
    return outcomes


def main(args: argparse.Namespace, line: Callable[[str], None], error: Callable[[str], None]) -> int:
    folder = Path(args.vectors) if args.vectors else default_vector_dir()
    if folder is None:
        error("no conformance-vectors folder found; pass --vectors DIR")
        return 2
    try:
        vectors = load_vectors(folder, args.filter)
    except VectorError as exc:
        error(f"conformance: {exc}")
        return 2
    if args.timeout <= 0:
        error("--timeout must be positive")
        return 2
    implementation = Implementation(args.impl, args.timeout) if args.impl else None
    if implementation is not None and not implementation.argv:
        error("--impl needs a command")
        return 2
    outcomes = run(vectors, implementation)
    passed = sum(o.passed for o in outcomes)
    failed = len(outcomes) - passed
    if args.format == "json":
        line(
            json.dumps(
                {
                    "passed": passed,
                    "failed": failed,
                    "failures": [
                        {"id": o.vector_id, "area": o.area, "problems": list(o.problems)}
                        for o in outcomes
                        if not o.passed
                    ],
                },
                ensure_ascii=False,
                indent=2,
            )
        )
    else:
        for outcome in outcomes:
            if not outcome.passed:
                line(f"FAIL {outcome.vector_id}: {'; '.join(outcome.problems)}")
        line(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 else 1
