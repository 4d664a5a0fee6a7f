"""Compiled kernels kept on disk, so a new process (a script, a CLI call, a notebook restart)
reads them instead of compiling them again.

This is JAX's own persistent compilation cache, turned on by :func:`enable` when ``bayesnb``
is imported, in ``$XDG_CACHE_HOME/bayesnb/jax`` (``~/.cache/bayesnb/jax``), bounded to
:data:`MAX_BYTES` (least recently read entries go first). The bound also makes JAX hold a
file lock around every read and write, which is what makes one folder safe for concurrent
processes. JAX's cache is per process, not per function, so it keeps the user's own kernels
too. It is left alone when the user has configured a JAX cache folder already, and
``BAYESNB_COMPILATION_CACHE`` chooses: ``0`` turns it off, a path picks the folder.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import jax

#: the environment variable that turns the cache off (``0``) or names its folder
ENV = "BAYESNB_COMPILATION_CACHE"

#: the bound on the folder's size, in bytes (an entry is tens to hundreds of kilobytes)
MAX_BYTES = 256 * 2**20

#: kernels that compile faster than this are not written (JAX's default, 1 s, keeps almost
#: none of ours, and their sum is what a first answer waits for)
MIN_COMPILE_SECS = 0.0

_OFF = {"0", "off", "false", "no"}


def folder() -> Path | None:
    """The folder the cache would use, from :data:`ENV` and the XDG convention; ``None`` when
    :data:`ENV` turns it off."""
    chosen = os.environ.get(ENV, "").strip()
    if chosen.lower() in _OFF:
        return None
    if chosen and chosen != "1":
        return Path(chosen).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "bayesnb" / "jax"


def enable() -> Path | None:
    """Point JAX's persistent compilation cache at :func:`folder`, unless the user configured
    one (``jax_compilation_cache_dir`` or ``JAX_COMPILATION_CACHE_DIR``), turned JAX's cache
    off, or :data:`ENV` is ``0``. Returns the folder in use by this call, or ``None``."""
    if jax.config.jax_compilation_cache_dir or not jax.config.jax_enable_compilation_cache:
        return None
    path = folder()
    # without filelock JAX cannot bound the folder nor lock it against concurrent writers
    if path is None or importlib.util.find_spec("filelock") is None:
        return None
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError:  # a read-only home: compile as before, without a cache
        return None
    jax.config.update("jax_compilation_cache_dir", str(path))
    jax.config.update("jax_compilation_cache_max_size", MAX_BYTES)
    jax.config.update("jax_persistent_cache_min_compile_time_secs", MIN_COMPILE_SECS)
    return path


def active_folder() -> Path | None:
    """The folder of the persistent compilation cache this process uses: bayesnb's (turned on
    by :func:`enable`) or one the user configured; ``None`` when JAX's cache is off. What else
    bayesnb keeps of its compiled programs (the NUTS programs, ``bayesnb._nuts``) goes there
    too, so it lives and goes with them."""
    where = jax.config.jax_compilation_cache_dir
    if not where or not jax.config.jax_enable_compilation_cache:
        return None
    return Path(where).expanduser()
