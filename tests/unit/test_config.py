"""The settings (cmp.cli._config): stated once, in OPTIONS, and every place that shows them read from there."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from cmp.cli._args import build_parser, subcommand
from cmp.cli._config import DEFAULT, OPTIONS, ConfigError, Sources, resolve, settings_table

ROOT = Path(__file__).resolve().parents[2]


def _commands() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    names = {command for option in OPTIONS for command in option.commands}
    return {name: subcommand(parser, name) for name in sorted(names)}


def test_the_configuration_page_shows_every_setting() -> None:
    page = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    shown = page.split("<!-- settings -->\n", 1)[1].split("<!-- /settings -->", 1)[0]
    assert shown == settings_table()


@pytest.mark.parametrize("command", sorted({c for option in OPTIONS for c in option.commands}))
def test_a_setting_s_flag_is_left_unset_so_the_setting_can_fill_it(command: str) -> None:
    # A default on the flag would hide the variable and the file: each is None until resolved.
    parser = _commands()[command]
    actions = {action.dest: action for action in parser._actions}
    for option in OPTIONS:
        if command in option.commands:
            assert option.dest in actions, (command, option.key)
            assert actions[option.dest].default is None, (command, option.key)


def _resolved(command: str, argv: list[str], environ: dict[str, str], table: dict[str, object]) -> dict[str, object]:
    parser = build_parser()
    args = parser.parse_args([command, *argv])
    choices = {
        action.dest: tuple(action.choices)
        for action in subcommand(parser, command)._actions
        if action.choices is not None
    }
    file = "/nowhere/pyproject.toml" if table else None
    settings = resolve(command, args, Sources(environ, file, table), choices)
    return {key: (setting.value, setting.origin) for key, setting in settings.items()}


def test_precedence_flag_environment_file_default() -> None:
    table = {"rule-set": "extended", "exclude": ["a"], "baseline": "b.json"}
    got = _resolved("check", [], {}, table)
    assert got["rule-set"] == ("extended", "/nowhere/pyproject.toml")
    assert got["baseline"] == ("/nowhere/b.json", "/nowhere/pyproject.toml")  # relative to the file's folder
    assert got["lenient"] == (False, DEFAULT)
    got = _resolved("check", [], {"CMP_RULE_SET": "default", "CMP_EXCLUDE": "x, y ,", "CMP_BASELINE": "c.json"}, table)
    assert got["rule-set"] == ("default", "CMP_RULE_SET")
    assert got["exclude"] == (("x", "y"), "CMP_EXCLUDE")
    assert got["baseline"] == ("c.json", "CMP_BASELINE")  # relative to the working folder, as given
    got = _resolved("check", ["--rule-set", "extended", "--exclude", "z"], {"CMP_RULE_SET": "default"}, table)
    assert got["rule-set"] == ("extended", "--rule-set") and got["exclude"] == (("z",), "--exclude")


@pytest.mark.parametrize("word", ["1", "true", "YES", "on"])
def test_a_switch_in_the_environment_is_a_word(word: str) -> None:
    assert _resolved("check", [], {"CMP_LENIENT": word}, {})["lenient"] == (True, "CMP_LENIENT")


def test_a_command_reads_only_its_own_settings() -> None:
    got = _resolved("fmt", ["x.json"], {"CMP_LENIENT": "nonsense"}, {})
    assert "lenient" not in got  # fmt has no --lenient: its variable is not read, so not wrong either
    with pytest.raises(ConfigError, match="CMP_LENIENT: lenient must be true or false"):
        _resolved("check", [], {"CMP_LENIENT": "nonsense"}, {})
