"""``check FILE...`` read without argparse (cmp.cli._command_line), held to the check parser.

The plain reading must give exactly the parser's arguments for every command line it takes,
and take none the parser reads otherwise; a run must then be the same run either way
(``check -- FILE`` is the parser's reading of the same files).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cmp._precompiled import CHECK_CHOICES, CHECK_OTHER_ARGUMENTS
from cmp.cli._args import build_parser, choices_of, subcommand
from cmp.cli._command_line import CHOICES, plain_check
from tests.support.cli import run_main
from tests.support.packets import encode, full, put

KEY = "AKIAIOSFODNN7EXAMPLE"  # AWS's documented example key

# Operands as people and tools write them, and the ones an option or a number is made of.
_WORDS = st.sampled_from(["-", "--", "-q", "--format", "--format=json", "-1", "-x.json", "", " ", "check", "fmt"])
_OPERANDS = st.lists(_WORDS | st.text(max_size=12), min_size=1, max_size=5)


def _parsed(argv: list[str]) -> dict[str, object]:
    return vars(build_parser(only="check").parse_args(argv))


def _option_like(operand: str) -> bool:
    return operand.startswith("-") and operand != "-"


@settings(max_examples=300, deadline=None)
@given(_OPERANDS)
def test_a_command_line_of_operands_reads_as_the_parser_reads_it(operands: list[str]) -> None:
    argv = ["check", *operands]
    plain = plain_check(argv)
    if any(_option_like(operand) for operand in operands):
        assert plain is None  # an option, "--", or a negative number: the parser's to read
    else:
        assert plain is not None
        assert vars(plain) == _parsed(argv)


def test_the_parsers_answer_is_what_the_generated_module_holds() -> None:
    check = subcommand(build_parser(only="check"), "check")
    parsed = _parsed(["check", "packet.json"])
    assert parsed.pop("files") == ["packet.json"]
    assert parsed == CHECK_OTHER_ARGUMENTS
    assert choices_of(check) == CHECK_CHOICES == CHOICES


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["check"],
        ["fmt", "a.json"],
        ["-V"],
        ["--help"],
        ["lint", "a.json"],
        ["chek", "a.json"],
        ["-q", "check", "a"],
    ],
)
def test_any_other_command_line_is_the_parsers(argv: list[str]) -> None:
    assert plain_check(argv) is None


def test_each_run_has_arguments_of_its_own() -> None:
    first, second = plain_check(["check", "a.json"]), plain_check(["check", "a.json"])
    assert first is not None and second is not None
    first.files.append("b.json")
    first.format = "json"
    assert vars(second) == _parsed(["check", "a.json"])


@pytest.mark.parametrize(
    ("table", "variables"),
    [
        ("", {}),
        ('format = "json"', {}),
        ("", {"CMP_FORMAT": "github"}),
        ('rules = "extended"\nallow_unredacted = true', {}),
        ('format = "yaml"', {}),  # a bad value: one line, exit 2, either way
        ("", {"CMP_JOBS": "2"}),
    ],
)
def test_a_run_is_the_same_read_either_way(
    table: str,
    variables: dict[str, str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsysbinary: pytest.CaptureFixture[bytes],
) -> None:
    (tmp_path / "pyproject.toml").write_text(f"[tool.core-memory-packet]\n{table}\n", encoding="utf-8")
    for name, value in variables.items():
        monkeypatch.setenv(name, value)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "good.json").write_bytes(encode(full()))
    (tmp_path / "leaky.json").write_bytes(encode(put(full(), "goal", f"Rotate {KEY} today")))
    names = ["good.json", "leaky.json", "missing.json"]
    plain = run_main(capsysbinary, "check", *names)
    parsed = run_main(capsysbinary, "check", "--", *names)
    assert plain == parsed
    if table == 'format = "json"':
        assert json.loads(plain[1])["version"] == 1  # the file's setting was read
