"""Tree-augmented naive Bayes (bayesnb.tan) against brute force: the 125 spanning trees of five
columns enumerated from their Pruefer sequences, each tree's evidence written out as gammaln
sums of its count tables (SciPy, here, not the library's), its predictive as a ratio of
evidences (the data with the new row over the data), and the average over trees as a plain
log-sum-exp. Then: the true edges of data drawn from a tree, held-out log loss against
NaiveBayes, 100+ columns with Bayes factors in the thousands, the scikit-learn surface and
model files."""

import itertools
import zipfile

import jax
import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.special import gammaln, logsumexp
from sklearn.base import clone
from sklearn.metrics import log_loss

import bayesnb as bnb
from bayesnb._spanning_trees import log_tree_sum

ESS = 1.5
CLASS_ALPHA = 1.0


# ---------------------------------------------------------------------- the reference
def pruefer_trees(f):
    """Every spanning tree of f labelled vertices, each from its Pruefer sequence."""
    for seq in itertools.product(range(f), repeat=f - 2):
        degree = [1] * f
        for s in seq:
            degree[s] += 1
        edges = []
        for s in seq:
            leaf = min(v for v in range(f) if degree[v] == 1)
            edges.append((min(leaf, s), max(leaf, s)))
            degree[leaf] -= 1
            degree[s] -= 1
        u, v = [v for v in range(f) if degree[v] == 1]
        edges.append((u, v))
        yield sorted(edges)


def log_dm(counts, alpha):
    """Dirichlet-multinomial evidence of a table of counts, by the formula."""
    counts = np.asarray(counts, dtype=float).ravel()
    a = np.full(counts.shape, alpha / counts.size)
    return (gammaln(a.sum()) - gammaln(a.sum() + counts.sum())
            + np.sum(gammaln(a + counts) - gammaln(a)))


def tree_log_evidence(codes, y, sizes, n_classes, tree, weight=None):
    """log p(X | y, T): sum over classes of edge evidences minus (degree - 1) column ones."""
    w = np.ones(len(y)) if weight is None else weight
    degree = np.zeros(len(sizes), dtype=int)
    for i, j in tree:
        degree[i] += 1
        degree[j] += 1
    total = 0.0
    for c in range(n_classes):
        rows = y == c
        for i, j in tree:
            table = np.zeros((sizes[i], sizes[j]))
            np.add.at(table, (codes[rows, i], codes[rows, j]), w[rows])
            total += log_dm(table, ESS)
        for i, v in enumerate(sizes):
            table = np.bincount(codes[rows, i], weights=w[rows], minlength=v)
            total -= (degree[i] - 1) * log_dm(table, ESS)
    return total


def class_log_evidence(y, n_classes):
    n = np.bincount(y, minlength=n_classes)
    g = np.full(n_classes, CLASS_ALPHA)
    return gammaln(g.sum()) - gammaln(g.sum() + n.sum()) + np.sum(gammaln(g + n) - gammaln(g))


def five_columns(seed=0, n=40):
    """Five discrete columns (two, three and two levels, strings among them), two classes."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    a = np.where(rng.random(n) < 0.75, y, 1 - y)
    b = (a + rng.integers(0, 2, n) * (rng.random(n) < 0.3)) % 3
    c = rng.integers(0, 2, n)
    d = np.where(rng.random(n) < 0.8, c, 1 - c)
    e = np.where(rng.random(n) < 0.6, b % 2, y)
    X = pd.DataFrame({"a": a, "b": np.array(["lo", "mid", "hi"])[b], "c": c.astype(bool),
                      "d": d, "e": e})
    codes = np.column_stack([a, pd.Categorical(X["b"], categories=["hi", "lo", "mid"]).codes,
                             c, d, e])
    return X, y, codes, [2, 3, 2, 2, 2]


def enumerate_model(codes, y, sizes, rows, log_prior=None):
    """Per tree: log prior weight, log evidence and, for each new row and class, the log
    evidence with that row added; with the averages they imply."""
    trees = list(pruefer_trees(len(sizes)))
    assert len(trees) == 125
    prior = np.array([0.0 if log_prior is None else sum(log_prior[e] for e in t) for t in trees])
    evidence = np.array([tree_log_evidence(codes, y, sizes, 2, t) for t in trees])
    added = np.empty((len(trees), len(rows), 2))
    for r, x in enumerate(rows):
        for c in range(2):
            codes1, y1 = np.vstack([codes, x]), np.append(y, c)
            added[:, r, c] = [tree_log_evidence(codes1, y1, sizes, 2, t) for t in trees]
    n = np.bincount(y, minlength=2)
    class_part = np.log((n + CLASS_ALPHA) / (n.sum() + 2 * CLASS_ALPHA))
    return trees, prior, evidence, added, class_part


# ---------------------------------------------------------------------- exact averages
@pytest.fixture(scope="module")
def reference():
    X, y, codes, sizes = five_columns()
    new = X.iloc[[0, 3, 7, 11]]
    rows = [codes[0], codes[3], codes[7], codes[11]]
    return X, y, codes, sizes, new, enumerate_model(codes, y, sizes, rows)


def test_average_over_all_125_trees_equals_enumeration(reference, x64):
    X, y, codes, sizes, new, (trees, _, evidence, added, class_part) = reference
    clf = bnb.TreeAugmentedNB(alpha_ess=ESS, class_alpha=CLASS_ALPHA).fit(X, y)
    # p(x, c | data) = sum_T p(T) p(data, x, c | T) / sum_T p(T) p(data | T)
    want = (logsumexp(added, axis=0) - logsumexp(evidence))  # (rows, classes)
    want += class_part
    np.testing.assert_allclose(clf.predict_joint_log_proba(new), want, rtol=0, atol=1e-9)
    np.testing.assert_allclose(clf.predict_proba(new),
                               np.exp(want - logsumexp(want, axis=1, keepdims=True)),
                               rtol=0, atol=1e-9)
    posterior = np.exp(evidence - logsumexp(evidence))
    edges = np.zeros((5, 5))
    for t, p in zip(trees, posterior, strict=True):
        for i, j in t:
            edges[i, j] += p
            edges[j, i] += p
    np.testing.assert_allclose(clf.edge_probability_.to_numpy(), edges, rtol=0, atol=1e-9)
    assert list(clf.edge_probability_.columns) == ["a", "b", "c", "d", "e"]
    log_ev = class_log_evidence(y, 2) + logsumexp(evidence) - np.log(125)
    assert clf.log_evidence() == pytest.approx(log_ev, abs=1e-9)
    assert clf.tree_ is None


def test_map_tree_is_the_best_enumerated_tree(reference, x64):
    X, y, codes, sizes, new, (trees, _, evidence, added, class_part) = reference
    clf = bnb.TreeAugmentedNB(alpha_ess=ESS, tree="map").fit(X, y)
    best = int(np.argmax(evidence))
    names = list(X.columns)
    assert clf.tree_ == [(names[i], names[j]) for i, j in trees[best]]
    assert clf.log_evidence() == pytest.approx(class_log_evidence(y, 2) + evidence[best],
                                               abs=1e-9)
    np.testing.assert_allclose(clf.predict_joint_log_proba(new),
                               added[best] - evidence[best] + class_part, rtol=0, atol=1e-9)


@pytest.mark.parametrize("index", [0, 77])
def test_a_given_tree_is_that_trees_model(reference, x64, index):
    X, y, codes, sizes, new, (trees, _, evidence, added, class_part) = reference
    names = list(X.columns)
    tree = [(names[j], i) for i, j in trees[index]]  # names and positions, in any order
    clf = bnb.TreeAugmentedNB(alpha_ess=ESS, tree=tree).fit(X, y)
    assert clf.log_evidence() == pytest.approx(class_log_evidence(y, 2) + evidence[index],
                                               abs=1e-9)
    np.testing.assert_allclose(clf.predict_joint_log_proba(new),
                               added[index] - evidence[index] + class_part, rtol=0, atol=1e-9)


def test_edge_factored_prior_reweights_the_trees(x64):
    X, y, codes, sizes = five_columns(seed=3, n=30)
    rng = np.random.default_rng(4)
    beta = rng.uniform(0.1, 3.0, (5, 5))
    beta = (beta + beta.T) / 2
    beta[0, 1] = beta[1, 0] = 0.0  # forbidden
    with np.errstate(divide="ignore"):
        log_beta = np.log(beta)
    trees, prior, evidence, added, class_part = enumerate_model(codes, y, sizes, [codes[2]],
                                                                log_beta)
    clf = bnb.TreeAugmentedNB(alpha_ess=ESS, edge_prior=beta).fit(X, y)
    want = logsumexp(prior[:, None, None] + added, axis=0) - logsumexp(prior + evidence)
    np.testing.assert_allclose(clf.predict_joint_log_proba(X.iloc[[2]]), want + class_part,
                               rtol=0, atol=1e-9)
    log_ev = class_log_evidence(y, 2) + logsumexp(prior + evidence) - logsumexp(prior)
    assert clf.log_evidence() == pytest.approx(log_ev, abs=1e-9)
    assert clf.edge_probability_.iloc[0, 1] == 0.0
    with pytest.raises(ValueError, match="forbids"):
        bnb.TreeAugmentedNB(edge_prior=beta, tree=[(0, 1), (1, 2), (2, 3), (3, 4)]).fit(X, y)


def test_weights_are_the_dependence_reports_bayes_factors():
    """With binary columns and Categorical(alpha = ess / 2) the joint-Dirichlet factor of
    bayesnb.dependence is the BDeu one."""
    X, y, _, _ = five_columns(seed=1, n=60)
    X = X.drop(columns="b").astype(int)
    clf = bnb.TreeAugmentedNB(alpha_ess=ESS).fit(X, y)
    nb = bnb.NaiveBayes(bnb.Categorical(alpha=ESS / 2)).fit(X, y)
    report = bnb.analysis.dependence(nb, X, y)
    for _, r in report.iterrows():
        assert clf.edge_log_bayes_factor_.loc[r.column_a, r.column_b] == pytest.approx(
            r.log_bayes_factor, abs=1e-9)


def test_sample_weights_equal_repeated_rows():
    X, y, _, _ = five_columns(seed=2, n=25)
    w = np.arange(25) % 3
    weighted = bnb.TreeAugmentedNB().fit(X, y, sample_weight=w)
    repeated = bnb.TreeAugmentedNB().fit(X.loc[X.index.repeat(w)], np.repeat(y, w))
    np.testing.assert_allclose(weighted.predict_proba(X), repeated.predict_proba(X), atol=1e-12)
    assert weighted.log_evidence() == pytest.approx(repeated.log_evidence(), abs=1e-9)


def test_a_zero_weight_row_is_no_row():
    """Its level, held by no other row, is no level: the fit equals the one without it."""
    X = pd.DataFrame({"a": ["x", "x", "x", "y", "y", "z"], "b": ["u", "v", "u", "v", "v", "u"]})
    y = [0, 0, 0, 1, 1, 1]
    weighted = bnb.TreeAugmentedNB().fit(X, y, sample_weight=[1, 1, 1, 1, 1, 0])
    removed = bnb.TreeAugmentedNB().fit(X[:5], y[:5])
    assert weighted.levels_ == removed.levels_ == (("x", "y"), ("u", "v"))
    np.testing.assert_allclose(weighted.predict_proba(X[:5]), removed.predict_proba(X[:5]),
                               atol=1e-15)
    assert weighted.log_evidence() == pytest.approx(removed.log_evidence(), abs=1e-12)


# ---------------------------------------------------------------------- data from a tree
def tree_data(n, f, seed, flip=0.15, strength=0.8):
    """Binary columns along a random tree (each copies its parent with prob. ``strength``),
    the root driven by the class, and a class signal added to every column."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    parent = [None] + [int(rng.integers(0, i)) for i in range(1, f)]
    X = np.empty((n, f), dtype=np.int64)
    X[:, 0] = np.where(rng.random(n) < 0.7, y, 1 - y)
    for i in range(1, f):
        p = X[:, parent[i]]
        X[:, i] = np.where(rng.random(n) < strength, p, 1 - p) ^ (y & (rng.random(n) < flip))
    return X, y, [(parent[i], i) for i in range(1, f)]


def test_true_edges_are_found_and_held_out_loss_beats_naive_bayes():
    X, y, edges = tree_data(3000, 7, seed=5)
    train, test = slice(0, 2000), slice(2000, None)
    clf = bnb.TreeAugmentedNB().fit(X[train], y[train])
    for i, j in edges:
        assert clf.edge_probability_.iloc[i, j] > 0.9, (i, j)
    nb = bnb.NaiveBayes(bnb.Categorical(), method="bayes").fit(X[train], y[train])
    tan_loss = log_loss(y[test], clf.predict_proba(X[test]))
    nb_loss = log_loss(y[test], nb.predict_proba(X[test]))
    assert tan_loss < nb_loss - 0.02, (tan_loss, nb_loss)


# ---------------------------------------------------------------------- 100+ columns
def test_stable_with_many_columns_and_bayes_factors_in_the_thousands():
    X, y, edges = tree_data(2500, 84, seed=6, strength=0.995)  # and 20 columns of noise
    X = np.hstack([X, np.random.default_rng(7).integers(0, 3, (2500, 20))])
    clf = bnb.TreeAugmentedNB().fit(X, y)
    w = clf.edge_log_bayes_factor_.to_numpy()
    assert w.max() > 800 and w.min() < -5  # exp(w - max) underflows: beyond float64's range
    p = clf.edge_probability_.to_numpy()
    assert np.all(np.isfinite(p)) and np.all((p >= 0) & (p <= 1))
    assert np.triu(p, 1).sum() == pytest.approx(103, abs=1e-8)  # each tree has F - 1 edges
    assert min(p[i, j] for i, j in edges) > 0.99
    assert np.isfinite(clf.log_evidence())
    proba = clf.predict_proba(X[:20])
    assert np.all(np.isfinite(proba))
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, atol=1e-12)
    # the predictive ratio (mixing shares) against the log-space elimination of W o R_x
    from bayesnb.tan import edge_ratios

    post = clf.posterior_
    codes = X[:5]
    ratios = np.moveaxis(edge_ratios(post, codes), (0, 1), (2, 3))  # (K, n, F, F)
    direct = log_tree_sum(post.log_weights + ratios).T - post.log_z
    base = sum(post.log_q[i][:, codes[:, i]].T for i in range(104))
    log_prior = np.log((clf.class_count_ + 1) / (clf.class_count_.sum() + 2))
    np.testing.assert_allclose(clf.predict_joint_log_proba(X[:5]), base + direct + log_prior,
                               rtol=1e-10)
    with jax.enable_x64(True):  # float64 NumPy whatever JAX's mode
        np.testing.assert_array_equal(clf.predict_proba(X[:20]), proba)


def test_clusters_joined_by_light_edges():
    """Two groups of identical columns, the groups independent: inside a group the weights are
    ~e^700 times those between, where exp(w - max) underflows to a disconnected graph and LU
    cancels. By symmetry each of the a * b edges between the groups has probability 1/(a b)
    (one of them joins the groups), each inside a group 2/a."""
    rng = np.random.default_rng(8)
    n = 2000
    y = rng.integers(0, 2, n)
    u, v = rng.integers(0, 2, n), rng.integers(0, 2, n)
    X = np.column_stack([u] * 3 + [v] * 4)
    clf = bnb.TreeAugmentedNB().fit(X, y)
    w = clf.edge_log_bayes_factor_.to_numpy()
    assert w[0, 1] - w[0, 5] > 700
    p = clf.edge_probability_.to_numpy()
    np.testing.assert_allclose(p[:3, 3:], 1 / 12, rtol=1e-9)
    np.testing.assert_allclose(p[0, 1], 2 / 3, rtol=1e-9)
    np.testing.assert_allclose(p[3, 4], 2 / 4, rtol=1e-9)
    assert np.all(np.isfinite(clf.predict_joint_log_proba(X[:50])))


# ---------------------------------------------------------------------- scikit-learn, files
def test_scikit_learn_surface():
    from sklearn.utils.estimator_checks import (
        check_get_params_invariance,
        check_no_attributes_set_in_init,
        check_parameters_default_constructible,
    )

    est = bnb.TreeAugmentedNB(alpha_ess=2.0, tree="map")
    check_no_attributes_set_in_init("TreeAugmentedNB", est)
    check_get_params_invariance("TreeAugmentedNB", est)
    check_parameters_default_constructible("TreeAugmentedNB", est)
    copy = clone(est)
    assert copy.get_params() == {"alpha_ess": 2.0, "tree": "map", "class_alpha": 1.0,
                                 "edge_prior": None}
    X, y, _, _ = five_columns()
    assert copy.fit(X, y).score(X, y) > 0.5
    with pytest.raises(Exception, match="not fitted"):
        est.predict(X)


def test_save_and_load_round_trip(tmp_path):
    X, y, _, _ = five_columns()
    labels = np.array(["no", "yes"])[y]
    for clf in (bnb.TreeAugmentedNB(alpha_ess=2.0, class_alpha=0.5).fit(X, labels),
                bnb.TreeAugmentedNB(tree=[("a", "b"), ("b", "c"), ("c", "d"), ("d", "e")],
                                    edge_prior=np.ones((5, 5))).fit(X, labels),
                bnb.TreeAugmentedNB(tree="map").fit(X.to_numpy(), labels)):
        path = clf.save(tmp_path / "tan.bnb")
        loaded = bnb.TreeAugmentedNB.load(path)
        new = X if clf.named_ else X.to_numpy()
        np.testing.assert_array_equal(loaded.predict_proba(new), clf.predict_proba(new))
        assert loaded.log_evidence() == clf.log_evidence()
        assert loaded.tree_ == clf.tree_ and loaded.get_params()["alpha_ess"] == clf.alpha_ess
        assert list(loaded.classes_) == ["no", "yes"]
        with zipfile.ZipFile(path) as zf:
            assert all(n == "manifest.json" or n.endswith(".npy") for n in zf.namelist())
    with pytest.raises(bnb.ModelFileError, match="not a TreeAugmentedNB model"):
        bnb.TreeAugmentedNB.load(bnb.save(bnb.NaiveBayes().fit(X, y), tmp_path / "nb.bnb"))
    with pytest.raises(bnb.ModelFileError, match="read it with bnb.TreeAugmentedNB.load"):
        bnb.load(path)
    with pytest.raises(TypeError, match="model.save"):
        bnb.save(clf, tmp_path / "other.bnb")



def test_save_states_the_settings_of_the_fit(tmp_path):
    """save wrote the current alpha_ess, tree and edge_prior, and load recomputed the model
    under them: after set_params without a refit the loaded model was 0.023 off the saved
    one. The file states what the posterior was computed under (class_alpha is read at
    prediction, so the current one)."""
    X, y, _, _ = five_columns()
    for change in ({"alpha_ess": 5.0}, {"tree": "average"}, {"class_alpha": [1.0, 9.0]}):
        clf = bnb.TreeAugmentedNB(tree="map").fit(X, y).set_params(**change)
        loaded = bnb.TreeAugmentedNB.load(clf.save(tmp_path / "tan.bnb"))
        np.testing.assert_array_equal(loaded.predict_proba(X), clf.predict_proba(X))
        assert loaded.log_evidence() == clf.log_evidence()


def test_an_edge_prior_must_be_exactly_symmetric():
    """np.allclose let 1e-9 against 0 pass as symmetric, and parts of the code read either
    half: the edge 0-1 was certain one way round and forbidden the other."""
    X, y, _, _ = five_columns()
    beta = np.ones((5, 5))
    beta[0, 1], beta[1, 0] = 1e-9, 0.0
    with pytest.raises(ValueError, match="edge_prior must be a symmetric"):
        bnb.TreeAugmentedNB(edge_prior=beta).fit(X, y)


def test_a_one_column_model_file_loads(tmp_path):
    """One column has no pairs (an empty pair array): its file loads as any other."""
    X, y = [[0], [1], [1], [1], [0], [1]], [0, 0, 1, 1, 0, 1]
    for tree in ("average", "map"):
        clf = bnb.TreeAugmentedNB(tree=tree).fit(X, y)
        loaded = bnb.TreeAugmentedNB.load(clf.save(tmp_path / f"{tree}.bnb"))
        np.testing.assert_array_equal(loaded.predict_proba(X), clf.predict_proba(X))
        assert loaded.log_evidence() == clf.log_evidence()


def test_a_tampered_file_is_refused(tmp_path):
    X, y, _, _ = five_columns()
    path = bnb.TreeAugmentedNB().fit(X, y).save(tmp_path / "tan.bnb")
    with zipfile.ZipFile(path) as zf:
        members = {n: zf.read(n) for n in zf.namelist()}
    bad = tmp_path / "bad.bnb"
    import io

    single = np.load(io.BytesIO(members["arrays/single.npy"]))
    single[0, 0] += 1.0
    buf = io.BytesIO()
    np.save(buf, single)
    with zipfile.ZipFile(bad, "w") as zf:
        for n, data in members.items():
            zf.writestr(n, buf.getvalue() if n == "arrays/single.npy" else data)
    with pytest.raises(bnb.ModelFileError, match="do not sum to the class counts"):
        bnb.TreeAugmentedNB.load(bad)



def test_a_damaged_file_or_a_folder_is_a_model_file_error(tmp_path):
    """TreeAugmentedNB.load let zlib.error, EOFError and IsADirectoryError escape where
    bnb.load raises ModelFileError for the same damage (hunt 52): every flipped bit of a
    deflated member and every truncation is a ModelFileError (or the same model), a folder
    says so."""
    X, y, _, _ = five_columns()
    clf = bnb.TreeAugmentedNB().fit(X, y)
    data = clf.save(tmp_path / "tan.bnb").read_bytes()
    expected = clf.predict_proba(X)
    bad = tmp_path / "bad.bnb"
    for cut in (10, len(data) // 2, len(data) - 5):
        bad.write_bytes(data[:cut])
        with pytest.raises(bnb.ModelFileError, match="corrupt or truncated"):
            bnb.TreeAugmentedNB.load(bad)
    for at in range(30, min(len(data), 400), 7):  # headers and deflated data alike
        flipped = bytearray(data)
        flipped[at] ^= 2
        bad.write_bytes(bytes(flipped))
        try:
            loaded = bnb.TreeAugmentedNB.load(bad)
        except bnb.ModelFileError:
            continue
        np.testing.assert_allclose(loaded.predict_proba(X), expected, rtol=1e-12)
    (tmp_path / "folder.bnb").mkdir()
    for load in (bnb.TreeAugmentedNB.load, bnb.load):
        with pytest.raises(bnb.ModelFileError, match="a folder, not a model file"):
            load(tmp_path / "folder.bnb")

# ---------------------------------------------------------------------- bad input
def test_clear_errors_name_the_column():
    X, y, _, _ = five_columns()
    holes = X.copy()
    holes.loc[4, "d"] = np.nan
    with pytest.raises(ValueError, match="column 'd': 1 missing value"):
        bnb.TreeAugmentedNB().fit(holes, y)
    clf = bnb.TreeAugmentedNB().fit(X, y)
    unseen = X.iloc[:2].copy()
    unseen["b"] = ["lo", "extreme"]
    with pytest.raises(ValueError, match="column 'b': level 'extreme' was not seen"):
        clf.predict(unseen)
    with pytest.raises(ValueError, match="column 'd': 1 missing"):
        clf.predict(holes.iloc[3:6])
    with pytest.raises(ValueError, match="cycle"):
        bnb.TreeAugmentedNB(tree=[(0, 1), (1, 2), (0, 2), (3, 4)]).fit(X, y)
    with pytest.raises(ValueError, match="4 edges"):
        bnb.TreeAugmentedNB(tree=[(0, 1)]).fit(X, y)
    with pytest.raises(ValueError, match="not whole"):
        bnb.TreeAugmentedNB().fit(np.array([[0.5, 1.0], [1.0, 0.0]]), [0, 1])


@pytest.mark.parametrize("scale", [1.0, 100.0, 5000.0])
def test_log_space_matrix_tree_sums_against_the_1296_trees_of_six_vertices(scale):
    """Random log weights up to thousands (exp overflows past 709): the tree sum, the edge
    marginals, and the sum with per-row edge factors, moderate (the mixing path) and huge
    (the log-space fallback), each against the enumerated trees."""
    from bayesnb._spanning_trees import elimination_plan, log_edge_marginals, log_tree_ratio

    rng = np.random.default_rng(int(scale))
    f = 6
    a = rng.normal(size=(f, f)) * scale
    lw = (a + a.T) / 2
    np.fill_diagonal(lw, -np.inf)
    trees = list(pruefer_trees(f))
    assert len(trees) == 6 ** 4
    values = np.array([sum(lw[e] for e in t) for t in trees])
    assert log_tree_sum(lw) == pytest.approx(logsumexp(values), rel=1e-12)
    post = np.exp(values - logsumexp(values))
    p = np.zeros((f, f))
    for t, q in zip(trees, post, strict=True):
        for i, j in t:
            p[i, j] += q
            p[j, i] += q
    np.testing.assert_allclose(np.exp(log_edge_marginals(lw)), p, rtol=0, atol=1e-12)
    for size in (2.0, 400.0):
        r = rng.normal(size=(5, f, f)) * size
        r = (r + r.transpose(0, 2, 1)) / 2
        r[:, np.arange(f), np.arange(f)] = 0.0
        want = [logsumexp([sum(lw[e] + r[b][e] for e in t) for t in trees]) - logsumexp(values)
                for b in range(5)]
        got = log_tree_ratio(elimination_plan(lw), np.moveaxis(r, 0, -1))
        np.testing.assert_allclose(got, want, rtol=1e-11, atol=1e-9)


@settings(max_examples=15, deadline=None)
@given(st.permutations(range(5)), st.integers(0, 10_000))
def test_the_average_does_not_depend_on_the_order_of_the_columns(order, seed):
    """The elimination grounds the last column and runs in column order; neither may show."""
    X, y, _, _ = five_columns(seed=seed % 7, n=30)
    clf = bnb.TreeAugmentedNB().fit(X, y)
    shuffled = bnb.TreeAugmentedNB().fit(X.iloc[:, list(order)], y)
    np.testing.assert_allclose(shuffled.predict_joint_log_proba(X),
                               clf.predict_joint_log_proba(X), rtol=0, atol=1e-9)
    names = list(X.columns[list(order)])
    np.testing.assert_allclose(shuffled.edge_probability_.to_numpy(),
                               clf.edge_probability_.loc[names, names].to_numpy(), atol=1e-12)
    assert shuffled.log_evidence() == pytest.approx(clf.log_evidence(), abs=1e-9)
