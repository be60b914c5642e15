"""``--write`` (fmt, scrub, migrate): a file replaced by its new bytes atomically, or left exactly as it was."""

from __future__ import annotations

import argparse
import errno
import os
import stat
import time

from cmp._toolkit import describe, file_kind, sync_folder, write_synced
from cmp.cli._output import ExitStatus, Output, error_line
from cmp.cli._signals import StopSignals
from cmp.cli._sources import Source, SourceError, read_source


class WriteRefused(Exception):
    """A rewrite that would be unsafe or would lose someone else's change; the message is one line."""


def refuse_unless_regular(info: os.stat_result) -> None:
    """Refuse to replace anything but a regular file, even with ``--force`` (run as root
    against /dev/null, a rename would replace the system's)."""
    if not stat.S_ISREG(info.st_mode):
        raise WriteRefused(f"it is {file_kind(info.st_mode)}, and only a regular file is written")


def _refuse_unsafe(path: str, info: os.stat_result) -> None:
    """Refuse what a rename would quietly change: other names of the file, a write protection.
    A rename gives ``path`` a new inode (other hard links keep the old bytes) and needs only
    the folder writable. A file with no write bit counts as read-only, even for root.
    """
    if info.st_nlink > 1:
        raise WriteRefused(
            f"it has {info.st_nlink} hard links, which rewriting would split (--force to rewrite anyway)"
        )
    if not info.st_mode & 0o222 or not os.access(path, os.W_OK):
        raise WriteRefused("it is read-only (--force to rewrite anyway)")


def _refuse_changed(path: str, read: Source) -> None:
    """Just before the rename, leave the file alone unless it (inode, size, mtime) and its bytes
    are what was read. A change after this check cannot be seen without locks all writers honour."""
    try:
        now = read_source(path)
    except SourceError:
        now = None
    if now is None or now.data != read.data or (read.stamp is not None and now.stamp != read.stamp):
        raise WriteRefused("it changed since it was read; run fmt again")


def _copy_owner(temporary: str, info: os.stat_result) -> None:
    """Give the new file the original's owner and group where permitted; a refusal (EPERM, or
    EINVAL: an id this system cannot map) keeps the writer's ids rather than failing the rewrite."""
    try:
        os.chown(temporary, info.st_uid, info.st_gid)
    except PermissionError:
        pass
    except OSError as exc:
        if exc.errno != errno.EINVAL:
            raise


def _remove(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def write_atomically(path: str, data: bytes, *, read: Source | None = None, force: bool = False) -> None:
    """Replace ``path`` with ``data``: temporary file in the same folder, fsync, rename.

    On any error or stop signal (:class:`Stopped`) the original is untouched and the
    temporary removed. A symlink is followed. Mode, owner and group are carried over where
    permitted. :class:`WriteRefused` for a file with other hard links or no write permission
    (unless ``force``), or one that changed since ``read``.
    """
    path = os.path.realpath(path)
    folder = os.path.dirname(path) or "."
    info = os.stat(path)
    refuse_unless_regular(info)
    if not force:
        _refuse_unsafe(path, info)
    with StopSignals() as stop:
        temporary = None
        try:
            temporary = _temporary(folder, os.path.basename(path), data, stop)
            _copy_owner(temporary, info)  # before chmod: chown may clear set-id bits
            os.chmod(temporary, info.st_mode & 0o7777)
            if read is not None:
                _refuse_changed(path, read)
            os.replace(temporary, path)
        except BaseException:
            if temporary is not None:
                _remove(temporary)  # after a late signal the rename is done and this finds nothing
            raise
    sync_folder(folder)


def create_atomically(path: str, data: bytes) -> None:
    """Write a new file ``path`` holding ``data``, all of it or nothing, never over an existing one
    (a temporary file is linked in: FileExistsError if the name was taken meanwhile)."""
    folder = os.path.dirname(os.path.abspath(path)) or "."
    umask = os.umask(0)
    os.umask(umask)
    with StopSignals() as stop:
        temporary = None
        try:
            temporary = _temporary(folder, os.path.basename(path), data, stop)
            os.chmod(temporary, 0o666 & ~umask)
            os.link(temporary, path)
        finally:
            if temporary is not None:
                _remove(temporary)
    sync_folder(folder)


# A temporary file is named ``.cmp-<name>-<random>.tmp`` (name cut to _NAME_KEPT characters).
# One left by a killed writer is removed by a later write of the same file once older than
# STALE_AFTER seconds: no write takes that long, so a younger one may be in flight.
_PREFIX, _SUFFIX = ".cmp-", ".tmp"
_NAME_KEPT = 100
_RANDOM = 8  # the characters tempfile.mkstemp puts between prefix and suffix
STALE_AFTER = 15 * 60


def _temporary_prefix(name: str) -> str:
    return f"{_PREFIX}{name[:_NAME_KEPT]}-"


def remove_stale_temporaries(folder: str, name: str, *, now: float | None = None) -> list[str]:
    """Remove this user's temporary files of ``name`` in ``folder`` older than STALE_AFTER; their names.
    Best effort: what cannot be listed or removed is left to the next write."""
    prefix = _temporary_prefix(name)
    now = time.time() if now is None else now
    removed: list[str] = []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return removed
    for entry in entries:
        left = entry.name
        if not (left.startswith(prefix) and left.endswith(_SUFFIX)) or len(left) != len(prefix) + _RANDOM + len(
            _SUFFIX
        ):
            continue
        try:
            info = entry.stat(follow_symlinks=False)
            if stat.S_ISREG(info.st_mode) and info.st_uid == os.geteuid() and now - info.st_mtime > STALE_AFTER:
                os.unlink(entry.path)
                removed.append(left)
        except OSError:
            continue
    return removed


def _temporary(folder: str, name: str, data: bytes, stop: StopSignals) -> str:
    """A new temporary file in ``folder`` for the file ``name``, holding ``data``, on disk (fsync); its path.
    Stale ones go first; on any error the new one is removed."""
    import tempfile

    remove_stale_temporaries(folder, name)
    temporary = None
    try:
        with stop.deferred():  # a signal between creating and naming it would leak the file
            fd, temporary = tempfile.mkstemp(dir=folder, prefix=_temporary_prefix(name), suffix=_SUFFIX)
        write_synced(fd, data)
    except BaseException:  # a full disk, a stop signal (raised as the deferred block ends)
        if temporary is not None:
            _remove(temporary)
        raise
    return temporary


def bad_write_options(command: str, args: argparse.Namespace) -> bool:
    """``--write`` with stdin, or ``--force`` without ``--write``: said in one line on stderr."""
    if args.write and "-" in args.files:
        error_line(f"{command} --write cannot rewrite stdin")
        return True
    if args.force and not args.write:
        error_line(f"{command} --force only applies to --write")
        return True
    return False


def rewrite(path: str, source: Source, data: bytes, *, force: bool, run: ExitStatus, out: Output) -> bool:
    """Replace the file ``source`` was read from (``path``) with ``data``, atomically; say how it
    went, and whether it was rewritten."""
    try:
        write_atomically(path, data, read=source, force=force)
    except WriteRefused as exc:
        run.file_error(source.file, f"not rewritten: {exc}")
    except OSError as exc:
        run.file_error(source.file, f"cannot write: {describe(exc)}; the file is unchanged")
    else:
        out.line(f"{source.file}: rewritten")
        return True
    return False
