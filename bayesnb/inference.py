"""Posterior draws: NUTS over the NumPyro model, the exact conjugate sampler, and prediction,
diagnostics and ArviZ export from draws.

Draws are dictionaries ``{site: array of shape (chains, draws, ...)}`` with the sites of the
NumPyro program (``bayesnb.model``, which defines the names): ``class_probs``,
``"{block}.{parameter}"`` and ``"{block}.{column}.{parameter}"``. MCMC and the exact i.i.d.
sampler produce the same format, so they can be laid side by side.

NUTS scores the sufficient statistics (``stats_log_likelihood``), not the rows: the likelihood
of the whole training set is a function of the per-class statistics, so one gradient costs
O(classes x columns) whatever the number of rows (8.5x cheaper than per-row scoring in our
measurements, ``shared/MEASUREMENTS.md``). It runs in float64 (scoped with
``jax.enable_x64``): in float32 NUTS diverges on Dirichlet posteriors with thousands of
parameters.
"""

from __future__ import annotations

import contextlib
import logging
import warnings
from collections import Counter
from functools import cache, partial

import jax
import jax.numpy as jnp
import numpy as np
import numpyro
import numpyro.distributions as dist
from jax.scipy.special import xlogy
from scipy import sparse

from ._draws_host import draw_tables
from ._joined_blocks import joined_blocks, joined_model, split_draws
from .families._base import float64_mode, host_f64
from .fast import float32_safe, form_of
from .fast._compiled import compiled
from .fast._float32 import sum_rounding
from .fast._groups import per_block
from .fast._kernels import full_float32
from .model import (
    ColumnSites,
    batched_blocks,
    block_draws,
    block_sites,
    check_prior_values,
    column_labels,
    joined_for_scoring,
    parameter_sites,
    positional_site,
    sample_block,
    site_name,
    unbatched_draws,
    with_priors,
)

#: rows x draws x (classes + columns scored draw by draw) elements held at once by the
#: bounds over draws (quantiles need every draw of a row)
_DRAWS_BUDGET = 1 << 25
#: ``given_x`` holds some eight float64 copies of a batch's (rows, classes, draws) on the
#: host (log p, p, the sort's order, the cumulative weights): batches this much smaller
_GIVEN_X_SHARE = 8
#: (draw, class) columns scored by one matmul in the predictive over draws
_DRAW_COLUMNS = 1024
#: rows x draws of a chunk x (classes + columns scored draw by draw) elements held at once
_CHUNK_BUDGET = 1 << 23
#: draws whose linear scores (or term extents) the float32 rounding bound holds at once
_BOUND_DRAWS = 64


def stats_model(families, priors, sites, stats, class_alpha, class_prior, class_count,
                unlabeled=None, hyper=None, labels=None, pooling=None, batched=None):
    """The Naive Bayes posterior written on sufficient statistics: same sample sites and the
    same log density (constants included) as ``model.naive_bayes_model``.

    ``unlabeled`` (encoded blocks of rows whose label is missing) adds the semi-supervised
    term sum_i log sum_k pi_k p(x_i | theta_k): the label is marginalised, as in the Stan
    User's Guide's naive Bayes chapter, so unlabeled rows sharpen the posterior too.
    ``batched`` (per block): sampled by the family form's ``sample_params_batched``.
    """
    n_classes = class_count.shape[0]
    if class_prior is None:
        pi = numpyro.sample("class_probs", dist.Dirichlet(class_alpha))
        numpyro.factor("y", jnp.sum(xlogy(class_count, pi)))
    else:
        pi = class_prior
    tables = []
    hyper = hyper or (None,) * len(families)
    labels = labels or (None,) * len(families)
    pooling = pooling or (None,) * len(families)
    batched = batched or (False,) * len(families)
    for family, prior, site, st, h, lab, pool, batch in zip(
            families, priors, sites, stats, hyper, labels, pooling, batched, strict=True):
        with ColumnSites(block_site=site, labels=lab):
            if batch:  # the same density, a few sites (``FastForm.batched_sites``)
                params = form_of(family).sample_params_batched(prior, n_classes, site)
            else:
                params, prior = sample_block(family, prior, h, n_classes, site, pool)
        numpyro.factor(f"{site}.x", family.stats_log_likelihood(params, st))
        if unlabeled is not None:
            tables.append(family.params_from_sample(params, family.posterior(prior, st)))
    if unlabeled is not None:
        scores = jnp.log(pi) + sum(form_of(f).log_likelihood(t, x) for f, t, x in
                                   zip(families, tables, unlabeled, strict=True))
        numpyro.factor("unlabeled", jnp.sum(jax.nn.logsumexp(scores, axis=-1)))


def run_nuts(fitted, class_alpha, class_prior, priors=None, *, num_warmup=1000,
             num_samples=1000, num_chains=4, seed=0, chain_method="auto",
             progress_bar=True, target_accept_prob=0.8):
    """NUTS draws for a fitted model (``bayesnb.fitted.FittedModel``) under the class setup
    of :func:`bayesnb.model.class_setup` and optional replacement ``priors``:
    ``(draws, sample_stats)``. Its unlabeled rows, if any, enter semi-supervised. The chains
    run as ``bayesnb._nuts`` compiles them (``chain_method``: ``_spec.CHAIN_METHODS``), on
    blocks of one family joined column-wise where they can be (``_joined_blocks``)."""
    from . import _nuts

    check_prior_sites(fitted, priors)
    sites = tuple(block_sites(fitted.blocks))
    groups = joined_blocks(fitted.blocks, sites, priors or ())
    with jax.enable_x64(True):
        static, data = nuts_arguments(fitted, groups, class_alpha, class_prior, priors)
        draws, extra = _nuts.sample(
            _stats_model_with_priors, static, data, num_warmup=num_warmup,
            num_samples=num_samples, num_chains=num_chains, seed=seed,
            chain_method=chain_method, progress_bar=progress_bar,
            target_accept_prob=target_accept_prob)
    draws = unbatched_draws(draws, joined_model(fitted.blocks, groups), static["sites"],
                            static["labels"], static["batched"])
    return split_draws(draws, groups, fitted.blocks, sites), arviz_sample_stats(extra)


def nuts_arguments(fitted, groups, class_alpha, class_prior, priors=None) -> tuple[dict, dict]:
    """``(static, data)``: the arguments of :func:`stats_model` (with ``replaced`` priors) for
    the blocks sampled as ``groups`` (``_joined_blocks.joined_blocks``; each block alone:
    the model as declared). The structure is static (one compilation per structure), the
    numbers are arguments. Call with x64 on."""
    joined = joined_model(fitted.blocks, groups)
    f64 = partial(jax.tree_util.tree_map, lambda a: jnp.asarray(a, dtype=jnp.float64))
    unlabeled = fitted.unlabeled
    static = dict(families=tuple(fitted.families[g.blocks[0]] for g in groups),
                  sites=tuple(g.site for g in groups), labels=tuple(column_labels(joined)),
                  batched=batched_blocks(joined, priors))
    data = dict(
        priors=tuple(_priors_f64(b.prior) for b in joined),
        stats=tuple(f64(b.stats) for b in joined),
        class_alpha=None if class_alpha is None else jnp.asarray(class_alpha),
        class_prior=None if class_prior is None else jnp.asarray(class_prior),
        class_count=jnp.asarray(np.array(fitted.class_count, copy=True)),
        unlabeled=None if unlabeled is None else tuple(
            jnp.asarray(np.concatenate([np.asarray(unlabeled[i]) for i in g.blocks], axis=1))
            for g in groups),
        hyper=tuple(b.family.hyperpriors() for b in joined),
        # None or a pooling prior per block: part of the programs' structure (their key)
        pooling=tuple(b.family.pooling_prior() for b in joined),
        replaced=dict(priors or {}),
    )
    return static, data


def arviz_sample_stats(extra: dict) -> dict:
    """NumPyro's NUTS fields (``_nuts.EXTRA_FIELDS``) under the names ArviZ's
    ``from_numpyro`` gives them, which ``az.bfmi``, ``az.plot_energy`` and the summaries read:
    ``lp`` is minus the potential energy (the log density on the unconstrained scale, up to
    a constant) and ``tree_depth`` floor(log2(n_steps)) + 1."""
    n_steps = np.asarray(extra["num_steps"])
    return {"diverging": np.asarray(extra["diverging"]), "n_steps": n_steps,
            "energy": np.asarray(extra["energy"]), "lp": -np.asarray(extra["potential_energy"]),
            "step_size": np.asarray(extra["step_size"]),
            "tree_depth": np.log2(n_steps).astype(int) + 1,
            "acceptance_rate": np.asarray(extra["accept_prob"])}


def _stats_model_with_priors(replaced=None, **kwargs):
    """:func:`stats_model` with the parameter priors ``replaced`` (NumPyro distributions by
    site)."""
    return with_priors(stats_model, replaced)(**kwargs)


def check_prior_sites(fitted, priors) -> None:
    """Refuse ``priors`` that name a site the model does not sample, and a hyperprior whose
    site (``"{block}.{hyperparameter}"``) is a parameter's site too (``Poisson(rate=...)``:
    the Gamma prior's rate and the Poisson rates would both be ``poisson.rate``)."""
    parameters = parameter_sites(fitted.blocks)
    for b, prefix in zip(fitted.blocks, block_sites(fitted.blocks), strict=True):
        for key in b.family.hyperpriors():
            if f"{prefix}.{key}" in parameters:
                raise ValueError(
                    f"{type(b.family).__name__}({key}=<distribution>): a hyperprior on the "
                    f"prior's {key!r} would be the sample site '{prefix}.{key}', which is the "
                    f"name of the {type(b.family).__name__} parameters' site too; give the "
                    f"hyperprior to another hyperparameter, or replace the parameters' prior "
                    f"with priors={{{prefix + '.' + key!r}: <distribution>}}.")
    if not priors:
        return
    check_prior_values(priors)
    sites = set(parameter_sites(fitted.blocks)) | {"class_probs"}
    unknown = sorted(set(priors) - sites)
    if unknown:
        meant = positional_site(unknown[0], block_sites(fitted.blocks),
                                column_labels(fitted.blocks))
        hint = (f"; a Categorical column's sites are named by the column: {meant!r}"
                if meant != unknown[0] and meant in sites else "")
        raise ValueError(f"priors names {unknown[0]!r}, which is not a parameter site of this "
                         f"model (sites: {sorted(sites)}){hint}.")
    for site, (i, key) in parameter_sites(fitted.blocks).items():
        family = fitted.blocks[i].family
        learned = ("a hyperprior" if family.hyperpriors() else
                   "pooling" if family.pooling_prior() is not None else None)
        if site in priors and learned:  # it would be cut off from the data, silently
            raise ValueError(
                f"priors replaces the prior of {site!r}, whose {type(family).__name__} block "
                f"has {learned}: the parameters would no longer be drawn from it, so the "
                f"sites of {learned} would stay at their prior, untouched by the data. State "
                f"that block's prior in one place: the family's settings, or priors= with "
                f"plain hyperparameters.")
        if site in priors:
            support = family.posterior_distributions(fitted.blocks[i].prior)[key].support
            _check_support(site, priors[site].support, support)
    if "class_probs" in priors:
        _check_support("class_probs", priors["class_probs"].support, dist.constraints.simplex)


def _check_support(site: str, given, needed) -> None:
    """Refuse a replacement prior whose support is not within the parameter's (a bounded
    or truncated prior on a rate is; a prior over the reals is not), its bounds as numbers."""
    if str(given) == str(needed):
        return
    have, need = _bounds(given), _bounds(needed)
    if (have is None or need is None or have[0] < need[0] or have[1] > need[1]
            or given.is_discrete != needed.is_discrete):  # integers: no NUTS, no density here
        raise ValueError(f"prior for {site!r}: its support is {_support_text(given)}, not "
                         f"within the parameter's, {_support_text(needed)}.")


def _bounds(support) -> tuple[float, float] | None:
    """The widest ``(lower, upper)`` of an interval-like support (the reals, a half-line or
    an interval; batch bounds: the widest), else None (a simplex, ...)."""
    if support is dist.constraints.real:
        return -np.inf, np.inf
    lower, upper = (getattr(support, b, None) for b in ("lower_bound", "upper_bound"))
    if lower is None and upper is None:
        return None
    return (-np.inf if lower is None else float(np.min(lower)),
            np.inf if upper is None else float(np.max(upper)))


def _support_text(support) -> str:
    bounds = _bounds(support)
    name = type(support).__name__.lstrip("_")
    return name if bounds is None else f"{name} [{bounds[0]:g}, {bounds[1]:g}]"


def _priors_f64(prior):
    # copies: JAX caches the device buffer of a NumPy array it has seen, and a buffer made
    # under x64 must not be reused by the fitted model's float32 computations afterwards
    return type(prior)(*(np.array(a, dtype=np.float64 if np.asarray(a).dtype.kind == "f"
                                  else None, copy=True) for a in prior))


def exact_draws(fitted, class_alpha, class_prior, num_draws=1000, seed=0, num_chains=1, *,
                prior=False):
    """I.i.d. draws from the exact conjugate posterior (or, with ``prior=True``, the prior)
    of a fitted model, in the MCMC draw format ``{site: (chains, draws, ...)}``."""
    rng = np.random.default_rng(seed)
    n = num_draws * num_chains
    k = len(fitted.classes)
    draws = {}
    if class_prior is None:
        gamma = np.asarray(class_alpha) + (0.0 if prior else fitted.class_count)
        g = rng.standard_gamma(np.broadcast_to(gamma, (n, k)))
        draws["class_probs"] = g / g.sum(axis=1, keepdims=True)
    for block, site, labels in zip(fitted.blocks, block_sites(fitted.blocks),
                                   column_labels(fitted.blocks), strict=True):
        family = type(block.family)
        source = _prior_per_class(family, block, k) if prior else family.posterior(
            block.prior, block.stats)
        for key, value in family.sample_posterior(rng, source, n).items():
            draws[site_name(site, key, labels)] = value
    return {s: v.reshape((num_chains, num_draws) + v.shape[1:]) for s, v in draws.items()}


def _prior_per_class(family, block, k):
    """The prior as a posterior of zero data (statistics of no rows), in float64 NumPy (the
    family's maths on the host: nothing compiled)."""
    empty = jax.tree_util.tree_map(lambda a: np.zeros(np.shape(a)), block.stats)
    return family.posterior(host_f64(block.prior), empty)


def _chunk_scores(families, linear, lp, tables, xs):
    """``(n, S, K)`` joint scores log pi_k + log p(x | theta_k) of one chunk of ``S`` draws.

    A block in ``linear`` form holds ``(weights (F, S * K), bias (S, K))``: one matmul scores
    every draw of the chunk (``FastForm.linear_scores``). Any other block holds its tables with
    a leading draw axis and is scored by ``FastForm.draws_log_likelihood``."""
    n = xs[0].shape[0]

    def block(key, table, x):
        family, lin = key
        if lin:
            weights, bias = table
            return (x.astype(weights.dtype) @ weights).reshape(n, *bias.shape) + bias
        return form_of(family).draws_log_likelihood(table, x)

    # blocks of one family and shape as one computation (``fast._groups``)
    return lp[None] + per_block(block, tuple(zip(families, linear, strict=True)), tables,
                                xs).total()


@compiled(static_argnums=(0, 1))
@full_float32
def _draw_sums(families, linear, class_lp, tables, valid, xs):
    r"""Monte Carlo predictive and mutual information, streamed over chunks of draws.

    ``class_lp`` (C, S, K), ``valid`` (C, S) and every leaf of ``tables`` have a leading
    chunk axis (C) and a draw axis (S) (see :func:`_chunk_scores`); padded draws carry
    ``valid`` False. Only (rows, classes) accumulators and one chunk live at once.

    With :math:`s_{dk}` the joint score of draw d and class k, :math:`m_d = \max_k s_{dk}`,
    :math:`e_{dk} = e^{s_{dk} - m_d}` and :math:`z_d = \sum_k e_{dk}`:

    * the log of the draw-averaged joint, :math:`\log \frac1D \sum_d e^{s_{dk}}`, is a
      running log-sum-exp over draws per (row, class), shifted by the running maximum
      :math:`G_k` (rescaled chunk by chunk), so a class far below the others keeps its
      finite score;
    * :math:`\bar p_k = \frac1D \sum_d e_{dk} / z_d`;
    * :math:`\sum_k p_{dk} \log p_{dk} = \sum_k e_{dk}(s_{dk} - m_d) / z_d - \log z_d`.

    Two exponentials per (row, draw, class), against the ``2 x columns`` flops of the
    matmul that makes the score. Returns the log of the draw-averaged joint (n, K), the
    draw-averaged p(c | x, theta), mean p (n, K), and the mean of the draws' entropies,
    mean H[p] (n,).
    """
    def step(carry, chunk):
        lp, tabs, ok = chunk
        return _add_draws(carry, _chunk_scores(families, linear, lp, tabs, xs), ok), None

    carry, _ = jax.lax.scan(step, _no_draws(xs[0].shape[0], class_lp), (class_lp, tables, valid))
    return _draw_averages(carry, valid)


def _no_draws(n: int, class_lp):
    """:func:`_draw_sums`' running sums before the first chunk."""
    k, dtype = class_lp.shape[-1], class_lp.dtype
    return (jnp.full((n, k), -jnp.inf, dtype), jnp.zeros((n, k), dtype),
            jnp.zeros((n, k), dtype), jnp.zeros(n, dtype))


def _add_draws(carry, s, ok):
    """:func:`_draw_sums`' running sums with one chunk's scores ``s`` (n, S, K) added."""
    top, acc, sum_p, sum_plogp = carry
    # running log-sum-exp over draws, per class
    s_ok = jnp.where(ok[None, :, None], s, -jnp.inf)
    new_top = jnp.maximum(top, jnp.max(s_ok, axis=1))  # (n, K)
    shift = jnp.where(jnp.isfinite(new_top), new_top, 0.0)
    rescale = jnp.where(jnp.isfinite(top), jnp.exp(top - shift), 0.0)
    acc = acc * rescale + jnp.sum(jnp.exp(s_ok - shift[:, None, :]), axis=1)
    # p(c | x, theta) per draw, summed over draws
    m = jnp.max(s, axis=-1)  # (n, S)
    t = s - jnp.where(jnp.isfinite(m), m, 0.0)[..., None]
    e = jnp.exp(t)
    z = jnp.sum(e, axis=-1)
    # a draw under which the row is impossible gives p = 0/0 (NaN), as log_softmax would
    inv_z = jnp.where(ok[None, :], 1.0 / z, 0.0)
    sum_p = sum_p + jnp.einsum("nsk,ns->nk", e, inv_z)
    et = jnp.sum(jnp.where(e > 0, e * t, 0.0), axis=-1)
    plogp = jnp.where(ok[None, :] & (z > 0), et * inv_z - jnp.log(z), 0.0)
    return new_top, acc, sum_p, sum_plogp + jnp.sum(plogp, axis=1)


def _draw_averages(carry, valid):
    """:func:`_draw_sums`' results from its running sums."""
    top, acc, sum_p, sum_plogp = carry
    n_draws = jnp.sum(valid).astype(acc.dtype)
    log_joint = jnp.log(acc) + top - jnp.log(n_draws)  # acc = 0 where top = -inf
    return log_joint, sum_p / n_draws, -sum_plogp / n_draws


@compiled(static_argnums=(0, 1, 2))
@full_float32
def _draw_sums_and_probs(families, linear, n_draws, class_lp, tables, valid, xs):
    """:func:`_draw_sums`, and p(c | x, theta) of the first ``n_draws`` draws, ``(n, K,
    n_draws)`` (draws last, so the host's quantiles select along contiguous memory), from
    one pass over the draws: each chunk's scores are computed once for both."""
    def step(carry, chunk):
        lp, tabs, ok = chunk
        s = _chunk_scores(families, linear, lp, tabs, xs)
        return _add_draws(carry, s, ok), jnp.exp(jax.nn.log_softmax(s, axis=-1))

    n, k = xs[0].shape[0], class_lp.shape[-1]
    carry, p = jax.lax.scan(step, _no_draws(n, class_lp), (class_lp, tables, valid))
    p = jnp.transpose(p, (1, 3, 0, 2)).reshape(n, k, -1)[..., :n_draws]  # from (C, n, S, K)
    return (*_draw_averages(carry, valid), p)


@compiled(static_argnums=(0, 1, 2))
@full_float32
def _draw_log_conditionals(families, linear, n_draws, class_lp, tables, xs):
    """Of the first ``n_draws`` draws (chunks as in :func:`_draw_sums`): log p(c | x, theta),
    ``(n, K, n_draws)``, and log p(x | theta), ``(n, n_draws)``, less the class-free
    constants the scores leave out (the same for every draw)."""

    def chunk(args):
        lp, tabs = args
        s = _chunk_scores(families, linear, lp, tabs, xs)  # (n, S, K)
        log_x = jax.nn.logsumexp(s, axis=-1)
        return s - log_x[..., None], log_x

    log_p, log_x = jax.lax.map(chunk, (class_lp, tables))  # (C, n, S, K), (C, n, S)
    n, k = xs[0].shape[0], class_lp.shape[-1]
    log_p = jnp.transpose(log_p, (1, 3, 0, 2)).reshape(n, k, -1)[..., :n_draws]
    return log_p, jnp.transpose(log_x, (1, 0, 2)).reshape(n, -1)[:, :n_draws]


def _chunked_tables(families, blocks, flat, class_lp, n_draws, chunk, x_complete):
    """The draws laid out for :func:`_draw_sums`: class log priors, per-block tables and the
    validity mask, each ``(chunks, draws per chunk, ...)`` with the last chunk padded by
    copies of draw 0 (marked invalid); and per block whether it is scored in linear form
    (``FastForm.linear_scores``: where the block has no missing value and the form is finite
    for every draw)."""
    n_chunks = -(-n_draws // chunk)
    tables, linear = [], []
    for i, (family, block, own) in enumerate(zip(families, blocks, block_draws(flat, blocks),
                                                 strict=True)):
        # only Categorical reads the posterior (the predictive of a value unseen in training)
        table = draw_tables(family, own, family.posterior(block.prior, block.stats))
        if x_complete[i] and form_of(family).linear_in_x:
            weights, bias, finite = _linear_layout(family, n_chunks, chunk, table)
            if bool(finite):
                tables.append((weights, bias))
                linear.append(True)
                continue
        tables.append(_lay_out(n_chunks, chunk, table))
        linear.append(False)
    valid = (np.arange(n_chunks * chunk) < n_draws).reshape(n_chunks, chunk)
    return (_lay_out(n_chunks, chunk, jnp.asarray(class_lp)), tuple(tables), jnp.asarray(valid),
            tuple(linear))


@compiled(static_argnums=(0, 1))
@full_float32
def _lay_out(n_chunks, chunk, tree):
    """Every leaf ``(D, ...)`` as ``(n_chunks, chunk, ...)``, padded with copies of draw 0."""

    def one(a):
        index = np.concatenate([np.arange(a.shape[0]),
                                np.zeros(n_chunks * chunk - a.shape[0], dtype=int)])
        return a[index].reshape((n_chunks, chunk) + a.shape[1:])

    return jax.tree_util.tree_map(one, tree)


def weight_centre(weights):
    """Per column, the middle of the finite weights over every draw and class where they have
    one sign (else 0): subtracted in float32, so that a row's terms have both signs and the
    product's partial sums stay near its root sum of squares. Raw log probabilities (a
    Multinomial's) are all negative: rows of 2,000 tokens of two close classes summed to
    thousands and were 5.4e-4 off."""
    finite = jnp.isfinite(weights)
    axes = tuple(range(weights.ndim - 1))
    lo = jnp.min(jnp.where(finite, weights, jnp.inf), axis=axes)
    hi = jnp.max(jnp.where(finite, weights, -jnp.inf), axis=axes)
    return jnp.where(lo * hi > 0, (lo + hi) / 2, 0.0)


@compiled(static_argnums=(0, 1, 2))
@full_float32
def _linear_layout(family, n_chunks, chunk, table):
    """A block's ``linear_scores`` per draw as one chunk's matmul operand each: weights
    ``(n_chunks, F, chunk * K)`` (draw-major columns), bias ``(n_chunks, chunk, K)``, and
    whether every entry is finite. In float32 the weights are taken relative to
    :func:`weight_centre` (a shift of every draw's and class's score by the same amount per
    row, so the probabilities and their bands are unchanged; the joint density is computed in
    float64 and keeps them whole)."""
    weights, bias = jax.vmap(form_of(family).linear_scores)(table)
    if not float64_mode():
        weights = weights - weight_centre(weights)
    weights, bias = _lay_out(n_chunks, chunk, (weights, bias))
    c, s, k, f = weights.shape
    finite = jnp.all(jnp.isfinite(weights)) & jnp.all(jnp.isfinite(bias))
    return jnp.moveaxis(weights, 3, 1).reshape(c, f, s * k), bias, finite


def predict_from_draws(blocks, class_prior, draws, xs, *, interval=0.9, prepared=None,
                       joint_only=False, given_x=False):
    """Posterior predictive classification from draws (see ``NaiveBayes.
    predict_uncertainty``) of the encoded blocks ``xs`` of some rows; ``class_prior`` the
    fixed class probabilities, or None when they are drawn (``class_probs``).

    ``proba`` is p(c | x, data) = E[p(x, c | theta)] / E[p(x | theta)], the Monte Carlo form of
    the exact predictive (it converges to ``method="bayes"`` on a conjugate model);
    ``lower``/``upper`` bound p(c | x, theta) over draws (the central ``interval``; left out
    when ``interval`` is None).

    The draws are streamed in chunks of about :data:`_DRAW_COLUMNS` (draw, class) columns
    (times ``_kernels.budget_scale()`` on an accelerator): per
    chunk one matmul of the rows against the chunk's tables side by side (families with
    ``linear_scores``), then running sums over draws (:func:`_draw_sums`), so memory is
    O(rows x classes) plus one chunk. The bounds need every draw of a row at once
    (quantiles): the same pass then keeps each draw's p(c | x, theta)
    (:func:`_draw_sums_and_probs`), in batches of rows holding ``rows x draws x (classes +
    columns scored draw by draw)`` elements up to :data:`_DRAWS_BUDGET`, the quantiles
    selected by NumPy.

    ``prepared``: a dict that keeps the draws' tables laid out for the products (per dtype
    mode and pattern of missing values) from one call to the next, as ``DrawsScorer`` does
    for its fixed draws; None builds them for this call. ``xs`` may be device-resident
    ``jax.Array`` blocks (:func:`encode_dense` with ``on_device``): they are not copied.
    ``joint_only``: only ``log_joint`` (a scorer normalises it itself), without the host's
    float64 probabilities and entropies (5-7 ms of a 27 ms call on an H200).
    ``given_x``: the band and the split of the entropy under the draws reweighted by
    p(x | theta) (:func:`_given_x_summary`), with ``ess``; a second pass over the draws in
    batches of rows, as the band's.

    A small call without ``prepared`` tables, of blocks the host scores, is computed on the
    host in float64 instead (``_draws_host``: the same quantities, nothing compiled).
    """
    from . import _draws_host
    from .fast._kernels import batch_bucket, budget_scale, even_rows

    families = tuple(type(b.family) for b in blocks)
    n_classes, n_draws = _draw_shape(class_prior, draws)
    if prepared is None and _draws_host.on_host(blocks, xs, n_draws, n_classes):
        scores = _draws_host.joint_scores(blocks, _class_log_prior(class_prior, draws, n_draws),
                                          _flat(draws), xs)  # (n, D, K)
        log_joint, mean, aleatoric, probs = _draws_host.predictive(scores)
        if given_x and not joint_only:
            from scipy.special import logsumexp

            with np.errstate(invalid="ignore"):
                log_x = logsumexp(scores, axis=2)
                log_p = np.transpose(scores - log_x[..., None], (0, 2, 1))
            return _given_x_summary(log_joint, interval, [(log_p, log_x)])
        return _summary(log_joint, mean, aleatoric, joint_only, interval,
                        lambda quantiles: np.quantile(probs, quantiles, axis=-1))
    # on an accelerator, products as wide as the budget allows: 20 chunks of 51 draws made
    # as many passes of small kernels (1,000 draws, 20 classes: one chunk there)
    per_chunk = max(1, min(n_draws, _DRAW_COLUMNS * budget_scale() // n_classes))
    chunk = -(-n_draws // -(-n_draws // per_chunk))  # the draws shared evenly by the chunks
    complete = complete_blocks(xs)

    def build():
        return _chunked_tables(families, blocks, _flat(draws),
                               _class_log_prior(class_prior, draws, n_draws), n_draws, chunk,
                               complete)

    lp, tables, valid, linear = _cached(prepared, ("tables", float64_mode(), complete), build)
    n = xs[0].shape[0]
    # rows per batch: one chunk's (rows, draws, classes) scores, plus the per-draw
    # intermediates of the blocks scored draw by draw and the row features of those whose
    # draws share them (``FastForm.shared_draw_features``), within the budget
    forms = [form_of(f) for f in families]
    width = n_classes + sum(x.shape[1] for x, lin, form in zip(xs, linear, forms, strict=True)
                            if not lin and not form.shared_draw_features)
    shared = sum(form.shared_draw_features * x.shape[1]
                 for x, lin, form in zip(xs, linear, forms, strict=True) if not lin)

    def batches(rows):
        """``(m, padded blocks)`` of successive batches of up to ``rows`` rows."""
        for start in range(0, n, rows):
            part = [x[start:start + rows] for x in xs]
            m = part[0].shape[0]
            yield m, tuple(pad_any(c, batch_bucket(m, rows)) for c in part)

    def batch_rows(budget, per_row):
        return even_rows(n, max(8, budget // max(1, per_row)))

    rows = batch_rows(_CHUNK_BUDGET * budget_scale(), chunk * width + shared)
    # every draw's p(c | x, theta) (the band's quantiles, given_x's reweighting) is held a
    # batch of rows at a time
    draw_rows = batch_rows(_DRAWS_BUDGET, n_draws * width + shared)
    if not joint_only and (interval is not None or given_x):
        # the averages and the band's probabilities from one pass over the draws (given_x
        # takes its averages from it too: the same ``proba``, bit for bit)
        q = [(1.0 - interval) / 2, (1.0 + interval) / 2] if interval is not None else None
        out, band = [], []
        for m, padded in batches(min(rows, draw_rows)):
            *sums, probs = _draw_sums_and_probs(families, linear, n_draws, lp, tables, valid,
                                                padded)
            out.append(tuple(np.asarray(r, dtype=np.float64)[:m] for r in sums))
            if q is not None and not given_x:  # given_x's band is weighted (below)
                # NumPy's selection (introselect): XLA:CPU sorts every row, about 10x slower
                band.append(np.quantile(np.asarray(probs)[:m], q, axis=-1).astype(np.float64))
        log_joint, mean, aleatoric = (np.concatenate(p) for p in zip(*out, strict=True))
        if not given_x:
            band = np.concatenate(band, axis=1)
            return _summary(log_joint, mean, aleatoric, False, interval, lambda _: band)
        per_draw = (jax.tree_util.tree_map(lambda a, m=m: np.asarray(a)[:m],
                                           _draw_log_conditionals(families, linear, n_draws,
                                                                  lp, tables, padded))
                    for m, padded in batches(batch_rows(_DRAWS_BUDGET // _GIVEN_X_SHARE,
                                                        n_draws * width + shared)))
        return _given_x_summary(log_joint, interval, per_draw)
    out = []
    for m, padded in batches(rows):
        res = _draw_sums(families, linear, lp, tables, valid, padded)
        out.append(tuple(np.asarray(r, dtype=np.float64)[:m] for r in res))
    log_joint, mean, aleatoric = (np.concatenate(parts) for parts in zip(*out, strict=True))
    return _summary(log_joint, mean, aleatoric, joint_only, interval, None)


def _class_log_prior(class_prior, draws: dict, n_draws: int) -> np.ndarray:
    """``(D, K)`` log class probabilities of every draw (the fixed ``class_prior``'s, or the
    drawn ``class_probs``)."""
    if class_prior is None:
        return np.log(_flat(draws)["class_probs"])
    return np.broadcast_to(np.log(class_prior), (n_draws, len(class_prior)))


def _summary(log_joint, mean, aleatoric, joint_only: bool, interval, quantiles) -> dict:
    """:func:`predict_from_draws`' result from the draw-averaged joint and p(c | x, theta),
    the mean entropy and ``quantiles(q)`` (``(2, n, K)``: p(c | x, theta)'s ``q`` quantiles
    over the draws)."""
    if joint_only:
        return {"log_joint": log_joint}
    from scipy.special import entr, logsumexp

    proba = np.exp(log_joint - logsumexp(log_joint, axis=1, keepdims=True))
    # in float64, rescaled to sum to 1 (float32's sum over draws drifts), so H <= log K
    total = entr(mean / mean.sum(axis=1, keepdims=True)).sum(axis=1)
    # mean H[p] <= H[mean p] (Jensen); a rounding past it is the epistemic part's zero
    aleatoric = np.minimum(aleatoric, total)
    result = {"log_joint": log_joint, "proba": proba}
    if interval is not None:
        result["lower"], result["upper"] = quantiles([(1.0 - interval) / 2,
                                                      (1.0 + interval) / 2])
    result.update(entropy=total, aleatoric=aleatoric, mutual_info=total - aleatoric)
    return result


def _given_x_summary(log_joint, interval, per_draw) -> dict:
    r""":func:`predict_from_draws`' result with ``given_x``: the draws :math:`\theta_d` of
    p(theta | data) reweighted by :math:`w_d \propto p(x \mid \theta_d)`, a self-normalised
    importance sample of p(theta | data, x), the posterior the predictive
    :math:`p(c \mid x, \text{data}) = \sum_d w_d\, p(c \mid x, \theta_d)` averages over.
    So ``entropy`` is H[``proba``], ``aleatoric`` :math:`\sum_d w_d H[p(c \mid x,
    \theta_d)]`, ``mutual_info`` their difference (>= 0 by Jensen), the band the weighted
    quantiles (NumPy's ``inverted_cdf``: the inverse of the weighted empirical CDF) and
    ``ess`` Kish's :math:`1 / \sum_d w_d^2`. ``per_draw`` yields ``(log p(c | x, theta)
    (m, K, D), log p(x | theta) (m, D))`` for successive batches of rows."""
    from scipy.special import entr, logsumexp

    proba = np.exp(log_joint - logsumexp(log_joint, axis=1, keepdims=True))
    total = entr(proba).sum(axis=1)
    lower, upper, aleatoric, ess = [], [], [], []
    for log_p, log_x in per_draw:
        log_p, log_x = np.asarray(log_p, np.float64), np.asarray(log_x, np.float64)
        with np.errstate(invalid="ignore"):  # a row no draw allows: NaN, as its proba
            w = np.exp(log_x - logsumexp(log_x, axis=1, keepdims=True))  # (m, D)
        # a draw that rules the row out has weight 0 and p = 0/0: it takes no part
        p = np.where(w[:, None, :] > 0, np.exp(log_p), 0.0)
        aleatoric.append(np.sum(w * entr(p).sum(axis=1), axis=1))
        ess.append(1.0 / np.sum(w * w, axis=1))
        if interval is not None:
            band = np.quantile(p, [(1.0 - interval) / 2, (1.0 + interval) / 2], axis=-1,
                               weights=np.broadcast_to(w[:, None, :], p.shape),
                               method="inverted_cdf")
            lower.append(band[0])
            upper.append(band[1])
    aleatoric = np.minimum(np.concatenate(aleatoric), total)  # Jensen; a rounding past it
    result = {"log_joint": log_joint, "proba": proba}
    if interval is not None:
        result["lower"], result["upper"] = np.concatenate(lower), np.concatenate(upper)
    result.update(entropy=total, aleatoric=aleatoric, mutual_info=total - aleatoric,
                  ess=np.concatenate(ess))
    return result


def predict_rows(model, class_prior, draws, X, unseen: str, *, interval=0.9, prepared=None,
                 joint_only=False, given_x=False):
    """:func:`predict_from_draws` of the rows ``X`` (encoded here), in float64 where float32
    cannot hold the scores.

    In float32 the draws' scores are products of counts and log parameters: Poisson counts
    near 1e6 moved probabilities by 0.4 and Multinomial rows of 10,000 tokens by 2.4e-4 against
    float64 (the same draws). Where :func:`draws_rounding` bounds the rounding above
    ``SCORE_ROUNDING_LIMIT`` (the closed-form kernels' limit), the rows are encoded and scored
    again in float64 (``jax.enable_x64``, scoped, as NUTS runs), so the answer is float64's.
    A small call without ``prepared`` tables is computed on the host in float64
    (``_draws_host``), which needs no bound.

    A device-resident ``jax.Array`` ``X`` stays on its device (:func:`encode_dense`).
    ``prepared``: a dict keeping what depends on the draws alone from call to call (see
    :func:`predict_from_draws`), for draws that do not change (``DrawsScorer``)."""
    from . import _draws_host
    from .families._base import float64_mode
    from .fast._kernels import SCORE_ROUNDING_LIMIT

    X = _absent_added(model, X)  # warned once here, though a float64 retry encodes X again
    # blocks of one family as one wider block (``_joined_blocks``): one product for them all
    blocks, joined, xs = joined_for_scoring(model.blocks, draws,
                                            encode_dense(model, X, unseen, on_device=True))
    n_classes, n_draws = _draw_shape(class_prior, joined)
    host = prepared is None and _draws_host.on_host(blocks, xs, n_draws, n_classes)
    if not host and not float64_mode() and (
            not float32_safe(model.families)  # no bound to trust: float64 (``bayesnb.fast``)
            # the weighted quantiles step from draw to draw: a weight's float32 rounding moved
            # a bound by a whole step (1,500 Bernoulli columns: 0.017), and ``ess`` by 2.4e-4
            or given_x
            or draws_rounding(blocks, class_prior, joined, xs, prepared)
            > SCORE_ROUNDING_LIMIT):
        with jax.enable_x64(True):
            with warnings.catch_warnings():  # the first encoding warned (unseen levels) once
                warnings.simplefilter("ignore")
                xs = encode_dense(model, X, unseen, on_device=True)
            blocks, joined, xs = joined_for_scoring(model.blocks, draws, xs)
            return predict_from_draws(blocks, class_prior, joined, xs, interval=interval,
                                      prepared=prepared, joint_only=joint_only,
                                      given_x=given_x)
    return predict_from_draws(blocks, class_prior, joined, xs, interval=interval,
                              prepared=prepared, joint_only=joint_only, given_x=given_x)


def _absent_added(model, X):
    """A DataFrame ``X`` with the fitted columns it lacks added as missing, warned about once
    (as ``scoring.absent_added``, which this module cannot import: scoring imports it);
    encoding the result again adds nothing and warns no more."""
    import pandas as pd

    from ._blocks import with_absent_columns
    from ._data import as_table

    if not isinstance(X, pd.DataFrame):
        return X
    return with_absent_columns(model, as_table(X)).frame


def encode_dense(model, X, unseen: str, on_device: bool = False) -> list:
    """Every block of ``X`` encoded for prediction from draws, which reads dense input only.

    With ``on_device``, the blocks of a device-resident ``jax.Array`` that the kernels read
    raw (``_blocks.kernel_reads_raw``: Bernoulli, Multinomial, Poisson, Gaussian) stay on
    the device, in the kernel dtype, checked there by the kernels' own value checks
    (``_kernels.invalid_values``); on an accelerator such blocks of host input are copied
    there first. A block that fails is encoded on the host, whose error names the column and
    row."""
    from ._blocks import encode_blocks, kernel_reads_raw, raw_blocks
    from .families._levels import LEARNED_CONCENTRATION
    from .fast._kernels import budget_scale

    learned = [i for i, b in enumerate(model.blocks) if b.family.learns_levels() and (
        b.family.hyperpriors() or b.family.pooling_prior() is not None)]
    if learned and unseen == "smooth":  # the draws hold no concentration for a new level
        raws, _ = raw_blocks(model, X)
        for i in learned:
            model.blocks[i].family.encode(np.asarray(raws[i]), model.blocks[i].schema,
                                          unseen=LEARNED_CONCENTRATION)
    accelerator = budget_scale() > 1
    if on_device and (isinstance(X, jax.Array) or accelerator):
        raws, _ = raw_blocks(model, X, on_device=True)
        xs = []
        for b, raw in zip(model.blocks, raws, strict=True):
            if (accelerator and isinstance(raw, np.ndarray) and raw.ndim == 2
                    and raw.dtype.kind in "biuf" and kernel_reads_raw(b.family)):
                # host numbers on an accelerator: copied there once and checked there, not
                # validated, converted and padded on the host first (three host passes)
                raw = jax.device_put(raw)
            xs.append(_device_block(b, raw, unseen) if isinstance(raw, jax.Array)
                      else b.family.encode(raw, b.schema, unseen=unseen))
    else:
        xs, _ = encode_blocks(model, X, unseen=unseen)
    if any(sparse.issparse(x) for x in xs):
        raise TypeError("predictions over posterior draws (method='mcmc', "
                        "predict_uncertainty) read dense input, and Multinomial, Bernoulli "
                        "and Poisson columns keep sparse input sparse: densify X "
                        "(X.toarray()), or use method='bayes' (the exact predictive) with "
                        "sparse input.")
    return xs


def _device_block(block, raw, unseen: str):
    """A device-resident block in the kernel dtype, its values checked on the device."""
    from .fast._kernels import checked_on_device

    x, invalid = checked_on_device(type(block.family), raw, np.dtype(jnp.result_type(float)))
    if bool(invalid):
        block.family.encode(np.asarray(raw), block.schema, unseen=unseen)  # names the column
        raise ValueError("invalid value in the input (not located).")
    return x


def complete_blocks(xs) -> tuple:
    """Per block, whether it has no missing value (NaN): found on the device for a
    device-resident block (one flag read back), by NumPy otherwise."""
    def complete(x):
        if isinstance(x, jax.Array):
            return x.dtype.kind != "f" or not bool(_any_nan(x))
        return np.asarray(x).dtype.kind != "f" or not np.isnan(x).any()

    return tuple(complete(x) for x in xs)


@compiled
@full_float32
def _any_nan(x):
    return jnp.any(jnp.isnan(x))


def pad_any(x, rows: int):
    """``_kernels.pad_rows`` for NumPy and device-resident blocks alike (a ``jax.Array`` is
    padded on its device)."""
    from .fast._kernels import pad_rows

    if isinstance(x, jax.Array):
        return x if x.shape[0] == rows else jnp.pad(x, ((0, rows - x.shape[0]), (0, 0)))
    return pad_rows(x, rows)


def _cached(cache: dict | None, key, build):
    """``build()``, kept in ``cache`` under ``key`` (None: built every time)."""
    if cache is None:
        return build()
    if key not in cache:
        cache[key] = build()
    return cache[key]


def _flat(draws: dict) -> dict:
    """Every site's draws with the chains and draws axes as one: ``(chains * draws, ...)``."""
    return {k: np.asarray(v).reshape((-1,) + np.shape(v)[2:]) for k, v in draws.items()}


def _draw_shape(class_prior, draws: dict) -> tuple[int, int]:
    """``(classes, draws)``: the number of classes and of draws over all chains."""
    shape = np.shape(next(iter(draws.values())))
    n_draws = int(shape[0] * shape[1])
    n_classes = (np.shape(draws["class_probs"])[-1] if class_prior is None
                 else len(class_prior))
    return n_classes, n_draws


def draws_rounding(blocks, class_prior, draws, xs, prepared=None) -> float:
    r"""A bound on the float32 rounding of the draws' log scores, the largest over rows:
    twice float32's epsilon times :math:`\sqrt{\sum_j (|x_j| \max_{d,k} |w_{dkj}|)^2}` plus
    its epsilon times the largest :math:`|b_{dk}|` and class log prior, for every block with
    ``linear_scores`` (weights ``w``, bias ``b``; the roundings of the products and of the
    float32 weights themselves are independent, so their typical size is the root sum of
    squares, as in ``MultinomialFast.score_rounding``), plus the products' accumulation
    (``_base.sum_rounding`` of the terms' root sum of squares relative to their centre,
    :func:`weight_centre`, which the scores subtract so that the terms have both signs);
    Multinomial rows of 2,000 tokens of two close classes, whose weights are log
    probabilities, were 5.4e-4 off before;
    for a block with ``term_extent`` (the
    Gaussian: scale ``s``, reach ``r``), twice epsilon times
    :math:`\sqrt{\sum_j (\max s_j (|x_j| + \max r_j)^2)^2}` plus the accumulation's
    ``sum_rounding`` of the terms' sum (one sign: 5,000 standardised columns were 4.3e-4 off
    in their bands without it): the Gaussian draws scored at an
    offset of 1e4 were 1.3e-4 off in probabilities; infinite for a block with neither
    (its draws are then scored in float64). A ``linear_scores`` block with a missing value
    is scored draw by draw, not centred: its accumulation takes the terms' sum
    :math:`\sum_j |x_j| \max|w_j|` instead.

    The extremes over draws and classes depend on the draws alone: ``prepared`` (a dict, see
    :func:`predict_from_draws`) keeps them from call to call; each call computes the rows'
    terms only."""
    eps = float(np.finfo(np.float32).eps)

    def class_bound():
        lp = (np.log(_flat(draws)["class_probs"]) if class_prior is None
              else np.log(class_prior))
        with np.errstate(divide="ignore"):
            return eps * float(np.max(np.abs(lp[np.isfinite(lp)]), initial=0.0))

    bound = _cached(prepared, ("class bound",), class_bound)
    per_row = np.zeros(xs[0].shape[0])
    complete = complete_blocks(xs)
    own_draws = cache(lambda: block_draws(_flat(draws), blocks))
    for i, block in enumerate(blocks):
        family = type(block.family)
        linear = form_of(family).linear_in_x
        if not linear and not form_of(family).quadratic_in_x:
            # no bound (Categorical's uncentred lookups: 3,000 columns moved bands by 1e-4)
            return np.inf

        def extents(i=i, block=block, family=family, linear=linear):
            sample = {k: jnp.asarray(v) for k, v in own_draws()[i].items()}
            # in float32 where that is the mode: the bound's own rounding is a 1e-7 part of it
            post = jax.tree_util.tree_map(jnp.asarray,
                                          family.posterior(block.prior, block.stats))
            return _draw_extents(family, linear, post, sample)

        extent, per_column = _cached(prepared, ("extents", float64_mode(), i), extents)
        # one call for the rows' terms: a call and a read per slice of draws, and the rows'
        # terms in float64 NumPy, were 0.22 s of a 10,000-row, 1,000-draw prediction
        rows = np.asarray(_rows_bound(linear, per_column, jnp.asarray(xs[i])),
                          dtype=np.float64)
        if linear:
            bound += eps * float(extent)
            # the products', the weights' (before their exact centring) and the accumulation's
            # roundings: centred (``weight_centre``), the partial sums stay near their RMS; a
            # block with a missing value is scored draw by draw, uncentred: they reach the
            # terms' sum (2,000 tokens, one count missing: bands 2e-4 off without it)
            size = rows[1] if complete[i] else rows[2]
            per_row += 2 * eps * rows[0] + sum_rounding(size, xs[i].shape[1])
        else:
            # and the accumulation: the terms share a sign, so the partial sums reach their
            # sum (5,000 standardised Gaussian columns: bands 4.3e-4 off without it)
            per_row += 2 * eps * rows[0] + sum_rounding(rows[1], xs[i].shape[1])
    return bound + float(np.max(per_row, initial=0.0))


@compiled(static_argnums=(0, 1))
@full_float32
def _draw_extents(family, linear, posterior, sample):
    r"""Over the draws (``sample``: leaves ``(D, ...)``, scanned in slices of
    :data:`_BOUND_DRAWS`, so memory holds one slice's parameters at a time; the last slice
    padded with copies of draw 0, which move no extreme) and the classes, the extremes
    :func:`draws_rounding` needs: ``(extent, per_column)``. ``linear`` blocks: the largest
    finite ``|bias|`` and, per column, ``max|w|`` and ``c``, the half-range of the finite
    weights where they share a sign, else ``max|w|``. Others (``term_extent``: scale ``s``,
    reach ``r``): 0 and, per column, ``max s`` and ``max r``."""
    def extent(s):
        params = family.params_from_sample(s, posterior)
        form = form_of(family)
        return form.linear_scores(params) if linear else form.term_extent(params)

    finite_abs = lambda v: jnp.where(jnp.isfinite(v), jnp.abs(v), 0.0)  # noqa: E731

    def one(part):
        a, b = jax.vmap(extent)(part)
        if linear:
            finite = jnp.isfinite(a)
            return (jnp.max(finite_abs(a), axis=(0, 1)), jnp.max(finite_abs(b)),
                    jnp.min(jnp.where(finite, a, jnp.inf), axis=(0, 1)),
                    jnp.max(jnp.where(finite, a, -jnp.inf), axis=(0, 1)))
        return jnp.max(finite_abs(a), axis=(0, 1)), jnp.max(finite_abs(b), axis=(0, 1))

    n_draws = next(iter(sample.values())).shape[0]
    n_slices = -(-n_draws // _BOUND_DRAWS)

    def sliced(a):
        index = np.concatenate([np.arange(n_draws),
                                np.zeros(n_slices * _BOUND_DRAWS - n_draws, dtype=int)])
        return a[index].reshape((n_slices, _BOUND_DRAWS) + a.shape[1:])

    per_slice = jax.lax.map(one, jax.tree_util.tree_map(sliced, sample))
    if linear:
        wmax, bmax = jnp.max(per_slice[0], axis=0), jnp.max(per_slice[1])
        lo, hi = jnp.min(per_slice[2], axis=0), jnp.max(per_slice[3], axis=0)
        centred = jnp.where(lo * hi > 0, (hi - lo) / 2, wmax)
        return bmax, jnp.stack([wmax, centred])
    return jnp.zeros((), per_slice[0].dtype), jnp.stack([jnp.max(per_slice[0], axis=0),
                                                         jnp.max(per_slice[1], axis=0)])


@compiled(static_argnums=(0,))
@full_float32
def _rows_bound(linear, per_column, x):
    r"""The rows' terms of :func:`draws_rounding` from :func:`_draw_extents`' per-column
    extremes (missing values as 0): ``linear`` blocks :math:`\sqrt{\sum_j x_j^2 \max|w_j|^2}`,
    :math:`\sqrt{\sum_j x_j^2 c_j^2}` and :math:`\sum_j |x_j| \max|w_j|`; others, with
    :math:`t_j = \max s_j (|x_j| + \max r_j)^2`, :math:`\sqrt{\sum_j t_j^2}` and
    :math:`\sum_j t_j`."""
    x0 = jnp.abs(jnp.nan_to_num(x.astype(per_column.dtype), nan=0.0))
    if linear:
        squares = x0 * x0
        return jnp.concatenate([jnp.sqrt(squares @ (per_column * per_column).T).T,
                                (x0 @ per_column[0])[None]])
    term = per_column[0] * (x0 + per_column[1]) ** 2
    return jnp.stack([jnp.sqrt(jnp.sum(term * term, axis=1)), jnp.sum(term, axis=1)])


# ---------------------------------------------------------------------- ArviZ and diagnostics
@contextlib.contextmanager
def _quiet_arviz():
    """ArviZ logs "shape validation failed" for a single chain (r-hat is then undefined,
    which the summary shows as NaN); keep that out of the user's console."""
    # arviz 0.x logs through its own Logger("arviz") instance, outside logging's tree
    loggers = {id(lg): lg for lg in (getattr(_arviz(), "_log", None), logging.getLogger("arviz"))
               if lg is not None}.values()
    levels = [(lg, lg.level) for lg in loggers]
    for lg, _ in levels:
        lg.setLevel(logging.ERROR)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            yield
    finally:
        for lg, level in levels:
            lg.setLevel(level)


def _arviz():
    """ArviZ, imported on first use (it costs 2 s); its refactoring notice is not ours."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        import arviz

    return arviz


def dims_and_coords(fitted):
    """Named dims for every site (names: ``bayesnb.model``): ``class`` (the class labels), per
    block ``"{block}_feature"`` (its column names), per Categorical column ``"{column}_level"``
    (its levels), so ArviZ labels every entry and ``az.plot_trace(..., legend=True)`` tells the
    levels apart."""
    coords = {"class": list(fitted.classes)}
    dims = {"class_probs": ["class"]}
    for block, (site, labels) in zip(fitted.blocks, zip(block_sites(fitted.blocks),
                                                        column_labels(fitted.blocks),
                                                        strict=True), strict=True):
        for key, axes in block.family.param_dims(block.prior, block.schema).items():
            dims[site_name(site, key, labels)] = [_dim(axis, key, site, labels, block, coords)
                                                  for axis in axes]
        for key, hyperprior in block.family.hyperpriors().items():  # one per column, or one
            if tuple(hyperprior.batch_shape) == (len(block.schema.columns),):
                dims[f"{site}.{key}"] = [_dim("feature", key, site, labels, block, coords)]
    return dims, coords


def _dim(axis: str, key: str, site: str, labels, block, coords: dict) -> str:
    """The ArviZ dim of one of a parameter's declared axes (``Family.param_dims``), its
    coords added: ``"class"``, a block's ``"{site}_feature"`` or a column's
    ``"{label}_level"`` (key ``"{j}.{name}"``)."""
    if axis == "class":
        return "class"
    if axis == "feature":
        coords[f"{site}_feature"] = list(labels)
        return f"{site}_feature"
    j = int(key.partition(".")[0])
    coords[f"{labels[j]}_level"] = level_coords(block.schema.levels[j])
    return f"{labels[j]}_level"


def level_coords(levels) -> list:
    """A Categorical column's levels as ArviZ coordinates: the levels themselves, unless two
    print alike (the int 1 and the string "1"), which ArviZ and xarray would hold as one
    string twice (``az.summary`` then fails). Such levels get their type appended,
    ``"1 (int)"``, ``"1 (str)"``, and if that still coincides their position, ``"1 (#0)"``;
    the other levels are their strings (as columns that print alike are named by position,
    :func:`bayesnb.model.column_labels`)."""
    text = [str(v) for v in levels]
    if len(set(text)) == len(text):
        return list(levels)
    count = Counter(text)
    typed = [f"{t} ({type(v).__name__})" if count[t] > 1 else t
             for t, v in zip(text, levels, strict=True)]
    if len(set(typed)) == len(typed):
        return typed
    return [f"{t} (#{i})" if count[t] > 1 else t for i, t in enumerate(text)]


def to_inference_data(fitted, draws, sample_stats=None, prior_draws=None, *, backend=None,
                      predictive=None, log_likelihood=None):
    """ArviZ data for ``draws``: ``InferenceData`` with arviz 0.x (Python 3.11), an
    ``xarray.DataTree`` with arviz 1.x (``arviz_base``); groups posterior, sample_stats, prior
    and observed_data (the class counts), with named dims and coords.

    ``backend`` is the module whose ``from_dict`` builds it: by default ``arviz``; pass
    ``arviz_base`` to get a DataTree on Python 3.11 too. ``log_likelihood``: ``{name:
    (chains, draws, rows)}`` per-row log likelihoods (``bayesnb.loo.draws_log_likelihood``).
    """
    az = backend if backend is not None else _arviz()
    dims, coords = dims_and_coords(fitted)
    groups = {"posterior": draws,
              "observed_data": {"class_count": np.asarray(fitted.class_count)}}
    dims = {**dims, "class_count": ["class"]}
    if sample_stats is not None:
        groups["sample_stats"] = sample_stats
    if prior_draws is not None:
        groups["prior"] = prior_draws
    if log_likelihood is not None:  # per row and draw, for az.loo / az.waic / az.compare
        groups["log_likelihood"] = log_likelihood
        dims.update({k: ["row"] for k in log_likelihood})
    for group, sites in (predictive or {}).items():
        groups[group] = {k: v[None] for k, v in sites.items()}  # one chain
        for k, v in sites.items():
            if k == "y":
                dims["y"] = ["row"]
            elif v.ndim == 3:
                dims[k] = ["row", f"{k[:-2]}_feature"]
            else:
                dims[k] = ["row"]
    with _quiet_arviz():
        if int(az.__version__.split(".")[0]) >= 1 or az.__name__ == "arviz_base":
            return az.from_dict(groups, coords=coords, dims=dims)  # arviz 1.x: DataTree
        return _from_dict_0x(az, groups, coords, dims)


def _from_dict_0x(az, groups: dict, coords: dict, dims: dict):
    """arviz 0.x's ``from_dict`` (dims ``chain``, ``draw``, then the declared ones or
    ``{name}_dim_{i}``; each dim's coords given or counted from ``data.index_origin``), each
    group's coords passed once: ``from_dict`` deep-copies every coord per variable and xarray
    aligns the variables pairwise, O(columns^2) (11 of 12 s on 1,000 Categorical columns)."""
    import xarray as xr
    from arviz.data.base import make_attrs

    origin = az.rcParams["data.index_origin"]
    datasets = {}
    for group, data in groups.items():
        lead = [] if group == "observed_data" else ["chain", "draw"]
        variables, group_coords = {}, {}
        for name, values in data.items():
            values = np.asarray(values)
            own = list(dims.get(name, ()))
            own += [f"{name}_dim_{i}" for i in range(len(own), values.ndim - len(lead))]
            for dim, size in zip(lead + own, values.shape, strict=True):
                if dim not in group_coords:
                    group_coords[dim] = (coords[dim] if dim in coords
                                         else np.arange(origin, origin + size))
            variables[name] = (lead + own, values)
        datasets[group] = xr.Dataset(variables, coords=group_coords, attrs=make_attrs())
    return az.InferenceData(**datasets)


def diagnostics(fitted, draws, sample_stats=None):
    """ArviZ summary (mean, sd, HDI, MCSE, ESS bulk/tail, r-hat) of every parameter."""
    az = _arviz()

    idata = to_inference_data(fitted, draws, sample_stats)
    with _quiet_arviz():
        return az.summary(idata, round_to="none")


def _past(value: float, threshold: float, digits: int) -> str:
    """``value`` with ``digits`` decimals, or as many more as show it differs from
    ``threshold`` (r-hat 1.0101 printed as "1.010 > 1.01")."""
    while f"{value:.{digits}f}" == f"{threshold:.{digits}f}" and digits < 12:
        digits += 1
    return f"{value:.{digits}f}"


def check_convergence(summary, sample_stats, *, r_hat_max=1.01, ess_min=400, settings=None):
    """Warn, naming the worst parameters and what to change, when r-hat, ESS or divergences
    look bad.

    The thresholds are those of Vehtari, Gelman, Simpson, Carpenter & Buerkner (2021), the
    reference of ``az.rhat`` and ``az.ess``: rank-normalised split r-hat below 1.01 and bulk and
    tail ESS of at least 400 (100 per chain over 4 chains; ``az.plot_ess``'s ``min_ess``).
    ``settings`` (``num_warmup``, ``num_samples``, ``num_chains``) are quoted in the advice.
    Returns the list of problems (empty when none).
    """
    problems = []
    r_hat = summary["r_hat"].dropna()
    if len(r_hat) and r_hat.max() > r_hat_max:
        worst = r_hat.sort_values(ascending=False).head(3)
        problems.append(f"r-hat up to {_past(worst.iloc[0], r_hat_max, 3)} > {r_hat_max} "
                        f"({', '.join(worst.index)})")
    ess = summary[["ess_bulk", "ess_tail"]].min(axis=1)
    if ess.min() < ess_min:
        worst = ess.sort_values().head(3)
        problems.append(f"ESS as low as {_past(worst.iloc[0], ess_min, 0)} < {ess_min} "
                        f"({', '.join(worst.index)})")
    n_div = int(np.sum(sample_stats["diverging"])) if sample_stats else 0
    if n_div:
        problems.append(f"{n_div} divergent transitions")
    if problems:
        text, suggested = _advice(settings or {}, n_div)
        warnings.warn(ConvergenceWarning("MCMC may not have converged: " + "; ".join(problems)
                                         + ". " + text, suggested), stacklevel=6)
    return problems


def _advice(settings, n_div) -> tuple[str, dict]:
    """What to change, in the estimator's own parameter names, with a call to copy; and the
    settings it suggests."""
    warmup, samples = settings.get("num_warmup"), settings.get("num_samples")
    chains = settings.get("num_chains")
    raise_, suggested = [], {}
    if chains is not None and chains < 4:
        raise_.append(f"num_chains to 4 (now {chains})")
        suggested["num_chains"] = 4
    if warmup is not None and samples is not None:
        more = max(1000, 2 * warmup), max(1000, 2 * samples)
        raise_.append(f"num_warmup, num_samples to {more[0]}, {more[1]} (now {warmup}, "
                      f"{samples})")
        suggested.update(num_warmup=more[0], num_samples=more[1])
    text = ("Raise " + " and ".join(raise_) + ", e.g. " + suggestion_call(suggested)
            ) if suggested else "Run longer chains (num_warmup, num_samples)"
    if n_div:
        text += " (a longer warm-up adapts a smaller step size against divergences)"
    return (text + "; where the model is conjugate, method='bayes' gives the exact answer.",
            suggested)


def suggestion_call(suggested: dict) -> str:
    """The estimator call with the ``suggested`` settings, in a warning's advice."""
    return "NaiveBayes(method='mcmc', " + ", ".join(f"{k}={v}" for k, v in suggested.items()) + ")"


class ConvergenceWarning(UserWarning):
    """MCMC diagnostics (r-hat, ESS, divergences) crossed their thresholds, after a fit with
    ``method="mcmc"``; its message names the worst parameters and the settings to raise,
    which ``suggested`` holds (``{"num_chains": 4, ...}``; the command line prints them as
    its options).

    Examples
    --------
    A short run for a quick look, its warning silenced by its class:

    >>> import warnings
    >>> import bayesnb as bnb
    >>> issubclass(bnb.ConvergenceWarning, UserWarning)
    True
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore", bnb.ConvergenceWarning)
    ...     # bnb.NaiveBayes(method="mcmc", num_samples=100).fit(X, y) warns nothing here
    """

    def __init__(self, message: str, suggested: dict | None = None) -> None:
        super().__init__(message)
        self.suggested = dict(suggested or {})
