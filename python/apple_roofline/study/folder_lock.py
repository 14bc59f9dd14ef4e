"""One study at a time in a folder: an exclusive advisory lock on a file inside it.

A command that writes a study's folder (``run``, ``dispatch``, ``graphics``, ``calls``, ``engines``,
``tune``, ``report DIR``) holds the lock on ``DIR/.apple-roofline.lock`` for its whole length, the
holder's process id written in it (:func:`hold`); one that writes a file into a folder (``plot``,
``compare -o``) takes it too where the file exists (:func:`hold` with ``create=False``). The lock is
``fcntl.flock`` (POSIX): the operating system releases it when the process ends, however it ends,
so a killed run never leaves a stale lock; a held lock's file is removed when it is released
(:func:`release`), one left by a killed run is taken again. Where the platform has no ``fcntl``
(Windows) nothing is locked.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Dict, Optional

try:
    import fcntl
except ImportError:  # Windows: no advisory locks of this kind
    fcntl = None  # type: ignore[assignment]

__all__ = ["LOCK_NAME", "FolderBusy", "hold", "release", "locking"]

#: The lock file's name inside the folder.
LOCK_NAME = ".apple-roofline.lock"

_held: Dict[str, int] = {}  # resolved folder -> the open lock file's descriptor


class FolderBusy(Exception):
    """Another process holds the folder's lock.

    Attributes:
        folder: the folder.
        pid: the holder's process id, as its lock file says (None where it says none).
    """

    def __init__(self, folder: Path, pid: Optional[int]) -> None:
        self.folder = folder
        self.pid = pid
        who = f"process {pid}" if pid is not None else "another process"
        super().__init__(f"{folder} is in use: {who} is writing a study there")


def locking() -> bool:
    """Whether this platform locks folders (it has ``fcntl``)."""
    return fcntl is not None


def _holder(fd: int) -> Optional[int]:
    """The process id written in the lock file open as ``fd``, or None."""
    try:
        text = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


def hold(folder: Path, *, create: bool = True) -> bool:
    """Take the lock of ``folder`` (an existing directory) for this process, until :func:`release`
    or the process ends; again for a folder it holds, nothing. With ``create`` False, a folder
    without a lock file is not locked (no study writes there). Whether the lock is held now.

    Raises:
        FolderBusy: another process holds it (naming its process id).
        OSError: the lock file cannot be opened or written.
    """
    if fcntl is None:
        return False
    key = str(folder.resolve())
    if key in _held:
        return True
    fd = _lock_file(folder, create)
    if fd is None:
        return False
    try:
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode("ascii"), 0)
    except BaseException:
        os.close(fd)
        raise
    _held[key] = fd
    return True


def _lock_file(folder: Path, create: bool) -> Optional[int]:
    """The descriptor of ``folder``'s lock file, locked and still the file at its path (a holder
    removes it as it releases: then the new one is opened, or with ``create`` False, none); None
    where there is none to lock.

    Raises:
        FolderBusy, OSError: as :func:`hold`.
    """
    path = folder / LOCK_NAME
    while True:
        fd = _open_locked(folder, path, create)
        if fd is None:
            return None
        if _still_at(fd, path):
            return fd
        os.close(fd)
        if not create:
            return None


def _open_locked(folder: Path, path: Path, create: bool) -> Optional[int]:
    """``path`` opened (created with ``create``) and locked exclusively without waiting; None where
    it does not exist and ``create`` is False.

    Raises:
        FolderBusy: another process holds the lock. OSError: it cannot be opened.
    """
    flags = os.O_RDWR | (os.O_CREAT if create else 0)
    try:
        fd = os.open(path, flags, 0o644)
    except FileNotFoundError:
        if not create:
            return None
        raise
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        pid = _holder(fd)
        os.close(fd)
        raise FolderBusy(folder, pid) from None
    except BaseException:
        os.close(fd)
        raise
    return fd


def _still_at(fd: int, path: Path) -> bool:
    """Whether the file open as ``fd`` is still the one at ``path``."""
    try:
        return os.path.samestat(os.fstat(fd), os.stat(path))
    except FileNotFoundError:
        return False


def release(folder: Optional[Path] = None) -> None:
    """Give up the lock of ``folder`` (every lock this process holds when None), removing its file."""
    keys = [str(folder.resolve())] if folder is not None else list(_held)
    for key in keys:
        fd = _held.pop(key, None)
        if fd is None:
            continue
        try:
            os.unlink(Path(key) / LOCK_NAME)  # while still locked: the next holder makes a new one
        except OSError:
            pass
        os.close(fd)  # closing releases the flock
