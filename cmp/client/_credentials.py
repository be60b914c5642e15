"""Where the client finds its server and token, and where ``auth`` keeps them.

In order: ``CMP_SERVER`` (with ``CMP_TOKEN``, for CI); else the credentials file in the user's
config folder (``$CMP_CONFIG_DIR``, else ``$XDG_CONFIG_HOME/core-memory-packet``, else
``~/.config/core-memory-packet``), which keeps a token per server and names the default one;
else, read only, what the reference ``ltm`` client stored (its host and token), so one
``ltm auth`` serves both. A token goes only to the server it is kept for: ``CMP_TOKEN`` only
to ``CMP_SERVER``, ltm's token only to ltm's host.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from cmp._toolkit import describe, display_name
from cmp.client._errors import NotConfigured

SERVER_VARIABLE, TOKEN_VARIABLE, FOLDER_VARIABLE = "CMP_SERVER", "CMP_TOKEN", "CMP_CONFIG_DIR"
CREDENTIALS_FILE = "credentials.json"
_READ_LIMIT = 1 << 16  # a credentials file is a few hundred bytes: more is not one
_DEFAULT_PORTS = {"http": 80, "https": 443}
_HOW_TO = f"run `core-memory-packet auth URL`, or set {SERVER_VARIABLE} and {TOKEN_VARIABLE}"


def server_url(text: str) -> str:
    """``text`` as a server's base URL: ``http`` or ``https``, a host, no query or fragment, no
    final ``/``; scheme and host in lower case. ValueError (one line, nothing quoted) otherwise."""
    try:
        parts = urlsplit(text.strip())
        port = parts.port
    except ValueError:
        raise ValueError("not a URL with a valid port") from None
    if parts.scheme.lower() not in _DEFAULT_PORTS or not parts.hostname:
        raise ValueError("a server is an http:// or https:// URL with a host")
    if parts.query or parts.fragment or parts.username or parts.password:
        raise ValueError("a server's URL has no user, password, query or fragment")
    host = parts.hostname.lower()
    host = f"[{host}]" if ":" in host else host
    scheme = parts.scheme.lower()
    shown_port = "" if port is None or port == _DEFAULT_PORTS[scheme] else f":{port}"
    return f"{scheme}://{host}{shown_port}{parts.path.rstrip('/')}"


def same_server(one: str, other: str) -> bool:
    """Whether two URLs name one server (scheme, host, port and path alike, as :func:`server_url` writes them)."""
    try:
        return server_url(one) == server_url(other)
    except ValueError:
        return False


def fingerprint(token: str) -> str:
    """The first 8 hex digits of the token's SHA-256: what ``ltm auth whoami`` and ``server tokens`` show."""
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()[:8]


@dataclass(frozen=True)
class Login:
    """A server, the token for it (None: none kept), and where they came from (``source``)."""

    server: str
    token: str | None = field(repr=False)
    source: str

    def __repr__(self) -> str:  # never the token
        return f"Login(server={self.server!r}, source={self.source!r})"


def _home_config(environ: Mapping[str, str]) -> Path:
    if sys.platform == "win32":
        return Path(environ.get("APPDATA") or Path.home() / "AppData" / "Roaming")
    return Path(environ.get("XDG_CONFIG_HOME") or Path.home() / ".config")


def config_folder(environ: Mapping[str, str] | None = None) -> Path:
    """This client's config folder (see the module's description)."""
    environ = os.environ if environ is None else environ
    named = environ.get(FOLDER_VARIABLE)
    return Path(named) if named else _home_config(environ) / "core-memory-packet"


def ltm_folder(environ: Mapping[str, str] | None = None) -> Path:
    """The reference client's config folder: ``$LTM_CONFIG_DIR``, else ``ltm`` in the config home."""
    environ = os.environ if environ is None else environ
    named = environ.get("LTM_CONFIG_DIR")
    return Path(named) if named else _home_config(environ) / "ltm"


def _read_small(path: Path) -> bytes | None:
    """A small file's bytes, None when there is none; NotConfigured for one that cannot be read."""
    try:
        with open(path, "rb") as stream:
            return stream.read(_READ_LIMIT + 1)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise NotConfigured(f"cannot read {display_name(str(path))}: {describe(exc)}") from None


class CredentialsFile:
    """The credentials file: ``{"server": default URL, "tokens": {URL: token}}``, mode 0600."""

    def __init__(self, folder: str | os.PathLike[str] | None = None) -> None:
        self.path = (config_folder() if folder is None else Path(folder)) / CREDENTIALS_FILE

    def read(self) -> tuple[str | None, dict[str, str]]:
        """The default server (None: none) and the token of each server."""
        data = _read_small(self.path)
        if data is None:
            return None, {}
        try:
            value = json.loads(data) if len(data) <= _READ_LIMIT else None
        except (ValueError, RecursionError):
            value = None
        tokens = value.get("tokens") if isinstance(value, dict) else None
        default = value.get("server") if isinstance(value, dict) else None
        if (
            not isinstance(tokens, dict)
            or not all(isinstance(k, str) and isinstance(v, str) for k, v in tokens.items())
            or not isinstance(default, (str, type(None)))
        ):
            raise NotConfigured(f"{display_name(str(self.path))} is not a credentials file `auth` wrote: {_HOW_TO}")
        return default, tokens

    def save(self, server: str, token: str | None, *, default: bool = True) -> None:
        """Keep ``token`` for ``server`` (None: keep the one held), and make it the default server;
        the file replaced whole, readable by its owner alone. OSError when it cannot be written."""
        current, tokens = self.read()
        if token is not None:
            tokens[server] = token
        data = json.dumps({"server": server if default else current, "tokens": tokens}, indent=2) + "\n"
        folder = self.path.parent
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        temporary = folder / f".{CREDENTIALS_FILE}-{secrets.token_hex(8)}.tmp"
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOFOLLOW", 0)
        fd = os.open(temporary, flags, 0o600)  # 0600 from the start: never readable by others, not even briefly
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as stream:
                stream.write(data)
                stream.flush()
                os.fsync(stream.fileno())
            os.replace(temporary, self.path)
        except BaseException:
            temporary.unlink(missing_ok=True)
            raise


def _ltm_login(environ: Mapping[str, str]) -> tuple[str | None, str | None]:
    """The reference client's host and token, read only (None where it has none or they cannot be read)."""
    folder = ltm_folder(environ)
    host = environ.get("LTM_HOST") or None
    if host is None:
        try:
            data = _read_small(folder / "config.toml")
        except NotConfigured:
            data = None
        if data is not None and len(data) <= _READ_LIMIT:
            if sys.version_info >= (3, 11):
                import tomllib
            else:  # pragma: no cover - the older Pythons' copy
                import tomli as tomllib
            try:
                found = tomllib.loads(data.decode("utf-8")).get("host")
            except (ValueError, UnicodeDecodeError):
                found = None
            host = found if isinstance(found, str) and found else None
    try:
        data = _read_small(folder / "credentials")
    except NotConfigured:
        data = None
    token = data.decode("utf-8", "replace").strip() if data is not None and len(data) <= _READ_LIMIT else ""
    return host, token or None


def login(environ: Mapping[str, str] | None = None, folder: str | os.PathLike[str] | None = None) -> Login:
    """The server and token to use (see the module's description); :class:`NotConfigured` for none."""
    environ = os.environ if environ is None else environ
    named = environ.get(SERVER_VARIABLE)
    credentials = CredentialsFile(folder if folder is not None else config_folder(environ))
    if named:
        server = _checked(named, SERVER_VARIABLE)
        token = environ.get(TOKEN_VARIABLE) or None
        if token is None:  # the token kept for that very server, if any
            token = next((kept for url, kept in credentials.read()[1].items() if same_server(url, server)), None)
        return Login(server, token, SERVER_VARIABLE)
    default, tokens = credentials.read()
    if default:
        return Login(_checked(default, display_name(str(credentials.path))), tokens.get(default), "credentials file")
    host, token = _ltm_login(environ)
    if host:
        return Login(_checked(host, "ltm's config"), token, "ltm's config")
    raise NotConfigured(f"no server configured: {_HOW_TO}")


def _checked(url: str, where: str) -> str:
    try:
        return server_url(url)
    except ValueError as exc:
        raise NotConfigured(f"the server in {where} is not usable ({exc}): {_HOW_TO}") from None
