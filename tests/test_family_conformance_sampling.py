"""Conformance of every registered family (issue 37), the posterior and its sampling: one
table of checks, run for each parametric family in ``bayesnb.families.REGISTRY`` from what the
family declares, so a new family is tested by registering it, without new test code. The data
come from the family's own generative model (``_conformance.simulate``); fits and numerics are
checked the same way in ``test_family_conformance.py``.

References are independent of the code under test: the exact predictive against a Monte Carlo
average of NumPyro's likelihood over exact posterior draws, the evidence against the chain rule
of sequential predictives, the draws against the posterior's NumPyro moments, NUTS against
the exact posterior.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from _conformance import N_CLASSES, PARAMETRIC, block_arrays, fit, make, simulate
from numpyro import handlers
from numpyro.diagnostics import effective_sample_size
from scipy.special import logsumexp

import bayesnb as bnb
from bayesnb.families._base import host_f64
from bayesnb.model import block_sites, column_labels, site_name


# ---------------------------------------------------------------------- exact posterior
def _row_log_likelihood(cls, params, x, k):
    """``(rows,)`` log p(x_i | theta, c = k) from the family's NumPyro observe statements
    (NumPyro's densities, not the family's ``log_likelihood``)."""
    y = jnp.full(x.shape[0], k)
    trace = handlers.trace(handlers.seed(lambda: cls.observe(params, x, y, "b"), 0)).get_trace()
    total = jnp.zeros(x.shape[0])
    for site in trace.values():
        if site["type"] == "sample" and site["is_observed"]:
            lp = site["fn"].log_prob(site["value"])
            total = total + jnp.sum(jnp.reshape(lp, (x.shape[0], -1)), axis=1)
    return total


@pytest.mark.parametrize("cls", PARAMETRIC)
def test_log_predictive_is_the_posterior_average_of_the_likelihood(cls, x64):
    """log p(x | data, c) = log E_posterior[p(x | theta, c)] within 5 Monte Carlo errors, the
    likelihood from NumPyro's distributions and the draws exact."""
    X, y = simulate(cls, 44, shared=True)  # close classes: every new row is typical of both
    clf = fit(cls, X[:40], y[:40], method="bayes")
    fam, prior, stats, x, _ = block_arrays(clf, X[40:])  # new rows of the same classes
    posterior = fam.posterior(prior, stats)
    exact = np.asarray(jax.jit(lambda p, x: fam.log_predictive(p, x)
                               + fam.log_normalizer(x)[:, None])(posterior, jnp.asarray(x)))
    draws = fam.sample_posterior(np.random.default_rng(2), posterior, 10_000)
    per_draw = jax.jit(jax.vmap(jax.vmap(lambda p, k: _row_log_likelihood(
        fam, p, jnp.asarray(x), k), (None, 0)), (0, None)))
    ll = np.asarray(per_draw({key: jnp.asarray(v) for key, v in draws.items()},
                             jnp.arange(N_CLASSES)))  # (draws, classes, rows)
    reference = (logsumexp(ll, axis=0) - np.log(ll.shape[0])).T
    w = np.exp(ll - ll.max(axis=0))
    mc_error = (w.std(axis=0) / (np.sqrt(ll.shape[0]) * w.mean(axis=0))).T
    assert np.all(mc_error < 0.05)  # the Monte Carlo average is informative
    np.testing.assert_array_less(np.abs(exact - reference), 5 * mc_error + 1e-9)


@pytest.mark.parametrize("cls", PARAMETRIC)
def test_log_evidence_is_the_chain_of_sequential_predictives(cls, x64):
    """log p(X | y) = sum_i log p(x_i | x_<i, y) (the predictive of each row given the rows
    before it), to float64 precision."""
    X, y = simulate(cls, 12)
    clf = fit(cls, X, y)
    fam, prior, stats, x, block = block_arrays(clf, X)
    levels = tuple(len(lv) for lv in block.schema.levels) or None
    onehot = np.eye(N_CLASSES)[y]
    chain = 0.0
    for i in range(len(y)):
        before = host_f64(fam.suff_stats(jnp.asarray(x), jnp.asarray(
            onehot * (np.arange(len(y)) < i)[:, None]), levels))
        row = jnp.asarray(x[i:i + 1])
        chain += float(fam.log_predictive(fam.posterior(prior, before), row, levels)[0, y[i]]
                       + fam.log_normalizer(row)[0])
    assert float(fam.log_evidence(prior, stats)) == pytest.approx(chain, rel=1e-9, abs=1e-9)
    assert clf.log_evidence(per_block=True).iloc[1] == pytest.approx(chain, rel=1e-9, abs=1e-9)


@pytest.mark.parametrize("cls", PARAMETRIC)
def test_exact_draws_have_the_posterior_moments(cls, x64):
    """Draws of ``sample_posterior`` against the mean and variance of each parameter's
    posterior (``posterior_distributions``, NumPyro), within 6 standard errors."""
    X, y = simulate(cls, 60)
    fam, prior, stats, _, _ = block_arrays(fit(cls, X, y), X)
    posterior = fam.posterior(prior, stats)
    n = 20_000
    draws = fam.sample_posterior(np.random.default_rng(3), posterior, n)
    for key, d in fam.posterior_distributions(jax.tree_util.tree_map(jnp.asarray,
                                                                      posterior)).items():
        v = np.asarray(draws[key])
        mean, var = np.asarray(d.mean), np.asarray(d.variance)
        np.testing.assert_array_less(np.abs(v.mean(axis=0) - mean), 6 * np.sqrt(var / n))
        fourth = np.mean((v - mean) ** 4, axis=0)
        np.testing.assert_array_less(np.abs(v.var(axis=0) - var),
                                     6 * np.sqrt(np.maximum(fourth - var**2, 0) / n) + 1e-12)


@pytest.mark.parametrize("cls", PARAMETRIC)
def test_plug_in_estimates_against_the_posterior(cls, x64):
    """The plug-in tables of ``estimate`` against references outside it: under 'mean' each
    parameter's posterior mean (NumPyro's ``posterior_distributions``); under 'ml' the
    greatest likelihood of the training rows, and under 'map' the greatest log posterior
    (``log_prior_at`` plus that likelihood), among 200 exact posterior draws and the other
    estimates (and, for ML, draws of the posterior of the statistics weighted 1,000 times,
    close around it). A plug-in was checked only against itself (float32, weights, merges),
    so a wrong prior count in it passed every conformance test."""
    X, y = simulate(cls, 60)
    # concentrations of 3, not the flat 1 under which MAP is ML
    family = make(cls).set_params(**dict.fromkeys(cls.concentrations, 3.0))
    fam, prior, stats, x, block = block_arrays(bnb.NaiveBayes(family).fit(X, y), X)
    levels = tuple(len(lv) for lv in block.schema.levels) or None
    posterior = fam.posterior(prior, stats)
    with np.errstate(divide="ignore"):  # an ML probability or rate of 0: log 0 = -inf
        estimates = {m: host_f64(fam.estimate(prior, stats, m)) for m in ("ml", "map", "mean")}
    means = {key: np.asarray(d.mean, dtype=np.float64) for key, d in fam.posterior_distributions(
        jax.tree_util.tree_map(jnp.asarray, posterior)).items()}
    for got, want in zip(estimates["mean"], host_f64(fam.params_from_sample(means, posterior)),
                         strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12)

    def log_likelihood(params):  # of the training rows, each in its class
        with np.errstate(invalid="ignore"):  # 0 log 0, masked by the family
            ll = np.asarray(fam.log_likelihood(params, x, levels), dtype=np.float64)
        return float(ll[np.arange(len(y)), y].sum())

    def log_posterior(params):
        return fam.log_prior_at(prior, params, "map", N_CLASSES) + log_likelihood(params)

    def draws(posterior, n=200):
        sample = fam.sample_posterior(np.random.default_rng(4), posterior, n)
        return [host_f64(fam.params_from_sample({k: v[i] for k, v in sample.items()},
                                                posterior)) for i in range(n)]

    others = draws(posterior)
    # draws of the posterior of the statistics weighted 1,000 times lie close around the ML
    # estimate (closer than the mean's prior counts put it): one of them beats a wrong ML
    near_ml = draws(fam.posterior(prior, fam.scale_stats(stats, 1000.0)))
    best = log_likelihood(estimates["ml"])
    assert best >= max(log_likelihood(p) for p in others + near_ml + [estimates["mean"]]) - 1e-9
    try:
        mode = log_posterior(estimates["map"])
    except ValueError:  # a family without EM's prior term: its MAP is checked by its own tests
        return
    assert mode >= max(log_posterior(p) for p in others + [estimates["mean"]]) - 1e-9


@pytest.mark.filterwarnings("ignore::bayesnb.inference.ConvergenceWarning")  # a short chain:
@pytest.mark.parametrize("cls", PARAMETRIC)  # its ESS enters the tolerance instead
def test_nuts_matches_the_exact_posterior(cls):
    """method='mcmc' (NUTS, one short chain) against the exact posterior means, within 5
    Monte Carlo standard errors (sd / sqrt(ESS))."""
    X, y = simulate(cls, 30, seed=4)
    clf = fit(cls, X, y, method="mcmc", num_warmup=300, num_samples=400, num_chains=1,
              seed=1, progress_bar=False)
    block = clf.blocks_[0]
    fam = type(block.family)
    posterior = jax.tree_util.tree_map(jnp.asarray, fam.posterior(host_f64(block.prior),
                                                                  host_f64(block.stats)))
    exact = fam.posterior_distributions(posterior)
    site, labels = block_sites(clf)[0], column_labels(clf)[0]
    for key in block.family.param_dims(block.prior, block.schema):
        chain = np.asarray(clf.draws_[site_name(site, key, labels)], dtype=np.float64)
        mcse = chain[0].std(axis=0) / np.sqrt(effective_sample_size(chain))
        np.testing.assert_array_less(np.abs(chain[0].mean(axis=0) - np.asarray(exact[key].mean)),
                                     5 * mcse + 1e-6)


@pytest.mark.parametrize("cls", PARAMETRIC)
def test_uncertainty_over_draws_matches_the_numpyro_densities(cls, x64, monkeypatch):
    """``predict_uncertainty`` over given draws, on the host where the family's form scores
    there (``_draws_host``) and by the kernels: the predictive, its band, the entropy and its
    split against every draw scored by the family's NumPyro program (its observed sites'
    ``log_prob``), averaged here over the draws."""
    from scipy.special import entr, softmax

    from bayesnb import _draws_host
    from bayesnb.model import block_draws

    X, y = simulate(cls, 30, seed=12)
    clf = fit(cls, _take(X, slice(0, 24)), y[:24], method="bayes")
    draws = clf.sample_posterior(23, seed=3)
    new = _take(X, slice(24, 30))
    fam, _, _, x, _ = block_arrays(clf, new)
    flat = {k: np.asarray(v, dtype=np.float64).reshape((-1,) + np.shape(v)[2:])
            for k, v in draws.items()}
    params = {k: jnp.asarray(v) for k, v in block_draws(flat, clf.blocks_)[0].items()}
    per_draw = jax.jit(jax.vmap(jax.vmap(lambda p, k: _row_log_likelihood(
        fam, p, jnp.asarray(x), k), (None, 0)), (0, None)))
    ll = np.asarray(per_draw(params, jnp.arange(N_CLASSES)))  # (draws, classes, rows)
    s = np.log(flat["class_probs"])[:, None, :] + ll.transpose(0, 2, 1)  # (draws, rows, K)
    p = softmax(s, axis=2)
    mean = p.mean(axis=0)
    total = entr(mean).sum(axis=1)
    aleatoric = np.minimum(entr(p).sum(axis=2).mean(axis=0), total)
    lower, upper = np.quantile(p, [0.1, 0.9], axis=0)
    expected = {"proba": softmax(logsumexp(s, axis=0), axis=1), "lower": lower,
                "upper": upper, "entropy": total, "aleatoric": aleatoric,
                "mutual_info": total - aleatoric}
    for bound in (1 << 30, -1):
        monkeypatch.setattr(_draws_host, "HOST_DRAW_ENTRIES", bound)
        got = clf.predict_uncertainty(new, draws=draws, interval=0.8)
        for key, value in expected.items():
            np.testing.assert_allclose(got[key], value, rtol=1e-9, atol=1e-12,
                                       err_msg=f"{key}, bound {bound}")


def _take(X, rows):
    return X.iloc[rows] if hasattr(X, "iloc") else X[rows]


# ------------------------------------------------------------ a model declared column by column
def _column_by_column(cls, X, y, **kw):
    """The model with one block (one family object) per column of ``X``."""
    from _conformance import make

    import bayesnb as bnb

    return bnb.NaiveBayes({j: make(cls) for j in range(X.shape[1])}, **kw).fit(X, y)


@pytest.mark.parametrize("cls", PARAMETRIC)
def test_blocks_join_into_the_block_of_their_columns(cls, x64):
    """NUTS samples one-column blocks of a family as one block (``_joined_blocks``) when the
    family's layout allows it: their priors and statistics joined equal those of one block
    fitted on all the columns, leaf by leaf; a family whose columns are one vector, or have
    their own sites, keeps every block apart."""
    from bayesnb._joined_blocks import join, joined_blocks

    X, y = simulate(cls, 40)
    whole = fit(cls, X, y).blocks_[0]
    apart = _column_by_column(cls, X, y)
    groups = joined_blocks(apart.blocks_, block_sites(apart))
    if cls.joint_columns or cls.column_sites:
        assert [g.blocks for g in groups] == [(0,), (1,), (2,)]
        return
    assert [g.blocks for g in groups] == [(0, 1, 2)]
    for got, want, scalars in ((join([b.prior for b in apart.blocks_], scalars="shared"),
                                whole.prior, "prior"),
                               (join([host_f64(b.stats) for b in apart.blocks_],
                                     scalars="summed"), host_f64(whole.stats), "stats")):
        assert type(got) is type(want)
        for name, a, b in zip(want._fields, got, want, strict=True):
            np.testing.assert_allclose(np.asarray(a, np.float64), np.asarray(b, np.float64),
                                       rtol=1e-12, atol=1e-12, err_msg=f"{scalars}.{name}")


@pytest.mark.filterwarnings("ignore::bayesnb.inference.ConvergenceWarning")
@pytest.mark.parametrize("cls", [c for c in PARAMETRIC
                                 if not (c.values[0].joint_columns or c.values[0].column_sites)])
def test_nuts_of_joined_blocks_matches_each_blocks_exact_posterior(cls):
    """method='mcmc' on one block per column (sampled as one block): every block's draws,
    under its own sites, against that block's exact posterior means within 5 Monte Carlo
    standard errors."""
    X, y = simulate(cls, 30, seed=4)
    clf = _column_by_column(cls, X, y, method="mcmc", num_warmup=300, num_samples=400,
                            num_chains=1, seed=1, progress_bar=False)
    assert set(clf.draws_) == {"class_probs"} | {
        site_name(site, key, labels) for block, site, labels in
        zip(clf.blocks_, block_sites(clf), column_labels(clf), strict=True)
        for key in block.family.param_dims(block.prior, block.schema)}
    for block, site in zip(clf.blocks_, block_sites(clf), strict=True):
        fam = type(block.family)
        exact = fam.posterior_distributions(jax.tree_util.tree_map(
            jnp.asarray, fam.posterior(host_f64(block.prior), host_f64(block.stats))))
        for key in block.family.param_dims(block.prior, block.schema):
            chain = np.asarray(clf.draws_[f"{site}.{key}"], dtype=np.float64)
            assert chain.shape[-1] == 1  # the block's one column
            mcse = chain[0].std(axis=0) / np.sqrt(effective_sample_size(chain))
            np.testing.assert_array_less(
                np.abs(chain[0].mean(axis=0) - np.asarray(exact[key].mean)), 5 * mcse + 1e-6)
