r"""The predictive over draws of a small call, computed on the host in float64 NumPy.

``predict_uncertainty`` on a few rows compiled some thirteen kernels on its first call (the
draws' layout, their float32 rounding bound, the streamed sums and the band), 1.2 s with the
compilation cache off and 0.3 s with it warm, for a sum over a thousand draws that NumPy
takes milliseconds to do. A call of at most :data:`HOST_DRAW_ENTRIES` (row, draw, class,
column) entries, every block of which the host can score, is done here instead, with what
each form declares: every draw's table (its family's ``params_from_sample``) side by side as
the classes of one table, along the class axes the form declares (``class_axes``), scored
once by its family's ``log_likelihood`` (``host_maths``; for a form with host products, a
block with missing values) or its host products (``supports_sparse``), or by its table
lookups (``host_counting``). With
:math:`s_{idk} = \log\pi_{dk} + \log p(x_i \mid \theta_{dk})`:

.. math::

    \log \frac1D \sum_d e^{s_{idk}}, \qquad
    p_{idk} = \frac{e^{s_{idk}}}{\sum_{k'} e^{s_{idk'}}}, \qquad
    \bar p_{ik} = \frac1D \sum_d p_{idk}, \qquad
    \frac1D \sum_d H[p_{id\cdot}],

the quantities the kernels stream (``inference._draw_sums``), and the band's quantiles of
:math:`p_{idk}` over the draws. A draw under which a row is impossible (every class
:math:`-\infty`) makes :math:`p` NaN and adds no entropy, as there.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from .families._base import host_f64
from .fast import form_of
from .fast._host import host_scores, scorable
from .fast._kernels import budget_scale
from .model import block_draws

#: rows x draws x classes x columns of a call at most, for it to be computed here (a thousand
#: draws of three classes and four columns: 87 rows): a first call saves the kernels' 0.2-1 s of
#: compiling, and a later one costs at most about twice theirs (``benchmarks/tune.py``)
HOST_DRAW_ENTRIES = 1 << 20


def on_host(blocks, xs, n_draws: int, n_classes: int) -> bool:
    """On the CPU, a small call (:data:`HOST_DRAW_ENTRIES`) whose every block the host scores
    (``_host.scorable``) for many tables at once: by table lookups, or along the class axes
    its form declares (``class_buckets``)."""
    columns = sum(x.shape[1] for x in xs)
    if budget_scale() != 1 or xs[0].shape[0] * n_draws * n_classes * columns > HOST_DRAW_ENTRIES:
        return False
    return all(scorable(b.family, x) and (form_of(b.family).host_counting
                                          or form_of(b.family).class_buckets)
               for b, x in zip(blocks, xs, strict=True))


def joint_scores(blocks, class_log_prior: np.ndarray, flat: dict, xs) -> np.ndarray:
    """``(n, D, K)`` float64 :math:`s_{idk}`, the class-free constants left out as the
    kernels leave them; ``class_log_prior`` ``(D, K)``, ``flat`` the draws ``{site: (D,
    ...)}``. Each block scores every draw at once: the draws' tables side by side as one
    table of ``D x K`` classes."""
    n_draws, n_classes = class_log_prior.shape
    n = xs[0].shape[0]
    scores = np.repeat(np.asarray(class_log_prior, dtype=np.float64)[None], n, axis=0)
    for block, x, own in zip(blocks, xs, block_draws(flat, blocks), strict=True):
        family, form = type(block.family), form_of(block.family)
        posterior = host_f64(family.posterior(block.prior, block.stats))
        sample = {key: np.asarray(value, dtype=np.float64) for key, value in own.items()}
        tables = [family.params_from_sample({k: v[d] for k, v in sample.items()}, posterior)
                  for d in range(n_draws)]
        with np.errstate(divide="ignore"):  # a probability of 0: log 0, the class ruled out
            if form.host_counting:  # lookups (levels, K): the draws' columns side by side
                lookups = [form.host_score_table(t, False) for t in tables]
                wide = (np.concatenate([lookup for lookup, _ in lookups], axis=1),
                        lookups[0][1])
                block_scores = form.host_scores(wide, x)
            else:
                axes = form.class_axes(tables[0])
                wide = type(tables[0])(*(
                    leaf if axis is None else
                    np.concatenate([np.asarray(t[j], dtype=np.float64) for t in tables], axis)
                    for j, (leaf, axis) in enumerate(zip(tables[0], axes, strict=True))))
                block_scores = host_scores(block.family, wide, x, exact=False)
        scores += block_scores.reshape(n, n_draws, n_classes)
    return scores


def predictive(scores: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    r"""From :func:`joint_scores`: the log of the draw-averaged joint ``(n, K)``, the mean of
    p(c | x, theta) ``(n, K)``, the mean of the draws' entropies ``(n,)`` and every draw's
    p(c | x, theta), draws last, ``(n, K, D)``; the kernels' formulas (``inference._draw_sums``):
    each class's log-sum-exp over the draws shifted by its own largest score, so a class far
    below the others keeps its finite score, and :math:`H = \log z - \sum_k e_k t_k / z`."""
    n_draws = scores.shape[1]
    s = np.ascontiguousarray(scores.transpose(0, 2, 1))  # (n, K, D): reductions along memory
    with np.errstate(invalid="ignore", divide="ignore"):
        top = s.max(axis=2, keepdims=True)  # (n, K, 1)
        top = np.where(np.isfinite(top), top, 0.0)
        log_joint = np.log(np.exp(s - top).sum(axis=2)) + top[..., 0] - np.log(n_draws)
        best = s.max(axis=1, keepdims=True)  # (n, 1, D)
        t = s - np.where(np.isfinite(best), best, 0.0)
        e = np.exp(t)
        z = e.sum(axis=1)  # (n, D)
        p = e / z[:, None, :]  # NaN under a draw that rules the row out
        entropy = np.where(z > 0, np.log(z) - np.where(e > 0, e * t, 0.0).sum(axis=1) / z, 0.0)
    return log_joint, p.mean(axis=2), entropy.mean(axis=1), p


def draw_tables(family, sample: dict, posterior):
    """Every draw's plug-in table, a leading draw axis, from ``sample`` ``{key: (D, ...)}``:
    one ``jax.vmap`` of the family's ``params_from_sample``; for a family with a site per
    column (``column_sites``), one float64 NumPy call on all the draws (the vmap of thousands
    of sites compiled a concatenation of as many operands: 8 s at 3,000 columns), its
    parameters that do not vary by draw repeated along the draws."""
    if not family.column_sites:
        return jax.vmap(lambda one: family.params_from_sample(one, posterior))(
            jax.tree_util.tree_map(jnp.asarray, sample))
    posterior = host_f64(posterior)
    host = {key: np.asarray(value, dtype=np.float64) for key, value in sample.items()}
    n_draws = len(next(iter(host.values())))
    first = family.params_from_sample({k: v[0] for k, v in host.items()}, posterior)
    every = family.params_from_sample(host, posterior)
    return jax.tree_util.tree_map(
        lambda one, all_: jnp.asarray(all_ if np.ndim(all_) > np.ndim(one) else
                                      np.broadcast_to(all_, (n_draws,) + np.shape(all_))),
        first, every)
