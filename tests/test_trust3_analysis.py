"""Issue 38, section 1, "Analysis results that disagree with the model": each analysis gives
the answer its name promises, checked against independent computations (by hand, NumPy,
SciPy), or refuses."""

import numpy as np
import pandas as pd
import pytest
from _bernoulli_draws import SHAPE, bernoulli_draws
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import bayesnb as bnb
from bayesnb.analysis import decision_function, encode_linear, linear_weights

FEW = settings(max_examples=20, deadline=None,
               suppress_health_check=[HealthCheck.function_scoped_fixture])


# ---------------------------------------------------------------- the linear view
def bernoulli_frame(rng, n, f):
    y = rng.integers(0, 3, n)
    p = rng.uniform(0.1, 0.9, (3, f))
    return pd.DataFrame((rng.random((n, f)) < p[y]).astype(float),
                        columns=[f"b{j}" for j in range(f)]), y


def gaussian_frame(rng, n, f):
    y = rng.integers(0, 3, n)
    mu = rng.normal(0, 2, (3, f))
    return pd.DataFrame(mu[y] + rng.normal(size=(n, f)), columns=[f"g{j}" for j in range(f)]), y


def with_missing(rng, X, share):
    X = X.copy()
    X[rng.random(X.shape) < share] = np.nan
    return X


@FEW
@given(seed=st.integers(0, 2**31 - 1), f=st.sampled_from([1, 4]), share=st.floats(0.1, 0.7),
       kind=st.sampled_from(["bernoulli", "gaussian", "both"]),
       method=st.sampled_from(["mean", "map", "bayes"]))
def test_decision_function_agrees_with_predict_on_rows_with_missing_values(
        x64, seed, f, share, kind, method):
    rng = np.random.default_rng(seed)
    parts, features = [], {}
    if kind in ("bernoulli", "both"):
        Xb, y = bernoulli_frame(rng, 120, f)
        parts.append(Xb)
        features.update({c: bnb.Bernoulli(alpha=2.0, beta=1.5) for c in Xb.columns})
    if kind in ("gaussian", "both"):
        Xg, y_g = gaussian_frame(rng, 120, f)
        y = y_g if kind == "gaussian" else y
        parts.append(Xg)
        family = bnb.Gaussian(pooled=True)
        features.update({c: family for c in Xg.columns})
    if kind == "both":
        features = {**{c: bnb.Bernoulli(alpha=2.0, beta=1.5) for c in parts[0].columns},
                    **dict.fromkeys(parts[1].columns, family)}
    if method == "bayes" and kind != "bernoulli":
        method = "mean"  # the Gaussian predictive is a Student-t: not linear
    X = pd.concat(parts, axis=1)
    clf = bnb.NaiveBayes(features, method=method).fit(X, y)
    X_test = pd.concat([with_missing(rng, X.iloc[:60], share),
                        X.iloc[:5].map(lambda v: np.nan)])  # rows missing every value
    scores = decision_function(clf, X_test)
    joint = clf.predict_joint_log_proba(X_test)
    diff = joint - scores
    np.testing.assert_allclose(diff - diff[:, :1], 0.0, atol=1e-9)
    margin = np.sort(joint, axis=1)
    clear = margin[:, -1] - margin[:, -2] > 1e-9
    np.testing.assert_array_equal(clf.classes_[scores.argmax(axis=1)][clear],
                                  clf.predict(X_test)[clear])
    W, b = linear_weights(clf)
    np.testing.assert_allclose(encode_linear(clf, X_test).to_numpy() @ W.to_numpy().T
                               + b.to_numpy(), scores, rtol=1e-12, atol=1e-12)


def test_bernoulli_linear_view_by_hand(x64):
    """Stated tables: the scores are log p(c) + the log factors of the observed values only."""
    p = {"a": {"no": 0.2, "yes": 0.7}, "b": {"no": 0.6, "yes": 0.1}}
    clf = bnb.from_tables({"no": 0.3, "yes": 0.7}, bernoulli=p)
    X = np.array([[1.0, np.nan], [np.nan, 0.0], [np.nan, np.nan], [0.0, 1.0]])
    scores = decision_function(clf, X)

    def by_hand(row, klass):
        s = np.log({"no": 0.3, "yes": 0.7}[klass])
        for value, column in zip(row, "ab", strict=True):
            if not np.isnan(value):
                q = p[column][klass]
                s += np.log(q if value == 1 else 1 - q)
        return s

    expected = np.array([[by_hand(r, k) for k in ("no", "yes")] for r in X])
    np.testing.assert_allclose(scores, expected, rtol=1e-12)
    # row 1 ([1, missing]): 0.3 * 0.2 < 0.7 * 0.7; row 2 ([missing, 0]): 0.3 * 0.4 < 0.7 * 0.9
    assert list(clf.predict(X)) == list(np.array(["no", "yes"])[expected.argmax(axis=1)])
    W, _ = linear_weights(clf)
    assert list(W.columns) == ["a", "a:observed", "b", "b:observed"]
    np.testing.assert_allclose(W.loc["yes", "b:observed"], np.log(0.9), rtol=1e-12)


def test_pooled_gaussian_linear_view_by_hand(x64):
    """A pooled Gaussian fitted by ML: the factor of an observed x is
    -lam (x - mu_k)^2 / 2 (up to class-free terms), that of a missing one nothing."""
    rng = np.random.default_rng(5)
    y = np.repeat([0, 1], 30)
    X = pd.DataFrame({"u": rng.normal(y * 1.5, 1.0), "v": rng.normal(-y, 1.0)})
    clf = bnb.NaiveBayes(bnb.Gaussian(pooled=True), method="ml").fit(X, y)
    mu = np.array([X[y == k].mean().to_numpy() for k in (0, 1)])
    resid = X.to_numpy() - mu[y]
    lam = 1.0 / (resid ** 2).mean(axis=0)  # the pooled ML variance, per column
    rows = np.array([[0.4, np.nan], [np.nan, -2.0], [1.0, 0.5]])
    hand = np.log(0.5) + np.nansum(-0.5 * lam * (rows[:, None, :] - mu[None]) ** 2, axis=2)
    named = pd.DataFrame(rows, columns=X.columns)  # fitted on a DataFrame: matched by name
    scores = decision_function(clf, named)
    diff = hand - scores
    np.testing.assert_allclose(diff - diff[:, :1], 0.0, atol=1e-9)
    assert list(clf.predict(named)) == list(hand.argmax(axis=1))


@pytest.mark.parametrize("method", ["mean", "map", "bayes"])
def test_decision_function_scores_missing_and_unseen_categories_as_predict(x64, method):
    """A Categorical value unseen in training has the method's smoothed probability (weight
    ``"col=<unseen>"``), a missing one none; with a Bernoulli column missing too."""
    rng = np.random.default_rng(21)
    n = 120
    y = rng.integers(0, 3, n)
    X = pd.DataFrame({"a": np.where(y == 2, rng.choice(["x", "y", "z"], n, p=[.7, .2, .1]),
                                    rng.choice(["x", "y", "z"], n)),
                      "b": rng.choice(["u", "v"], n),
                      "flag": (rng.random(n) < 0.2 + 0.3 * y).astype(float)})
    features = {"a": bnb.Categorical(alpha=2.0, unseen="smooth"),
                "b": bnb.Categorical(alpha=2.0, unseen="smooth"), "flag": bnb.Bernoulli()}
    clf = bnb.NaiveBayes(features, method=method).fit(X, y)
    test = pd.DataFrame({"a": ["new", "new", "x", None, "other", "y"],
                         "b": ["u", "v", "new", "new", None, "w"],
                         "flag": [1.0, np.nan, 0.0, np.nan, np.nan, 1.0]})
    joint, scores = clf.predict_joint_log_proba(test), decision_function(clf, test)
    diff = joint - scores
    np.testing.assert_allclose(diff - diff[:, :1], 0.0, atol=1e-9)
    W, _ = linear_weights(clf)
    assert {"a=<unseen>", "b=<unseen>", "flag:observed"} <= set(W.columns)
    ml = bnb.NaiveBayes(features, method="ml").fit(X, y)
    assert not any(c.endswith("=<unseen>") for c in linear_weights(ml)[0].columns)


# ---------------------------------------------------------------- predict_uncertainty
def xlogx(a):
    return np.where(a > 0, a * np.log(np.where(a > 0, a, 1.0)), 0.0)


@pytest.mark.parametrize("seed", [0, 1])
def test_uncertainty_decomposes_the_entropy_of_the_draws_mean(x64, seed):
    """Hand-made Beta/Dirichlet draws (not the library's sampler): ``entropy`` is the entropy
    of the draw-averaged p(c | x, theta), ``aleatoric`` the mean of the draws' entropies and
    ``mutual_info`` their difference, as NumPy computes them from the same draws; ``proba``
    stays the predictive E[p(x, c | theta)] / E[p(x | theta)]."""
    clf, draws, rows = bernoulli_draws(seed)
    _, f, k, _, _ = SHAPE
    u = clf.predict_uncertainty(rows, draws=draws)

    pi = draws["class_probs"].reshape(-1, k)
    theta = draws["bernoulli.theta"].reshape(-1, k, f)
    x = rows[None, :, None, :]  # (1, n, 1, f)
    cell = np.where(x == 1, np.log(theta[:, None]), np.log1p(-theta[:, None]))
    s = np.log(pi)[:, None, :] + np.where(np.isnan(x), 0.0, cell).sum(axis=3)  # (D, n, K)
    p = np.exp(s - np.logaddexp.reduce(s, axis=2, keepdims=True))
    total = -xlogx(p.mean(axis=0)).sum(axis=1)
    aleatoric = -xlogx(p).sum(axis=2).mean(axis=0)
    joint = np.logaddexp.reduce(s, axis=0)
    np.testing.assert_allclose(u["entropy"], total, rtol=1e-9)
    np.testing.assert_allclose(u["aleatoric"], aleatoric, rtol=1e-9)
    np.testing.assert_allclose(u["mutual_info"], total - aleatoric, rtol=1e-7, atol=1e-12)
    assert np.all(u["mutual_info"] >= 0)
    np.testing.assert_array_equal(u["entropy"] - u["mutual_info"], u["aleatoric"])
    np.testing.assert_allclose(
        u["proba"], np.exp(joint - np.logaddexp.reduce(joint, axis=1, keepdims=True)),
        rtol=1e-9)


def test_one_draw_has_no_epistemic_uncertainty(x64):
    """With every draw the same, the label's uncertainty is all aleatoric: mutual_info is 0
    and entropy is the entropy of the (single) predictive."""
    rng = np.random.default_rng(2)
    X = (rng.random((40, 3)) < 0.5).astype(float)
    y = rng.integers(0, 2, 40)
    clf = bnb.NaiveBayes(bnb.Bernoulli(), method="bayes").fit(X, y)
    theta = rng.uniform(0.2, 0.8, (2, 3))
    draws = {"class_probs": np.broadcast_to([0.3, 0.7], (1, 5, 2)).copy(),
             "bernoulli.theta": np.broadcast_to(theta, (1, 5, 2, 3)).copy()}
    u = clf.predict_uncertainty(X[:10], draws=draws)
    np.testing.assert_allclose(u["mutual_info"], 0.0, atol=1e-12)
    np.testing.assert_allclose(u["entropy"], -xlogx(u["proba"]).sum(axis=1), rtol=1e-9)
    np.testing.assert_allclose(u["aleatoric"], u["entropy"], rtol=1e-9)


# ---------------------------------------------------------------- empirical Bayes
def bernoulli_evidence_maximiser(X, y, bounds):
    """The symmetric Beta(a, a) strength maximising the closed-form Beta-Bernoulli evidence
    sum_kj betaln(a + s_kj, a + n_kj - s_kj) - betaln(a, a), by SciPy (the class term does not
    depend on a)."""
    from scipy.optimize import minimize_scalar
    from scipy.special import betaln

    classes = np.unique(y)
    ones = np.array([X[y == k].sum(axis=0) for k in classes])
    n = np.array([[np.sum(y == k)] * X.shape[1] for k in classes], dtype=float)

    def minus(log_a):
        a = np.exp(log_a)
        return -np.sum(betaln(a + ones, a + n - ones) - betaln(a, a))

    res = minimize_scalar(minus, bounds=np.log(bounds), method="bounded",
                          options={"xatol": 1e-10})
    return float(np.exp(res.x)), -res.fun


@pytest.mark.parametrize("hyperparameter", ["alpha", "beta"])
@pytest.mark.parametrize("seed", [4, 11])
def test_empirical_bayes_tunes_a_symmetric_beta_strength(x64, hyperparameter, seed):
    from bayesnb.analysis import empirical_bayes

    rng = np.random.default_rng(seed)
    n, f = 150, 6
    y = rng.integers(0, 2, n)
    # rare ones in most columns: tuning alpha alone would pull the prior mean towards them
    X = (rng.random((n, f)) < rng.uniform(0.02, 0.3, (2, f))[y]).astype(float)
    bounds = (1e-2, 1e2)
    want, _ = bernoulli_evidence_maximiser(X, y, bounds)
    best, model = empirical_bayes(bnb.NaiveBayes(bnb.Bernoulli(alpha=3.0, beta=0.5)), X, y,
                                  hyperparameter=hyperparameter, bounds=bounds)
    assert best == pytest.approx(want, rel=1e-4)
    family = model.blocks_[0].family
    assert family.alpha == family.beta == pytest.approx(best)
    # the returned model is that prior's fit: its evidence is no worse nearby
    near = [bnb.NaiveBayes(bnb.Bernoulli(alpha=a, beta=a)).fit(X, y).log_evidence()
            for a in (best * 0.98, best * 1.02)]
    assert model.log_evidence() >= max(near)


# ---------------------------------------------------------------- join_columns
def test_join_columns_refuses_a_continuous_column_by_name():
    from bayesnb import JoinColumns, join_columns

    rng = np.random.default_rng(8)
    n = 30
    X = pd.DataFrame({"kind": rng.choice(["p", "q"], n),
                      "count": rng.integers(0, 4, n).astype(float),
                      "height": rng.normal(170, 10, n),
                      "weight": pd.array(rng.normal(70, 5, n), dtype="Float64"),
                      "mixed": np.array(["x"] * (n - 1) + [2.25], dtype=object),
                      "binned": pd.Series(rng.choice([0.5, 1.5], n)).astype("category")})
    X.loc[3, "count"] = np.nan
    for continuous in ("height", "weight", "mixed", "binned"):
        with pytest.raises(ValueError, match=f"column '{continuous}' holds .*not a discrete"):
            join_columns(X, [("kind", continuous)])
        with pytest.raises(ValueError, match=f"column '{continuous}'"):
            JoinColumns([("count", continuous)]).fit_transform(X)
    # discrete columns (strings, integer-valued floats with a missing value) still join
    joined = join_columns(X, [("kind", "count")])
    assert joined["kind&count"].dropna().nunique() <= 8
    assert pd.isna(joined.loc[3, "kind&count"])


# ---------------------------------------------------------------- to_arviz and az.compare
def test_az_compare_of_titanic_with_and_without_age_ranks_the_full_model_first():
    """The default log_likelihood group is log p(y_i | x_i, theta): models reading different
    columns are scored on the same labels, and the full model wins (the joint
    log p(x_i, y_i | theta) ranked the model without Age first, by hundreds of nats of
    density of less data). The ranking agrees with the exact conditional leave-one-out."""
    import warnings

    import arviz as az

    from bayesnb.datasets import load_titanic

    X, y = load_titanic()
    models, data = {}, {}
    for name, cols in (("without Age", ["Class", "Sex"]), ("full", ["Class", "Sex", "Age"])):
        clf = bnb.NaiveBayes(method="bayes").fit(X[cols], y)
        models[name] = clf.to_arviz(clf.sample_posterior(800, seed=3), prior_draws=None,
                                    X=X[cols], y=y)
        assert list(models[name].log_likelihood.data_vars) == ["y_given_x"]
        data[name] = clf.loo(X[cols], y).elpd_loo
    with warnings.catch_warnings():  # ArviZ's notes (pandas API, Pareto k) are not under test
        warnings.simplefilter("ignore")
        table = az.compare(models)
    assert table.index[0] == "full"
    assert data["full"] > data["without Age"]


def test_stored_conditional_log_likelihood_is_log_predict_proba_at_the_true_labels(x64):
    """Every draw at the posterior mean, computed by hand from the counts: the stored values
    are then log predict_proba (method="mean") at the true labels, row by row."""
    rng = np.random.default_rng(12)
    n = 90
    y = rng.choice(["lo", "mid", "hi"], n)
    X = pd.DataFrame({"shape": rng.choice(["round", "square"], n),
                      "tone": np.where(y == "hi", rng.choice(["a", "b", "c"], n, p=[.6, .3, .1]),
                                       rng.choice(["a", "b", "c"], n))})
    clf = bnb.NaiveBayes(bnb.Categorical(alpha=0.5), method="mean", class_alpha=2.0).fit(X, y)
    classes = list(clf.classes_)
    counts = pd.Series(y).value_counts().reindex(classes).to_numpy()
    class_mean = (counts + 2.0) / (n + 3 * 2.0)
    chains, draws = 2, 3
    sample = {"class_probs": np.broadcast_to(class_mean, (chains, draws, 3)).copy()}
    for col, levels in (("shape", ["round", "square"]), ("tone", ["a", "b", "c"])):
        table = pd.crosstab(pd.Series(y, name="y"), X[col]).reindex(index=classes,
                                                                    columns=levels)
        mean = (table.to_numpy() + 0.5) / (table.to_numpy().sum(axis=1, keepdims=True)
                                           + 0.5 * len(levels))
        sample[f"categorical.{col}.probs"] = np.broadcast_to(mean, (chains, draws) +
                                                             mean.shape).copy()
    idata = clf.to_arviz(sample, prior_draws=None, X=X, y=y)
    stored = idata.log_likelihood["y_given_x"].values
    assert stored.shape == (chains, draws, n)
    at_label = np.log(clf.predict_proba(X))[np.arange(n), [classes.index(v) for v in y]]
    for c in range(chains):
        for d in range(draws):
            np.testing.assert_allclose(stored[c, d], at_label, rtol=1e-10)
