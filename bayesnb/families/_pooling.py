r"""Classes that share strength: partial pooling of a discrete family's class tables.

With ``pooling="partial"`` (``Bernoulli``, ``Categorical``, ``Multinomial``; ``method="mcmc"``
only) the classes' tables of a column are not independent draws from a fixed prior but draws
around a shared mean :math:`\mathbf m` with a concentration :math:`s`, both learned from the
data:

.. math::

    \mathbf m \sim \mathrm{Dirichlet}(\boldsymbol\alpha), \qquad
    s \sim \mathrm{Gamma}(a, b), \qquad
    \boldsymbol\theta_k \mid \mathbf m, s \sim \mathrm{Dirichlet}(s\,\mathbf m)
    \text{ for every class } k

(Bernoulli: :math:`m \sim \mathrm{Beta}(\alpha, \beta)`, :math:`\theta_k \sim
\mathrm{Beta}(s m, s(1 - m))`). The family's own concentrations (``alpha``, ``beta``; default
1, so :math:`\mathbf m` is uniform) become the prior of the shared mean, and ``(a, b)`` is
``pooling_concentration``, the shape and rate of the Gamma prior on :math:`s` (default
``(1.0, 0.1)``: mean 10). Given :math:`(\mathbf m, s)` a class's posterior is
Dirichlet(:math:`s\mathbf m + \mathbf n_k`): a class with few rows is pulled toward the shared
mean (it borrows strength from the other classes), one with many rows keeps its own counts.
There is no closed form: every other method refuses the setting.

Sites (``bayesnb.model``): the shared mean ``"{block}.shared_mean"`` and the concentration
``"{block}.concentration"`` beside a block's parameter (``"bernoulli.theta"``,
``"multinomial.probs"``), or ``"{block}.{column}.shared_mean"`` and
``"{block}.{column}.concentration"`` beside a column's (``"categorical.{column}.probs"``).
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import numpy as np

from ._base import dist, is_distribution, numpyro

#: the values of a family's ``pooling``
POOLING = ("none", "partial")

#: the default ``pooling_concentration``: shape and rate of the Gamma prior on ``s`` (mean 10)
DEFAULT_CONCENTRATION = (1.0, 0.1)


#: where the draws of the pooled sites lie, by the site's last name: the shared mean's
#: entries (a Beta's, or a Dirichlet's components) in [0, 1], the concentration above 0
POOLED_SUPPORTS = {"shared_mean": "unit_interval", "concentration": "positive"}


class PoolingPrior(NamedTuple):
    """The Gamma prior of the shared concentration ``s``."""

    shape: jax.Array  # ()
    rate: jax.Array  # ()


class Pooled:
    """What the pooling families share (a mixin before ``ConjugateFamily``): their settings
    ``pooling`` and ``pooling_concentration``, shown by ``repr`` when set, and checked."""

    _hyper_if_set = ("pooling", "pooling_concentration")

    def pooling_prior(self) -> PoolingPrior | None:
        return pooling_prior(self, self.concentrations)

    def pooled_sites(self, axes: dict) -> dict:
        """``axes`` (the pooled sites' dims by key) when pooled, else none."""
        return {} if self.pooling_prior() is None else axes


def pooling_prior(family, hyper: tuple[str, ...]) -> PoolingPrior | None:
    """The family's :class:`PoolingPrior` under ``pooling="partial"``, None under ``"none"``;
    a bad setting is a ``ValueError`` naming it. ``hyper``: the family's concentrations, the
    prior of the shared mean, which must then be numbers (not hyperpriors)."""
    name = type(family).__name__
    if not isinstance(family.pooling, str) or family.pooling not in POOLING:
        raise ValueError(f"{name}: pooling must be one of {POOLING}, got {family.pooling!r}.")
    if family.pooling == "none":
        return None
    try:
        a = np.asarray(family.pooling_concentration, dtype=np.float64)
    except (TypeError, ValueError):
        a = np.full(3, np.nan)
    if a.shape != (2,) or not np.all(np.isfinite(a)) or np.any(a <= 0):
        raise ValueError(f"{name}: pooling_concentration must be (shape, rate) of the Gamma "
                         f"prior on the shared concentration, two positive numbers; got "
                         f"{family.pooling_concentration!r}.")
    with np.errstate(over="ignore", under="ignore"):
        mean, sd = a[0] / a[1], np.sqrt(a[0]) / a[1]
    if not (1e-30 <= mean <= 1e30 and 1e-30 <= sd <= 1e30):  # NUTS samples log s in float32
        raise ValueError(f"{name}: pooling_concentration {family.pooling_concentration!r} "
                         f"gives the shared concentration a Gamma prior of mean {mean:.3g} and "
                         f"sd {sd:.3g}; both must lie within 1e-30 to 1e30 (beyond, the "
                         f"sampler cannot move: every transition diverges).")
    learned = [k for k in hyper if is_distribution(getattr(family, k))]
    if learned:
        raise ValueError(f"{name}: with pooling='partial' {', '.join(learned)} is the prior of "
                         f"the shared mean and must be a number, not a distribution (the "
                         f"classes' prior is learned already).")
    return PoolingPrior(np.float64(a[0]), np.float64(a[1]))


def sample_dirichlet_mean(alpha, pooling: PoolingPrior, site: str):
    """The shared mean ``m ~ Dirichlet(alpha)`` (site ``"{site}.shared_mean"``) and
    concentration ``s ~ Gamma`` (``"{site}.concentration"``) of one Dirichlet; returns the
    classes' concentration ``s * m``."""
    m = numpyro.sample(f"{site}.shared_mean", dist.Dirichlet(alpha))
    s = numpyro.sample(f"{site}.concentration", dist.Gamma(pooling.shape, pooling.rate))
    return s * m


def sample_beta_mean(alpha, beta, pooling: PoolingPrior, site: str):
    """Per column, ``m ~ Beta(alpha, beta)`` and ``s ~ Gamma`` (sites ``"{site}.shared_mean"``
    and ``"{site}.concentration"``, laid out by column); returns the classes' Beta parameters
    ``(s m, s (1 - m))``."""
    with numpyro.plate(f"{site}_feature", alpha.shape[-1], dim=-1):
        m = numpyro.sample(f"{site}.shared_mean", dist.Beta(alpha, beta))
        s = numpyro.sample(f"{site}.concentration", dist.Gamma(pooling.shape, pooling.rate))
    return s * m, s * (1.0 - m)
