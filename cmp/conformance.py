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
import math
import os
import selectors
import shlex
import stat
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
SCHEMA_FILE = "vectors.schema.json"
_NON_VECTOR_FILES = {SCHEMA_FILE}

# Vector files are read whole. The largest shipped one is about 1 MB; a file past this
# limit, a device or a FIFO is refused rather than read without end or waited on.
MAX_VECTOR_FILE_BYTES = 8 << 20

# --timeout must be a finite number of seconds in (0, one day]: NaN, infinities and huge
# values break the clock and selector arithmetic, and no vector needs a day.
MAX_TIMEOUT_SECONDS = 86_400.0

# No answer line may grow past this; an implementation that never ends its line fails.
MAX_ANSWER_BYTES = 1 << 20


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


def _describe(error: BaseException) -> str:
    """An OSError's own words (``No such file or directory``) without errno and path noise."""
    if isinstance(error, OSError) and error.strerror:
        return error.strerror
    return str(error) or type(error).__name__


def _one_line(text: str, limit: int = 300) -> str:
    """Foreign messages (jsonschema, file names) can hold line breaks; the CLI promises one line."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit] + "…"


def _display_name(name: str) -> str:
    """A file name safe to print: undecodable bytes shown as escapes, never an error."""
    return name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def default_vector_dir() -> Path | None:
    """The repository's vector folder, else one in the working directory (which may be gone)."""
    beside = Path(__file__).resolve().parent.parent / "conformance-vectors"
    if beside.is_dir():
        return beside
    try:
        here = Path.cwd() / "conformance-vectors"
    except OSError:  # the working directory was deleted
        return None
    return here if here.is_dir() else None


def _read_bounded(path: Path) -> bytes:
    """A regular file's bytes, refusing FIFOs, devices and files past MAX_VECTOR_FILE_BYTES.

    Opened non-blocking so that a FIFO with no writer cannot hang the open; read to one
    byte past the limit so that a symlink to /dev/zero or a huge file costs nothing.
    """
    name = _display_name(path.name)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOCTTY", 0))
    except (OSError, ValueError) as exc:
        raise VectorError(f"{name}: cannot open: {_describe(exc)}") from None
    chunks: list[bytes] = []
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise VectorError(f"{name}: not a regular file")
        os.set_blocking(fd, True)
        remaining = MAX_VECTOR_FILE_BYTES + 1
        while remaining > 0:
            chunk = os.read(fd, min(remaining, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            remaining -= len(chunk)
    except OSError as exc:
        raise VectorError(f"{name}: cannot read: {_describe(exc)}") from None
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if len(data) > MAX_VECTOR_FILE_BYTES:
        raise VectorError(f"{name}: larger than {MAX_VECTOR_FILE_BYTES >> 20} MiB")
    return data


def _read_json_file(path: Path) -> Any:
    """A bounded file parsed as strict UTF-8 JSON; deep nesting and odd numbers give a VectorError."""
    data = _read_bounded(path)
    try:
        return json.loads(data.decode("utf-8"))
    except RecursionError:
        raise VectorError(f"{_display_name(path.name)}: not JSON: nested too deeply") from None
    except ValueError as exc:
        raise VectorError(f"{_display_name(path.name)}: not JSON: {exc}") from None


@lru_cache(maxsize=4)
def _file_validator(folder: Path) -> Any:
    """The folder's own vectors.schema.json, checked to be a JSON Schema before it is used."""
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import SchemaError

    schema = _read_json_file(folder / SCHEMA_FILE)
    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as exc:
        raise VectorError(f"{SCHEMA_FILE}: not a valid JSON Schema: {exc.message}") from None
    except RecursionError:
        raise VectorError(f"{SCHEMA_FILE}: not a valid JSON Schema: nested too deeply") from None
    return Draft202012Validator(schema)


def _schema_problem(validator: Any, document: Any, name: str) -> str | None:
    """The first place the document breaks the schema; a schema that cannot be applied is a VectorError."""
    from referencing.exceptions import Unresolvable

    try:
        errors = sorted(validator.iter_errors(document), key=lambda e: list(e.absolute_path))
    except Unresolvable as exc:
        raise VectorError(f"{SCHEMA_FILE}: cannot be applied to {name}: {exc}") from None
    except RecursionError:
        raise VectorError(f"{SCHEMA_FILE}: cannot be applied to {name}: it recurses without end") from None
    if not errors:
        return None
    where = "/".join(str(p) for p in errors[0].absolute_path)
    return f"{where}: {errors[0].message[:200]}"


def _input_problem(vector: dict[str, Any]) -> str | None:
    """Why vector_input() would fail on this vector: bad base64, or text that is not UTF-8."""
    if "input_base64" in vector:
        encoded = vector["input_base64"]
        if not isinstance(encoded, str):
            return "input_base64 is not a string"
        try:
            base64.b64decode(encoded, validate=True)
        except ValueError as exc:
            return f"input_base64 is not base64: {exc}"
        return None
    text = vector.get("input")
    if not isinstance(text, str):
        return "neither input nor input_base64 is a string"
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return "input holds a lone surrogate and cannot be written as UTF-8"
    return None


def _vector_problem(vector: Any) -> str | None:
    """What the runner needs of one vector and cannot find in it.

    vectors.schema.json says all this and more, but the schema comes with the folder: a
    folder whose schema lets anything through must still give one line, never a KeyError.
    """
    if not isinstance(vector, dict) or not isinstance(vector.get("id"), str):
        return "not an object with a string id"
    expect = vector.get("expect")
    if not isinstance(expect, dict) or not isinstance(expect.get("conforming"), bool):
        return "expect is not an object with a boolean conforming"
    if not isinstance(expect.get("errors", []), list):
        return "expect/errors is not a list"
    canonical = expect.get("canonical", "")
    if not isinstance(canonical, str):
        return "expect/canonical is not a string"
    try:
        canonical.encode("utf-8")
    except UnicodeEncodeError:
        return "expect/canonical holds a lone surrogate and cannot be written as UTF-8"
    return _input_problem(vector)


def _document_problem(document: Any) -> str | None:
    """What the runner needs of a whole vector file (an area and a list of usable vectors)."""
    if not isinstance(document, dict) or not isinstance(document.get("area"), str):
        return "not an object with a string area"
    if not isinstance(document.get("vectors"), list):
        return "vectors is not a list"
    for index, vector in enumerate(document["vectors"]):
        problem = _vector_problem(vector)
        if problem:
            return f"vectors/{index}: {problem}"
    return None


def _vector_files(folder: Path) -> list[Path]:
    """The folder's vector files in name order; a folder that cannot be listed is a VectorError."""
    try:
        names = sorted(entry.name for entry in folder.iterdir())
    except OSError as exc:
        raise VectorError(f"cannot list {folder}: {_describe(exc)}") from None
    return [folder / n for n in names if n.endswith(VECTOR_FILE_SUFFIX) and n not in _NON_VECTOR_FILES]


def load_vectors(folder: Path, areas: Iterable[str] | None = None) -> list[dict[str, Any]]:
    """Every vector of the folder (or of the given areas), each checked against vectors.schema.json."""
    if not folder.is_dir():
        raise VectorError(f"no vector folder at {folder}")
    wanted = set(areas) if areas else None
    validator = _file_validator(folder)
    files = _vector_files(folder)
    if not files:
        raise VectorError(f"no vector files in {folder}")
    vectors: list[dict[str, Any]] = []
    seen: set[str] = set()
    for path in files:
        name = _display_name(path.name)
        document = _read_json_file(path)
        problem = _schema_problem(validator, document, name) or _document_problem(document)
        if problem:
            raise VectorError(f"{name}: {problem}")
        if wanted is not None and document["area"] not in wanted:
            continue
        for vector in document["vectors"]:
            if vector["id"] in seen:
                raise VectorError(f"{name}: duplicate vector id {vector['id']}")
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


def _short(value: Any, limit: int = 160) -> str:
    """A value as JSON text cut to ``limit``; a value json cannot render is named, never raised."""
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (ValueError, TypeError, RecursionError):  # nesting near the recursion limit, a non-JSON value
        text = f"<{type(value).__name__} too deep or too large to show>"
    return text if len(text) <= limit else text[:limit] + "…"


def _error_key(error: Any) -> tuple[str, str, str]:
    """A finding as three JSON texts: comparable and sortable whatever the answer holds.

    JSON text rather than str() keeps null and the string "None" apart, and never recurses
    through a deeply nested value the implementation put where a string belongs.
    """
    if not isinstance(error, dict):
        return ('"?"', '"?"', _short(error, 40))
    return (_short(error.get("code"), 80), _short(error.get("path"), 80), _short(error.get("keyword"), 80))


def _show_errors(keys: list[tuple[str, str, str]]) -> str:
    """Error keys as one JSON-like list, cut like _short."""
    text = "[" + ", ".join("[" + ", ".join(key) + "]" for key in keys) + "]"
    return text if len(text) <= 160 else text[:160] + "…"


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
                problems.append(f"errors: expected {_show_errors(want)}, got {_show_errors(got)}")
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


def split_command(command: str) -> list[str]:
    """--impl as an argv list; ValueError (one line) for unbalanced quotes, a NUL or nothing at all."""
    try:
        argv = shlex.split(command)
    except ValueError as exc:  # "No closing quotation", "No escaped character"
        raise ValueError(f"--impl cannot be split into a command: {exc}") from None
    if not argv:
        raise ValueError("--impl needs a command")
    if any("\0" in arg for arg in argv):
        raise ValueError("--impl holds a NUL character")
    return argv


def _parse_answer(line: bytes) -> tuple[Any, str | None]:
    """(the parsed answer, None) or (None, why it is not JSON); never raises.

    json.loads raises RecursionError, not ValueError, for an answer such as 100,000 "[",
    and ValueError for a number longer than Python's integer digit limit.
    """
    try:
        return json.loads(line), None
    except RecursionError:
        return None, f"answer is not JSON (nested too deeply): {line[:80]!r}"
    except ValueError:
        return None, f"answer is not JSON: {line[:80]!r}"


class Implementation:
    """Another implementation behind the JSON-lines protocol, restarted after any failure."""

    def __init__(self, argv: list[str], timeout: float) -> None:
        self.argv = argv
        self.timeout = timeout
        self.process: subprocess.Popen[bytes] | None = None
        self.buffer = b""

    def _start(self) -> subprocess.Popen[bytes]:
        if self.process is None or self.process.poll() is not None:
            self.buffer = b""
            self.process = subprocess.Popen(
                self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, bufsize=0
            )
            assert self.process.stdin is not None
            # Requests are written without blocking, so that one that does not read cannot stall us.
            os.set_blocking(self.process.stdin.fileno(), False)
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
        except (OSError, ValueError) as exc:  # not found, not executable, bad format
            return None, f"cannot start implementation: {_describe(exc)}"
        request = json.dumps({"id": vector_id, "input_base64": base64.b64encode(data).decode("ascii")}) + "\n"
        line, why = self._exchange(process, request.encode("ascii"))
        response: Any = None
        if line is not None:
            response, why = _parse_answer(line)
        if why is None and isinstance(response, dict) and response.get("id") != vector_id:
            why = f"answer is for id {_short(response.get('id'), 60)}, not {vector_id}"
        if why is not None:
            self.stop()
            return None, why
        return response, None

    def _exchange(self, process: subprocess.Popen[bytes], request: bytes) -> tuple[bytes | None, str | None]:
        """Write the request and read one answer line, both within the timeout.

        Writing and reading share one select loop: an implementation that never reads its
        input (the pipe fills on a large request), or that writes a long answer before it
        has read the whole request, cannot block the runner past the deadline.
        """
        assert process.stdin is not None and process.stdout is not None
        deadline = time.monotonic() + self.timeout
        writer, reader = process.stdin.fileno(), process.stdout.fileno()
        unsent = memoryview(request)
        with selectors.DefaultSelector() as selector:
            selector.register(writer, selectors.EVENT_WRITE)
            selector.register(reader, selectors.EVENT_READ)
            while unsent or b"\n" not in self.buffer:
                remaining = deadline - time.monotonic()
                if remaining <= 0 or not (events := selector.select(remaining)):
                    if unsent:
                        return None, f"request not read within {self.timeout:g}s"
                    return None, f"no answer within {self.timeout:g}s"
                for key, _ in events:
                    if key.fd == writer:
                        try:
                            unsent = unsent[os.write(writer, unsent) :]
                        except BlockingIOError:
                            continue
                        except OSError:  # EPIPE: it exited or closed its input
                            return None, self._ended(process, deadline, "input", "before reading the request")
                        if not unsent:
                            selector.unregister(writer)
                    else:
                        why = self._receive(process, reader, deadline)
                        if why is not None:
                            return None, why
        line, _, self.buffer = self.buffer.partition(b"\n")
        if len(line) > MAX_ANSWER_BYTES:
            return None, f"answer longer than {MAX_ANSWER_BYTES >> 20} MiB"
        return line, None

    def _receive(self, process: subprocess.Popen[bytes], reader: int, deadline: float) -> str | None:
        """Append what the implementation wrote to the buffer; why the exchange is over, if it is."""
        try:
            chunk = os.read(reader, 65536)
        except OSError as exc:
            return f"cannot read the answer: {_describe(exc)}"
        if not chunk:
            return self._ended(process, deadline, "output", "without answering")
        self.buffer += chunk
        if b"\n" not in self.buffer and len(self.buffer) > MAX_ANSWER_BYTES:
            return f"answer longer than {MAX_ANSWER_BYTES >> 20} MiB"
        return None

    def _ended(self, process: subprocess.Popen[bytes], deadline: float, pipe: str, when: str) -> str:
        """Why a pipe closed: the exit status if the implementation exits in time.

        Waiting without a limit would hang on one that closed a pipe and kept running.
        """
        try:
            code = process.wait(timeout=max(deadline - time.monotonic(), 0))
        except subprocess.TimeoutExpired:
            return f"implementation closed its {pipe} {when} and kept running"
        return f"implementation exited (status {code}) {when}"


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


def _timeout_problem(timeout: float) -> str | None:
    """Why --timeout is unusable: NaN, infinities and huge values break the deadline arithmetic."""
    if math.isfinite(timeout) and 0 < timeout <= MAX_TIMEOUT_SECONDS:
        return None
    return f"--timeout must be positive and at most {MAX_TIMEOUT_SECONDS:g} seconds (one day), not {timeout:g}"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The conformance subcommand's options, kept beside the runner they configure."""
    parser.add_argument("--impl", metavar="COMMAND", help="test another implementation over the JSON-lines protocol")
    parser.add_argument("--vectors", metavar="DIR", help="vector folder (default: the repository's)")
    parser.add_argument("--filter", metavar="AREA", action="append", help="only this area (repeatable)")
    parser.add_argument("--format", choices=("text", "json"), default="text")
    parser.add_argument("--timeout", type=float, default=10.0, metavar="SECONDS", help="per-vector limit for --impl")


def main(args: argparse.Namespace, line: Callable[[str], None], error: Callable[[str], None]) -> int:
    """Run the vectors; a usage or vector-folder problem is one line on stderr and exit 2."""
    problem = _timeout_problem(args.timeout)
    if problem:
        error(problem)
        return 2
    implementation: Implementation | None = None
    if args.impl is not None:
        try:
            implementation = Implementation(split_command(args.impl), args.timeout)
        except ValueError as exc:
            error(str(exc))
            return 2
    folder = Path(args.vectors) if args.vectors else default_vector_dir()
    if folder is None:
        error("no conformance-vectors folder found; pass --vectors DIR")
        return 2
    try:
        vectors = load_vectors(folder, args.filter)
    except VectorError as exc:
        error(_one_line(f"conformance: {exc}"))
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
