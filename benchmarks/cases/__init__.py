"""The benchmark cases, one module each, in the order ``run.py`` runs them.

A case module defines ``CASE`` (``harness.Case``): its name for ``--only``, a ``run(ctx)``
that returns table rows (ours and the reference measured side by side, with the exactness
check beside each), its shapes, and optionally a ``profile(ctx)`` for ``--profile``.
"""

from . import (
    bayes,
    bernoulli,
    categorical,
    coldstart,
    draws,
    gaussian,
    multinomial,
    wide_categorical,
)

REGISTRY = {case.name: case for case in (
    multinomial.CASE, bayes.CASE, bernoulli.CASE, gaussian.CASE, categorical.CASE,
    wide_categorical.CASE, draws.CASE, coldstart.CASE)}
