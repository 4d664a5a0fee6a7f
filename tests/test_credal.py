"""The naive credal classifier (``credal_predict``, ``prior_sensitivity``) against brute force.

Reference: on small problems (3 classes, Categorical and Bernoulli columns of 2-3 values) every
extreme point of every prior is enumerated -- the class prior's K vertices and, for each class
and column, each vertex of its Dirichlet/Beta simplex of strength s -- and p(c, x) is computed
by hand from counts taken with pandas (no bayesnb statistics), the infimum of p(a, x)/p(b, x)
and the range of p(c | x) taken over all of them. Random interior priors never leave the
computed bounds; s -> 0 gives scikit-learn's CategoricalNB(alpha=1e-10) class; more data gives
singletons."""

import itertools

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from scipy.optimize import minimize
from scipy.special import gammaln
from sklearn.base import clone
from sklearn.naive_bayes import CategoricalNB

import bayesnb as bnb

CLASSES = ["a", "b", "c"]
LEVELS = {"colour": ["blue", "green", "red"], "size": ["L", "S"], "flag": [0.0, 1.0]}


def small_data(n=40, seed=0):
    rng = np.random.default_rng(seed)
    k = rng.integers(0, 3, n)
    y = np.array(CLASSES)[k]
    colour = np.array([[0.1, 0.1, 0.8], [0.8, 0.1, 0.1], [0.2, 0.6, 0.2]])[k]
    size, flag = np.array([0.8, 0.3, 0.5])[k], np.array([0.9, 0.2, 0.5])[k]
    frame = pd.DataFrame({
        "colour": np.array(LEVELS["colour"], dtype=object)[
            (rng.random(n)[:, None] > colour.cumsum(axis=1)).sum(axis=1)],
        "size": np.where(rng.random(n) < size, "L", "S").astype(object),
        "flag": (rng.random(n) < flag).astype(float)})
    frame.loc[3, "colour"] = None  # a missing value: class totals differ per column
    frame.loc[5, "flag"] = np.nan
    return frame, y


def queries():
    rows = list(itertools.product(LEVELS["colour"], LEVELS["size"], LEVELS["flag"]))
    frame = pd.DataFrame(rows, columns=list(LEVELS)).astype({"colour": object, "size": object})
    frame.loc[0, "size"] = None
    frame.loc[1, "flag"] = np.nan
    return frame


def fit(X, y, **kw):
    return bnb.NaiveBayes({"colour": bnb.Categorical(), "size": bnb.Categorical(),
                           "flag": bnb.Bernoulli()}, method="bayes", **kw).fit(X, y)


def hand_counts(X, y):
    """Per class: n_c, and per column {value: count} and the observed total, by pandas."""
    out = {}
    for c in CLASSES:
        part = X[y == c]
        out[c] = (len(part), {col: (part[col].value_counts().to_dict(),
                                    int(part[col].notna().sum())) for col in LEVELS})
    return out


def vertex_joint(counts, x, c, class_vertex, column_vertices, s):
    """p(c, x) (times N + s) with the class prior's mass on class ``class_vertex`` and class
    c's prior of column j with its mass on level ``column_vertices[j]``."""
    n_c, columns = counts[c]
    p = n_c + s * (class_vertex == c)
    for col, vertex in zip(LEVELS, column_vertices, strict=True):
        value = x[col]
        if pd.isna(value):
            continue
        table, total = columns[col]
        p *= (table.get(value, 0) + s * (LEVELS[col][vertex] == value)) / (total + s)
    return p


def column_vertex_sets():
    return list(itertools.product(*(range(len(v)) for v in LEVELS.values())))


def ratio(num, den):
    """num / den, a vertex with den = 0 left out (+inf): wherever num can be 0, some vertex
    has num = 0 < den (a's and b's column priors are distinct and the class prior's mass
    can sit on b), so leaving out 0 / 0 keeps the infimum of the open set."""
    return num / den if den > 0 else np.inf


def brute_sets(counts, x, s, factor=None):
    vertices = column_vertex_sets()
    factor = factor or (lambda c: 1.0)
    dominated = set()
    for a, b in itertools.permutations(CLASSES, 2):
        least = min(ratio(vertex_joint(counts, x, a, m, va, s) * factor(a),
                          vertex_joint(counts, x, b, m, vb, s) * factor(b))
                    for m in CLASSES for va in vertices for vb in vertices)
        if least > 1:
            dominated.add(b)
    return {c for c in CLASSES if c not in dominated}


def brute_range(counts, x, c, s):
    vertices = column_vertex_sets()
    joint = {k: {(m, v): vertex_joint(counts, x, k, m, v, s) for m in CLASSES for v in vertices}
             for k in CLASSES}
    values = [ratio(joint[c][m, vs[CLASSES.index(c)]],
                    sum(joint[k][m, v] for k, v in zip(CLASSES, vs, strict=True)))
              for m in CLASSES for vs in itertools.product(vertices, repeat=3)]
    return min(values), max(values)


@pytest.fixture(scope="module")
def model():
    X, y = small_data()
    return X, y, fit(X, y)


@pytest.mark.parametrize("s", [0.5, 2.0, 6.0])
def test_credal_sets_equal_brute_force_over_every_extreme_point(model, s):
    X, y, clf = model
    counts, rows = hand_counts(X, y), queries()
    sets = clf.credal_predict(rows, s=s)
    expected = [brute_sets(counts, rows.iloc[i], s) for i in range(len(rows))]
    assert sets.to_sets() == expected
    assert sets.dtype == bool and sets.shape == (len(rows), 3)
    if s < 1:  # both kinds of row occur
        assert (sets.sum(axis=1) > 1).any() and (sets.sum(axis=1) == 1).any()
    frame = sets.to_frame()
    assert list(frame.columns) == CLASSES and frame.index.equals(rows.index)


def test_prior_sensitivity_equals_brute_force(model):
    X, y, clf = model
    counts, rows, s = hand_counts(X, y), queries().iloc[[0, 2, 5, 9]], 1.0
    result = clf.prior_sensitivity(rows, s=s)
    sets = clf.credal_predict(rows, s=s).to_sets()
    for i in range(len(rows)):
        c = result["predicted"][i]
        lo, hi = brute_range(counts, rows.iloc[i], c, s)
        np.testing.assert_allclose([result["lower"][i], result["upper"][i]], [lo, hi],
                                   rtol=1e-9)
        assert result["robust"][i] == (sets[i] == {c})
    assert list(result.to_frame().columns) == ["predicted", "robust", "lower", "upper"]


def test_random_interior_priors_stay_within_the_bounds(model):
    X, y, clf = model
    counts, rows, s = hand_counts(X, y), queries(), 2.0
    rng = np.random.default_rng(1)
    result = clf.prior_sensitivity(rows, s=s)
    sets = clf.credal_predict(rows, s=s)
    for _ in range(200):
        t = rng.dirichlet(np.ones(3))
        u = {(c, col): rng.dirichlet(np.full(len(LEVELS[col]), 0.3)) for c in CLASSES
             for col in LEVELS}
        for i in range(len(rows)):
            x = rows.iloc[i]
            joint = []
            for k, c in enumerate(CLASSES):
                n_c, columns = counts[c]
                p = n_c + s * t[k]
                for col in LEVELS:
                    if pd.isna(x[col]):
                        continue
                    table, total = columns[col]
                    mass = u[c, col][LEVELS[col].index(x[col])]
                    p *= (table.get(x[col], 0) + s * mass) / (total + s)
                joint.append(p)
            joint = np.array(joint)
            best = int(np.argmax(joint))
            assert sets[i, best], "a class that wins under some prior is in the credal set"
            k = CLASSES.index(result["predicted"][i])
            share = joint[k] / joint.sum()
            assert result["lower"][i] - 1e-12 <= share <= result["upper"][i] + 1e-12


def test_vanishing_strength_gives_the_maximum_likelihood_class():
    rng = np.random.default_rng(3)
    codes = rng.integers(0, 3, size=(300, 3))
    y = rng.integers(0, 3, 300)
    codes[y == 1, 0] = rng.integers(1, 3, (y == 1).sum())  # classes that differ
    codes[y == 2, 1] = rng.integers(0, 2, (y == 2).sum())
    clf = bnb.NaiveBayes(bnb.Categorical(), method="bayes").fit(codes, y)
    reference = CategoricalNB(alpha=1e-10).fit(codes, y)
    test = np.array(list(itertools.product(range(3), repeat=3)))
    jll = reference.predict_joint_log_proba(test)
    top2 = np.sort(jll, axis=1)[:, -2:]
    clear = top2[:, 1] - top2[:, 0] > 1e-6  # no ML tie
    sets = clf.credal_predict(test, s=1e-9)
    assert clear.sum() > 20
    expected = np.eye(3, dtype=bool)[np.searchsorted(reference.classes_,
                                                     reference.predict(test))]
    np.testing.assert_array_equal(np.asarray(sets)[clear], expected[clear])


def test_more_data_makes_the_sets_singletons():
    rng = np.random.default_rng(5)
    probs = rng.dirichlet(np.ones(3), size=(3, 4))  # class x column x level
    test = np.array(list(itertools.product(range(3), repeat=4)))
    shares = []
    for n in (30, 300, 30000):
        y = rng.integers(0, 3, n)
        X = np.stack([[rng.choice(3, p=probs[k, j]) for j in range(4)] for k in y])
        sets = bnb.NaiveBayes(bnb.Categorical(), method="bayes").fit(X, y).credal_predict(
            test, s=2.0)
        shares.append(float((np.asarray(sets).sum(axis=1) > 1).mean()))
    assert shares[0] > shares[1] > shares[2]
    assert shares[2] < 0.05


def test_other_families_keep_their_stated_prior(x64):
    """A Gaussian column's factor is its Student-t predictive (Murphy 2007) under the stated
    Normal-Gamma prior, the same for every prior of the set."""
    X, y = small_data(30, seed=2)
    X["t"] = np.random.default_rng(2).normal(size=30) + (y == "a")
    clf = bnb.NaiveBayes({"colour": bnb.Categorical(), "size": bnb.Categorical(),
                          "flag": bnb.Bernoulli(), "t": bnb.Gaussian()},
                         method="bayes").fit(X, y)
    rows = queries().iloc[:6].assign(t=[-1.0, 0.0, 0.5, 1.0, 2.0, 3.0])
    counts, s = hand_counts(X, y), 1.0
    m0, k0, a0, b0 = 0.0, 1e-3, 1.0, 0.01
    student = {}
    for c in CLASSES:
        v = X.loc[y == c, "t"].to_numpy()
        n, mean = len(v), v.mean()
        kn, an = k0 + n, a0 + n / 2
        bn = b0 + ((v - mean) ** 2).sum() / 2 + k0 * n * (mean - m0) ** 2 / (2 * kn)
        student[c] = stats.t(2 * an, loc=(k0 * m0 + n * mean) / kn,
                             scale=np.sqrt(bn * (kn + 1) / (an * kn)))
    density = [{c: float(student[c].pdf(t)) for c in CLASSES} for t in rows["t"]]
    expected = [brute_sets(counts, rows.iloc[i], s, density[i].__getitem__)
                for i in range(len(rows))]
    assert clf.credal_predict(rows, s=s).to_sets() == expected


def test_the_sets_do_not_depend_on_the_method(model):
    X, y, clf = model
    rows = queries()
    by_mean = clone(clf).set_params(method="mean").fit(X, y)
    np.testing.assert_array_equal(by_mean.credal_predict(rows), clf.credal_predict(rows))


@pytest.mark.parametrize("make, message", [
    (lambda X, y: bnb.NaiveBayes().fit(np.random.default_rng(0).normal(size=(6, 2)),
                                       [0, 0, 0, 1, 1, 1]),
     "needs at least one Bernoulli, Categorical or Multinomial column"),
    (lambda X, y: fit(X, y).set_params(feature_prior=0.5), "not defined with feature_prior"),
    (lambda X, y: bnb.from_tables(class_prior={"a": 0.5, "b": 0.5},
                                  categorical={"colour": {"a": {"red": 0.5, "blue": 0.5},
                                                          "b": {"red": 0.1, "blue": 0.9}}}),
     "built from stated tables"),
])
def test_models_it_does_not_apply_to_are_refused(model, make, message):
    X, y, _ = model
    clf = make(X, y)
    with pytest.raises(ValueError, match=message):
        clf.credal_predict(X.iloc[:2] if clf.n_features_in_ == 3 else
                           np.ones((1, clf.n_features_in_)))


def test_bad_strength_and_unseen_values_are_clear_errors(model):
    X, _, clf = model
    for s in (0, -1.0, np.inf, "2", True):
        with pytest.raises(ValueError, match="s must be a finite number > 0"):
            clf.credal_predict(X.iloc[:2], s=s)
    bad = X.iloc[:1].assign(colour="purple")
    with pytest.raises(ValueError, match="column 'colour': value 'purple' is not one of"):
        clf.prior_sensitivity(bad, s=1.0)


def test_views_carry_the_rows_index_and_the_classes(model):
    X, y, clf = model
    rows = queries().iloc[:4].set_axis(["w", "x", "y", "z"])
    sets = clf.credal_predict(rows, s=1.0)
    frame = sets.to_frame()
    assert list(frame.index) == ["w", "x", "y", "z"] and list(frame.columns) == CLASSES
    np.testing.assert_array_equal(frame.to_numpy(), np.asarray(sets))
    assert type(sets.sum(axis=1)) is np.ndarray  # arithmetic gives plain arrays
    table = clf.prior_sensitivity(rows, s=1.0).to_frame()
    assert list(table.index) == ["w", "x", "y", "z"]
    assert table["predicted"].tolist() == clf.predict(rows).tolist()


def dirichlet_multinomial(x, counts, t, s):
    """log p(x | class) by hand (without the class-free multinomial coefficient), under the
    Dirichlet(s t) prior, from the class's column totals ``counts``."""
    a, length = counts + s * t, x.sum()
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(x > 0, gammaln(a + x) - gammaln(a), 0.0)
    return gammaln(counts.sum() + s) - gammaln(counts.sum() + s + length) + terms.sum()


def test_multinomial_bounds_equal_vertices_and_an_optimiser(x64):
    """The least Dirichlet-multinomial term is at a vertex (enumerated); the greatest is inside
    the simplex: Nelder-Mead over a softmax never exceeds the dual bound, and comes within
    1e-9 of it. The sets then follow by the dominance rule with those bounds."""
    rng = np.random.default_rng(4)
    y = np.repeat([0, 1, 2], 6)
    X = rng.poisson(np.array([[3, 1, 1, 0.3], [1, 3, 1, 0.3], [1, 1, 2, 0.3]])[y])
    clf = bnb.NaiveBayes(bnb.Multinomial(), method="bayes").fit(X, y)
    rows = np.vstack([rng.poisson(1.5, size=(6, 4)), [[0, 0, 0, 0], [1, 1, 1, 1]]])
    s, n = 1.5, np.bincount(y).astype(float)
    counts = np.array([X[y == k].sum(axis=0) for k in range(3)], dtype=float)
    lower, upper = np.zeros((len(rows), 3)), np.zeros((len(rows), 3))
    for i, x in enumerate(rows):
        for k in range(3):
            vertices = [dirichlet_multinomial(x, counts[k], np.eye(4)[w], s) for w in range(4)]
            best = max(vertices)
            for _start in range(3):
                def negative(z, x=x, k=k):
                    t = np.exp(z - z.max())
                    return -dirichlet_multinomial(x, counts[k], t / t.sum(), s)
                fit = minimize(negative, rng.normal(size=4), method="Nelder-Mead",
                               options={"xatol": 1e-12, "fatol": 1e-14, "maxiter": 20000})
                best = max(best, -fit.fun)
            lower[i, k], upper[i, k] = min(vertices), best
    block = clf.blocks_[0]
    low, high = bnb.Multinomial.imprecise_log_predictive(block.prior, block.stats, rows, s)
    np.testing.assert_allclose(low, lower, rtol=1e-12)
    assert (high >= upper - 1e-12).all()  # the dual bound is never below the optimum
    np.testing.assert_allclose(high, upper, rtol=0, atol=1e-9)
    result = clf.prior_sensitivity(rows, s=s)
    sets = clf.credal_predict(rows, s=s)
    lo, hi = lower + np.log(n), upper + np.log(n + s)
    margin = lo[:, :, None] - hi[:, None, :]  # [i, a, b]: a dominates b when > 0
    clear = (np.abs(margin) > 1e-7).all(axis=(1, 2))
    assert clear.sum() >= 6
    expected = ~(margin > 0).any(axis=1)
    np.testing.assert_array_equal(np.asarray(sets)[clear], expected[clear])
    assert np.asarray(sets)[-2].all()  # an empty document says nothing
    # the range of p(c | x) from the same bounds, by the formula of an exact two-way split
    for i in range(len(rows)):
        c = list(clf.classes_).index(result["predicted"][i])
        others = [b for b in range(3) if b != c]
        most = (sum(n[b] * np.exp(upper[i, b]) for b in others)
                + s * max(np.exp(upper[i, b]) for b in others)) / (n[c] * np.exp(lower[i, c]))
        least = sum(n[b] * np.exp(lower[i, b]) for b in others) / (
            (n[c] + s) * np.exp(upper[i, c]))
        np.testing.assert_allclose([result["lower"][i], result["upper"][i]],
                                   [1 / (1 + most), 1 / (1 + least)], rtol=1e-7)


def test_a_missing_multinomial_count_is_refused():
    clf = bnb.NaiveBayes(bnb.Multinomial(), method="bayes").fit([[1, 2], [3, 0]], [0, 1])
    with pytest.raises(ValueError, match="row 1: a Multinomial block with a missing count"):
        clf.credal_predict(np.array([[1.0, 1.0], [np.nan, 2.0]]))


@pytest.mark.parametrize("X, y, x, s", [
    # class 0's least p(0, x)(N + s) is 7 (4/6)(3/7) = 2 and class 1's greatest 4 (2/4)(3/3) = 2
    ([[0, 0, 0], [1, 1, 1], [0, 1, np.nan], [0, np.nan, 1], [np.nan, 0, 0], [1, 1, 1],
      [np.nan, 0, 1], [1, np.nan, 1], [0, 1, 0], [0, 1, 0]],
     [0, 1, 0, 0, 0, 0, 0, 1, 1, 0], [0, 1, np.nan], 1.0),
    # 3 against 3, and 2 against 2: in log space one tie rounded each way
    ([[0], [1], [1], [1], [0], [0], [1], [1]], [0, 1, 0, 0, 0, 1, 0, 0], [1], 2.0),
    ([[1], [0], [0], [1], [0]], [0, 1, 1, 1, 1], [0], 2.0),
])
def test_an_exact_tie_at_the_extremes_is_no_dominance(X, y, x, s):
    """inf p(a, x)/p(b, x) = 1 exactly is not > 1: both classes stay, and the prediction is
    not robust. The log-space bounds put the tie 1e-16 either way, so some were kept and
    some dropped (19 of 40 ties found with exact fractions were dropped)."""
    clf = bnb.NaiveBayes(bnb.Bernoulli(), method="bayes").fit(np.array(X, float), y)
    row = np.array([x], dtype=float)
    assert np.asarray(clf.credal_predict(row, s=s)).tolist() == [[True, True]]
    assert not np.asarray(clf.prior_sensitivity(row, s=s)["robust"])[0]
