"""The vector folder: found, read within bounds, and checked before a single vector runs."""

from __future__ import annotations

import base64
import json
import os
import stat
from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path
from typing import Any

from cmp._display import describe, display_name
from cmp.conformance._compare import ErrorKey, error_key, show_errors

VECTOR_FILE_SUFFIX = ".json"
SCHEMA_FILE = "vectors.schema.json"
_NON_VECTOR_FILES = {SCHEMA_FILE}

# Vector files are read whole. The largest shipped one is about 1 MB; a file past this
# limit, a device or a FIFO is refused rather than read without end or waited on.
MAX_VECTOR_FILE_BYTES = 8 << 20


class VectorError(Exception):
    """The vector folder is missing or malformed."""


def default_vector_dir() -> Path | None:
    """The vector folder to use when --vectors is not given (beside the package in a checkout,
    else ``cmp.vectors``), or None. Never the working directory: a run must not silently
    test whatever folder it was started in.
    """
    beside = Path(__file__).resolve().parent.parent.parent / "conformance-vectors"
    if (beside / SCHEMA_FILE).is_file():
        return beside
    return _installed_vector_dir()


def _installed_vector_dir() -> Path | None:
    """The folder of the installed ``cmp.vectors`` package data, unless it is in a zip."""
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
    Opened non-blocking, so a FIFO with no writer cannot hang the open."""
    name = display_name(path.name)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOCTTY", 0))
    except (OSError, ValueError) as exc:
        raise VectorError(f"{name}: cannot open: {describe(exc)}") from None
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
        raise VectorError(f"{name}: cannot read: {describe(exc)}") from None
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
        raise VectorError(f"{display_name(path.name)}: not JSON: nested too deeply") from None
    except ValueError as exc:
        raise VectorError(f"{display_name(path.name)}: not JSON: {exc}") from None


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
    """What the runner needs of one vector and cannot find in it (the folder's own schema
    may let anything through: still one line, never a KeyError)."""
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
    listed in two places, which would make "at most once" and "missing" ambiguous."""
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
        for key in sorted({error_key(f) for f in findings}):
            if key in seen:
                return f"expect: the finding {show_errors([key])[1:-1]} is in both {seen[key]} and {place}"
            seen[key] = place
        if place != "errors" and len({error_key(f) for f in findings}) != len(findings):
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
        raise VectorError(f"cannot list {folder}: {describe(exc)}") from None
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
        name = display_name(path.name)
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
