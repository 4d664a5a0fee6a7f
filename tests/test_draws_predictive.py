"""The posterior predictive over draws (``predict_uncertainty``, ``method="mcmc"`` prediction),
streamed over chunks of draws, against an independent float64 SciPy computation.

The reference scores every draw with ``scipy.stats`` densities (``multinomial``,
``bernoulli``, ``poisson``, ``norm``; a Categorical column by its drawn level probabilities),
missing entries left out of each row's sum (a Multinomial row with missing columns is a
multinomial over its observed columns), then averages over draws in float64 NumPy:
p(c | x, data) = sum_d p(x, c | theta_d) / sum_d p(x | theta_d), the band is ``np.quantile``
of p(c | x, theta_d), and the mutual information is H[mean_d p] - mean_d H[p].

The draw counts are chosen so that the chunks do not divide them (padded draws must not count).
"""

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from scipy.special import logsumexp

import bayesnb as bnb
import bayesnb.inference as inference
from bayesnb.scoring import DrawsScorer

N_DRAWS = 37  # prime: no chunk size divides it


def _flat(draws, site):
    v = np.asarray(draws[site], dtype=np.float64)
    return v.reshape((-1,) + v.shape[2:])


def _multinomial_logpmf(x, theta):
    """(n, K) log p(x_obs | theta_k) of each row over its observed columns, by scipy."""
    complete = ~np.isnan(x).any(axis=1)
    out = np.zeros((x.shape[0], theta.shape[0]))
    xc = x[complete][:, None, :]
    out[complete] = stats.multinomial.logpmf(xc, xc.sum(axis=-1), theta[None])
    for i in np.flatnonzero(~complete):
        row = x[i]
        obs = ~np.isnan(row)
        counts = row[obs]
        for k, th in enumerate(theta):
            p = th[obs] / th[obs].sum()
            out[i, k] = stats.multinomial.logpmf(counts, counts.sum(), p)
    return out


def _masked_sum(logpdf):
    """(n, K) sums over columns of a (n, K, F) log density, missing entries (NaN) left out."""
    return np.where(np.isnan(logpdf), 0.0, logpdf).sum(axis=-1)


def reference_scores(clf, draws, X):
    """(D, n, K) per-draw log p(x, c | theta_d) in float64, each block by scipy.stats."""
    blocks = {b.family.name: b for b in clf.blocks_}
    log_pi = np.log(_flat(draws, "class_probs"))
    n_draws = log_pi.shape[0]
    s = np.repeat(log_pi[:, None, :], len(X), axis=1)
    for name, block in blocks.items():
        cols = list(block.schema.columns)
        x = X[cols].to_numpy() if isinstance(X, pd.DataFrame) else X[:, cols]
        for d in range(n_draws):
            if name == "multinomial":
                s[d] += _multinomial_logpmf(x.astype(float), _flat(draws, "multinomial.probs")[d])
            elif name == "bernoulli":
                theta = _flat(draws, "bernoulli.theta")[d]
                xf = x.astype(float)[:, None, :]
                s[d] += _masked_sum(np.where(np.isnan(xf), np.nan, stats.bernoulli.logpmf(
                    np.nan_to_num(xf), theta[None])))
            elif name == "poisson":
                rate = _flat(draws, "poisson.rate")[d]
                xf = x.astype(float)[:, None, :]
                s[d] += _masked_sum(np.where(np.isnan(xf), np.nan, stats.poisson.logpmf(
                    np.nan_to_num(xf), rate[None])))
            elif name == "gaussian":
                mean = _flat(draws, "gaussian.mean")[d]
                precision = np.broadcast_to(_flat(draws, "gaussian.precision")[d], mean.shape)
                s[d] += _masked_sum(stats.norm.logpdf(x.astype(float)[:, None, :], mean[None],
                                                      1.0 / np.sqrt(precision[None])))
            elif name == "categorical":
                for j, col in enumerate(cols):
                    probs = _flat(draws, f"categorical.{col}.probs")[d]  # (K, levels)
                    levels = list(block.schema.levels[j])
                    for i, v in enumerate(x[:, j]):
                        if not pd.isna(v):
                            s[d, i] += np.log(probs[:, levels.index(v)])
    return s


def reference_uncertainty(s, interval):
    log_joint = logsumexp(s, axis=0)
    proba = np.exp(log_joint - logsumexp(log_joint, axis=1, keepdims=True))
    p = np.exp(s - logsumexp(s, axis=2, keepdims=True))
    mean = p.mean(axis=0)
    xlogx = lambda a: np.where(a > 0, a * np.log(np.where(a > 0, a, 1.0)), 0.0)  # noqa: E731
    total = -xlogx(mean).sum(axis=1)  # of the draw-averaged p(c | x, theta) (issue 38)
    aleatoric = np.minimum(-xlogx(p).sum(axis=2).mean(axis=0), total)
    lo, hi = np.quantile(p, [(1 - interval) / 2, (1 + interval) / 2], axis=0)
    return {"proba": proba, "lower": lo, "upper": hi, "entropy": total,
            "aleatoric": aleatoric, "mutual_info": total - aleatoric}


def count_data(family, seed=0, n=120, f=6, k=3):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, k, n)
    if family == "bernoulli":
        p = rng.uniform(0.1, 0.9, (k, f))
        return (rng.random((n, f)) < p[y]).astype(float), y
    rate = rng.gamma(2.0, 1.0, (k, f))
    return rng.poisson(rate[y]).astype(float), y


FAMILIES = {"multinomial": bnb.Multinomial, "bernoulli": bnb.Bernoulli, "poisson": bnb.Poisson}


@pytest.fixture(autouse=True)
def _kernels_by_default(kernel_draws):
    """These tests are the kernels' (chunks, float32 bounds, device-resident rows); those that
    also check the host's route (``_draws_host``) take ``draws_route``."""


@pytest.fixture(params=["kernels", "host"])
def draws_route(request, monkeypatch):
    """Each route of a small call without prepared tables: the kernels, or the host, whose
    run proves it: the kernels' entry points raise there."""
    from bayesnb import _draws_host

    if request.param == "host":
        monkeypatch.setattr(_draws_host, "HOST_DRAW_ENTRIES", 1 << 30)

        def refuse(*args, **kwargs):
            raise AssertionError("the kernels were called on the host's route")

        for name in ("_draw_sums", "_draw_sums_and_probs", "draws_rounding",
                     "_chunked_tables"):
            monkeypatch.setattr(inference, name, refuse)
    return request.param


@pytest.fixture
def small_chunks(monkeypatch):
    """Chunks of 3 draws (3 classes, 10 columns per matmul) and batches of 8 rows, so 37
    draws fill 13 chunks, the last padded, and rows span several batches."""
    monkeypatch.setattr(inference, "_DRAW_COLUMNS", 10)
    monkeypatch.setattr(inference, "_CHUNK_BUDGET", 8 * 3 * 3)


@pytest.fixture
def linear_used(monkeypatch):
    """Records, per call, which blocks went through the one-matmul linear form."""
    seen = []
    real = inference._chunked_tables

    def spy(*args, **kwargs):
        out = real(*args, **kwargs)
        seen.append(out[3])
        return out

    monkeypatch.setattr(inference, "_chunked_tables", spy)
    return seen


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_linear_families_match_scipy_over_chunk_boundaries(name, x64, small_chunks,
                                                           linear_used, draws_route):
    X, y = count_data(name)
    clf = bnb.NaiveBayes(FAMILIES[name](), method="bayes").fit(X, y)
    draws = clf.sample_posterior(N_DRAWS, seed=1)
    u = clf.predict_uncertainty(X[:30], draws=draws, interval=0.8)
    if draws_route == "kernels":
        assert linear_used == [(True,)]  # the one-matmul path, not the per-draw fallback
    ref = reference_uncertainty(reference_scores(clf, draws, X[:30]), 0.8)
    assert set(u) == set(ref)
    for key in ref:
        np.testing.assert_allclose(u[key], ref[key], rtol=1e-9, atol=1e-12, err_msg=key)


def mixed_rows(seed: int, n: int):
    """``(X, y, features, rng)``: a Bernoulli, a Categorical, a Poisson, a Gaussian and a
    three-word Multinomial column block of three classes, and the generator, for more."""
    rng = np.random.default_rng(seed)
    y = rng.choice(["a", "b", "c"], n)
    k = pd.Series(y).map({"a": 0, "b": 1, "c": 2}).to_numpy()
    X = pd.DataFrame({
        "flag": (rng.random(n) < 0.2 + 0.3 * k).astype(float),
        "colour": rng.choice(["red", "green", "blue"], n),
        "size": rng.normal(1.5 * k, 1.0),
        "visits": rng.poisson(1 + k).astype(float),
        "w0": rng.poisson(2 + k).astype(float), "w1": rng.poisson(1 + k).astype(float),
        "w2": rng.poisson(2, n).astype(float),
    })
    bag = bnb.Multinomial()
    features = {"flag": bnb.Bernoulli(), "colour": bnb.Categorical(), "visits": bnb.Poisson(),
                "size": bnb.Gaussian(kappa=0.1, rate=1.0), "w0": bag, "w1": bag, "w2": bag}
    return X, y, features, rng


def test_mixed_blocks_with_missing_values_match_scipy(x64, small_chunks, linear_used):
    X, y, features, rng = mixed_rows(3, 80)
    clf = bnb.NaiveBayes(features, method="bayes").fit(X, y)
    draws = clf.sample_posterior(N_DRAWS, seed=2)
    test = X.head(25).copy()
    for col in ("flag", "size", "visits", "w1"):
        test.loc[rng.random(25) < 0.25, col] = np.nan
    test.loc[3, "colour"] = None
    u = clf.predict_uncertainty(test, draws=draws)
    names = [b.family.name for b in clf.blocks_]
    # every linear family's block has a missing value here: all go draw by draw
    assert linear_used == [(False,) * len(names)]
    ref = reference_uncertainty(reference_scores(clf, draws, test), 0.9)
    for key in ref:
        np.testing.assert_allclose(u[key], ref[key], rtol=1e-9, atol=1e-12, err_msg=key)
    # complete rows: the linear blocks take the one-matmul path, same answer (through the
    # scorer of method="mcmc", which needs no band)
    proba, _ = DrawsScorer(clf.fitted_, clf._class_setup()[1], draws).scores(X.head(25),
                                                                             "proba")
    ref = reference_uncertainty(reference_scores(clf, draws, X.head(25)), 0.9)
    np.testing.assert_allclose(proba, ref["proba"], rtol=1e-9, atol=1e-12)
    linear = dict(zip(names, linear_used[-1], strict=True))
    assert linear == {"bernoulli": True, "categorical": False, "gaussian": False,
                      "multinomial": True, "poisson": True}


@pytest.mark.parametrize("missing_counts", [False, True])
def test_missing_values_of_host_scored_blocks_match_scipy(draws_route, missing_counts):
    """A Gaussian with missing values and a Categorical with a missing level, beside Bernoulli,
    Poisson and Multinomial blocks complete (the host's products score them) or with missing
    values too (the families' own maths score them on the host), in the default dtype
    policy: against SciPy, on both routes (float32's bound on the kernels' one)."""
    X, y, features, rng = mixed_rows(8, 90)
    clf = bnb.NaiveBayes(features, method="bayes").fit(X, y)
    draws = clf.sample_posterior(N_DRAWS, seed=5)
    test = X.head(20).copy()
    test.loc[rng.random(20) < 0.3, "size"] = np.nan
    test.loc[[2, 7], "colour"] = None
    if missing_counts:
        for col in ("flag", "visits", "w1"):
            test.loc[rng.random(20) < 0.25, col] = np.nan
    u = clf.predict_uncertainty(test, draws=draws, interval=0.7)
    ref = reference_uncertainty(reference_scores(clf, draws, test), 0.7)
    for key in ref:
        np.testing.assert_allclose(u[key], ref[key], rtol=1e-5, atol=1e-6, err_msg=key)


def test_float32_agrees_with_x64():
    """The three linear families in one model (one matmul per block and chunk), float32
    against float64 on the same draws."""
    import jax

    rng = np.random.default_rng(4)
    n, k = 200, 4
    y = rng.integers(0, k, n)
    X = pd.DataFrame({
        **{f"b{j}": (rng.random(n) < 0.3 + 0.1 * y).astype(float) for j in range(10)},
        **{f"p{j}": rng.poisson(1.0 + 0.5 * y).astype(float) for j in range(10)},
        **{f"w{j}": rng.poisson(1.0 + (y == j % k)).astype(float) for j in range(20)},
    })
    # one block per family (a shared instance): ten or twenty columns per matmul; 21 blocks
    # of one column each compiled the statistics kernel for 7 s
    bern, pois, bag = bnb.Bernoulli(), bnb.Poisson(), bnb.Multinomial()
    features = {**{f"b{j}": bern for j in range(10)},
                **{f"p{j}": pois for j in range(10)},
                **{f"w{j}": bag for j in range(20)}}
    with jax.enable_x64(True):
        clf = bnb.NaiveBayes(features, method="bayes").fit(X, y)
        assert [len(b.schema.columns) for b in clf.blocks_] == [10, 10, 20]
        draws = clf.sample_posterior(N_DRAWS, seed=1)
        x64 = clf.predict_uncertainty(X.head(50), draws=draws)
    f32 = clf.predict_uncertainty(X.head(50), draws=draws)
    for key in x64:
        np.testing.assert_allclose(f32[key], x64[key], rtol=1e-4, atol=2e-5, err_msg=key)


def test_chunking_does_not_change_the_answer(x64, monkeypatch):
    X, y = count_data("multinomial", seed=5, n=150, f=20, k=3)
    clf = bnb.NaiveBayes(bnb.Multinomial(), method="bayes").fit(X, y)
    draws = clf.sample_posterior(N_DRAWS, seed=3)
    whole = clf.predict_uncertainty(X[:60], draws=draws)
    for columns, budget in ((3, 9), (12, 200)):
        monkeypatch.setattr(inference, "_DRAW_COLUMNS", columns)
        monkeypatch.setattr(inference, "_CHUNK_BUDGET", budget)
        monkeypatch.setattr(inference, "_DRAWS_BUDGET", budget * 7)
        part = clf.predict_uncertainty(X[:60], draws=draws)
        for key in whole:
            np.testing.assert_allclose(part[key], whole[key], rtol=1e-12, atol=1e-14,
                                       err_msg=(columns, key))


def test_mcmc_scores_keep_far_classes_finite(x64, small_chunks):
    """The scorer behind ``method="mcmc"`` prediction: its log probabilities are the log of
    the draw-averaged joint, finite and exact far below the best class (a per-row shift would
    underflow them to -inf)."""
    rng = np.random.default_rng(6)
    y = np.repeat([0, 1], 50)
    X = np.where(y[:, None] == 0, rng.poisson([30.0, 1.0, 1.0], (100, 3)),
                 rng.poisson([1.0, 30.0, 30.0], (100, 3))).astype(float)
    clf = bnb.NaiveBayes(bnb.Multinomial(), method="bayes").fit(X, y)
    draws = clf.sample_posterior(N_DRAWS, seed=4)
    scorer = DrawsScorer(clf.fitted_, clf._class_setup()[1], draws)
    log_proba, _ = scorer.scores(X, "log_proba")
    s = reference_scores(clf, draws, X)
    log_joint = logsumexp(s, axis=0)
    expected = log_joint - logsumexp(log_joint, axis=1, keepdims=True)
    assert expected.min() < -150  # the far class is far
    np.testing.assert_allclose(log_proba, expected, rtol=1e-10)


@pytest.mark.parametrize("interval", [0, 1, 1.5, -0.1, float("nan"), "0.9", True])
def test_an_interval_outside_zero_one_is_a_clear_error(interval):
    """The band's credible mass is checked before any draw is made or scored."""
    # the float32 shapes of the device-resident and host-rows tests below: one fit kernel
    X, y = count_data("multinomial", seed=10, n=90, f=7, k=3)
    clf = bnb.NaiveBayes(features=bnb.Multinomial(), method="bayes").fit(X, y)
    with pytest.raises(ValueError, match="interval must be a number strictly between 0 and 1"):
        clf.predict_uncertainty(X, interval=interval)


@pytest.mark.parametrize("name, scale", [("poisson", 1e6), ("poisson", 1e3),
                                         ("multinomial", 1e4)])
def test_float32_large_counts_match_scipy(name, scale):
    """Draw scores are products of counts and log parameters: in float32, Poisson counts near
    1e6 moved probabilities by 0.4 and Multinomial rows of 10,000 tokens by 2.4e-4 (the same
    draws in float64). Past the rounding bound the rows are scored in float64: the answer is
    SciPy's, and the joint (constants included) too."""
    import jax

    rng = np.random.default_rng(7)
    n = 120
    y = np.arange(n) % 2
    if name == "poisson":
        X = rng.poisson(scale * (1 + 3e-4 * y[:, None]), (n, 5)).astype(float)
    else:
        X = rng.multinomial(int(scale), np.full(20, 0.05), n).astype(float)
        X[y == 1, 0] += 30
        X[y == 1, 1] -= 30
    with jax.enable_x64(True):
        clf = bnb.NaiveBayes(FAMILIES[name](), method="bayes").fit(X, y)
        draws = clf.sample_posterior(N_DRAWS, seed=1)
    u = clf.predict_uncertainty(X[:20], draws=draws)
    s = reference_scores(clf, draws, X[:20])
    ref = reference_uncertainty(s, 0.9)
    for key in ref:
        np.testing.assert_allclose(u[key], ref[key], rtol=1e-7, atol=1e-9, err_msg=key)
    joint, _ = DrawsScorer(clf.fitted_, clf._class_setup()[1], draws).scores(X[:20], "joint")
    np.testing.assert_allclose(joint, logsumexp(s, axis=0) - np.log(N_DRAWS), rtol=1e-9,
                               atol=1e-7)  # SciPy's log x! near 1.3e7 rounds by ~3e-9


def test_float32_ordinary_counts_stay_float32(monkeypatch):
    """The bound keeps ordinary count data (the benchmark's kind) in float32: no rescoring."""
    from bayesnb.families._base import float64_mode

    calls = []
    real = inference.predict_from_draws
    monkeypatch.setattr(inference, "predict_from_draws",
                        lambda *a, **k: calls.append(float64_mode()) or real(*a, **k))
    X, y = count_data("multinomial", seed=2, n=200, f=200, k=4)
    clf = bnb.NaiveBayes(bnb.Multinomial(), method="bayes").fit(X, y)
    clf.predict_uncertainty(X[:50], num_draws=N_DRAWS)
    assert calls == [False]


@pytest.mark.parametrize("offset, width", [(1e4, 3), (0.0, 2000)])
def test_float32_gaussian_draws_agree_with_x64(offset, width):
    """Gaussian blocks have no ``linear_scores`` and no rounding bound: they are scored draw
    by draw in the centred form ``lam (x - mu)^2``, whose terms stay at the data's own scale.
    Offset and wide data, float32 against float64 on the same draws."""
    import jax

    rng = np.random.default_rng(8)
    n = 200
    y = np.arange(n) % 2
    X = offset + rng.normal(size=(n, width)) + (0.5 if width < 10 else 0.02) * y[:, None]
    with jax.enable_x64(True):
        clf = bnb.NaiveBayes(bnb.Gaussian(loc=offset), method="bayes").fit(X, y)
        draws = clf.sample_posterior(N_DRAWS, seed=1)
        x64 = clf.predict_uncertainty(X[:40], draws=draws)
    f32 = clf.predict_uncertainty(X[:40], draws=draws)
    for key in x64:
        np.testing.assert_allclose(f32[key], x64[key], rtol=1e-4, atol=1e-4, err_msg=key)


@pytest.mark.parametrize("missing", [False, True])
def test_wide_gaussian_draws_scored_together_match_scipy(kernel_draws, monkeypatch, missing):
    """A chunk's Gaussian draws are scored as one product against row features shared by the
    draws (``GaussianFast.draws_log_likelihood``); each draw's scores must still be SciPy's
    normal log densities (float64, 300 columns, chunks of 4 draws, with and without missing
    values)."""
    import jax

    monkeypatch.setattr(inference, "_DRAW_COLUMNS", 12)  # 4 draws a chunk of 3 classes
    rng = np.random.default_rng(11)
    n, width = 120, 300
    y = np.arange(n) % 3
    X = pd.DataFrame(5.0 + rng.normal(size=(n, width)) + 0.2 * y[:, None],
                     columns=[f"g{j}" for j in range(width)])
    test = X.head(30).copy()
    if missing:
        test = test.mask(rng.random(test.shape) < 0.1)
    with jax.enable_x64(True):
        clf = bnb.NaiveBayes(bnb.Gaussian(loc=5.0), method="bayes").fit(X, y)
        draws = clf.sample_posterior(N_DRAWS, seed=3)
        u = clf.predict_uncertainty(test, draws=draws, interval=0.8)
    ref = reference_uncertainty(reference_scores(clf, draws, test), 0.8)
    for key in ref:
        np.testing.assert_allclose(u[key], ref[key], rtol=1e-6, atol=1e-8, err_msg=key)


def test_float32_long_documents_of_close_classes_agree_with_float64():
    """Draws' weights are raw log probabilities, all negative: on rows of about 2,000 tokens
    of two close classes the float32 product's partial sums reached thousands, and its
    rounding (outside the bound, which counted the products' alone) moved probabilities by
    5.4e-4 and the bands by 4.3e-4, with no fallback to float64. The weights are now taken
    relative to a centre and the bound counts the accumulation; either way the answer must
    be float64's (the same draws)."""
    import jax

    rng = np.random.default_rng(4)
    words = 5000
    base = rng.dirichlet(np.full(words, 0.5))
    P = base * np.exp(0.01 * rng.standard_normal((2, words)))
    P /= P.sum(1, keepdims=True)
    y = rng.integers(0, 2, 400)
    X = np.stack([rng.multinomial(rng.poisson(2000), P[c]) for c in y]).astype(np.float32)
    clf = bnb.NaiveBayes(bnb.Multinomial(), method="mean").fit(X[:300], y[:300])
    draws = {k: np.asarray(a, np.float64) for k, a in clf.sample_posterior(N_DRAWS,
                                                                            seed=1).items()}
    u32 = clf.predict_uncertainty(X[300:], draws=draws)
    with jax.enable_x64(True):
        u64 = clf.predict_uncertainty(X[300:].astype(np.float64), draws=draws)
    for key in ("proba", "lower", "upper", "entropy"):
        assert np.abs(u32[key] - u64[key]).max() <= 1e-4, key


def test_scorer_keeps_the_draws_tables_and_answers_every_input_alike(small_chunks,
                                                                     linear_used):
    """``DrawsScorer`` lays its draws out once (``prepared``): later calls, rows with and
    without missing values, in float32 and then in x64, each match the float64 SciPy
    reference computed from the draws, and each missing-value pattern and dtype mode is laid
    out once."""
    import jax

    # the shapes of the device-resident Poisson test below (the same compiled kernels)
    X, y = count_data("poisson", seed=7, n=90, f=7, k=3)
    clf = bnb.NaiveBayes(bnb.Poisson(), method="bayes").fit(X, y)
    draws = clf.sample_posterior(N_DRAWS, seed=4)
    scorer = DrawsScorer(clf.fitted_, clf._class_setup()[1], draws)
    holes = X[:30].copy()
    holes[np.random.default_rng(8).random(holes.shape) < 0.2] = np.nan
    for rows in (X[:30], X[30:60], holes, X[:30]):
        ref = reference_uncertainty(reference_scores(clf, draws, rows), 0.9)["proba"]
        np.testing.assert_allclose(scorer.scores(rows, "proba")[0], ref, rtol=2e-5, atol=1e-6)
    with jax.enable_x64(True):
        for rows in (X[:30], holes):
            ref = reference_uncertainty(reference_scores(clf, draws, rows), 0.9)["proba"]
            np.testing.assert_allclose(scorer.scores(rows, "proba")[0], ref, rtol=1e-9,
                                       atol=1e-12)
    # laid out once per (dtype mode, missing pattern): complete, then with NaN, in each mode
    assert linear_used == [(True,), (False,), (True,), (False,)]
    assert {k[0] for k in scorer.prepared} == {"tables", "extents", "class bound"}


@pytest.mark.parametrize("name", ["multinomial", "bernoulli", "poisson", "gaussian"])
def test_device_resident_rows_match_scipy_and_are_checked_there(name, small_chunks,
                                                                  monkeypatch):
    """A ``jax.Array`` X is encoded on its device (``inference.encode_dense`` with
    ``on_device``; the CPU backend takes the same path): the same predictive as the float64
    SciPy reference, and a bad value refused naming the column as NumPy input is. The host
    encoder is not called for a good X."""
    import jax.numpy as jnp

    if name == "gaussian":
        rng = np.random.default_rng(9)
        y = rng.integers(0, 3, 90)
        X = rng.normal(y[:, None] * 0.5, 1.0, (90, 5))
        family = bnb.Gaussian(kappa=0.1, rate=1.0)
    else:
        X, y = count_data(name, seed=9, n=90, f=7, k=3)
        family = FAMILIES[name]()
    clf = bnb.NaiveBayes(family, method="bayes").fit(X, y)
    draws = clf.sample_posterior(N_DRAWS, seed=5)
    scorer = DrawsScorer(clf.fitted_, clf._class_setup()[1], draws)
    encoded = []
    real = type(clf.blocks_[0].family).encode
    monkeypatch.setattr(type(clf.blocks_[0].family), "encode",
                        lambda *a, **k: encoded.append(1) or real(*a, **k))
    Xd = jnp.asarray(X[:40], dtype=jnp.float32)
    ref = reference_uncertainty(reference_scores(clf, draws, np.asarray(Xd, dtype=float)),
                                0.9)
    proba = scorer.scores(Xd, "proba")[0]
    np.testing.assert_allclose(proba, ref["proba"], rtol=2e-5, atol=1e-6)
    u = clf.predict_uncertainty(Xd, draws=draws)
    np.testing.assert_allclose(u["lower"], ref["lower"], rtol=2e-5, atol=1e-6)
    assert encoded == []
    bad = np.asarray(X[:40], dtype=np.float32)
    bad[5, 3] = np.inf if name == "gaussian" else -1.0
    with pytest.raises(ValueError, match="column 3"):
        scorer.scores(jnp.asarray(bad), "proba")


def test_host_rows_on_an_accelerator_are_checked_there(monkeypatch):
    """On an accelerator (its budget scale reported here, on the CPU), host NumPy rows of the
    raw-number families are copied to the device and checked there, not encoded on the host,
    and the draws go through one wide chunk: the same predictive as the float64 SciPy
    reference; a bad value is still refused naming the column."""
    from bayesnb.fast import _kernels

    X, y = count_data("multinomial", seed=10, n=90, f=7, k=3)
    clf = bnb.NaiveBayes(bnb.Multinomial(), method="bayes").fit(X, y)
    draws = clf.sample_posterior(N_DRAWS, seed=6)
    scorer = DrawsScorer(clf.fitted_, clf._class_setup()[1], draws)
    monkeypatch.setattr(_kernels, "budget_scale", lambda: 32)
    encoded = []
    real = bnb.Multinomial.encode
    monkeypatch.setattr(bnb.Multinomial, "encode",
                        lambda *a, **k: encoded.append(1) or real(*a, **k))
    ref = reference_uncertainty(reference_scores(clf, draws, X[:40]), 0.9)["proba"]
    np.testing.assert_allclose(scorer.scores(X[:40], "proba")[0], ref, rtol=2e-5, atol=1e-6)
    assert encoded == []
    assert scorer.prepared[("tables", False, (True,))][0].shape[:2] == (1, N_DRAWS)
    bad = X[:40].copy()
    bad[7, 4] = -1.0
    with pytest.raises(ValueError, match="column 4"):
        scorer.scores(bad, "proba")


def test_columns_declared_one_by_one_match_scipy(x64, small_chunks, linear_used):
    """Gaussian and Poisson columns declared one by one (each its own block; scored over
    draws as one block a family, ``_joined_blocks``): the predictive over draws is SciPy's,
    draw by draw, and the joined Poisson block keeps the one-matmul form."""
    rng = np.random.default_rng(4)
    n, K = 60, 3
    y = rng.integers(0, K, n)
    X = np.column_stack([rng.normal(y, 1.0), rng.poisson(1 + y), rng.normal(-y, 2.0),
                         rng.poisson(2, n), rng.normal(0.5 * y, 0.5)]).astype(float)
    features = {0: bnb.Gaussian(kappa=0.1, rate=1.0), 1: bnb.Poisson(),
                2: bnb.Gaussian(kappa=0.1, rate=1.0), 3: bnb.Poisson(),
                4: bnb.Gaussian(kappa=0.1, rate=1.0)}
    clf = bnb.NaiveBayes(features, method="bayes").fit(X, y)
    draws = clf.sample_posterior(N_DRAWS, seed=3)
    u = clf.predict_uncertainty(X[:25], draws=draws, interval=0.8)
    assert linear_used == [(False, True)]  # the Gaussian block, the Poisson block
    s = np.repeat(np.log(_flat(draws, "class_probs"))[:, None, :], 25, axis=1)
    sites = {0: "gaussian0", 1: "poisson0", 2: "gaussian1", 3: "poisson1", 4: "gaussian2"}
    for col, site in sites.items():
        x = X[:25, col][None, :, None]  # (1, n, 1) against (D, 1, K)
        if site.startswith("poisson"):
            s += stats.poisson.logpmf(x, _flat(draws, f"{site}.rate")[:, None, :, 0])
        else:
            mean = _flat(draws, f"{site}.mean")[:, None, :, 0]
            precision = _flat(draws, f"{site}.precision")[:, None, :, 0]
            s += stats.norm.logpdf(x, mean, 1.0 / np.sqrt(precision))
    ref = reference_uncertainty(s, 0.8)
    for key in ref:
        np.testing.assert_allclose(u[key], ref[key], rtol=1e-9, atol=1e-12, err_msg=key)


@pytest.mark.filterwarnings("ignore::bayesnb.inference.ConvergenceWarning")  # a short chain
def test_mcmc_columns_declared_one_by_one_with_missing_values_match_scipy():
    """``method="mcmc"`` on Gaussian and Poisson columns declared one by one, with missing
    values in some (NUTS and the scorer take each family's blocks as one, ``_joined_blocks``):
    the joint over the run's draws (float64) is SciPy's Monte Carlo average, draw by draw,
    the missing values left out; the float32 probabilities agree with it."""
    from scipy.special import softmax

    rng = np.random.default_rng(9)
    n, K = 80, 3
    y = rng.integers(0, K, n)
    X = np.column_stack([rng.normal(y, 1.0), rng.poisson(1 + y), rng.normal(-y, 2.0),
                         rng.poisson(2, n), rng.normal(0.5 * y, 0.5)]).astype(float)
    X[3, 0] = X[5, 3] = X[8, 2] = np.nan
    families = {0: bnb.Gaussian(kappa=0.1, rate=1.0), 1: bnb.Poisson(),
                2: bnb.Gaussian(kappa=0.1, rate=1.0), 3: bnb.Poisson(),
                4: bnb.Gaussian(kappa=0.1, rate=1.0)}
    clf = bnb.NaiveBayes(families, method="mcmc", num_warmup=150, num_samples=60,
                         num_chains=1, progress_bar=False).fit(X, y)
    draws = clf.draws_
    rows = X[:25]
    s = np.repeat(np.log(_flat(draws, "class_probs"))[:, None, :], len(rows), axis=1)
    sites = {0: "gaussian0", 1: "poisson0", 2: "gaussian1", 3: "poisson1", 4: "gaussian2"}
    for col, site in sites.items():
        x = rows[:, col][None, :, None]  # (1, n, 1) against (D, 1, K)
        if site.startswith("poisson"):
            term = stats.poisson.logpmf(x, _flat(draws, f"{site}.rate")[:, None, :, 0])
        else:
            term = stats.norm.logpdf(x, _flat(draws, f"{site}.mean")[:, None, :, 0],
                                     1.0 / np.sqrt(_flat(draws, f"{site}.precision")[:, None,
                                                                                     :, 0]))
        s += np.where(np.isnan(x), 0.0, term)
    joint = logsumexp(s, axis=0) - np.log(s.shape[0])
    np.testing.assert_allclose(clf.predict_joint_log_proba(rows), joint, rtol=1e-9)
    np.testing.assert_allclose(clf.predict_proba(rows), softmax(joint, axis=1), atol=1e-5)


def test_given_x_band_of_near_tied_wide_rows_is_float64s():
    """``given_x=True``'s band is a weighted quantile: it steps from one draw's value to the
    next, so a weight rounded in float32 moved a bound by a whole step (1,500 near-tied
    Bernoulli columns: 0.017, unrefused) and ``ess`` by 2.4e-4. It is computed in float64
    whatever the dtype: the same numbers as under ``enable_x64`` (the same draws)."""
    import jax

    rng = np.random.default_rng(0)
    n, f, k = 1000, 1500, 2
    y = np.arange(n) % k
    X = (rng.uniform(size=(n, f)) < rng.uniform(0.47, 0.53, size=(k, f))[y]).astype(float)
    with jax.enable_x64(True):
        clf = bnb.NaiveBayes(bnb.Bernoulli(), method="bayes").fit(X, y)
        draws = {key: np.asarray(v) for key, v in clf.sample_posterior(400, seed=0).items()}
        g64 = clf.predict_uncertainty(X, draws=draws, given_x=True)
    g32 = bnb.NaiveBayes(bnb.Bernoulli(), method="bayes").fit(X, y).predict_uncertainty(
        X, draws=draws, given_x=True)
    for key in ("proba", "lower", "upper", "entropy", "aleatoric"):
        np.testing.assert_allclose(g32[key], g64[key], rtol=0, atol=1e-4, err_msg=key)
    np.testing.assert_allclose(g32["ess"], g64["ess"], rtol=1e-4, err_msg="ess")


@pytest.mark.parametrize("scale", [1e-3, 1.0, 1e6])
def test_gaussian_draws_scored_together_in_float32_agree_with_float64(kernel_draws,
                                                                     monkeypatch, scale):
    """The float32 route of the Gaussian draws scored as one product a chunk (the centre
    shared by the chunk's draws, ``GaussianFast.draws_log_likelihood``), where the rounding
    bound keeps float32 (20 columns, scales 1e-3..1e6): within 1e-4 of float64 on the same
    draws, and float32 was used."""
    import jax

    from bayesnb.families._base import float64_mode

    modes = []
    real = inference.predict_from_draws
    monkeypatch.setattr(inference, "predict_from_draws",
                        lambda *a, **k: modes.append(float64_mode()) or real(*a, **k))
    rng = np.random.default_rng(5)
    n, width = 300, 20
    y = np.arange(n) % 3
    X = scale * (rng.normal(size=(n, width)) + 0.4 * rng.normal(size=(3, width))[y])
    prior = bnb.Gaussian(rate=0.01 * scale ** 2)
    with jax.enable_x64(True):
        clf = bnb.NaiveBayes(prior, method="bayes").fit(X, y)
        draws = clf.sample_posterior(N_DRAWS * 5, seed=2)
        u64 = clf.predict_uncertainty(X[:80], draws=draws)
    modes.clear()
    u32 = clf.predict_uncertainty(X[:80], draws=draws)
    assert modes == [False]  # the float32 kernels, not the float64 retry
    for key in u64:
        np.testing.assert_allclose(u32[key], u64[key], rtol=0, atol=1e-4, err_msg=key)
