"""Conformance of every registered family (issue 37): one table of checks, run for each
family in ``bayesnb.families.REGISTRY`` from what the family declares, so a new family is
tested by registering it, without new test code.

The data come from the family's own generative model: its NumPyro statements
(``sample_params``, then ``observe`` with ``x=None``) sampled from the prior and decoded to raw
column values (``decode``). A ``nonparametric`` family has no such statements and no posterior;
it gets positive real values and only the checks that need no parameters.

References are independent of the code under test: the exact predictive against a Monte Carlo
average of NumPyro's likelihood over exact posterior draws, the evidence against the chain rule
of sequential predictives, the draws against the posterior's NumPyro moments, NUTS against
the exact posterior, float32 against float64, weights against duplicated rows, chunked and
merged fits against one fit.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpyro import handlers
from numpyro.diagnostics import effective_sample_size
from scipy.special import logsumexp

import bayesnb as bnb
from bayesnb.families import REGISTRY
from bayesnb.families._base import host_f64
from bayesnb.model import block_sites, column_labels, site_name

FAMILIES = [pytest.param(cls, id=name) for name, cls in REGISTRY.items()]
PARAMETRIC = [pytest.param(cls, id=name) for name, cls in REGISTRY.items()
              if not cls.nonparametric]
N_CLASSES = 2
#: the arguments of a family that has required ones (a likelihood constant the user knows)
ARGUMENTS = {"negative_binomial": {"r": 2.5}}


def make(cls):
    """An instance of ``cls`` with its default hyperparameters."""
    return cls(**ARGUMENTS.get(cls.name, {}))


# ---------------------------------------------------------------------- data
def simulate(cls, n: int, n_columns: int = 3, seed: int = 0, shared: bool = False):
    """``(X, y)``: ``n`` raw rows of ``n_columns`` columns from the family's prior predictive
    (classes drawn with their own parameters, or with one set for all when ``shared``: close
    classes, whose probabilities are far from 0 and 1)."""
    rng = np.random.default_rng(seed)
    y = np.arange(n) % N_CLASSES
    rng.shuffle(y)
    family = make(cls)
    if cls.nonparametric:  # no generative statements: positive real values
        return rng.lognormal(0.0, 1.0, (n, n_columns)) * (1.0 + (0 if shared else y[:, None])), y
    # a block of 0/1 for the schema (levels of a categorical family), valid for every family
    schema = family.learn_schema(np.tile([[0], [1]], (1, n_columns)), tuple(range(n_columns)))
    prior = jax.tree_util.tree_map(jnp.asarray, family.prior(schema))
    codes = jnp.zeros(n, int) if shared else jnp.asarray(y)

    def model():
        # the instance's class: the one the package hands the NumPyro program
        params = type(family).sample_params(prior, 1 if shared else N_CLASSES, "b")
        type(family).observe(params, None, codes, "b", total_count=30)

    @jax.jit  # one compiled program, not an op-by-op run of the distributions
    def sample(key):
        trace = handlers.trace(handlers.seed(model, rng_seed=key)).get_trace()
        if cls.column_sites:
            return jnp.stack([trace[f"b.{j}.x"]["value"] for j in range(n_columns)], axis=1)
        return trace["b.x"]["value"]

    values = np.asarray(sample(jax.random.PRNGKey(seed)))
    return family.decode(values, schema), y


def fit(cls, X, y, method="mean", **kw):
    return bnb.NaiveBayes(features=make(cls), method=method, **kw).fit(X, y)


def block_arrays(clf, X):
    """The fitted block's family class, prior and statistics (float64) and ``X`` encoded."""
    block = clf.blocks_[0]
    x = block.family.encode(X, block.schema)
    return type(block.family), host_f64(block.prior), host_f64(block.stats), x, block


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


@pytest.mark.filterwarnings("ignore::bayesnb.inference.ConvergenceWarning")  # a short chain:
@pytest.mark.parametrize("cls", PARAMETRIC)  # its ESS enters the tolerance instead
def test_nuts_matches_the_exact_posterior(cls):
    """method='mcmc' (NUTS, one short chain) against the exact posterior means, within 5
    Monte Carlo standard errors (sd / sqrt(ESS))."""
    X, y = simulate(cls, 30, n_columns=2, seed=4)
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


# ---------------------------------------------------------------------- numerics and fits
def _refusal(err: Exception) -> bool:
    text = str(err)
    return "float32" in text or "x64" in text


@pytest.mark.parametrize("cls", FAMILIES)
def test_float32_agrees_with_float64_or_refuses(cls):
    """Over scales 1e-3..1e8 and offsets, float32 probabilities are within 1e-4 of float64's,
    or float32 refuses with a message naming float32/x64. Close classes over 1,000 columns, so
    the probabilities are far from 0 and 1 and rounding would show."""
    # 1,000 columns as 50 i.i.d. rows of 20 side by side (the classes share one distribution,
    # so rows are exchangeable): simulating 1,000 per-column sites would dominate the test
    X, y = simulate(cls, 40 * 50, n_columns=20, shared=True, seed=5)
    X, y = np.asarray(X).reshape(40, 1000), y[:40]
    tried = 0
    for scale, offset in ((1.0, 0.0), (1e-3, 0.0), (1e8, 0.0), (1.0, 1e4), (1e3, 1e4)):
        try:
            Xs = np.asarray(X, dtype=np.float64) * scale + offset
            with jax.enable_x64(True):
                ref = {m: fit(cls, Xs, y, m).predict_proba(Xs) for m in ("mean", "bayes")}
        except (TypeError, ValueError):  # values the family does not take
            continue
        tried += 1
        for method, p64 in ref.items():
            try:
                p32 = fit(cls, Xs, y, method).predict_proba(Xs)
            except ValueError as err:
                assert _refusal(err), f"scale {scale}, offset {offset}: {err}"
                continue
            np.testing.assert_allclose(p32, p64, rtol=0, atol=1e-4,
                                       err_msg=f"{method}, scale {scale}, offset {offset}")
    assert tried


@pytest.mark.parametrize("cls", FAMILIES)
def test_integer_weights_equal_duplicated_rows(cls, x64):
    X, y = simulate(cls, 30, seed=6)
    w = np.random.default_rng(6).integers(1, 4, len(y))
    for method in ("mean", "bayes"):
        weighted = bnb.NaiveBayes(features=make(cls), method=method).fit(X, y, sample_weight=w)
        repeated = fit(cls, np.repeat(X, w, axis=0), np.repeat(y, w), method)
        np.testing.assert_allclose(weighted.predict_proba(X), repeated.predict_proba(X),
                                   rtol=1e-9, atol=1e-12)
        if cls.nonparametric:  # its statistics are the sample itself, rows kept once
            continue
        for a, b in zip(weighted.blocks_[0].stats, repeated.blocks_[0].stats, strict=True):
            np.testing.assert_allclose(np.asarray(a, dtype=float), np.asarray(b, dtype=float),
                                       rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("cls", FAMILIES)
def test_partial_fit_and_merge_equal_one_fit(cls, x64):
    X, y = simulate(cls, 40, seed=7)
    whole = fit(cls, X, y, "bayes")
    chunked = bnb.NaiveBayes(features=make(cls), method="bayes")
    for part in (slice(0, 25), slice(25, None)):
        chunked.partial_fit(X[part], y[part], classes=np.arange(N_CLASSES))
    merged = bnb.merge(fit(cls, X[:25], y[:25], "bayes"), fit(cls, X[25:], y[25:], "bayes"))
    expected = whole.predict_proba(X)
    for other in (chunked, merged):
        np.testing.assert_allclose(other.predict_proba(X), expected, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("cls", FAMILIES)
def test_save_load_round_trip(cls, tmp_path):
    X, y = simulate(cls, 30, seed=8)
    for method in ("mean", "bayes"):
        clf = fit(cls, X, y, method)
        path = tmp_path / f"{method}.bnb"
        bnb.save(clf, path)
        back = bnb.load(path)
        np.testing.assert_array_equal(back.predict_proba(X), clf.predict_proba(X))
        for a, b in zip(back.blocks_[0].stats, clf.blocks_[0].stats, strict=True):
            np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


@pytest.mark.parametrize("cls", FAMILIES)
def test_decayed_updates_equal_one_weighted_fit(cls):
    """``partial_fit(..., decay=gamma)`` over any chunking equals one fit whose rows weigh
    ``gamma ** (number of later chunks)`` (the family's ``scale_stats``), statistics and
    predictions alike."""
    n = 24
    X, y = simulate(cls, n, seed=9)
    families = {"features": make(cls), "method": "bayes" if not cls.nonparametric else "mean"}

    # cut points at multiples of 8: few chunk shapes, so few compilations
    @settings(max_examples=5, deadline=None, derandomize=True)
    @given(cuts=st.sets(st.sampled_from([8, 16])),
           gamma=st.floats(0.05, 1.0, allow_nan=False))
    def check(cuts, gamma):
        edges = [0, *sorted(cuts), n]
        chunks = list(zip(edges[:-1], edges[1:], strict=True))
        online = bnb.NaiveBayes(**families)
        weight = np.empty(n)
        for i, (a, b) in enumerate(chunks):
            online.partial_fit(X[a:b], y[a:b], classes=np.arange(N_CLASSES), decay=gamma)
            weight[a:b] = gamma ** (len(chunks) - 1 - i)
        batch = bnb.NaiveBayes(**families).fit(X, y, sample_weight=weight)
        np.testing.assert_allclose(online.class_count_, batch.class_count_, rtol=1e-12)
        # a nonparametric family's statistics are the sample, in another order when chunked
        for u, v in zip(*(() if cls.nonparametric else (online.blocks_[0].stats,
                                                         batch.blocks_[0].stats)), strict=True):
            np.testing.assert_allclose(np.asarray(u, dtype=float), np.asarray(v, dtype=float),
                                       rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(online.predict_proba(X), batch.predict_proba(X),
                                   rtol=1e-9, atol=1e-12)

    with jax.enable_x64(True):
        check()
