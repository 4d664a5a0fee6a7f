"""The package's compiled kernels, held within a bound.

JAX compiles a kernel once per static signature (families, classes, columns, chunk rows,
dtype) and keeps each executable for the life of the process, so a service fitting many
models of different shapes would grow without bound (each new class count: a few kernels,
megabytes of executables). Every jit-compiled function of the package is made by
:func:`compiled` (a program read from disk by :func:`exported_program`, counted by its holder
through :func:`held`), and :func:`keep_bounded`, called where a fit or a prediction starts,
drops their executables once they hold more than :data:`MAX_EXECUTABLES`: what is dropped
compiles again when it is next used. ``benchmarks/compile_bound.py`` measures the bound.
"""

from __future__ import annotations

from functools import partial

import jax

#: executables the package's kernels may hold at once before all are dropped: room for two
#: models' score kernels over every batch size to 5,000 rows (23 row buckets each); at 32, a
#: service alternating two such models dropped and recompiled them all on every pass
MAX_EXECUTABLES = 96

_KERNELS: list = []


def compiled(fun=None, **jit_options):
    """``jax.jit(fun, **jit_options)``, counted against :data:`MAX_EXECUTABLES` (usable as a
    decorator, with or without options)."""
    if fun is None:
        return partial(compiled, **jit_options)
    kernel = jax.jit(fun, **jit_options)
    _KERNELS.append(kernel)
    return kernel


def exported_program(exported, **jit_options):
    """``jax.jit(exported.call, **jit_options)`` for a ``jax.export.Exported`` read from disk,
    not counted here: whoever holds it counts it (:func:`held`) and drops it, executable and
    all, when the bound is reached."""
    return jax.jit(exported.call, **jit_options)


def held(programs):
    """Count ``programs`` (anything with ``_cache_size()`` and ``clear_cache()``, such as a
    table of loaded executables) against :data:`MAX_EXECUTABLES` too."""
    _KERNELS.append(programs)
    return programs


def executables() -> int:
    """How many executables the package's kernels hold now."""
    return sum(kernel._cache_size() for kernel in _KERNELS)


def keep_bounded() -> None:
    """Drop every kernel's executables if together they exceed :data:`MAX_EXECUTABLES`."""
    if executables() > MAX_EXECUTABLES:
        for kernel in _KERNELS:
            kernel.clear_cache()
