"""The conformance runner: our vectors against this library or any other implementation.

Protocol for ``--impl COMMAND`` (the full text is conformance-vectors/README.md, "The
harness protocol"): the command is split into words by POSIX shell rules and started
once, without a shell; for each vector the runner writes one JSON line
``{"id", "input_base64"}`` to its stdin and reads one JSON line back:
``{"id", "conforming", "errors": [{"code", "path", "keyword"}], "redactions": [str],
"canonical_base64": str | null}``, or ``{"id", "error": str}`` for a request it cannot
read. A crash, a malformed, late, missing or wrongly labelled answer fails that vector
and the implementation is restarted for the next one; an error answer fails the
vector only.

Findings are compared as the vectors' ``expect`` says: every one of ``errors`` must be
reported, each of ``optional_errors`` may be (at most once), at least one of each group
of ``error_choices`` must be (each at most once), and nothing else may be.
"""

from __future__ import annotations

import argparse
import base64
import json
import math
import os
import re
import selectors
import shlex
import signal
import stat
import subprocess
import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

from cmp._canonical import dumps
from cmp._pipeline import check
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


# Where the vectors come from when --vectors is not given, said once for --help and errors.
DEFAULT_VECTORS_TEXT = (
    "the conformance-vectors folder beside the cmp package in a source checkout, "
    "else the copy installed with the package (cmp.vectors)"
)


def default_vector_dir() -> Path | None:
    """The vector folder to use when --vectors is not given, or None when there is none.

    First the repository's folder beside the package (a development checkout), then the
    copy a wheel installs as the package data of ``cmp.vectors``. Never the working
    directory: a run must not silently test whatever folder it was started in.
    """
    beside = Path(__file__).resolve().parent.parent / "conformance-vectors"
    if (beside / SCHEMA_FILE).is_file():
        return beside
    return _installed_vector_dir()


def _installed_vector_dir() -> Path | None:
    """The folder of the installed ``cmp.vectors`` package data, if it is on the file system.

    ``cmp.vectors`` may be a regular package or a namespace package (no __init__.py);
    a file inside it is a real Path either way, unless the package is imported from a
    zip, whose files the runner cannot list (--vectors is the way out then).
    """
    import importlib.resources  # here, not at the top: every CLI start imports this module

    try:
        schema = importlib.resources.files("cmp.vectors").joinpath(SCHEMA_FILE)
    except (ImportError, TypeError, ValueError):  # not installed; not a package
        return None
    if isinstance(schema, Path) and schema.is_file():
        return schema.parent
    return None


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
    problem = _findings_problem(expect)
    if problem:
        return problem
    canonical = expect.get("canonical", "")
    if not isinstance(canonical, str):
        return "expect/canonical is not a string"
    try:
        canonical.encode("utf-8")
    except UnicodeEncodeError:
        return "expect/canonical holds a lone surrogate and cannot be written as UTF-8"
    return _input_problem(vector)


def _findings_problem(expect: dict[str, Any]) -> str | None:
    """Why the expected findings cannot be compared: a member of the wrong shape, or a finding
    listed in two places (required and optional, or in two choice groups), which would make
    "at most once" and "missing" ambiguous."""
    for name in ("errors", "optional_errors", "error_choices"):
        if not isinstance(expect.get(name, []), list):
            return f"expect/{name} is not a list"
    if not all(isinstance(group, list) for group in expect.get("error_choices", [])):
        return "expect/error_choices holds an item that is not a list"
    places: list[tuple[str, list[Any]]] = [("errors", expect.get("errors", []))]
    places.append(("optional_errors", expect.get("optional_errors", [])))
    places.extend((f"error_choices/{i}", group) for i, group in enumerate(expect.get("error_choices", [])))
    seen: dict[ErrorKey, str] = {}
    for place, findings in places:
        for key in sorted({_error_key(f) for f in findings}):
            if key in seen:
                return f"expect: the finding {_show_errors([key])[1:-1]} is in both {seen[key]} and {place}"
            seen[key] = place
        if place != "errors" and len({_error_key(f) for f in findings}) != len(findings):
            return f"expect/{place} lists a finding twice"
    return None


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
    every_area: set[str] = set()
    for path in files:
        name = _display_name(path.name)
        document = _read_json_file(path)
        problem = _schema_problem(validator, document, name) or _document_problem(document)
        if problem:
            raise VectorError(f"{name}: {problem}")
        every_area.add(document["area"])
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
            raise VectorError(
                f"no vectors for area {', '.join(sorted(missing))} (the areas are {', '.join(sorted(every_area))})"
            )
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


ErrorKey = tuple[str, str, str]


def _error_key(error: Any) -> ErrorKey:
    """A finding as three JSON texts: comparable and sortable whatever the answer holds.

    JSON text rather than str() keeps null and the string "None" apart, and never recurses
    through a deeply nested value the implementation put where a string belongs. A missing
    keyword is null; members other than code, path and keyword (a message) are not read.
    """
    if not isinstance(error, dict):
        return ('"?"', '"?"', _short(error, 40))
    return (_short(error.get("code"), 80), _short(error.get("path"), 80), _short(error.get("keyword"), 80))


def _show_errors(keys: Iterable[ErrorKey], limit: int = 240) -> str:
    """Error keys as one JSON list of [code, path, keyword] lists, cut like _short."""
    text = "[" + ", ".join("[" + ", ".join(key) + "]" for key in keys) + "]"
    return text if len(text) <= limit else text[:limit] + "…"


def _list_member(response: dict[str, Any], name: str) -> list[Any] | None:
    """A list member of an answer; absent and null both mean the empty list (a Go nil slice)."""
    value = response.get(name)
    if value is None:
        return []
    return value if isinstance(value, list) else None


def _compare_errors(expect: dict[str, Any], got_errors: list[Any]) -> list[str]:
    """Reported findings against the required, optional and choice findings of a vector.

    The vector loader made sure that no finding is in two of these places, so each
    reported finding is either required (as many times as listed), optional or a member
    of one choice group (at most once), or unexpected.
    """
    required = Counter(_error_key(e) for e in expect.get("errors", []))
    optional = {_error_key(e) for e in expect.get("optional_errors", [])}
    choices = [[_error_key(e) for e in group] for group in expect.get("error_choices", [])]
    once = optional.union(*choices)
    got = Counter(_error_key(e) for e in got_errors)
    missing = sorted((required - got).elements())
    unexpected = sorted((Counter({k: n for k, n in got.items() if k not in once}) - required).elements())
    repeated = sorted(k for k, n in got.items() if k in once and n > 1)
    problems = []
    if missing:
        problems.append(f"errors: missing required {_show_errors(missing)}")
    if unexpected:
        problems.append(f"errors: unexpected {_show_errors(unexpected)}")
    if repeated:
        problems.append(f"errors: reported more than once, allowed at most once {_show_errors(repeated)}")
    for group in choices:
        if not any(got[k] for k in group):
            problems.append(f"errors: none of the choice {_show_errors(group)}, one of which is required")
    return problems


def strict_b64decode(text: Any) -> bytes | None:
    """RFC 4648 base64 as a standard encoder writes it, or None.

    The standard alphabet (``+`` and ``/``), ``=`` padding to a multiple of four, no line
    breaks or other characters, and zero pad bits: the text must be exactly what
    b64encode writes for the bytes it decodes to.
    """
    if not isinstance(text, str):
        return None
    try:
        data = base64.b64decode(text, validate=True)
    except ValueError:  # binascii.Error, or a non-ASCII character
        return None
    return data if base64.b64encode(data).decode("ascii") == text else None


def _answer_error(response: dict[str, Any]) -> str | None:
    """The text of an error answer (``{"id", "error"}``), or None for an answer."""
    error = response.get("error")
    if error is None:
        return None
    return _one_line(error) if isinstance(error, str) else _short(error)


def compare(vector: dict[str, Any], response: Any) -> list[str]:
    """What differs between a vector's expectation and an implementation's response.

    Every value shown is JSON (``true``, ``null``, ``"text"``), whatever produced it.
    """
    if not isinstance(response, dict):
        return [f"response is not a JSON object: {_short(response)}"]
    error = _answer_error(response)
    if error is not None:
        return [f"the implementation answered with an error: {error}"]
    expect = vector["expect"]
    problems: list[str] = []
    if response.get("conforming") is not expect["conforming"]:
        problems.append(
            f"conforming: expected {_short(expect['conforming'])}, got {_short(response.get('conforming'))}"
        )
    got_errors = _list_member(response, "errors")
    if got_errors is None:
        problems.append(f"errors: expected a list, got {_short(response.get('errors'))}")
    else:
        problems.extend(_compare_errors(expect, got_errors))
    if "redactions" in expect:
        got_redactions = _list_member(response, "redactions")
        if got_redactions != expect["redactions"]:
            shown = _short(response.get("redactions") if got_redactions is None else got_redactions)
            problems.append(f"redactions: expected {_short(expect['redactions'])}, got {shown}")
    if "canonical" in expect:
        got_b64 = response.get("canonical_base64")
        got_bytes = strict_b64decode(got_b64)
        if not isinstance(got_b64, str):
            problems.append(f"canonical_base64: expected a string, got {_short(got_b64)}")
        elif got_bytes is None:
            problems.append(
                "canonical_base64: not base64 (RFC 4648 standard alphabet, = padding, no line breaks): "
                + _short(got_b64, 80)
            )
        elif got_bytes != expect["canonical"].encode("utf-8"):
            problems.append(_canonical_difference(expect["canonical"].encode("utf-8"), got_bytes))
    return problems


# Bytes shown on each side of the first difference between canonical forms.
_CONTEXT_BYTES = 40


def _canonical_difference(want: bytes, got: bytes) -> str:
    """Where two canonical forms first differ, with a little of each around that byte.

    Canonical forms run to kilobytes and usually differ late (an escape, a final
    newline): showing their starts would show two identical strings.
    """
    at = next((i for i, (a, b) in enumerate(zip(want, got, strict=False)) if a != b), min(len(want), len(got)))
    start = max(at - _CONTEXT_BYTES, 0)

    def window(data: bytes) -> str:
        piece = data[start : at + _CONTEXT_BYTES].decode("utf-8", "backslashreplace")
        return (
            ("…" if start else "")
            + _short(piece, 4 * _CONTEXT_BYTES)
            + ("…" if at + _CONTEXT_BYTES < len(data) else "")
        )

    return (
        f"canonical: {len(got)} bytes where {len(want)} were expected, first different at byte {at}: "
        f"expected {window(want)}, got {window(got)}"
    )


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
        return None, f"answer is not JSON (nested too deeply): {_shown_bytes(line)}"
    except ValueError:
        return None, f"answer is not JSON: {_shown_bytes(line)}"


def _shown_bytes(line: bytes, limit: int = 80) -> str:
    """The start of an answer line as a JSON string (bytes that are not UTF-8 as U+FFFD)."""
    text = line[:limit].decode("utf-8", "replace")
    return json.dumps(text, ensure_ascii=False) + ("…" if len(line) > limit else "")


class Implementation:
    """Another implementation behind the JSON-lines protocol, restarted after any failure."""

    def __init__(self, argv: list[str], timeout: float, stderr: int | None = subprocess.DEVNULL) -> None:
        """``stderr`` is where the implementation's stderr goes: DEVNULL (the default), None
        for the runner's own stderr, or an open file descriptor."""
        self.argv = argv
        self.timeout = timeout
        self.stderr = stderr
        self.process: subprocess.Popen[bytes] | None = None
        self.buffer = b""

    def _start(self) -> subprocess.Popen[bytes]:
        if self.process is None or self.process.poll() is not None:
            self.buffer = b""
            # Its own process group, so that stop() also ends what it started: an adapter's
            # child processes, or the program behind `sh -c` run without `exec`.
            self.process = subprocess.Popen(
                self.argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=self.stderr,
                bufsize=0,
                start_new_session=True,
            )
            assert self.process.stdin is not None
            # Requests are written without blocking, so that one that does not read cannot stall us.
            os.set_blocking(self.process.stdin.fileno(), False)
        return self.process

    def stop(self) -> None:
        if self.process is not None:
            try:
                os.killpg(self.process.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):  # the group is gone already
                pass
            self.process.wait()
            for stream in (self.process.stdin, self.process.stdout):
                if stream is not None:
                    stream.close()
            self.process = None

    def ask(self, vector_id: str, data: bytes) -> tuple[Any, str | None]:
        """(response, None) or (None, why there is none).

        An error answer (``{"id", "error"}``) is a response: compare() fails the vector
        with its text, and the implementation keeps running. Its id may be null, as an
        implementation that cannot read a request may not know it.
        """
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
            if not (response.get("id") is None and _answer_error(response) is not None):
                why = f"answer is for id {_short(response.get('id'), 60)}, not {_short(vector_id, 60)}"
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
    parser.description = (
        "Run the conformance vectors against this library, or against another implementation "
        f"(--impl). The vectors come from --vectors DIR, by default from {DEFAULT_VECTORS_TEXT}."
    )
    parser.add_argument(
        "--impl",
        metavar="COMMAND",
        help="test another implementation over the JSON-lines protocol; COMMAND is split into words "
        "by POSIX shell rules and run without a shell (use sh -c '...' for pipes)",
    )
    parser.add_argument("--vectors", metavar="DIR", help=f"vector folder (default: {DEFAULT_VECTORS_TEXT})")
    parser.add_argument("--filter", metavar="AREA", action="append", help="only this area (repeatable)")
    parser.add_argument(
        "--format",
        choices=("text", "json", "junit"),
        default="text",
        help="text lines (default), one JSON document, or a JUnit XML report with a testcase per vector",
    )
    parser.add_argument(
        "--timeout", type=float, default=10.0, metavar="SECONDS", help="per-exchange limit for --impl (default: 10)"
    )
    parser.add_argument(
        "--impl-stderr",
        metavar="FILE",
        help="where the implementation's stderr goes: - for this command's stderr, or a file to append to "
        "(default: discarded)",
    )


def _open_stderr(target: str | None) -> int | None:
    """The Popen stderr for --impl-stderr: DEVNULL, None (ours) or a file opened once for appending.

    OSError (one line, from main) if the file cannot be opened. Opened without blocking
    so that a FIFO with no reader fails at once instead of hanging here.
    """
    if target is None:
        return subprocess.DEVNULL
    if target == "-":
        return None
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NONBLOCK
    fd = os.open(target, flags | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOCTTY", 0), 0o666)
    os.set_blocking(fd, True)
    return fd


# Compiled on first use, not at import: every CLI start imports this module, and the
# first class alone takes milliseconds to compile.
@cache
def _not_xml() -> re.Pattern[str]:
    """Code points XML 1.0 cannot hold at all, not even as character references."""
    return re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


@cache
def _as_character_reference() -> re.Pattern[str]:
    """Code points XML can hold but a line of terminal output should not (see cmp.cli.render_line).

    They are written as character references, which mean the same to an XML reader.
    """
    return re.compile("[\t\r\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def _xml_text(text: str) -> str:
    return _not_xml().sub("", text)


def junit_lines(outcomes: list[Outcome]) -> list[str]:
    """A JUnit XML report, as lines: one <testsuite> per area, one <testcase> per vector.

    A failed vector's <failure> has its problems joined by "; " as the message and one per
    line as the text. Code points XML 1.0 cannot hold are left out; the lines hold no
    raw control character but the line breaks between them.
    """
    import xml.etree.ElementTree as ET  # only a JUnit report pays for the import

    failed = sum(not o.passed for o in outcomes)
    root = ET.Element(
        "testsuites", {"name": "cmp conformance", "tests": str(len(outcomes)), "failures": str(failed), "errors": "0"}
    )
    suites: dict[str, ET.Element] = {}
    for outcome in outcomes:
        suite = suites.get(outcome.area)
        if suite is None:
            suite = suites[outcome.area] = ET.SubElement(root, "testsuite", {"name": _xml_text(outcome.area)})
        case = ET.SubElement(
            suite, "testcase", {"classname": _xml_text(outcome.area), "name": _xml_text(outcome.vector_id)}
        )
        if not outcome.passed:
            failure = ET.SubElement(case, "failure", {"message": _xml_text("; ".join(outcome.problems))})
            failure.text = _xml_text("\n".join(outcome.problems))
    for area, suite in suites.items():
        in_area = [o for o in outcomes if o.area == area]
        suite.set("tests", str(len(in_area)))
        suite.set("failures", str(sum(not o.passed for o in in_area)))
        suite.set("errors", "0")
    ET.indent(root)
    text = ET.tostring(root, encoding="unicode")
    text = _as_character_reference().sub(lambda m: f"&#x{ord(m.group()):x};", text)
    return ['<?xml version="1.0" encoding="UTF-8"?>', *text.split("\n")]


def main(args: argparse.Namespace, line: Callable[[str], None], error: Callable[[str], None]) -> int:
    """Run the vectors; a usage or vector-folder problem is one line on stderr and exit 2."""
    problem = _timeout_problem(args.timeout)
    if problem:
        error(problem)
        return 2
    argv: list[str] | None = None
    if args.impl is not None:
        try:
            argv = split_command(args.impl)
        except ValueError as exc:
            error(str(exc))
            return 2
    folder = Path(args.vectors) if args.vectors else default_vector_dir()
    if folder is None:
        error(f"no conformance vectors found (looked for {DEFAULT_VECTORS_TEXT}); pass --vectors DIR")
        return 2
    try:
        vectors = load_vectors(folder, args.filter)
    except VectorError as exc:
        error(_one_line(f"conformance: {exc}"))
        return 2
    implementation: Implementation | None = None
    opened: int | None = None
    if argv is not None:
        try:
            stderr = _open_stderr(args.impl_stderr)
        except (OSError, ValueError) as exc:  # ValueError: a NUL in the path
            error(_one_line(f"--impl-stderr: cannot open {_display_name(args.impl_stderr)}: {_describe(exc)}"))
            return 2
        opened = stderr if stderr is not None and stderr >= 0 else None
        implementation = Implementation(argv, args.timeout, stderr)
    try:
        outcomes = run(vectors, implementation)
    finally:
        if opened is not None:
            os.close(opened)
    report(outcomes, args.format, line)
    return 0 if all(o.passed for o in outcomes) else 1


def report(outcomes: list[Outcome], form: str, line: Callable[[str], None]) -> None:
    """The run's results in the chosen --format, through ``line``."""
    passed = sum(o.passed for o in outcomes)
    failed = len(outcomes) - passed
    if form == "json":
        document = {
            "passed": passed,
            "failed": failed,
            "failures": [
                {"id": o.vector_id, "area": o.area, "problems": list(o.problems)} for o in outcomes if not o.passed
            ],
        }
        line(json.dumps(document, ensure_ascii=False, indent=2))
    elif form == "junit":
        for text in junit_lines(outcomes):
            line(text)
    else:
        for outcome in outcomes:
            if not outcome.passed:
                line(f"FAIL {outcome.vector_id}: {'; '.join(outcome.problems)}")
        line(f"{passed} passed, {failed} failed")
