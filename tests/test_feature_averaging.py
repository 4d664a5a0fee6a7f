"""Exact Bayesian model averaging over feature subsets (``feature_prior``, issue 13 section 1).

The reference enumerates all 2^F structures explicitly: each unit's class-specific terms come
from a plain one-column NaiveBayes fitted with the labels, its shared terms from one fitted
with every row in a single class; a structure's evidence and predictive are sums of those, and
the averages are taken over the 2^F structures by brute force (no factorisation assumed).
"""

import contextlib
import io
import itertools
import json
import re
import runpy
import zipfile
from functools import partial
from pathlib import Path

import jax
import numpy as np
import pandas as pd
import pytest
from scipy import sparse, stats
from scipy.special import betaln, gammaln, logsumexp

import bayesnb as bnb
from bayesnb.scoring import TableScorer

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")

WORDS = ["w1", "w2", "w3"]
PRIOR = {"g": 0.3, "h": 0.5, "b": 0.6, "c": 0.4, "d": 0.5, "e": 0.2, "p": 0.7,
         tuple(WORDS): 0.5}


def _features():
    cat, gauss = bnb.Categorical(), bnb.Gaussian(kappa=0.5, rate=1.0)  # one block each
    return {"p": bnb.Poisson(), tuple(WORDS): bnb.Multinomial(), "b": bnb.Bernoulli(),
            "c": cat, "d": cat, "e": cat, "g": gauss, "h": gauss}


def _data(n, seed):
    rng = np.random.default_rng(seed)
    y = rng.choice(np.array(["a", "b", "c"]), n)
    k = (y == "b") + 2 * (y == "c")
    X = pd.DataFrame({
        "g": rng.normal(0.8 * k, 1.0), "h": rng.normal(0.0, 1.0, n),
        "b": rng.random(n) < 0.3 + 0.2 * k, "c": rng.choice(list("xyz"), n),
        "d": np.array(list("klm"))[(k + rng.integers(0, 2, n)) % 3],
        "e": rng.choice(list("uv"), n),
        "p": rng.poisson(1.0 + 0.5 * k),
    })
    counts = rng.multinomial(6, [0.5, 0.3, 0.2], n) + (k[:, None] == np.arange(3)) * 2
    for i, w in enumerate(WORDS):
        X[w] = counts[:, i]
    X.loc[X.index[::7], "g"] = np.nan  # missing values drop out of that column only
    return X, y


@pytest.fixture(scope="module")
def data():
    return _data(40, 0), _data(12, 1)


def _gaussian(x, xt, loc=0.0, kappa=0.5, shape=1.0, rate=1.0):
    x = x[~np.isnan(x)]
    n, mean = len(x), x.mean() if len(x) else 0.0
    ss = np.sum((x - mean) ** 2)
    kn, an = kappa + n, shape + n / 2
    mn = (kappa * loc + n * mean) / kn
    bn = rate + ss / 2 + kappa * n * (mean - loc) ** 2 / (2 * kn)
    ev = (gammaln(an) - gammaln(shape) + shape * np.log(rate) - an * np.log(bn)
          + 0.5 * np.log(kappa / kn) - n / 2 * np.log(2 * np.pi))
    t = stats.t(df=2 * an, loc=mn, scale=np.sqrt(bn * (kn + 1) / (an * kn)))
    return ev, np.where(np.isnan(xt), 0.0, t.logpdf(np.nan_to_num(xt)))


def _bernoulli(x, xt, a=1.0, b=1.0):
    n1, n = x.sum(), len(x)
    p1 = (a + n1) / (a + b + n)
    return betaln(a + n1, b + n - n1) - betaln(a, b), np.where(xt, np.log(p1), np.log1p(-p1))


def _categorical(x, xt, levels=("x", "y", "z"), alpha=1.0):
    counts = np.array([np.sum(x == v) for v in levels])
    big = alpha * len(levels)
    ev = gammaln(big) - gammaln(big + len(x)) + np.sum(gammaln(alpha + counts) - gammaln(alpha))
    prob = (alpha + counts) / (big + len(x))
    return ev, np.log(prob[[levels.index(v) for v in xt]])


def _poisson(x, xt, shape=1.0, rate=0.1):
    total, n = x.sum(), len(x)
    ev = (shape * np.log(rate) - (shape + total) * np.log(rate + n) + gammaln(shape + total)
          - gammaln(shape) - np.sum(gammaln(x + 1.0)))
    return ev, stats.nbinom(shape + total, (rate + n) / (rate + n + 1)).logpmf(xt)


def _multinomial(x, xt, alpha=1.0):
    totals, a = x.sum(axis=0), np.full(x.shape[1], alpha)
    coef = np.sum(gammaln(x.sum(axis=1) + 1.0) - np.sum(gammaln(x + 1.0), axis=1))
    ev = (coef + gammaln(a.sum()) - gammaln(a.sum() + totals.sum())
          + np.sum(gammaln(a + totals) - gammaln(a)))
    return ev, stats.dirichlet_multinomial(a + totals, xt.sum(axis=1)).logpmf(xt)


REFERENCE = {"g": _gaussian, "h": _gaussian, "b": _bernoulli, "c": _categorical,
             "d": partial(_categorical, levels=("k", "l", "m")),
             "e": partial(_categorical, levels=("u", "v")),
             "p": _poisson, tuple(WORDS): _multinomial}


def _values(X, key):
    return X[list(key)].to_numpy(float) if isinstance(key, tuple) else X[key].to_numpy()


def _brute_force(X, y, Xt, prior=PRIOR):
    """log sum_S p(S) p(y, X | S), the inclusion probabilities and log sum_S p(S | D)
    p(x, c | D, S) for every test row, each structure's terms from scipy's closed forms."""
    classes, counts = np.unique(y, return_counts=True)
    class_ev = gammaln(len(classes)) - gammaln(len(classes) + len(y)) + np.sum(
        gammaln(1.0 + counts))
    log_class = np.log((counts + 1.0) / (len(y) + len(classes)))
    keys = list(prior)
    dep, shared = {}, {}
    for k in keys:
        x, xt = _values(X, k), _values(Xt, k)
        parts = [REFERENCE[k](x[y == c], xt) for c in classes]
        dep[k] = (sum(e for e, _ in parts), np.stack([lp for _, lp in parts], axis=1))
        shared[k] = REFERENCE[k](x, xt)
    structures = list(itertools.product([True, False], repeat=len(keys)))
    log_post, joints = [], []
    for structure in structures:
        log_ps, joint = class_ev, np.broadcast_to(log_class, (len(Xt), len(classes))).copy()
        for on, k in zip(structure, keys, strict=True):
            if on:
                log_ps += np.log(prior[k]) + dep[k][0]
                joint += dep[k][1]
            else:
                log_ps += np.log1p(-prior[k]) + shared[k][0]
                joint += shared[k][1][:, None]
        log_post.append(log_ps)
        joints.append(joint)
    log_post = np.array(log_post)
    evidence = logsumexp(log_post)
    weights = np.exp(log_post - evidence)
    relevance = {k: float(sum(w for w, s in zip(weights, structures, strict=True) if s[i]))
                 for i, k in enumerate(keys)}
    joint = logsumexp(np.stack(joints) + np.log(weights)[:, None, None], axis=0)
    return evidence, relevance, joint


@pytest.fixture(scope="module")
def reference(data):
    (X, y), (Xt, _) = data
    return _brute_force(X, y, Xt)


def _fit(X, y, method="bayes", sample_weight=None):
    return bnb.NaiveBayes(_features(), method=method, feature_prior=PRIOR).fit(
        X, y, sample_weight=sample_weight)


@pytest.fixture(scope="module")
def fitted(data):
    (X, y), _ = data
    with jax.enable_x64(True):
        return _fit(X, y)


def test_enumeration_bayes(data, reference, fitted, x64):
    """Evidence, inclusion probabilities, predictive and joint against all 2^8 structures
    (a Categorical block of columns with 3, 3 and 2 levels among them)."""
    (X, y), (Xt, _) = data
    evidence, relevance, joint = reference
    clf = fitted
    np.testing.assert_allclose(clf.log_evidence(), evidence, rtol=1e-10)
    np.testing.assert_allclose(clf.log_evidence(per_block=True).sum(), evidence, rtol=1e-10)
    got = clf.feature_relevance_
    assert set(got.index) == set(PRIOR) and len(got) == len(PRIOR)
    for k, r in relevance.items():
        assert got[k] == pytest.approx(r, rel=1e-9, abs=1e-12), k
    assert min(relevance.values()) < 0.2 and max(relevance.values()) > 0.9  # not all alike
    proba = np.exp(joint - logsumexp(joint, axis=1, keepdims=True))
    np.testing.assert_allclose(clf.predict_proba(Xt), proba, rtol=1e-9, atol=1e-12)
    # log sum_S p(S | D) p(x, c | D, S), every constant included
    np.testing.assert_allclose(clf.predict_joint_log_proba(Xt), joint, rtol=1e-10)


def _masked(Xt, keep):
    out = Xt.copy().astype(object)
    for c in Xt.columns:
        if c not in keep:
            out[c] = np.nan
    return out


@pytest.mark.parametrize("method", ["mean", "ml"])
def test_enumeration_plug_in(method, data, reference, fitted, x64):
    """The plug-in methods: per unit, the class-specific and the shared plug-in densities
    mixed with the exact inclusion probabilities. The densities come from plain models (one
    fitted with the labels, one whose three classes each hold every row, so its classes'
    densities are those of every row in one class) scoring rows where every other column is
    missing."""
    (X, y), (Xt, _) = data
    _, relevance, _ = reference
    clf = fitted.set_params(method=method)
    try:
        dep = bnb.NaiveBayes(_features(), method=method).fit(X, y)
        # three classes of the same rows, not one class: the shapes (three classes, 40 rows)
        # of ``dep``'s compiled statistics and score kernels, which a one-class model
        # compiled again
        one = bnb.NaiveBayes(_features(), method=method)
        for k in range(3):
            one.partial_fit(X, np.full(len(y), k), classes=np.arange(3))
        for k, r in relevance.items():  # the weights do not depend on the method
            assert clf.feature_relevance_[k] == pytest.approx(r, rel=1e-9, abs=1e-12)
        base_dep = dep.predict_joint_log_proba(_masked(Xt, ()))  # log p(c): no column seen
        base_one = one.predict_joint_log_proba(_masked(Xt, ()))
        joint = base_dep.copy()
        for k, r in relevance.items():
            cols = k if isinstance(k, tuple) else (k,)
            lp_dep = dep.predict_joint_log_proba(_masked(Xt, cols)) - base_dep
            lp_one = one.predict_joint_log_proba(_masked(Xt, cols)) - base_one
            np.testing.assert_allclose(lp_one, lp_one[:, [0]].repeat(3, axis=1), rtol=1e-12)
            joint += np.logaddexp(np.log(r) + lp_dep, np.log1p(-r) + lp_one[:, [0]])
        proba = np.exp(joint - logsumexp(joint, axis=1, keepdims=True))
        np.testing.assert_allclose(clf.predict_proba(Xt), proba, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(clf.predict_joint_log_proba(Xt), joint, rtol=1e-10)
    finally:
        clf.set_params(method="bayes")


def test_float32_agrees_with_float64(data, fitted):
    """The default dtype: statistics from the float32 kernels, averaging in float64."""
    (X, y), (Xt, _) = data
    clf = _fit(X, y)
    np.testing.assert_allclose(clf.feature_relevance_, fitted.feature_relevance_, rtol=1e-5,
                               atol=1e-7)
    np.testing.assert_allclose(clf.log_evidence(), fitted.log_evidence(), rtol=1e-6)
    with jax.enable_x64(True):
        want = fitted.predict_proba(Xt)
    np.testing.assert_allclose(clf.predict_proba(Xt), want, rtol=1e-5, atol=1e-7)


def _same(a, b, Xt, rtol=1e-10):
    np.testing.assert_allclose(a.feature_relevance_, b.feature_relevance_, rtol=rtol,
                               atol=1e-12)
    np.testing.assert_allclose(a.log_evidence(), b.log_evidence(), rtol=rtol)
    np.testing.assert_allclose(a.predict_proba(Xt), b.predict_proba(Xt), rtol=rtol,
                               atol=1e-12)


def test_weights_partial_fit_merge_and_save(data, fitted, tmp_path, x64):
    """Integer weights = duplicated rows; partial_fit in two chunks, and merging fits of the
    halves, = one fit; a saved model predicts alike and keeps its feature_prior (a
    Multinomial block's tuple key included)."""
    (X, y), (Xt, _) = data
    w = np.arange(len(y)) % 3
    rows = np.repeat(np.arange(len(y)), w)
    _same(_fit(X, y, sample_weight=w), _fit(X.iloc[rows], y[rows]), Xt)
    half = len(y) // 2
    chunked = bnb.NaiveBayes(_features(), method="bayes", feature_prior=PRIOR)
    chunked.partial_fit(X[:half], y[:half], classes=np.unique(y))
    chunked.partial_fit(X[half:], y[half:])
    _same(chunked, fitted, Xt)
    left = _fit(X[:half], y[:half])
    right = _fit(X[half:], y[half:])
    _same(bnb.merge(left, right), fitted, Xt)
    path = tmp_path / "averaged.bnb"
    bnb.save(fitted, path)
    loaded = bnb.load(path)
    assert loaded.feature_prior == PRIOR
    _same(loaded, fitted, Xt, rtol=1e-12)
    scalar = bnb.NaiveBayes(_features(), method="mean", feature_prior=0.25).fit(X, y)
    bnb.save(scalar, path)
    assert bnb.load(path).feature_prior == 0.25
    np.testing.assert_array_equal(bnb.load(path).predict_proba(Xt), scalar.predict_proba(Xt))


def test_an_averaged_model_is_format_version_2(data, fitted, tmp_path):
    """A file with a feature_prior says format version 2, so a reader of version 1 (which
    would ignore the key and predict without the averaging) refuses it; plain models are still
    version 1, and a version-1 file claiming a feature_prior is refused."""
    (X, y), _ = data

    def manifest(path):
        with zipfile.ZipFile(path) as zf:
            return json.loads(zf.read("manifest.json"))

    averaged = bnb.save(fitted, tmp_path / "averaged.bnb")
    plain = bnb.save(bnb.NaiveBayes(_features(), method="bayes").fit(X, y),
                     tmp_path / "plain.bnb")
    assert manifest(averaged)["format_version"] == 2
    assert manifest(plain)["format_version"] == 1
    members = {}
    with zipfile.ZipFile(averaged) as zf:
        members = {n: zf.read(n) for n in zf.namelist()}
    members["manifest.json"] = json.dumps({**manifest(averaged), "format_version": 1})
    forged = tmp_path / "forged.bnb"
    with zipfile.ZipFile(forged, "w") as zf:
        for name, content in members.items():
            zf.writestr(name, content)
    with pytest.raises(ValueError, match="feature_prior needs format version 2"):
        bnb.load(forged)


def test_reports_explain_and_summary(data, fitted):
    """class_prior_, summary() and explain() work on the averaged model; explain's column
    factors are the per-column mixtures (they multiply to the joint)."""
    _, (Xt, _) = data
    text = fitted.summary()
    assert "depends on the class" in text and "log evidence" in text
    table = fitted.explain(Xt.iloc[[1]], log=True)
    columns = [k for k in table.index if k not in ("prior", "joint", "posterior")]
    np.testing.assert_allclose(table.loc["prior"] + table.loc[columns].sum(),
                               table.loc["joint"], rtol=1e-6)


def test_relevant_columns_found_and_log_loss_no_worse():
    """3 relevant columns among 30: relevance > 0.99 for them, and the averaged predictive's
    held-out log loss is no worse than plain naive Bayes'."""
    rng = np.random.default_rng(3)
    n_train, n_test, n_features = 150, 2000, 30
    y = rng.integers(0, 2, n_train + n_test)
    X = rng.normal(size=(n_train + n_test, n_features))
    X[:, :3] += 1.2 * y[:, None]
    Xtr, ytr, Xte, yte = X[:n_train], y[:n_train], X[n_train:], y[n_train:]
    averaged = bnb.NaiveBayes(method="bayes", feature_prior=0.5).fit(Xtr, ytr)
    plain = bnb.NaiveBayes(method="bayes").fit(Xtr, ytr)
    relevance = averaged.feature_relevance_
    assert relevance.iloc[:3].min() > 0.99
    assert relevance.iloc[3:].max() < 0.5

    def log_loss(clf):
        return -np.mean(np.log(clf.predict_proba(Xte)[np.arange(n_test), yte]))

    assert log_loss(averaged) <= log_loss(plain)


def test_sparse_input_equals_dense():
    rng = np.random.default_rng(4)
    y = rng.integers(0, 2, 30)
    counts = rng.poisson(1.0 + np.outer(y, [2, 0, 0, 1, 0, 0]))
    for family, X in ((bnb.Multinomial(), counts), (bnb.Bernoulli(), (counts > 0) * 1.0)):
        dense = bnb.NaiveBayes(family, method="bayes", feature_prior=0.5).fit(X, y)
        sp = bnb.NaiveBayes(family, method="bayes", feature_prior=0.5).fit(
            sparse.csr_matrix(X), y)
        np.testing.assert_allclose(sp.feature_relevance_, dense.feature_relevance_, rtol=1e-6)
        np.testing.assert_allclose(sp.log_evidence(), dense.log_evidence(), rtol=1e-6)
        np.testing.assert_allclose(sp.predict_proba(sparse.csr_matrix(X)),
                                   dense.predict_proba(X), rtol=1e-6, atol=1e-9)


def test_dask_fit_and_predict_equal_in_memory(data, fitted, x64):
    da = pytest.importorskip("dask.array")
    rng = np.random.default_rng(5)
    y = rng.integers(0, 2, 40)
    X = rng.normal(size=(40, 4)) + np.outer(y, [1.5, 0, 0, 0])
    batch = bnb.NaiveBayes(method="bayes", feature_prior=0.5).fit(X, y)
    dX = da.from_array(X, chunks=(10, 4))
    model = bnb.NaiveBayes(method="bayes", feature_prior=0.5).fit(dX, da.from_array(y, 10))
    np.testing.assert_allclose(model.feature_relevance_, batch.feature_relevance_, rtol=1e-10)
    np.testing.assert_allclose(model.predict_proba(dX).compute(), batch.predict_proba(X),
                               rtol=1e-10)


@pytest.mark.parametrize("prior, message", [
    (0.0, "must be in \\(0, 1\\)"), (1.0, "must be in \\(0, 1\\)"), (1.5, "got 1.5"),
    ({"g": -0.1}, "feature_prior\\['g'\\] must be in"), ("half", "must be a number"),
    ({"nope": 0.5}, "column 'nope', which is not a column"),
    ({"w1": 0.5}, "part of the Multinomial block \\('w1', 'w2', 'w3'\\)"),
])
def test_bad_feature_prior(prior, message, data):
    (X, y), _ = data
    with pytest.raises((ValueError, TypeError), match=message):
        bnb.NaiveBayes(_features(), feature_prior=prior).fit(X, y)


def test_refusals(data):
    (X, y), _ = data
    with pytest.raises(ValueError, match="feature_prior with method='mcmc' is not supported"):
        bnb.NaiveBayes(_features(), method="mcmc", feature_prior=0.5).fit(X, y)
    from bayesnb.analysis import linear_weights

    with pytest.raises(ValueError, match="feature_prior averages"):
        linear_weights(bnb.NaiveBayes(_features(), feature_prior=0.5).fit(X, y))
    plain = bnb.NaiveBayes(_features()).fit(X, y)
    with pytest.raises(AttributeError, match="set feature_prior"):
        _ = plain.feature_relevance_
    assert isinstance(plain._scorer(), TableScorer)  # the default path: the plain scorer


def test_example_and_docs_numbers():
    """examples/feature_relevance.py runs, finds the informative columns, beats plain naive
    Bayes on held-out log loss, and prints the numbers the user guide's averaging page
    quotes."""
    root = Path(__file__).resolve().parents[1]
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):  # in this process: its compiled kernels reused
        runpy.run_path(str(root / "examples" / "feature_relevance.py"), run_name="example")[
            "main"]([])
    text = buffer.getvalue()
    assert re.search(r"^data: \S", text, re.MULTILINE)
    relevance = dict(re.findall(r"^(\w+)\s+([\d.]+)$", text, re.MULTILINE))
    assert all(float(relevance[c]) > 0.99 for c in ("blood_test", "symptom", "cigarettes"))
    assert max(float(v) for c, v in relevance.items() if c.startswith("noise")) < 0.33
    losses = re.findall(r"held-out log loss, [\w -]+: ([\d.]+)", text)
    assert float(losses[1]) < float(losses[0])
    section = (root / "docs" / "user_guide" / "averaging.md").read_text()
    for quoted in (*losses, relevance["symptom"]):
        assert quoted in section, quoted


def test_columns_declared_one_by_one_are_scored_together(data, reference, monkeypatch, x64):
    """The Gaussian columns declared one by one (a block each, one prior) are scored as one
    part of the averaged predictive (``averaging._column_groups``: traced block by block,
    200 one-column blocks compiled for 32 s); the answers are still every structure's
    (the 2^8 enumeration)."""
    import bayesnb.averaging as averaging

    (X, y), (Xt, _) = data
    _, _, joint = reference
    seen = []
    real = averaging._column_groups
    monkeypatch.setattr(averaging, "_column_groups",
                        lambda *a: seen.append(real(*a)[0]) or real(*a))
    features = {**_features(), "g": bnb.Gaussian(kappa=0.5, rate=1.0),
                "h": bnb.Gaussian(kappa=0.5, rate=1.0)}
    clf = bnb.NaiveBayes(features, method="bayes", feature_prior=PRIOR).fit(X, y)
    proba = np.exp(joint - logsumexp(joint, axis=1, keepdims=True))
    np.testing.assert_allclose(clf.predict_proba(Xt), proba, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(clf.predict_joint_log_proba(Xt), joint, rtol=1e-10)
    names = [tuple(b.schema.columns) for b in clf.fitted_.blocks]
    assert [[names[b] for b in group] for group in seen[-1] if len(group) > 1] == [
        [("g",), ("h",)]]
