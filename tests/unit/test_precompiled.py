"""cmp/_precompiled.py, the code compiled ahead, against compiling its texts the long way.

The generated module must be current (what the package makes now), each of its functions
must be the compiled form of its text, and what it defines must behave as the text
compiled here does: the shipped builders on every conformance vector and on generated
packets, the writer on the same packets.
"""

from __future__ import annotations

import inspect
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings

from cmp import _codegen, _record, _validation, _writer
from cmp._compiler import compile_builder
from cmp._precompiled import DEFINITIONS, RECORD_METHODS
from cmp.model import CONFORMING, SCHEMA_CLASSES, to_obj
from cmp.schema import SUPPORTED_VERSIONS, load_schema
from tests.property.test_compiler import routed_objects
from tests.support.examples import examples
from tests.support.strategies import packets

ROOT = Path(__file__).resolve().parents[2]


def test_the_generated_module_is_current() -> None:
    result = subprocess.run(
        [sys.executable, "tools/generate_precompiled.py", "--check"], cwd=ROOT, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr


def _constant(value: Any) -> Any:
    if inspect.iscode(value):
        return _code_shape(value)
    if isinstance(value, str) and ".<locals>." in value:  # a nested function's qualname (3.10 keeps it here)
        return value.partition(".<locals>.")[2]
    return value


def _code_shape(code: Any) -> tuple[Any, ...]:
    """What a code object does, less its name, its lines and where it was compiled."""
    consts = tuple(_constant(c) for c in code.co_consts)
    return (code.co_code, consts, code.co_names, code.co_varnames, code.co_freevars, code.co_cellvars)


@pytest.mark.parametrize("text", sorted(RECORD_METHODS), ids=lambda text: text.split("\n")[0][:60])
def test_each_record_shape_is_its_compiled_text(text: str) -> None:
    namespace: dict[str, Any] = {}
    exec(compile(text, "<long way>", "exec"), {}, namespace)
    assert _code_shape(RECORD_METHODS[text].__code__) == _code_shape(namespace["_make"].__code__)


def test_every_record_and_definition_of_the_package_is_precompiled() -> None:
    for version in SUPPORTED_VERSIONS:
        _validation.builder(version)
    _writer.shipped_writer()
    assert len(DEFINITIONS) == len(SUPPORTED_VERSIONS) + 1
    assert all(text in DEFINITIONS for text in _codegen.DEFINED if "builder of https://" in _codegen.DEFINED[text][0])
    made = [text for (module, _), text in _record.MADE.items() if module.split(".")[0] == "cmp"]
    assert made and all(text in RECORD_METHODS for text in made)


@pytest.mark.parametrize("text", sorted(DEFINITIONS), ids=lambda text: text.split("(")[0])
def test_each_definition_is_its_compiled_text(text: str) -> None:
    """The wrapper's one inner function is what compiling the text defines."""
    compiled = compile(text, "<long way>", "exec")
    (defined,) = [c for c in compiled.co_consts if inspect.iscode(c)]
    (ahead,) = [c for c in DEFINITIONS[text].__code__.co_consts if inspect.iscode(c)]
    assert _code_shape(ahead) == _code_shape(defined)


@pytest.fixture(scope="module")
def long_way() -> dict[str, Any]:
    """The shipped builders and writer compiled here, with the precompiled table set aside."""
    saved = dict(DEFINITIONS)
    DEFINITIONS.clear()
    try:
        made: dict[str, Any] = {
            version: compile_builder(load_schema(version), SCHEMA_CLASSES, {"_known": CONFORMING})
            for version in SUPPORTED_VERSIONS
        }
        made["writer"] = _writer.compile_writer(_writer.members())
    finally:
        DEFINITIONS.update(saved)
    for version in SUPPORTED_VERSIONS:
        assert made[version].__code__.co_filename.startswith("<cmp compiled builder of ")
        assert _validation.builder(version).__code__.co_filename.endswith("_precompiled.py")
    return made


def test_the_precompiled_builders_answer_as_the_long_way_on_every_vector(long_way: dict[str, Any]) -> None:
    built = 0
    for vector_id, obj, version in routed_objects():
        answer = _validation.builder(version)(obj)
        assert answer == long_way[version](obj), vector_id
        built += answer is not None
    assert built > 300


@settings(max_examples=examples(200))
@given(packet=packets())
def test_the_precompiled_builder_and_writer_answer_as_the_long_way(long_way: dict[str, Any], packet: Any) -> None:
    obj = to_obj(packet)
    version = packet.ltm_version
    assert _validation.builder(version)(obj) == long_way[version](obj)
    for identity in (True, False):
        assert _writer.shipped_writer()(packet, identity) == long_way["writer"](packet, identity)
