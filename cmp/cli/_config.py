"""Settings: each option from its flag, else its environment variable, else the ``[tool.core-memory-packet]``
table of the nearest ``pyproject.toml``, else its default; each stated once, in :data:`OPTIONS`.

An unknown key or a wrong value is a :class:`ConfigError` (one line, exit 2), never ignored; its message
withholds a value, key or file name a redaction rule matches, as every message does. Paths in the file
are relative to its folder.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from cmp._toolkit import display_name
from cmp.cli._sources import GlobError, Walk, glob_pattern

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from typing import Any, Literal

    Kind = Literal["bool", "choice", "list", "path"]

TABLE = "core-memory-packet"  # [tool.core-memory-packet]
CONFIG_VARIABLE = "CMP_CONFIG"  # names the file to read instead of the nearest pyproject.toml
MAX_CONFIG_BYTES = 4 * 2**20  # a pyproject.toml is kilobytes; this bounds a path to something else
_MARK = TABLE.encode()  # a pyproject.toml without it is not parsed at all (start-up time)
_TRUE = frozenset(("1", "true", "yes", "on"))
_FALSE = frozenset(("0", "false", "no", "off", ""))

DEFAULT = "default"  # the origin of a setting no flag, variable or file gave


class ConfigError(Exception):
    """A setting that cannot be used: the message is one line naming where it came from."""


@dataclass(frozen=True, slots=True)
class Option:
    """One setting: ``key`` in the file, ``dest`` the argument it fills, ``commands`` that read it."""

    key: str
    flag: str
    dest: str
    kind: Kind
    commands: frozenset[str]
    default: Any = None
    choices: tuple[str, ...] = ()

    @property
    def env(self) -> str:
        return "CMP_" + self.key.upper().replace("-", "_")


_SCANNING = frozenset(("check", "lint", "fmt", "scrub", "resume", "audit", "baseline", "gate"))
_WALKING = frozenset(("check", "lint", "fmt", "chain", "baseline", "gate"))

# Not a setting: the store's folder (CMP_STORE, read by cmp.Store), so one place decides it.
OPTIONS: tuple[Option, ...] = (
    Option("rule-set", "--rule-set", "rule_set", "choice", _SCANNING, "default"),  # its choices: --rule-set's
    Option("lenient", "--lenient", "lenient", "bool", frozenset(("check",)), False),
    Option("include", "--include", "include", "list", _WALKING, ("*.json",)),
    Option("exclude", "--exclude", "exclude", "list", _WALKING, ()),
    Option("lint-strict", "--strict", "strict", "bool", frozenset(("lint", "gate")), False),
    Option("select", "--select", "select", "list", frozenset(("check", "lint", "baseline", "gate")), ()),
    Option("ignore", "--ignore", "ignore", "list", frozenset(("check", "lint", "baseline", "gate")), ()),
    # The baseline command writes the file check reads: its --output fills the same setting.
    Option("baseline", "--baseline", "baseline", "path", frozenset(("check", "lint", "baseline", "gate"))),
    Option("format", "--format", "format", "choice", frozenset(("check", "lint")), "text"),
)
OPTIONS_BY_KEY = {option.key: option for option in OPTIONS}


@dataclass(frozen=True, slots=True)
class Setting:
    """A setting's value and where it came from: its flag, ``CMP_X``, a file's path, or ``default``."""

    value: Any
    origin: str


def find_pyproject(start: str) -> str | None:
    """The nearest ``pyproject.toml`` in ``start`` or a folder above it, or None."""
    folder = os.path.abspath(start)
    while True:
        candidate = os.path.join(folder, "pyproject.toml")
        if os.path.isfile(candidate):
            return candidate
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent


def _shown_value(value: object) -> str:
    """:func:`cmp.cli._policy.shown_value`, loaded only when a message needs it (start-up time)."""
    from cmp.cli._policy import shown_value as shown

    return shown(value)


def _choice(option: Option, value: object, where: str, choices: Sequence[str]) -> str:
    if not isinstance(value, str) or value not in choices:
        raise ConfigError(f"{where}: {option.key} must be one of {', '.join(choices)}, not {_shown_value(value)}")
    return value


def _value(option: Option, value: object, where: str, choices: Sequence[str], folder: str | None) -> Any:
    """``value`` as ``option`` takes it, from the file (``folder``: the file's; TOML's own types)
    or the environment (``folder`` None: words stand for booleans, commas separate a list)."""
    from_environment = folder is None
    if option.kind == "bool":
        if isinstance(value, str) and from_environment:
            word = value.strip().lower()
            if word in _TRUE or word in _FALSE:
                return word in _TRUE
        if not isinstance(value, bool):
            raise ConfigError(f"{where}: {option.key} must be true or false, not {_shown_value(value)}")
        return value
    if option.kind == "choice":
        return _choice(option, value, where, choices)
    if option.kind == "list":
        if isinstance(value, str) and from_environment:
            value = [item.strip() for item in value.split(",") if item.strip()]
        if not isinstance(value, list) or not all(isinstance(item, str) and item for item in value):
            raise ConfigError(f"{where}: {option.key} must be a list of non-empty strings, not {_shown_value(value)}")
        return tuple(value)
    if not isinstance(value, str) or not value:
        raise ConfigError(f"{where}: {option.key} must be a path, not {_shown_value(value)}")
    return value if folder is None else os.path.normpath(os.path.join(folder, value))


def _named_like_the_table(key: str) -> bool:
    return key != TABLE and key.lower().replace("_", "-") == TABLE


def file_table(path: str, *, named: bool = False) -> dict[str, Any]:
    """The ``[tool.core-memory-packet]`` table of ``path`` ({} when none; a file CMP_CONFIG names must have
    one). A table named like it but not it is an error: its settings would be ignored unsaid."""
    shown = display_name(path)
    try:
        with open(path, "rb") as stream:
            data = stream.read(MAX_CONFIG_BYTES + 1)
    except OSError as exc:
        raise ConfigError(f"{shown}: cannot read: {exc.strerror or exc}") from None
    if len(data) > MAX_CONFIG_BYTES:
        raise ConfigError(f"{shown}: larger than {MAX_CONFIG_BYTES // 2**20} MiB: not read")
    if not named and _MARK not in data.lower().replace(b"_", b"-"):
        return {}
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # tomllib is tomli, taken into the standard library in 3.11
        import tomli as tomllib
    try:
        document = tomllib.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{shown}: not valid TOML: {exc}") from None
    except RecursionError:  # arrays or inline tables nested past the parser's depth
        raise ConfigError(f"{shown}: not valid TOML: nested too deep") from None
    tool = document.get("tool", {})
    for key in tool if isinstance(tool, dict) else ():
        if _named_like_the_table(key):
            raise ConfigError(f"{shown}: [tool.{key}] is not [tool.{TABLE}]: its settings would be ignored")
    if named and not (isinstance(tool, dict) and TABLE in tool):
        raise ConfigError(f"{shown}: no [tool.{TABLE}] table in the file {CONFIG_VARIABLE} names")
    table = tool.get(TABLE, {}) if isinstance(tool, dict) else {}
    if not isinstance(table, dict):
        raise ConfigError(f"{shown}: [tool.{TABLE}] must be a table")
    for key in table:
        if key not in OPTIONS_BY_KEY:
            known = ", ".join(OPTIONS_BY_KEY)
            raise ConfigError(f"{shown}: [tool.{TABLE}] has no setting {_shown_value(key)} (the settings: {known})")
    return table


@dataclass(frozen=True, slots=True)
class Sources:
    """Where settings come from besides flags: the environment, and the file (its path, or None)."""

    environ: Mapping[str, str]
    file: str | None
    table: Mapping[str, Any]

    @classmethod
    def find(cls, environ: Mapping[str, str] | None = None, cwd: str = ".") -> Sources:
        environ = os.environ if environ is None else environ
        named = environ.get(CONFIG_VARIABLE)
        file = named or find_pyproject(cwd)
        if named and not os.path.isfile(named):
            why = "not a regular file" if os.path.exists(named) else "no such file"
            raise ConfigError(f"{CONFIG_VARIABLE}: {why}: {display_name(named)}")
        return cls(environ, file, file_table(file, named=bool(named)) if file else {})


def _choices(parser_choices: Mapping[str, Sequence[str]], option: Option) -> Sequence[str]:
    return parser_choices.get(option.dest) or option.choices


def resolve(
    command: str, args: argparse.Namespace, sources: Sources, choices: Mapping[str, Sequence[str]]
) -> dict[str, Setting]:
    """Every setting ``command`` reads, by key, filled into ``args`` (an unset flag is None) from the flag,
    the environment, the file or the default. ``choices``: the command's own for an option (--format's)."""
    settings: dict[str, Setting] = {}
    folder = os.path.dirname(os.path.abspath(sources.file)) if sources.file else None
    for option in OPTIONS:
        if command not in option.commands or not hasattr(args, option.dest):
            continue
        allowed = _choices(choices, option)
        given = getattr(args, option.dest)
        if given is not None and given != []:
            setting = Setting(tuple(given) if isinstance(given, list) else given, option.flag)
        elif option.env in sources.environ:
            setting = Setting(_value(option, sources.environ[option.env], option.env, allowed, None), option.env)
        elif option.key in sources.table:
            shown = display_name(str(sources.file))
            where = f"{shown}: {option.key}"
            setting = Setting(_value(option, sources.table[option.key], where, allowed, folder), shown)
        else:
            setting = Setting(option.default, DEFAULT)
        if option.kind == "choice" and setting.origin != DEFAULT:
            _choice(option, setting.value, setting.origin, allowed)
        settings[option.key] = setting
        setattr(args, option.dest, setting.value)
    return settings


def settings_lines(settings: Mapping[str, Setting], file: str | None) -> list[str]:
    """``key = value  (origin)``, one line a setting, after the file read (if any), for ``--show-config``."""
    lines = [f"configuration file: {display_name(file) if file is not None else 'none'}"]
    for key, setting in settings.items():
        value = setting.value
        if isinstance(value, tuple):
            shown = "[" + ", ".join(_shown(item, key) for item in value) + "]"
        else:
            shown = "none" if value is None else str(value).lower() if isinstance(value, bool) else _shown(value, key)
        lines.append(f"{key} = {shown}  ({setting.origin})")
    return lines


def _shown(text: str, key: str) -> str:
    """A setting's text as --show-config shows it: whole, a path's part named for a credential withheld,
    any other text a redaction rule matches withheld."""
    if OPTIONS_BY_KEY[key].kind == "path":
        return repr(display_name(text))
    from cmp._toolkit import withheld  # --show-config alone loads the patterns for it

    hidden = withheld(text)
    return repr(text) if hidden is None else f"({hidden})"


def configure(
    args: argparse.Namespace, choices: Mapping[str, Sequence[str]], environ: Mapping[str, str] | None = None
) -> dict[str, Setting]:
    """Fill ``args`` of ``args.command`` from the flags, the environment and the file (``choices``: the
    command's own), and ``args.walk`` for a command that walks folders. The settings, for --show-config."""
    args.config_file = None
    if not any(args.command in option.commands for option in OPTIONS):
        return {}  # a command that reads no setting does not depend on a file it does not read
    sources = Sources.find(environ)
    settings = resolve(args.command, args, sources, choices)
    args.config_file = sources.file
    # Where each value came from, by argument: a message about a value names it (cmp.cli._policy).
    args.origins = {OPTIONS_BY_KEY[key].dest: setting.origin for key, setting in settings.items()}
    if "include" in settings:
        root = os.path.dirname(os.path.abspath(sources.file)) if sources.file else os.getcwd()
        baseline = settings.get("baseline")
        skip = frozenset((os.path.abspath(baseline.value),)) if baseline and baseline.value else frozenset()
        for key in ("include", "exclude"):
            for glob in settings[key].value:
                try:
                    glob_pattern(glob)
                except GlobError as exc:
                    raise ConfigError(f"{settings[key].origin}: {key} {_shown_value(glob)} is no glob: {exc}") from None
        args.walk = Walk(settings["include"].value, settings["exclude"].value, root, skip)
    return settings


def settings_table() -> str:
    """The settings as the Markdown table docs/configuration.md shows (a test holds the page to it)."""
    rows = ["| key | variable | flag | commands | default |", "|---|---|---|---|---|"]
    for option in OPTIONS:
        default = option.default
        shown = (
            "none"
            if default is None
            else str(default).lower()
            if isinstance(default, bool)
            else "[" + ", ".join(f'"{item}"' for item in default) + "]"
            if isinstance(default, tuple)
            else f'"{default}"'
        )
        commands = ", ".join(sorted(option.commands))
        rows.append(f"| `{option.key}` | `{option.env}` | `{option.flag}` | {commands} | `{shown}` |")
    return "\n".join(rows) + "\n"
