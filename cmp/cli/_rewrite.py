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
    """Refuse to replace anything but a regular file, with or without ``--force``.

    A rename puts a regular file where a device node, a FIFO or a socket was: run as
    root against /dev/null it would replace the system's.
    """
    if not stat.S_ISREG(info.st_mode):
        raise WriteRefused(f"it is {file_kind(info.st_mode)}, and only a regular file is written")


def _refuse_unsafe(path: str, info: os.stat_result) -> None:
    """Refuse what a rename would quietly change: other names of the file, a write protection.

    A rename gives ``path`` a new inode, so other hard links keep the old bytes; and
    renaming needs only the folder to be writable, so a read-only file would be
    rewritten anyway. Root passes every access check, so a file with no write bit at
    all counts as read-only too.
    """
    if info.st_nlink > 1:
        raise WriteRefused(
            f"it has {info.st_nlink} hard links, which rewriting would split (--force to rewrite anyway)"
        )
    if not info.st_mode & 0o222 or not os.access(path, os.W_OK):
        raise WriteRefused("it is read-only (--force to rewrite anyway)")


def _refuse_changed(path: str, read: Source) -> None:
    """Just before the rename, leave the file alone if it is no longer what was read.

    Someone may have saved it meanwhile; the rename would throw their change away.
    The file (inode, size, mtime) and its bytes must both be unchanged. A change in
    the instant between this check and the rename cannot be seen; that is as close
    as a rename-based write can get without locks every writer would have to honour.
    """
    try:
        now = read_source(path)
    except SourceError:
        now = None
    if now is None or now.data != read.data or (read.stamp is not None and now.stamp != read.stamp):
        raise WriteRefused("it changed since it was read; run fmt again")


def _copy_owner(temporary: str, info: os.stat_result) -> None:
    """Give the new file the original's owner and group where permitted.

    Only root may give a file away and a user may only pick one of their groups, so
    a refusal keeps the writer's ids rather than failing the rewrite; EINVAL is an id
    this system cannot map (user namespaces), the same kind of refusal.
    """
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

    On any error, and on SIGINT, SIGTERM or SIGHUP (:class:`Stopped`), the original is
    untouched and the temporary file removed. A symlink is followed, so the file it
    names is rewritten and the link stays a link. Mode, owner and group are carried
    over (owner and group where permitted). Unless ``force``, a file with other hard
    links or without write permission is refused (:class:`WriteRefused`). Given
    ``read`` (what was read from the file), a file that changed since is left alone
    (:class:`WriteRefused`).
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
    """Write a new file ``path`` holding ``data``, all of it or nothing, never over an existing one.

    The bytes go to a temporary file in the same folder first, which is then linked in
    under its name: the link fails with FileExistsError if the name was taken meanwhile.
    The file gets the mode a new file gets here (0666 less the umask).
    """
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


# A temporary file is named for the file it will replace: ``.cmp-<name>-<random>.tmp``
# (the name cut to _NAME_KEPT characters, so the whole stays within a file name's limit).
# One left by a writer killed mid-write (SIGKILL, a power cut) is removed by a later write
# of the same file, once it is older than STALE_AFTER seconds: no write takes that long,
# so a younger one may be another writer's, in flight.
_PREFIX, _SUFFIX = ".cmp-", ".tmp"
_NAME_KEPT = 100
_RANDOM = 8  # the characters tempfile.mkstemp puts between prefix and suffix
STALE_AFTER = 15 * 60


def _temporary_prefix(name: str) -> str:
    return f"{_PREFIX}{name[:_NAME_KEPT]}-"


def remove_stale_temporaries(folder: str, name: str, *, now: float | None = None) -> list[str]:
    """Remove this user's temporary files of ``name`` in ``folder`` older than STALE_AFTER; their names.

    Best effort: a folder that cannot be listed, or a file another process removes
    first, is left to the next write.
    """
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

    Stale temporary files of ``name`` go first (see STALE_AFTER). On any error the new one
    is removed before the error goes on.
    """
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
