"""Writing files so that a failure never destroys what was there (no heavy imports: the CLI
uses it before JAX is loaded)."""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from pathlib import Path


@contextlib.contextmanager
def atomic_file(path, mode: str = "wb"):
    """A file object whose content replaces ``path`` only once it is completely written.

    The data go to a temporary file in the same folder (so the final rename stays on one file
    system and is atomic: ``os.replace``); on any error the temporary file is removed and
    ``path`` keeps its previous content. The new file gets the old one's permissions, or the
    usual ones for a new file (0666 less the umask) where there was none. A symbolic link is
    written through, as ``open`` writes: the file it names is replaced, the link kept."""
    asked = path
    path = Path(os.path.realpath(path))
    permissions = _permissions(path)
    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as err:  # named by the path asked for, not the temporary file's
        raise type(err)(err.errno, err.strerror, str(asked)) from None
    try:
        with os.fdopen(fd, mode) as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, permissions)
        try:
            os.replace(tmp, path)
        except OSError as err:  # e.g. path is a folder
            raise type(err)(err.errno, err.strerror, str(asked)) from None
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def _permissions(path: Path) -> int:
    try:
        return stat.S_IMODE(path.stat().st_mode)
    except FileNotFoundError:
        # mkstemp makes the file 0600; a new file is normally 0666 less the umask, which can
        # only be read by setting it
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def same_file(a, b) -> bool:
    """Whether the paths ``a`` and ``b`` name one existing file (links and ``..`` resolved)."""
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False
