"""The names the package states for mypy only (under ``TYPE_CHECKING = False``), held to
what it states at run time.

A module on a check's path imports nothing from typing when it runs (start-up: see
tests/cli/test_startup.py), so a Literal whose values a run-time table also lists is
written twice: the Literal under ``if TYPE_CHECKING:``, the table annotated with it.
mypy holds every value of the table to the Literal; these tests hold the Literal to the
table, value for value and in order, so neither can gain a value the other lacks.
"""

from __future__ import annotations

import ast
import importlib
import typing
from pathlib import Path

import pytest

import cmp.findings

PACKAGE = Path(cmp.__file__).resolve().parent


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _type_only_literals(tree: ast.Module) -> dict[str, tuple[object, ...]]:
    """``Name = Literal[...]`` under a module-level ``if TYPE_CHECKING:``: each name's values."""
    literals: dict[str, tuple[object, ...]] = {}
    for node in tree.body:
        if not (isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"):
            continue
        for statement in node.body:
            if (
                isinstance(statement, ast.Assign)
                and len(statement.targets) == 1
                and isinstance(statement.targets[0], ast.Name)
                and isinstance(statement.value, ast.Subscript)
                and isinstance(statement.value.value, ast.Name)
                and statement.value.value.id == "Literal"
            ):
                values = ast.literal_eval(statement.value.slice)
                literals[statement.targets[0].id] = values if isinstance(values, tuple) else (values,)
    return literals


def _tables_of(tree: ast.Module, literals: dict[str, tuple[object, ...]]) -> dict[str, str]:
    """Module-level tables annotated ``tuple[Name, ...]`` or ``dict[Name, ...]`` of one of
    ``literals``: the Literal's name, by the table's."""
    tables: dict[str, str] = {}
    for node in tree.body:
        if not (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)):
            continue
        annotation = node.annotation
        if isinstance(annotation, ast.Subscript) and isinstance(annotation.value, ast.Name):
            if annotation.value.id in ("tuple", "dict") and isinstance(annotation.slice, ast.Tuple):
                first = annotation.slice.elts[0]
                if isinstance(first, ast.Name) and first.id in literals:
                    tables[node.target.id] = first.id
    return tables


def _pairs() -> list[tuple[str, str, str, tuple[object, ...]]]:
    pairs = []
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        literals = _type_only_literals(tree)
        for table, literal in _tables_of(tree, literals).items():
            pairs.append((_module_name(path), table, literal, literals[literal]))
    return pairs


PAIRS = _pairs()


def test_the_search_finds_the_tables_it_is_for() -> None:
    found = {(module, table) for module, table, _, _ in PAIRS}
    assert {
        ("cmp.findings", "CODES"),
        ("cmp.findings", "ADVICE_CODES"),
        ("cmp._redaction._rules", "RULE_SETS"),
    } <= found


@pytest.mark.parametrize(("module", "table", "literal", "values"), PAIRS, ids=[f"{p[0]}.{p[1]}" for p in PAIRS])
def test_a_table_lists_exactly_its_literals_values_in_order(
    module: str, table: str, literal: str, values: tuple[object, ...]
) -> None:
    assert tuple(getattr(importlib.import_module(module), table)) == values, f"{module}.{table} against {literal}"


def test_the_public_literals_are_values_too_made_from_their_tables() -> None:
    literals = _type_only_literals(ast.parse(Path(cmp.findings.__file__).read_text(encoding="utf-8")))
    for name in ("Code", "AdviceCode"):
        value = getattr(cmp.findings, name)
        assert typing.get_origin(value) is typing.Literal
        assert typing.get_args(value) == literals[name]
    with pytest.raises(AttributeError, match="no attribute 'Kode'"):
        cmp.findings.Kode  # noqa: B018
