"""KernelDensity: bandwidths against the formula and R, densities against an exact SciPy kernel
sum and R's ``density()``, updates and merges equal to the batch fit, save/load, missing values,
weights, refusals, ``use_kernel`` inference and the density plot."""

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.special import logsumexp
from scipy.stats import norm
from sklearn.datasets import load_iris
from sklearn.utils.estimator_checks import parametrize_with_checks

import bayesnb as bnb
from bayesnb.families._bandwidth import bandwidth_of

SPECIES = ("setosa", "versicolor", "virginica")

#: R 4.2.2: bw.nrd0(x), bw.nrd(x) for x <- iris[iris$Species == sp, j] (j = 1..4)
R_BANDWIDTHS = {
    ("setosa", 0): (0.12285807365211762, 0.14469950896804964),
    ("setosa", 1): (0.14589396246188957, 0.17183066689955884),
    ("setosa", 2): (0.0537504072228015, 0.063306035173521763),
    ("setosa", 3): (0.030714518413029374, 0.036174877242012377),
    ("versicolor", 0): (0.21244290589028489, 0.25021053360411327),
    ("versicolor", 1): (0.12915140271054512, 0.15211165208130872),
    ("versicolor", 2): (0.18428711047817617, 0.21704926345207415),
    ("versicolor", 3): (0.081389969638421378, 0.095859297574140717),
    ("virginica", 0): (0.20732299928794828, 0.24418042138358353),
    ("virginica", 1): (0.11517944404886032, 0.13565578965754657),
    ("virginica", 2): (0.22714580921313052, 0.26752728640657597),
    ("virginica", 3): (0.1130389721592923, 0.13313478943205539),
}

#: R 4.2.2 bw.nrd0 where its fallbacks apply: IQR 0 (-> sd), sd 0 (-> |x[1]|), x all 0 (-> 1)
R_FALLBACKS = [
    ([1, 1, 1, 1, 1, 5], 1.0270619156458229),
    ([2.5, 2.5, 2.5], 1.806168513960519),
    ([0.1, 0.1, 0.1], 0.072246740558420772),
    ([0, 0, 0], 0.72246740558420763),
    ([-3, -3], 2.3504865208995351),
]

#: R 4.2.2: d <- density(x) (nrd0, 512-point binned FFT grid) read by
#: approx(d$x, d$y, xout = pts, rule = 2) as R naivebayes does, at the class's quantiles
#: pts <- quantile(x, c(0, .25, .5, .75, 1)); values: (pts..., densities...)
R_DENSITY = {
    ("setosa", 0): (4.3, 4.8, 5, 5.2, 5.8, 0.2362034596, 0.8442827324, 1.230560949, 0.8614246209,
                    0.1665060067),
    ("setosa", 1): (2.3, 3.2, 3.4, 3.675, 4.4, 0.05468462119, 0.9050217728, 1.069085326,
                    0.7451997385, 0.08438362065),
    ("setosa", 2): (1, 1.4, 1.5, 1.575, 1.9, 0.1750587044, 2.458476859, 2.458776892, 1.712931923,
                    0.2972404404),
    ("setosa", 3): (0.1, 0.2, 0.2, 0.3, 0.6, 1.336167332, 7.543580584, 7.543580584, 1.865121841,
                    0.2609065608),
    ("versicolor", 0): (4.9, 5.6, 5.9, 6.3, 7, 0.149691337, 0.6956136616, 0.6845265723,
                        0.4980067535, 0.1541354856),
    ("versicolor", 1): (2, 2.525, 2.8, 3, 3.4, 0.1133802807, 0.7305210198, 1.158105151,
                        1.147450063, 0.1805484084),
    ("versicolor", 2): (3, 4, 4.35, 4.6, 5.1, 0.06883761727, 0.6270142768, 0.7805996643,
                        0.7949542103, 0.1775095077),
    ("versicolor", 3): (1, 1.2, 1.3, 1.5, 1.8, 0.8500686684, 1.29728458, 1.891746393,
                        1.509819029, 0.1597668047),
    ("virginica", 0): (4.9, 6.225, 6.5, 6.9, 7.9, 0.03862176332, 0.6421601087, 0.6816485316,
                       0.4165272274, 0.1518826942),
    ("virginica", 1): (2.2, 2.8, 3, 3.175, 3.8, 0.07899856864, 1.074494279, 1.333413179,
                       0.9723685981, 0.1542228987),
    ("virginica", 2): (4.5, 5.1, 5.55, 5.875, 6.9, 0.1047729908, 0.6299426179, 0.6469039755,
                       0.5227582319, 0.1020015343),
    ("virginica", 3): (1.4, 1.8, 2, 2.3, 2.5, 0.1845150842, 1.183783541, 1.175632084,
                       0.9976970121, 0.4806048298),
}


@pytest.fixture(scope="module")
def iris():
    data = load_iris()  # equal to R's iris (checked value for value when the literals were made)
    return data.data, np.asarray(SPECIES)[data.target]


@pytest.fixture(scope="module")
def iris_kde(iris):
    X, y = iris
    return bnb.NaiveBayes(features=bnb.KernelDensity()).fit(X, y)


def silverman(x, factor=0.9):
    """The formula, written out with NumPy's own sd and (type 7 = 'linear') quantiles."""
    q25, q75 = np.quantile(x, [0.25, 0.75])
    return factor * min(np.std(x, ddof=1), (q75 - q25) / 1.34) * len(x) ** -0.2


def scipy_log_density(x, sample, h, weight=None):
    """Exact log kernel density at the points ``x`` (SciPy's normal log pdf)."""
    weight = np.ones(len(sample)) if weight is None else np.asarray(weight, float)
    return logsumexp(norm.logpdf(np.asarray(x, float)[:, None], sample[None, :], h)
                     + np.log(weight), axis=1) - np.log(weight.sum())


# ---------------------------------------------------------------------- bandwidths
def test_bandwidths_match_the_formula_and_r(iris, iris_kde):
    X, y = iris
    tables = iris_kde.conditional_tables()
    for (sp, j), (r_nrd0, r_nrd) in R_BANDWIDTHS.items():
        x = X[y == sp, j]
        assert bandwidth_of(x, np.ones_like(x), 1) == pytest.approx(silverman(x), rel=1e-13)
        assert bandwidth_of(x, np.ones_like(x), 2) == pytest.approx(silverman(x, 1.06),
                                                                    rel=1e-13)
        assert tables[j].loc[sp, "bandwidth"] == pytest.approx(r_nrd0, rel=1e-13)
        assert bandwidth_of(x, np.ones_like(x), 2) == pytest.approx(r_nrd, rel=1e-13)


@pytest.mark.parametrize(("x", "expected"), R_FALLBACKS)
def test_nrd0_fallbacks_as_r(x, expected):
    x = np.asarray(x, dtype=float)
    assert bandwidth_of(x, np.ones_like(x), 1) == pytest.approx(expected, rel=1e-13)


def test_scott_and_adjust_and_fixed(iris):
    X, y = iris
    tables = bnb.NaiveBayes(features=bnb.KernelDensity("scott", adjust=2.0)).fit(
        X, y).conditional_tables()
    fixed = bnb.NaiveBayes(features=bnb.KernelDensity(0.3, adjust=[1, 2, 3, 4])).fit(
        X, y).conditional_tables()
    for (sp, j), (_, r_nrd) in R_BANDWIDTHS.items():
        assert tables[j].loc[sp, "bandwidth"] == pytest.approx(2 * r_nrd, rel=1e-13)
        assert fixed[j].loc[sp, "bandwidth"] == pytest.approx(0.3 * (j + 1))


def test_conditional_table_summaries(iris, iris_kde):
    X, y = iris
    frame = iris_kde.conditional_tables()[2]
    assert list(frame.columns) == ["bandwidth", "n", "mean", "sd", "min", "max"]
    for sp in SPECIES:
        x = X[y == sp, 2]
        assert frame.loc[sp, "n"] == 50
        np.testing.assert_allclose(frame.loc[sp, ["mean", "sd", "min", "max"]].to_numpy(float),
                                   [x.mean(), x.std(ddof=1), x.min(), x.max()], rtol=1e-13)


# ---------------------------------------------------------------------- densities
def test_probabilities_match_an_exact_scipy_kernel_sum(iris, x64):
    X, y = iris
    iris_kde = bnb.NaiveBayes(features=bnb.KernelDensity()).fit(X, y)  # float64 class prior
    rng = np.random.default_rng(0)
    points = np.vstack([X[::7], rng.uniform(0, 8, size=(20, 4))])
    counts = np.array([np.sum(y == sp) for sp in SPECIES])
    expected = np.log((counts + 1) / (counts.sum() + 3)) + np.column_stack([
        sum(scipy_log_density(points[:, j], X[y == sp, j], R_BANDWIDTHS[(sp, j)][0])
            for j in range(4)) for sp in SPECIES])
    for method in ("ml", "map", "mean", "bayes"):  # nothing to integrate: one estimate
        clf = iris_kde.set_params(method=method)
        np.testing.assert_allclose(clf.predict_joint_log_proba(points), expected, rtol=1e-12)
        np.testing.assert_allclose(clf.predict_log_proba(points),
                                   expected - logsumexp(expected, axis=1, keepdims=True),
                                   rtol=1e-10, atol=1e-12)


def test_agrees_with_r_density_to_its_grid_accuracy(iris, iris_kde):
    """R naivebayes reads ``density()``, a binned FFT estimate on 512 points, by linear
    interpolation. Inside the data's range it differs from the exact kernel sum by at most
    0.86% (measured at all 150 iris values per class and column where the density exceeds
    R's 0.001 threshold: setosa sepal width; 0.07%-0.5% elsewhere), 0.08% at these points."""
    X, y = iris
    table = iris_kde._scorer().tables[0]
    from bayesnb.families.kde import column_log_density

    worst = 0.0
    for (sp, j), values in R_DENSITY.items():
        pts, r_density = np.asarray(values[:5]), np.asarray(values[5:])
        k = SPECIES.index(sp)
        ours = np.exp(column_log_density(table, j, pts)[:, k])
        worst = max(worst, np.max(np.abs(ours - r_density) / ours))
    assert worst < 0.01


def test_far_from_the_data_the_log_density_is_finite_and_exact(iris, x64):
    X, y = iris
    iris_kde = bnb.NaiveBayes(features=bnb.KernelDensity()).fit(X, y)
    far = np.array([[100.0, -50.0, 1e4, 3.0], [1e6, 1e6, 1e6, 1e6]])
    joint = iris_kde.predict_joint_log_proba(far)
    assert np.all(np.isfinite(joint))
    k = 1
    ref = np.log(51 / 153) + sum(
        scipy_log_density(far[:, j], X[y == SPECIES[k], j], R_BANDWIDTHS[(SPECIES[k], j)][0])
        for j in range(4))
    np.testing.assert_allclose(joint[:, k], ref, rtol=1e-12)
    proba = iris_kde.predict_proba(far)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)


def test_row_chunks_give_the_same_scores(iris, iris_kde, monkeypatch):
    from bayesnb.families import kde

    X, _ = iris
    full = iris_kde.predict_joint_log_proba(X)
    monkeypatch.setattr(kde, "BUDGET", 37)  # one row per chunk: rows x 50 kernels > 37
    np.testing.assert_array_equal(iris_kde.predict_joint_log_proba(X), full)


def test_mixed_blocks_add_host_and_kernel_scores(iris, x64):
    X, y = iris
    frame = pd.DataFrame(X, columns=list("abcd"))
    frame["e"] = np.where(np.arange(150) % 3 == 0, "u", "v")
    clf = bnb.NaiveBayes({"a": bnb.KernelDensity(), "b": bnb.KernelDensity(0.2)},
                         method="ml", class_alpha=0).fit(frame, y)
    # the reference: KDE columns by SciPy, Gaussian columns (ML: mean, 1/N sd) by SciPy,
    # the categorical column by its class frequencies, the class prior by frequencies
    expected = np.zeros((150, 3))
    for k, sp in enumerate(SPECIES):
        rows = y == sp
        expected[:, k] = np.log(rows.mean())
        expected[:, k] += scipy_log_density(X[:, 0], X[rows, 0], R_BANDWIDTHS[(sp, 0)][0])
        expected[:, k] += scipy_log_density(X[:, 1], X[rows, 1], 0.2)
        for j in (2, 3):
            expected[:, k] += norm.logpdf(X[:, j], X[rows, j].mean(), X[rows, j].std())
        level_p = frame["e"][rows].value_counts(normalize=True)
        expected[:, k] += np.log(frame["e"].map(level_p).to_numpy(float))
    np.testing.assert_allclose(clf.predict_joint_log_proba(frame), expected, rtol=1e-10)
    np.testing.assert_allclose(clf.predict_proba(frame),
                               np.exp(expected - logsumexp(expected, axis=1, keepdims=True)),
                               rtol=1e-9, atol=1e-14)


def test_float32_and_float64_agree(iris):
    import jax

    X, y = iris
    features = {0: bnb.KernelDensity(), 1: bnb.KernelDensity(), 2: bnb.Gaussian()}
    p32 = bnb.NaiveBayes(features).fit(X, y).predict_proba(X)
    with jax.enable_x64(True):
        p64 = bnb.NaiveBayes(features).fit(X, y).predict_proba(X)
    np.testing.assert_allclose(p32, p64, atol=1e-5)


# ---------------------------------------------------------------------- data handling
def test_missing_values_drop_out(iris):
    X, y = iris
    Xm = X.copy()
    Xm[::5, 1] = np.nan
    clf = bnb.NaiveBayes(features=bnb.KernelDensity()).fit(Xm, y)
    for sp in SPECIES:  # missing training values are not kernels
        x = X[(y == sp) & ~np.isnan(Xm[:, 1]), 1]
        assert clf.conditional_tables()[1].loc[sp, "n"] == len(x)
        assert clf.conditional_tables()[1].loc[sp, "bandwidth"] == pytest.approx(silverman(x))
    # a missing value contributes log 1: the score of the other columns alone
    only = bnb.NaiveBayes(features=bnb.KernelDensity()).fit(Xm[:, [0, 2, 3]], y)
    row = Xm[:5].copy()
    row[:, 1] = np.nan
    np.testing.assert_allclose(clf.predict_joint_log_proba(row),
                               only.predict_joint_log_proba(row[:, [0, 2, 3]]), rtol=1e-13)


def test_integer_weights_equal_duplicated_rows(iris):
    X, y = iris
    w = np.random.default_rng(1).integers(0, 4, size=150)
    w[[0, 50, 100, 1, 51, 101]] = 1  # every class keeps rows
    weighted = bnb.NaiveBayes(features=bnb.KernelDensity()).fit(X, y, sample_weight=w)
    repeated = bnb.NaiveBayes(features=bnb.KernelDensity()).fit(np.repeat(X, w, axis=0),
                                                                np.repeat(y, w))
    for j in range(4):
        pd.testing.assert_frame_equal(weighted.conditional_tables()[j],
                                      repeated.conditional_tables()[j], rtol=1e-12)
        for sp in SPECIES:  # and the bandwidth is the formula on the repeated sample
            x = np.repeat(X[y == sp, j], w[y == sp])
            assert weighted.conditional_tables()[j].loc[sp, "bandwidth"] == pytest.approx(
                silverman(x), rel=1e-12)
    np.testing.assert_allclose(weighted.predict_joint_log_proba(X),
                               repeated.predict_joint_log_proba(X), rtol=1e-12)


def test_partial_fit_and_merge_equal_the_batch_fit(iris):
    X, y = iris
    order = np.random.default_rng(2).permutation(150)
    X, y = X[order], y[order]
    batch = bnb.NaiveBayes(features=bnb.KernelDensity()).fit(X, y)
    online = bnb.NaiveBayes(features=bnb.KernelDensity())
    for part in np.array_split(np.arange(150), 4):
        online.partial_fit(X[part], y[part], classes=list(SPECIES))
    parts = [bnb.NaiveBayes(features=bnb.KernelDensity()).fit(X[p], y[p])
             for p in np.array_split(np.arange(150), 3)]
    merged = bnb.merge(*parts)
    for other in (online, merged):  # the sample is concatenated: bit for bit
        np.testing.assert_array_equal(other.predict_joint_log_proba(X),
                                      batch.predict_joint_log_proba(X))
        for j in range(4):
            pd.testing.assert_frame_equal(other.conditional_tables()[j],
                                          batch.conditional_tables()[j], rtol=0, atol=0)


def test_save_load_round_trip(iris, tmp_path):
    X, y = iris
    clf = bnb.NaiveBayes({0: bnb.KernelDensity("scott", adjust=1.5), 1: bnb.Gaussian()}).fit(
        X, y)
    path = bnb.save(clf, tmp_path / "kde.bnb")
    back = bnb.load(path)
    np.testing.assert_array_equal(back.predict_joint_log_proba(X), clf.predict_joint_log_proba(X))
    block = back.blocks_[0]
    assert block.family == bnb.KernelDensity("scott", adjust=1.5)
    assert block.stats.value.dtype == np.float64 and block.stats.value.shape == (150,)


@settings(max_examples=20, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_row_order_does_not_change_predictions(seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(30, 2))
    y = np.repeat([0, 1], 15)
    perm = rng.permutation(30)
    a = bnb.NaiveBayes(features=bnb.KernelDensity()).fit(X, y)
    b = bnb.NaiveBayes(features=bnb.KernelDensity()).fit(X[perm], y[perm])
    np.testing.assert_allclose(a.predict_log_proba(X), b.predict_log_proba(X), rtol=1e-9,
                               atol=1e-12)


def test_use_kernel_infers_numeric_columns():
    frame = pd.DataFrame({"x": [1.0, 2.0, 2.5, 4.0, 5.0, 5.5], "n": [1, 2, 2, 3, 5, 8],
                          "c": list("ababab"), "b": [True, False] * 3})
    y = [0, 0, 0, 1, 1, 1]
    clf = bnb.NaiveBayes(use_kernel=True).fit(frame, y)
    names = {b.family.name: list(b.schema.columns) for b in clf.blocks_}
    assert names == {"kde": ["x", "n"], "categorical": ["c"], "bernoulli": ["b"]}
    declared = bnb.NaiveBayes({"n": bnb.Gaussian()}, use_kernel=True).fit(frame, y)
    assert {b.family.name for b in declared.blocks_} >= {"gaussian", "kde"}
    default = bnb.NaiveBayes().fit(frame, y)
    assert "kde" not in {b.family.name for b in default.blocks_}


# ---------------------------------------------------------------------- refusals
def test_evidence_draws_and_mcmc_are_refused_naming_the_columns(iris, iris_kde):
    X, y = iris
    with pytest.raises(ValueError, match=r"columns \[0, 1, 2, 3\]: KernelDensity is "
                                         r"nonparametric.*evidence"):
        iris_kde.log_evidence()
    with pytest.raises(ValueError, match="nonparametric.*posterior draws"):
        iris_kde.sample_posterior(10)
    with pytest.raises(ValueError, match="nonparametric.*method='mcmc'"):
        bnb.NaiveBayes(features=bnb.KernelDensity(), method="mcmc").fit(X, y)
    assert "log evidence: undefined" in iris_kde.summary()
    with pytest.raises(ValueError, match=r"leave-one-out of a KernelDensity column is not "
                                         r"computed in closed form .*refit without each row"):
        iris_kde.loo(X, y)  # defined (by refits), not "undefined"


def test_em_refuses_a_kernel_density_under_every_method(iris):
    """Under ml EM ran and J fell (-27.96 to -28.17) while the history said converged; under
    the other methods it said "EM does not know the prior of the kde family"."""
    from bayesnb.em import fit_em

    X, y = iris
    for method in ("ml", "map", "mean", "bayes"):
        with pytest.raises(ValueError, match="KernelDensity is nonparametric.*so EM is "):
            fit_em(bnb.NaiveBayes(bnb.KernelDensity(), method=method), X[:100], y[:100],
                   X[100:120])


def test_columns_that_together_rule_out_every_class_are_named_together():
    """t = 0.05 is reached only by class a's kernels, u = 5.05 only by b's: the refusal
    blamed column t alone ("has density 0 in every class"), which explain contradicts."""
    X = pd.DataFrame({"t": [0.0, 0.1, 5.0, 5.1], "u": [0.0, 0.1, 5.0, 5.1]})
    clf = bnb.NaiveBayes(bnb.KernelDensity(0.2, kernel="epanechnikov")).fit(X, list("aabb"))
    row = pd.DataFrame({"t": [0.05], "u": [5.05]})
    factors = clf.explain(row.iloc[0])
    assert factors.loc["t", "a"] > 0 and factors.loc["u", "b"] > 0
    with pytest.raises(ValueError, match=r"columns 't', 'u' together leave every class "
                                         r"density 0"):
        clf.predict_proba(row)


def test_undefined_densities_name_column_and_class():
    X = np.array([[1.0], [2.0], [3.0], [7.0]])
    with pytest.raises(ValueError, match=r"column 0, class 'b': bandwidth 'nrd0' needs a "
                                         r"total weight above 1"):
        bnb.NaiveBayes(features=bnb.KernelDensity()).fit(X, ["a", "a", "a", "b"])
    # a numeric bandwidth needs only one value
    one = bnb.NaiveBayes(features=bnb.KernelDensity(0.5)).fit(X, ["a", "a", "a", "b"])
    assert np.all(np.isfinite(one.predict_log_proba(X)))
    with pytest.raises(ValueError, match=r"column 0, class 'b': no observed value"):
        bnb.NaiveBayes(features=bnb.KernelDensity()).fit(
            np.array([[1.0], [2.0], [np.nan], [np.nan]]), ["a", "a", "b", "b"])
    with pytest.raises(ValueError, match=r"class 'b': bandwidth 'scott' is 0"):
        bnb.NaiveBayes(features=bnb.KernelDensity("scott")).fit(
            np.array([[1.0], [2.0], [4.0], [4.0]]), ["a", "a", "b", "b"])


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"bandwidth": "silverman"}, r"must be one of R's rules 'nrd0', 'nrd' \('scott'\), 'ucv', "
                                 r"'bcv', 'SJ' \('SJ-ste'\), 'SJ-dpi' or a positive number, got "
                                 r"'silverman'"),
    ({"bandwidth": -1.0}, "column 0: KernelDensity: bandwidth must be finite and positive"),
    ({"adjust": 0.0}, "adjust must be finite and positive"),
    ({"bandwidth": [1.0, 2.0, 3.0]}, r"shape \(2,\)"),
])
def test_bad_settings_are_refused(kwargs, message):
    with pytest.raises(ValueError, match=message):
        bnb.NaiveBayes(features=bnb.KernelDensity(**kwargs)).fit(np.eye(2), [0, 1])


def test_density_plot(iris, iris_kde, tmp_path):
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    from bayesnb.plots import density_plot

    X, y = iris
    fig = density_plot(iris_kde, 2)
    lines = fig.axes[0].get_lines()
    assert [line.get_label() for line in lines] == list(SPECIES)
    x, d = lines[0].get_data()  # the drawn curve is the density of the class
    np.testing.assert_allclose(d, np.exp(scipy_log_density(x, X[y == "setosa", 2],
                                                           R_BANDWIDTHS[("setosa", 2)][0])),
                               rtol=1e-10)
    fig.savefig(tmp_path / "kde.png")
    gauss = bnb.NaiveBayes().fit(X, y)
    assert len(density_plot(gauss, 0, X, y).axes[0].patches) > 0
    with pytest.raises(ValueError, match="not a column"):
        density_plot(iris_kde, 9)


@parametrize_with_checks([bnb.NaiveBayes(bnb.KernelDensity(1.0))])
def test_check_estimator(estimator, check):
    """scikit-learn's checks, with a numeric bandwidth: under 'nrd0' (as in R) a class with a
    single value has no bandwidth, and several checks fit such classes."""
    check(estimator)


def test_use_kernel_in_chunked_fits_is_the_batch_fit():
    """fit_chunks infers KernelDensity columns as fit does (use_kernel=True)."""
    from bayesnb.outofcore import fit_chunks

    rng = np.random.default_rng(3)
    X = pd.DataFrame({"a": rng.normal(size=60), "b": rng.normal(2.0, 1.0, size=60)})
    y = np.repeat([0, 1], 30)
    batch = bnb.NaiveBayes(use_kernel=True).fit(X, y)
    chunks = [(X.iloc[i:i + 20], y[i:i + 20]) for i in range(0, 60, 20)]
    chunked = fit_chunks(bnb.NaiveBayes(use_kernel=True), chunks, progress=False)
    assert [b.family.name for b in chunked.blocks_] == ["kde"]
    np.testing.assert_allclose(chunked.predict_proba(X), batch.predict_proba(X), rtol=1e-12)
