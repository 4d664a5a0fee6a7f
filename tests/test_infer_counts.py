"""``NaiveBayes(infer_counts=True)``: numeric columns of non-negative integers are inferred as
Poisson (R naivebayes' ``usepoisson=TRUE``), in batch, ``partial_fit`` and ``fit_chunks`` fits.

R reference. naivebayes 0.9.7's ``naive_bayes.default`` (``usepoisson = TRUE``) models every
column of R class ``"integer"`` with a Poisson whose table is ``lambda = (sum(x) + laplace) /
length(x)`` per class, and every other numeric column with a Gaussian (mean and the n - 1 sd).
On the data below (R: ``visits = c(0L, 2L, 1L, 4L, 3L, 5L)``, ``y = c("a", "a", "a", "b",
"b", "b")``) that is lambda_a = 3/3 = 1 and lambda_b = 12/3 = 4: R is not installed here, so
the numbers are R's formula worked by hand and stored as literals. Two deliberate differences,
documented in docs/user_guide/families.md: bayesnb also counts float columns of whole numbers
(R's read.csv types such a column integer; a double vector typed in R stays Gaussian), and an
integer column with a negative value is Gaussian in bayesnb, where R keeps the Poisson and warns.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import sparse, stats

import bayesnb as bnb
from bayesnb._data import as_table, count_columns
from bayesnb.outofcore import fit_chunks


def families(clf) -> dict:
    return {c: type(b.family).__name__ for b in clf.blocks_ for c in b.schema.columns}


@pytest.fixture
def frame():
    return pd.DataFrame({
        "visits": np.array([0, 2, 1, 4, 3, 5], dtype=np.int64),       # counts -> Poisson
        "clicks": [0.0, 1.0, np.nan, 7.0, 2.0, 3.0],                 # whole floats -> Poisson
        "delta": np.array([-1, 0, 2, 3, 1, 2], dtype=np.int64),       # negative -> Gaussian
        "height": [1.5, 1.7, 1.6, 1.8, 1.9, 1.75],                   # fractions -> Gaussian
        "colour": ["r", "g", "r", "b", "g", "b"],                    # -> Categorical
        "member": [True, False, True, True, False, False],           # -> Bernoulli
    })


Y = np.array(["a", "a", "a", "b", "b", "b"])


def test_rule_per_column(frame):
    clf = bnb.NaiveBayes(infer_counts=True).fit(frame, Y)
    assert families(clf) == {"visits": "Poisson", "clicks": "Poisson", "delta": "Gaussian",
                             "height": "Gaussian", "colour": "Categorical",
                             "member": "Bernoulli"}
    default = bnb.NaiveBayes().fit(frame, Y)  # e1071's rule: every number is Gaussian
    assert {c for c, f in families(default).items() if f == "Poisson"} == set()
    declared = bnb.NaiveBayes({"visits": bnb.Gaussian()}, infer_counts=True).fit(frame, Y)
    assert families(declared)["visits"] == "Gaussian"  # declared columns are never re-inferred
    assert families(declared)["clicks"] == "Poisson"
    assert bnb.NaiveBayes(infer_counts=True).get_params()["infer_counts"] is True


def test_poisson_table_matches_r_naivebayes(x64, frame):
    """R: naive_bayes(x, y, usepoisson = TRUE)$tables$visits -> lambda a = 1, b = 4."""
    clf = bnb.NaiveBayes(infer_counts=True, method="ml").fit(frame[["visits"]], Y)
    table = clf.conditional_tables()["visits"]
    np.testing.assert_allclose(table["rate"].to_numpy(), [1.0, 4.0], rtol=1e-12)
    # laplace = 1 in R adds 1 to the sum: (3 + 1) / 3 and (12 + 1) / 3, bayesnb's posterior
    # mean under Gamma(shape=1, rate -> 0)
    smooth = bnb.NaiveBayes({"visits": bnb.Poisson(shape=1.0, rate=1e-12)},
                            method="mean").fit(frame[["visits"]], Y)
    np.testing.assert_allclose(smooth.conditional_tables()["visits"]["rate"].to_numpy(),
                               [4 / 3, 13 / 3], rtol=1e-9)


def test_predictions_match_scipy_poisson(x64):
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 300)
    X = rng.poisson(np.where(y[:, None] == 1, [3.0, 0.5], [1.0, 2.0]))
    clf = bnb.NaiveBayes(infer_counts=True, method="ml", class_alpha=0).fit(X, y)
    assert families(clf) == {0: "Poisson", 1: "Poisson"}
    rates = np.stack([X[y == k].mean(axis=0) for k in (0, 1)])
    prior = np.bincount(y) / len(y)
    joint = np.log(prior) + np.stack(
        [stats.poisson.logpmf(X, rates[k]).sum(axis=1) for k in (0, 1)], axis=1)
    expected = np.exp(joint - np.logaddexp(joint[:, :1], joint[:, 1:]))
    np.testing.assert_allclose(clf.predict_proba(X), expected, rtol=0, atol=1e-10)


def test_arrays_and_sparse():
    y = np.array([0, 1, 0, 1])
    ints = np.array([[0, 3], [1, -2], [2, 0], [5, 1]])
    assert families(bnb.NaiveBayes(infer_counts=True).fit(ints, y)) == {0: "Poisson",
                                                                         1: "Gaussian"}
    floats = np.array([[0.0, 0.5], [1.0, 2.0], [np.nan, 1.0], [3.0, 1.0]])
    assert families(bnb.NaiveBayes(infer_counts=True).fit(floats, y)) == {0: "Poisson",
                                                                          1: "Gaussian"}
    counts = sparse.csr_matrix(np.array([[0, 3], [1, 0], [2, 0], [0, 1]]))
    clf = bnb.NaiveBayes(infer_counts=True).fit(counts, y)  # Poisson takes sparse input
    assert families(clf) == {0: "Poisson", 1: "Poisson"}
    # a sparse matrix's other numbers are Gaussian, read densified (implicit zeros are 0)
    mixed = bnb.NaiveBayes(infer_counts=True).fit(sparse.csr_matrix(floats[[0, 1, 3, 3]]), y)
    assert families(mixed) == {0: "Poisson", 1: "Gaussian"}


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.one_of(st.integers(-3, 20), st.just(0.5), st.just(np.nan)),
                         min_size=3, max_size=3), min_size=2, max_size=12),
       st.integers(1, 11))
def test_rule_is_a_for_all(rows, cut):
    """The whole is counts exactly when every part is: so the first chunk saying "not counts"
    is never contradicted by the whole, and a chunk breaking "counts" is caught."""
    X = np.array(rows, dtype=np.float64)
    cut = min(cut, len(X) - 1)
    whole = count_columns(as_table(X))
    parts = count_columns(as_table(X[:cut])) & count_columns(as_table(X[cut:]))
    np.testing.assert_array_equal(whole, parts)


def _statistics_equal(a, b):
    assert families(a) == families(b)
    for u, v in zip(a.blocks_, b.blocks_, strict=True):
        for leaf_a, leaf_b in zip(u.stats, v.stats, strict=True):
            np.testing.assert_allclose(np.asarray(leaf_a), np.asarray(leaf_b), rtol=1e-12)


def _chunked_frame():
    rng = np.random.default_rng(1)
    n = 60
    frame = pd.DataFrame({"n": rng.poisson(3.0, n).astype(np.float64),
                          "x": rng.integers(0, 5, n).astype(np.float64)})
    frame.loc[3, "x"] = 2.5  # one fraction, inside the first chunk but not its first row
    return frame, np.where(rng.random(n) < 0.5, "u", "v")


def test_partial_fit_and_fit_chunks_follow_the_batch_rule(x64):
    frame, y = _chunked_frame()
    batch = bnb.NaiveBayes(infer_counts=True).fit(frame, y)
    assert families(batch) == {"n": "Poisson", "x": "Gaussian"}
    online = bnb.NaiveBayes(infer_counts=True)
    for start in range(0, 60, 20):  # later chunks of "x" look like counts: still Gaussian
        online.partial_fit(frame[start:start + 20], y[start:start + 20], classes=["u", "v"])
    _statistics_equal(online, batch)
    chunks = [(frame[s:s + 20], y[s:s + 20]) for s in range(0, 60, 20)]
    _statistics_equal(fit_chunks(bnb.NaiveBayes(infer_counts=True), chunks, progress=False),
                      batch)
    one_shot = (c for c in chunks)  # read once: classes and families from the first chunk
    _statistics_equal(fit_chunks(bnb.NaiveBayes(infer_counts=True), one_shot, progress=False,
                                 classes=["u", "v"]), batch)


def test_a_later_chunk_breaking_the_rule_is_an_error(x64):
    frame, y = _chunked_frame()
    frame.loc[45, "n"] = -1.0  # "n" is counts in the first chunks only: batch says Gaussian
    assert families(bnb.NaiveBayes(infer_counts=True).fit(frame, y))["n"] == "Gaussian"
    online = bnb.NaiveBayes(infer_counts=True).partial_fit(frame[:20], y[:20],
                                                           classes=["u", "v"])
    online.partial_fit(frame[20:40], y[20:40])
    with pytest.raises(ValueError, match="column 'n'.*Poisson needs non-negative counts"):
        online.partial_fit(frame[40:], y[40:])
    chunks = [(frame[s:s + 20], y[s:s + 20]) for s in range(0, 60, 20)]
    with pytest.raises(ValueError, match="chunk 2: column 'n'.*infer_counts=True made it "
                                         "Poisson from the first chunk"):
        fit_chunks(bnb.NaiveBayes(infer_counts=True), chunks, progress=False)


def test_dask_refuses_value_based_inference():
    dd = pytest.importorskip("dask.dataframe")
    frame, y = _chunked_frame()
    ddf = dd.from_pandas(frame, npartitions=2)
    with pytest.raises(ValueError, match="infer_counts=True decides from the values"):
        bnb.NaiveBayes(infer_counts=True).fit(ddf, dd.from_pandas(pd.Series(y), npartitions=2))
