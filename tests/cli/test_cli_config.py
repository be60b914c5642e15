"""Settings (issue 29): each option from its flag, else CMP_<KEY>, else ``[tool.core-memory-packet]``
in the nearest pyproject.toml (or the file CMP_CONFIG names), else its default; ``check
--show-config`` says which; an unknown key or a bad value is one line, exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import cmp
from cmp._canonical import file_bytes
from cmp.cli._config import OPTIONS
from tests.support.cli import run_cli, run_main
from tests.support.packets import encode, full, put

KEY = "AKIAIOSFODNN7EXAMPLE"  # AWS's documented example key


def _project(root: Path, table: str) -> Path:
    (root / "pyproject.toml").write_text(f'[project]\nname = "packets"\n\n[tool.core-memory-packet]\n{table}\n')
    return root


def _good() -> bytes:
    return file_bytes(cmp.dumps(cmp.loads(encode(full()))))


def _show(capsysbinary: pytest.CaptureFixture[bytes], *args: str) -> dict[str, tuple[str, str]]:
    status, out, err = run_main(capsysbinary, "check", "--show-config", *args)
    assert (status, err) == (0, b"")
    lines = out.decode().splitlines()
    settings = {}
    for line in lines[1:]:
        assignment, origin = line.rsplit("  (", 1)
        key, value = assignment.split(" = ", 1)
        settings[key] = (value, origin.rstrip(")"))
    return {"": (lines[0], ""), **settings}


def test_show_config_names_every_setting_check_reads_with_its_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    monkeypatch.chdir(tmp_path)  # no pyproject.toml here or above (tmp folders have none)
    shown = _show(capsysbinary)
    assert shown[""] == ("configuration file: none", "")
    assert set(shown) - {""} == {option.key for option in OPTIONS if "check" in option.commands}
    assert shown["rule-set"] == ("'default'", "default")
    assert shown["lenient"] == ("false", "default")
    assert shown["include"] == ("['*.json']", "default")
    assert shown["baseline"] == ("none", "default")


def test_the_flag_wins_over_the_environment_which_wins_over_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    project = _project(tmp_path, 'rule-set = "extended"\nlenient = true\nformat = "json"')
    monkeypatch.chdir(project)
    file = str(project / "pyproject.toml")
    shown = _show(capsysbinary)
    assert shown[""] == (f"configuration file: {file}", "")
    assert shown["rule-set"] == ("'extended'", file) and shown["lenient"] == ("true", file)
    monkeypatch.setenv("CMP_RULE_SET", "default")
    monkeypatch.setenv("CMP_LENIENT", "no")
    shown = _show(capsysbinary)
    assert shown["rule-set"] == ("'default'", "CMP_RULE_SET") and shown["lenient"] == ("false", "CMP_LENIENT")
    assert shown["format"] == ("'json'", file)
    shown = _show(capsysbinary, "--rule-set", "extended", "--no-lenient", "--format", "text")
    assert shown["rule-set"] == ("'extended'", "--rule-set")
    assert shown["lenient"] == ("false", "--lenient")
    assert shown["format"] == ("'text'", "--format")


def test_the_file_s_settings_change_what_check_does(tmp_path: Path) -> None:
    project = _project(tmp_path, 'format = "json"\nlenient = true')
    (project / "bad.json").write_bytes(encode(put(full(), "tags[0]", "Bad")))
    result = run_cli("check", "bad.json", cwd=project)
    document = json.loads(result.stdout)
    assert result.returncode == 0  # lenient: a schema error is a warning
    assert document["results"][0]["accepted"] is True
    assert run_cli("check", "--no-lenient", "bad.json", cwd=project).returncode == 1


def test_a_subfolder_reads_the_nearest_pyproject_above_it(tmp_path: Path) -> None:
    project = _project(tmp_path, 'rule-set = "extended"')
    below = project / "packets" / "deep"
    below.mkdir(parents=True)
    result = run_cli("check", "--show-config", cwd=below, text=True)
    assert result.returncode == 0
    assert f"configuration file: {project / 'pyproject.toml'}" in result.stdout
    assert f"rule-set = 'extended'  ({project / 'pyproject.toml'})" in result.stdout


def test_cmp_config_names_the_file_to_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    other = tmp_path / "elsewhere.toml"
    other.write_text('[tool.core-memory-packet]\nrule-set = "extended"\n')
    monkeypatch.setenv("CMP_CONFIG", str(other))
    result = run_cli("check", "--show-config", cwd=tmp_path, text=True)
    assert f"rule-set = 'extended'  ({other})" in result.stdout
    monkeypatch.setenv("CMP_CONFIG", str(tmp_path / "missing.toml"))
    result = run_cli("check", "--show-config", cwd=tmp_path, text=True)
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == f"cmp: CMP_CONFIG: no such file: {tmp_path / 'missing.toml'}\n"


@pytest.mark.parametrize(
    ("table", "says"),
    [
        ('rulez = "extended"', "has no setting 'rulez' (the settings: rule-set, lenient, include"),
        ('rule-set = "strict"', "rule-set must be one of default, extended, not 'strict'"),
        ('lenient = "yes"', "lenient must be true or false, not 'yes'"),
        ('include = "*.json"', "include must be a list of non-empty strings, not '*.json'"),
        ("exclude = [1]", "exclude must be a list of non-empty strings, not [1]"),
        ('format = "xml"', "format must be one of text, json, github, sarif, not 'xml'"),
        ("baseline = 3", "baseline must be a path, not 3"),
        ("rule-set = ", "not valid TOML"),
    ],
)
def test_a_bad_setting_in_the_file_is_one_line_exit_2(tmp_path: Path, table: str, says: str) -> None:
    project = _project(tmp_path, table)
    (project / "good.json").write_bytes(_good())
    result = run_cli("check", "good.json", cwd=project, text=True)
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr.startswith(f"cmp: {project / 'pyproject.toml'}") and says in result.stderr
    assert result.stderr.count("\n") == 1


@pytest.mark.parametrize(
    ("name", "value", "says"),
    [
        ("CMP_RULE_SET", "strict", "cmp: CMP_RULE_SET: rule-set must be one of default, extended, not 'strict'"),
        ("CMP_LENIENT", "maybe", "cmp: CMP_LENIENT: lenient must be true or false, not 'maybe'"),
        ("CMP_FORMAT", "xml", "cmp: CMP_FORMAT: format must be one of text, json, github, sarif, not 'xml'"),
    ],
)
def test_a_bad_environment_variable_is_one_line_exit_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, value: str, says: str
) -> None:
    (tmp_path / "good.json").write_bytes(_good())
    monkeypatch.setenv(name, value)
    result = run_cli("check", "good.json", cwd=tmp_path, text=True)
    assert (result.returncode, result.stdout, result.stderr) == (2, "", says + "\n")


def test_a_pyproject_without_the_table_changes_nothing(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n[tool.other]\nrules = "nonsense"\n')
    (tmp_path / "good.json").write_bytes(_good())
    assert run_cli("check", "good.json", cwd=tmp_path).returncode == 0


def test_a_command_that_reads_no_setting_ignores_a_broken_table(tmp_path: Path) -> None:
    _project(tmp_path, "unknown = 1")
    result = run_cli("schema", "--version", "0.2", cwd=tmp_path)
    assert result.returncode == 0, result.stderr


def _tree(root: Path) -> None:
    for path in ("packets/a.json", "packets/drafts/b.json", "packets/c.cmp.json", "vendor/d.json", "notes.txt"):
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_bytes(_good())


def _checked(result_stdout: bytes) -> list[str]:
    return sorted(item["file"] for item in json.loads(result_stdout)["results"])


def test_include_and_exclude_globs_choose_the_files_of_a_folder(tmp_path: Path) -> None:
    _tree(tmp_path)
    every = run_cli("check", "--format", "json", ".", cwd=tmp_path)
    assert _checked(every.stdout) == [
        "./packets/a.json",
        "./packets/c.cmp.json",
        "./packets/drafts/b.json",
        "./vendor/d.json",
    ]
    named = run_cli("check", "--format", "json", "--exclude", "drafts", "--exclude", "vendor/**", ".", cwd=tmp_path)
    assert _checked(named.stdout) == ["./packets/a.json", "./packets/c.cmp.json"]
    only = run_cli("check", "--format", "json", "--include", "*.cmp.json", ".", cwd=tmp_path)
    assert _checked(only.stdout) == ["./packets/c.cmp.json"]


def test_globs_in_the_file_are_relative_to_its_folder(tmp_path: Path) -> None:
    _tree(tmp_path)
    _project(tmp_path, 'exclude = ["packets/drafts/**", "vendor"]')
    result = run_cli("check", "--format", "json", "packets", cwd=tmp_path / "packets" / "drafts")
    # from a subfolder, "packets" is no folder there: the path named does not exist
    assert result.returncode == 2
    result = run_cli("check", "--format", "json", "../../packets", cwd=tmp_path / "packets" / "drafts")
    assert _checked(result.stdout) == ["../../packets/a.json", "../../packets/c.cmp.json"]


def test_a_file_named_as_an_argument_is_read_whatever_the_globs(tmp_path: Path) -> None:
    _tree(tmp_path)
    result = run_cli("check", "--format", "json", "--exclude", "vendor", "vendor/d.json", cwd=tmp_path)
    assert _checked(result.stdout) == ["vendor/d.json"]


def test_a_folder_whose_files_the_globs_leave_out_is_one_line(tmp_path: Path) -> None:
    _tree(tmp_path)
    result = run_cli("check", "--exclude", "*.json", "packets", cwd=tmp_path, text=True)
    assert result.returncode == 2
    assert "packets: no file below it matches an include glob (*.json) and no exclude glob (*.json)" in result.stderr


def test_lint_reads_its_own_settings(tmp_path: Path) -> None:
    packet = put(full(), "goal", "Open http://localhost:8080 now. Then rest.")  # sentences, local-url
    (tmp_path / "p.json").write_bytes(encode(packet))
    assert run_cli("lint", "p.json", cwd=tmp_path).returncode == 0  # advice does not fail
    _project(tmp_path, "lint-strict = true")
    assert run_cli("lint", "p.json", cwd=tmp_path).returncode == 1
    assert run_cli("lint", "--no-strict", "p.json", cwd=tmp_path).returncode == 0
    _project(tmp_path, 'lint-strict = true\nignore = ["lint/sentences", "lint/local-url"]')
    result = run_cli("lint", "p.json", cwd=tmp_path, text=True)
    assert (result.returncode, result.stdout) == (0, "p.json: ok\n")
    result = run_cli("lint", "--ignore", "lint/sentence", "p.json", cwd=tmp_path, text=True)
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == "cmp: --ignore: no rule 'lint/sentence' (core-memory-packet rules lists them)\n"
    _project(tmp_path, 'lint-strict = true\nignore = ["lint"]')  # a prefix: every lint rule
    assert run_cli("lint", "p.json", cwd=tmp_path).returncode == 0
    result = run_cli("check", "--ignore", "lint/sentences", "p.json", cwd=tmp_path, text=True)
    assert result.returncode == 2 and "no redaction rule 'lint/sentences'" in result.stderr


def test_a_configuration_nested_past_the_parser_or_not_a_file_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import os

    _project(tmp_path, "exclude = " + "[" * 100_000 + "]" * 100_000)
    result = run_cli("check", "--show-config", cwd=tmp_path, text=True)
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == f"cmp: {tmp_path / 'pyproject.toml'}: not valid TOML: nested too deep\n"
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    monkeypatch.setenv("CMP_CONFIG", str(fifo))
    result = run_cli("check", "--show-config", cwd=tmp_path, text=True, timeout=30)
    assert (result.returncode, result.stderr) == (2, f"cmp: CMP_CONFIG: not a regular file: {fifo}\n")


@pytest.mark.parametrize(
    ("glob", "says"),
    [
        ("[z-a]*", "the range z-a runs backwards"),
        ("", "an empty glob matches nothing"),
        ("x" * 1025, "longer than 1024 characters"),
    ],
)
def test_a_glob_that_cannot_be_used_is_one_line(tmp_path: Path, glob: str, says: str) -> None:
    _tree(tmp_path)
    for flag in ("--include", "--exclude"):
        result = run_cli("check", flag, glob, ".", cwd=tmp_path, text=True)
        assert (result.returncode, result.stdout) == (2, "")
        shown = repr(glob) if len(glob) <= 32 else repr(glob[:32]) + "…"  # a message quotes 32 characters at most
        assert result.stderr == f"cmp: {flag}: {flag[2:]} {shown} is no glob: {says}\n"


def test_glob_sets_are_fnmatch_s(tmp_path: Path) -> None:
    for name in ("a.json", "b.json", "]x.json", "[!].json", "^.json"):
        (tmp_path / "p").mkdir(exist_ok=True)
        (tmp_path / "p" / name).write_bytes(_good())

    def chosen(glob: str) -> list[str]:
        return _checked(run_cli("check", "--format", "json", "--include", glob, "p", cwd=tmp_path).stdout)

    assert chosen("[!a].json") == ["p/^.json", "p/b.json"]  # ! negates; ^ is a character
    assert chosen("[]]x.json") == ["p/]x.json"]  # ] first is itself
    assert chosen("[!].json") == ["p/[!].json"]  # no ] closes the set: [ is itself


def test_a_glob_that_would_backtrack_over_a_long_name_answers_at_once(tmp_path: Path) -> None:
    # Matching is RE2's, linear in the name: a backtracking engine takes minutes here.
    (tmp_path / "w").mkdir()
    (tmp_path / "w" / ("a" * 60 + ".txt")).write_text("{}")
    result = run_cli("check", "--include", "*a" * 12 + "*.json", "w", cwd=tmp_path, text=True, timeout=60)
    assert result.returncode == 2
    assert result.stderr.startswith("cmp: w: no file below it matches an include glob")


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("this is not toml [[[", "not valid TOML"),
        ('rule-set = "extended"\n', "no [tool.core-memory-packet] table in the file CMP_CONFIG names"),
        ('[tool.other]\nrule-set = "extended"\n', "no [tool.core-memory-packet] table in the file CMP_CONFIG names"),
    ],
)
def test_the_file_cmp_config_names_must_hold_the_table(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str, says: str
) -> None:
    named = tmp_path / "cmp.toml"
    named.write_text(text)
    monkeypatch.setenv("CMP_CONFIG", str(named))
    result = run_cli("check", "--show-config", cwd=tmp_path, text=True)
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr.startswith(f"cmp: {named}: ") and says in result.stderr


@pytest.mark.parametrize("table", ["core_memory_packet", "Core-Memory-Packet"])
def test_a_table_named_nearly_like_ours_is_an_error(tmp_path: Path, table: str) -> None:
    (tmp_path / "pyproject.toml").write_text(f'[tool.{table}]\nrule-set = "extended"\n')
    result = run_cli("check", "--show-config", cwd=tmp_path, text=True)
    assert result.returncode == 2
    assert result.stderr == (
        f"cmp: {tmp_path / 'pyproject.toml'}: [tool.{table}] is not [tool.core-memory-packet]: "
        "its settings would be ignored\n"
    )


def test_show_config_takes_no_file(tmp_path: Path) -> None:
    (tmp_path / "good.json").write_bytes(_good())
    result = run_cli("check", "--show-config", "good.json", cwd=tmp_path, text=True)
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == "cmp: --show-config checks nothing: give it no FILE or --jsonl\n"
