"""Mixed DataFrames (string categories, booleans, floats and counts), missing values, and many
Bernoulli features.

References are computed by hand from the raw data (pandas group-bys and the conjugate formulas)
and scipy.stats densities, never from the library's own kernels.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from scipy.special import logsumexp

import bayesnb as bnb

CLASSES = np.array(["a", "b", "c"])
COLORS = ["blue", "green", "red"]
SIZES = ["S", "M", "L"]
WORDS = ["w0", "w1", "w2", "w3"]

# the generative model: class -> parameters of every column
P_CLASS = np.array([0.3, 0.3, 0.4])
P_COLOR = np.array([[0.7, 0.2, 0.1], [0.2, 0.6, 0.2], [0.1, 0.2, 0.7]])
P_SIZE = np.array([[0.6, 0.3, 0.1], [0.3, 0.4, 0.3], [0.1, 0.3, 0.6]])
P_FLAG = np.array([0.2, 0.5, 0.8])
MU_HEIGHT, SD_HEIGHT = np.array([-1.0, 0.0, 1.0]), np.array([1.0, 0.7, 1.3])
RATE_VISITS = np.array([1.0, 3.0, 6.0])
P_WORDS = np.array([[0.4, 0.3, 0.2, 0.1], [0.25, 0.25, 0.25, 0.25], [0.1, 0.2, 0.3, 0.4]])


def make_frame(n: int, seed: int) -> tuple[pd.DataFrame, np.ndarray]:
    rng = np.random.default_rng(seed)
    k = rng.choice(3, size=n, p=P_CLASS)
    color = [COLORS[rng.choice(3, p=P_COLOR[c])] for c in k]
    size = [SIZES[rng.choice(3, p=P_SIZE[c])] for c in k]
    lengths = rng.integers(5, 15, size=n)
    words = np.array([rng.multinomial(m, P_WORDS[c]) for m, c in zip(lengths, k, strict=True)])
    frame = pd.DataFrame({
        "color": pd.Series(color, dtype=object),
        "size": pd.Categorical(size, categories=SIZES),
        "flag": rng.random(n) < P_FLAG[k],
        "height": rng.normal(MU_HEIGHT[k], SD_HEIGHT[k]),
        "visits": rng.poisson(RATE_VISITS[k]).astype(np.int64),
        **{w: words[:, j].astype(np.int64) for j, w in enumerate(WORDS)},
    })
    return frame, CLASSES[k]


def mixed_features():
    """visits -> Poisson; the four word columns -> one Multinomial (the same instance)."""
    words = bnb.Multinomial(alpha=1.0)
    return {"visits": bnb.Poisson(), **{w: words for w in WORDS}}


@pytest.fixture(scope="module")
def train():
    return make_frame(900, seed=0)


@pytest.fixture(scope="module")
def test():
    return make_frame(600, seed=1)


# ---------------------------------------------------------------------------- hand reference
def hand_tables(frame: pd.DataFrame, y: np.ndarray) -> dict:
    """Posterior-mean plug-in parameters under the default priors, from raw counts."""
    out = {"class": {}, "color": {}, "size": {}, "flag": {}, "height": {}, "visits": {},
           "words": {}}
    n_k = np.array([(y == c).sum() for c in CLASSES], dtype=float)
    out["class"] = (n_k + 1.0) / (n_k.sum() + len(CLASSES))  # Dirichlet(1, 1, 1)
    for c in CLASSES:
        part = frame[y == c]
        for col, levels in (("color", COLORS), ("size", sorted(SIZES))):
            obs = part[col].dropna().astype(object)
            counts = np.array([(obs == v).sum() for v in levels], dtype=float)
            out[col][c] = dict(zip(levels, (counts + 1.0) / (counts.sum() + len(levels)),
                                   strict=True))
        flag = part["flag"].dropna().astype(float)
        out["flag"][c] = (flag.sum() + 1.0) / (len(flag) + 2.0)  # Beta(1, 1)
        # Normal-Gamma(loc=0, kappa=1e-3, shape=1, rate=0.01) (Murphy 2007, section 3)
        h = part["height"].dropna().to_numpy(dtype=float)
        m, kappa, a, b = 0.0, 1e-3, 1.0, 0.01
        n, xbar = len(h), h.mean()
        kappa_n = kappa + n
        a_n = a + n / 2
        b_n = b + 0.5 * np.sum((h - xbar) ** 2) + kappa * n * (xbar - m) ** 2 / (2 * kappa_n)
        out["height"][c] = ((kappa * m + n * xbar) / kappa_n, np.sqrt(b_n / a_n))
        v = part["visits"].dropna().to_numpy(dtype=float)
        out["visits"][c] = (1.0 + v.sum()) / (0.1 + len(v))  # Gamma(1, 0.1)
        totals = np.nansum(part[WORDS].to_numpy(dtype=float), axis=0)
        out["words"][c] = (totals + 1.0) / (totals.sum() + len(WORDS))
    return out


def hand_joint_log(tables: dict, row: pd.Series) -> np.ndarray:
    """log p(x, c) per class by scipy.stats, missing entries left out (masked, not imputed)."""
    out = np.log(tables["class"]).copy()
    for k, c in enumerate(CLASSES):
        for col in ("color", "size"):
            if not pd.isna(row[col]):
                out[k] += np.log(tables[col][c][row[col]])
        if not pd.isna(row["flag"]):
            out[k] += stats.bernoulli.logpmf(int(row["flag"]), tables["flag"][c])
        if not pd.isna(row["height"]):
            mean, sd = tables["height"][c]
            out[k] += stats.norm.logpdf(float(row["height"]), mean, sd)
        if not pd.isna(row["visits"]):
            out[k] += stats.poisson.logpmf(int(row["visits"]), tables["visits"][c])
        x = row[WORDS].to_numpy(dtype=float)
        seen = ~np.isnan(x)
        if seen.any():  # a multinomial over the observed columns only
            p = tables["words"][c][seen]
            out[k] += stats.multinomial.logpmf(x[seen], int(x[seen].sum()), p / p.sum())
    return out


# ---------------------------------------------------------------------------- mixed frame
def test_inferred_families_follow_the_dtype_rule(train):
    X, y = train
    clf = bnb.NaiveBayes(mixed_features()).fit(X, y)
    family = {}
    for block in clf.blocks_:
        for col in block.schema.columns:
            family[col] = type(block.family)
    assert family == {"color": bnb.Categorical, "size": bnb.Categorical, "flag": bnb.Bernoulli,
                      "height": bnb.Gaussian, "visits": bnb.Poisson,
                      **{w: bnb.Multinomial for w in WORDS}}
    # one Multinomial instance over four columns is one block (one count vector)
    (words,) = [b for b in clf.blocks_ if isinstance(b.family, bnb.Multinomial)]
    assert words.schema.columns == tuple(WORDS)
    # string and pandas-category columns: levels are the values seen
    (cat,) = [b for b in clf.blocks_ if isinstance(b.family, bnb.Categorical)]
    levels = dict(zip(cat.schema.columns, cat.schema.levels, strict=True))
    assert set(levels["color"]) == set(COLORS) and set(levels["size"]) == set(SIZES)


def test_tuple_key_makes_one_multinomial_block(train):
    X, y = train
    clf = bnb.NaiveBayes({tuple(WORDS): bnb.Multinomial(), "visits": bnb.Poisson()}).fit(X, y)
    (words,) = [b for b in clf.blocks_ if isinstance(b.family, bnb.Multinomial)]
    assert words.schema.columns == tuple(WORDS)


def test_without_mapping_counts_are_gaussian(train):
    X, y = train
    clf = bnb.NaiveBayes().fit(X, y)
    gaussian = [b for b in clf.blocks_ if isinstance(b.family, bnb.Gaussian)]
    assert len(gaussian) == 1
    assert set(gaussian[0].schema.columns) == {"height", "visits", *WORDS}


@pytest.mark.parametrize("method", ["ml", "map", "mean", "bayes"])
def test_mixed_frame_fits_and_predicts(train, test, method):
    X, y = train
    X_test, y_test = test
    clf = bnb.NaiveBayes(mixed_features(), method=method).fit(X, y)
    proba = clf.predict_proba(X_test)
    assert proba.shape == (len(X_test), 3)
    assert np.all(np.isfinite(proba)) and np.all((proba >= 0) & (proba <= 1))
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, atol=1e-6)
    log_proba = clf.predict_log_proba(X_test)
    assert np.all(log_proba <= 1e-6)
    np.testing.assert_allclose(np.exp(log_proba), proba, atol=1e-6)
    pred = clf.predict(X_test)
    assert set(pred) <= set(CLASSES)
    np.testing.assert_array_equal(pred, CLASSES[np.argmax(proba, axis=1)])
    # chance is 0.4 (the majority class); the Bayes rule of the true model is near 0.9
    accuracy = np.mean(pred == y_test)
    assert accuracy > 0.75, accuracy


def test_mixed_accuracy_close_to_the_true_bayes_rule(train, test):
    X, y = train
    X_test, y_test = test
    clf = bnb.NaiveBayes(mixed_features()).fit(X, y)
    truth = {"class": P_CLASS,
             "color": {c: dict(zip(COLORS, P_COLOR[k], strict=True))
                       for k, c in enumerate(CLASSES)},
             "size": {c: dict(zip(SIZES, P_SIZE[k], strict=True)) for k, c in enumerate(CLASSES)},
             "flag": dict(zip(CLASSES, P_FLAG, strict=True)),
             "height": {c: (MU_HEIGHT[k], SD_HEIGHT[k]) for k, c in enumerate(CLASSES)},
             "visits": dict(zip(CLASSES, RATE_VISITS, strict=True)),
             "words": dict(zip(CLASSES, P_WORDS, strict=True))}
    bayes_rule = CLASSES[[np.argmax(hand_joint_log(truth, r)) for _, r in X_test.iterrows()]]
    ours = np.mean(clf.predict(X_test) == y_test)
    best = np.mean(bayes_rule == y_test)
    assert ours >= best - 0.03, (ours, best)


def test_mixed_log_posterior_is_sum_of_block_log_likelihoods(x64, train, test):
    X, y = train
    X_test, _ = test
    clf = bnb.NaiveBayes(mixed_features(), method="mean").fit(X, y)
    ref = hand_tables(X, y)

    # the fitted tables are the hand posterior means
    np.testing.assert_allclose(clf.class_prior_.to_numpy(), ref["class"], rtol=1e-10)
    tables = clf.conditional_tables()
    for col in ("color", "size"):
        for c in CLASSES:
            for v, p in ref[col][c].items():
                assert tables[col].loc[c, v] == pytest.approx(p, rel=1e-10)
    for k, c in enumerate(CLASSES):
        assert tables["flag"].loc[c, 1] == pytest.approx(ref["flag"][c], rel=1e-10)
        assert tables["height"].loc[c, "mean"] == pytest.approx(ref["height"][c][0], rel=1e-9)
        assert tables["height"].loc[c, "sd"] == pytest.approx(ref["height"][c][1], rel=1e-9)
        assert tables["visits"].loc[c, "rate"] == pytest.approx(ref["visits"][c], rel=1e-10)
        np.testing.assert_allclose(tables[tuple(WORDS)].iloc[k].to_numpy(), ref["words"][c],
                                   rtol=1e-10)

    rows = X_test.iloc[:8]
    joint = np.array([hand_joint_log(ref, r) for _, r in rows.iterrows()])
    np.testing.assert_allclose(clf.predict_joint_log_proba(rows), joint, rtol=0, atol=1e-8)
    np.testing.assert_allclose(clf.predict_log_proba(rows),
                               joint - logsumexp(joint, axis=1, keepdims=True), rtol=0, atol=1e-8)


# ---------------------------------------------------------------------------- missing values
def with_missing(frame: pd.DataFrame, column: str | None, rows) -> pd.DataFrame:
    """Blank ``rows`` of ``column`` in the dtype's own missing value; with ``column=None``, every
    column, at ``rows`` shifted by the column's position (so no row is blank throughout)."""
    if column is None:
        out = frame
        for j, col in enumerate(frame.columns):
            out = with_missing(out, col, [(r + j) % len(frame) for r in rows])
        return out
    out = frame.copy()
    for col in [column]:
        if col == "color":
            out.loc[rows, col] = None
        elif col == "size":
            out[col] = out[col].astype(object)
            out.loc[rows, col] = np.nan
            out[col] = pd.Categorical(out[col], categories=SIZES)
        elif col == "flag":
            out[col] = out[col].astype("boolean")
            out.loc[rows, col] = pd.NA
        elif col == "visits":
            out[col] = out[col].astype("Int64")
            out.loc[rows, col] = pd.NA
        else:
            out[col] = out[col].astype(float)
            out.loc[rows, col] = np.nan
    return out


@pytest.mark.parametrize("column", ["color", "size", "flag", "height", "visits", "w1", None])
@pytest.mark.parametrize("method", ["mean", "bayes"])
def test_missing_values_fit_and_predict(train, test, column, method):
    X, y = train
    X_test, _ = test
    X = with_missing(X, column, [1, 5, 17, 40])
    X_test = with_missing(X_test.iloc[:50], column, [0, 3, 9])
    clf = bnb.NaiveBayes(mixed_features(), method=method).fit(X, y)
    # families are still inferred from the dtype (nullable boolean -> Bernoulli)
    kinds = {col: type(b.family) for b in clf.blocks_ for col in b.schema.columns}
    assert kinds["flag"] is bnb.Bernoulli and kinds["color"] is bnb.Categorical
    assert kinds["size"] is bnb.Categorical and kinds["height"] is bnb.Gaussian
    proba = clf.predict_proba(X_test)
    assert np.all(np.isfinite(proba))
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, atol=1e-6)
    assert len(clf.predict(X_test)) == 50


def test_missing_values_are_left_out_of_the_likelihood(x64, train, test):
    """With missing entries everywhere, the hand sum that skips them is the library's answer."""
    X, y = train
    X_test, _ = test
    X = with_missing(X, None, [1, 5, 17, 40])
    rows = with_missing(X_test.iloc[:12], None, [0, 3])
    rows = with_missing(rows, "w0", [4])
    rows = with_missing(rows, "w1", [4])
    rows = with_missing(rows, "w3", [4])  # one word observed
    rows = with_missing(rows, "color", [5])
    rows = with_missing(rows, "w2", [6, 7])
    rows = with_missing(rows, "height", [8])
    clf = bnb.NaiveBayes(mixed_features(), method="mean").fit(X, y)
    ref = hand_tables(X, y)
    joint = np.array([hand_joint_log(ref, r) for _, r in rows.iterrows()])
    np.testing.assert_allclose(clf.predict_log_proba(rows),
                               joint - logsumexp(joint, axis=1, keepdims=True), rtol=0, atol=1e-8)


@pytest.mark.parametrize("method", ["mean", "bayes"])
@pytest.mark.parametrize("blank", ["words", "row"])
def test_row_with_a_whole_block_missing(x64, train, test, method, blank):
    """A row whose Multinomial columns are all missing carries no word information: the words
    drop out (and a row missing everywhere gets the class prior), as for every other family."""
    X, y = train
    rows = test[0].iloc[:4]
    for col in WORDS if blank == "words" else list(X.columns):
        rows = with_missing(rows, col, [0, 1])  # rows 0 and 1 blank, rows 2 and 3 complete
    clf = bnb.NaiveBayes(mixed_features(), method=method).fit(X, y)
    proba = clf.predict_proba(rows)
    assert np.all(np.isfinite(proba))
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, atol=1e-6)
    if method == "mean":
        ref = hand_tables(X, y)
        joint = np.array([hand_joint_log(ref, r) for _, r in rows.iterrows()])
        np.testing.assert_allclose(np.log(proba), joint - logsumexp(joint, axis=1, keepdims=True),
                                   rtol=0, atol=1e-8)
    if blank == "row":
        np.testing.assert_allclose(proba[:2], np.tile(clf.class_prior_.to_numpy(), (2, 1)),
                                   rtol=0, atol=1e-8)


def test_object_column_with_none_declared_bernoulli(train):
    X, y = train
    X = X.copy()
    X["flag"] = X["flag"].astype(object)
    X.loc[[2, 7], "flag"] = None
    X.loc[[3], "flag"] = np.nan
    clf = bnb.NaiveBayes({"flag": bnb.Bernoulli(), **mixed_features()}).fit(X, y)
    proba = clf.predict_proba(X.iloc[:10])
    assert np.all(np.isfinite(proba))
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, atol=1e-6)


def test_missing_values_in_plain_arrays():
    rng = np.random.default_rng(3)
    y = rng.integers(0, 2, size=60)
    gauss = rng.normal(y[:, None], 1.0, size=(60, 3))
    gauss[[0, 4, 9], [0, 1, 2]] = np.nan
    bern = (rng.random((60, 3)) < 0.3 + 0.4 * y[:, None]).astype(float)
    bern[[2, 3], [1, 2]] = np.nan
    counts = rng.poisson(2.0 + y[:, None], size=(60, 4)).astype(float)
    counts[[5, 6], [0, 3]] = np.nan
    strings = rng.choice(np.array(["u", "v", "w"], dtype=object), size=(60, 2))
    strings[[1, 8], [0, 1]] = None
    for X, family in ((gauss, None), (bern, bnb.Bernoulli()), (counts, bnb.Poisson()),
                      (counts, bnb.Multinomial()), (strings, None)):
        clf = bnb.NaiveBayes(family).fit(X, y)
        proba = clf.predict_proba(X)
        assert np.all(np.isfinite(proba)), family
        np.testing.assert_allclose(proba.sum(axis=1), 1.0, atol=1e-6)


# ---------------------------------------------------------------------------- many features
N_ROWS, N_FEATURES = 300, 5_000


@pytest.fixture(scope="module")
def wide():
    rng = np.random.default_rng(7)
    y = np.repeat(np.arange(3), N_ROWS // 3)
    theta = rng.beta(2.0, 2.0, size=(3, N_FEATURES))
    X = rng.random((N_ROWS, N_FEATURES)) < theta[y]
    X_new = rng.random((N_ROWS, N_FEATURES)) < theta[np.repeat(np.arange(3), N_ROWS // 3)]
    return X, y, X_new


def bernoulli_reference(X, y, X_new, class_alpha=1.0):
    """Posterior-mean Beta(1, 1) / Dirichlet(class_alpha) naive Bayes in float64 NumPy; returns
    log p(c | x) and the per-feature probabilities of each row under each class."""
    X, X_new = X.astype(np.float64), X_new.astype(np.float64)
    n_classes = int(y.max()) + 1
    n_k = np.bincount(y, minlength=n_classes).astype(float)
    ones = np.stack([X[y == k].sum(axis=0) for k in range(n_classes)])
    p = (ones + 1.0) / (n_k[:, None] + 2.0)
    log_prior = np.log((n_k + class_alpha) / (n_k.sum() + n_classes * class_alpha))
    joint = log_prior + X_new @ np.log(p).T + (1.0 - X_new) @ np.log1p(-p).T
    factors = np.where(X_new[:, None, :] == 1.0, p[None], 1.0 - p[None])  # (n, K, F)
    return joint - logsumexp(joint, axis=1, keepdims=True), factors


@pytest.mark.parametrize("precision", ["float32", "float64"])
def test_many_bernoulli_features(request, wide, precision):
    if precision == "float64":
        request.getfixturevalue("x64")
    X, y, X_new = wide
    clf = bnb.NaiveBayes(bnb.Bernoulli()).fit(X, y)
    ref_log, factors = bernoulli_reference(X, y, X_new)
    for data, ref in ((X_new, ref_log), (X, bernoulli_reference(X, y, X)[0])):
        proba = clf.predict_proba(data)
        assert proba.shape == (N_ROWS, 3)
        assert not np.any(np.isnan(proba)) and np.all(np.isfinite(proba))
        np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=0, atol=1e-6)
        log_proba = clf.predict_log_proba(data)
        assert np.all(np.isfinite(log_proba))
        # scores are sums of 5,000 terms of size ~1: float32 keeps them to a few 1e-3 absolute
        # (about 1e-6 relative; measured 2.3e-3 on log-probabilities down to -1369)
        if precision == "float64":
            np.testing.assert_allclose(log_proba, ref, rtol=1e-9, atol=1e-7)
            np.testing.assert_allclose(proba, np.exp(ref), rtol=0, atol=1e-9)
        else:
            np.testing.assert_allclose(log_proba, ref, rtol=1e-4, atol=1e-2)
            np.testing.assert_allclose(proba, np.exp(ref), rtol=0, atol=1e-4)
        assert np.mean(clf.predict(data) == np.argmax(ref, axis=1)) > 0.99
    # the naive product of 5,000 probabilities underflows to 0 in float64 for every class ...
    product = np.prod(factors, axis=-1)
    assert np.all(product == 0.0)
    # ... yet the posterior is a proper distribution
    assert np.all(clf.predict_proba(X_new).max(axis=1) > 0)


def test_extreme_underflow_posterior_still_defined(x64):
    """Rows that are the same long run of ones: p(x | c) ~ 0.6 ** 20000 = 10 ** -4437, far below
    the smallest float64, and the two classes differ only slightly per feature."""
    n_features = 20_000
    rng = np.random.default_rng(11)
    y = np.repeat([0, 1], 50)
    theta = np.where(y[:, None] == 0, 0.6, 0.61)
    X = rng.random((100, n_features)) < theta
    X_new = np.ones((3, n_features), dtype=bool)
    X_new[1, ::2] = False
    X_new[2, :] = False

    clf = bnb.NaiveBayes(bnb.Bernoulli(), class_alpha=0).fit(X, y)
    ref_log, factors = bernoulli_reference(X, y, X_new, class_alpha=0.0)
    assert np.all(np.prod(factors, axis=-1) == 0.0)  # underflow of the plain product
    with np.errstate(divide="ignore", invalid="ignore"):
        naive = np.prod(factors, axis=-1) / np.prod(factors, axis=-1).sum(axis=1, keepdims=True)
    assert np.all(np.isnan(naive))
    proba = clf.predict_proba(X_new)
    assert np.all(np.isfinite(proba))
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    np.testing.assert_allclose(clf.predict_log_proba(X_new), ref_log, rtol=1e-9, atol=1e-7)


def test_extreme_underflow_float32():
    n_features = 20_000
    rng = np.random.default_rng(11)
    y = np.repeat([0, 1], 50)
    X = rng.random((100, n_features)) < np.where(y[:, None] == 0, 0.6, 0.61)
    X_new = np.ones((2, n_features), dtype=bool)
    X_new[1, ::2] = False
    clf = bnb.NaiveBayes(bnb.Bernoulli()).fit(X, y)
    ref_log, factors = bernoulli_reference(X, y, X_new)
    assert np.all(np.prod(factors, axis=-1) == 0.0)
    proba = clf.predict_proba(X_new)
    assert np.all(np.isfinite(proba))
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=0, atol=1e-6)
    np.testing.assert_allclose(clf.predict_log_proba(X_new), ref_log, rtol=1e-4, atol=1e-2)
