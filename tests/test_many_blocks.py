"""A model declared column by column (``{column: family}``, one family object a column): its
blocks of one family and width are computed together in the kernels (``fast._groups``, one
vmapped computation for XLA however many blocks), with the answers of independent references,
errors that name the right column, float32 refusals that name the right column, and kernels
whose size does not grow with the number of blocks."""

import jax
import numpy as np
import pandas as pd
import pytest
import scipy.stats as st
from numpy.testing import assert_allclose
from scipy.special import gammaln, logsumexp
from sklearn.naive_bayes import GaussianNB

import bayesnb as bnb
from bayesnb.fast import _exact, _groups, _host, _kernels


@pytest.fixture
def on_the_kernels(kernel_fits, monkeypatch):
    """Fits counted and calls scored by the kernels however small (not the host's paths)."""
    monkeypatch.setattr(_host, "HOST_PRODUCT_CELLS", -1)
    monkeypatch.setattr(_host, "scored_on_host", lambda *args: False)


def gaussian_data(n=240, f=30, seed=0):
    rng = np.random.default_rng(seed)
    y = np.arange(n) % 3
    scale = 10.0 ** rng.uniform(-2, 3, f)
    offset = rng.normal(0, 50, f)
    return offset + scale * (rng.normal(size=(n, f)) + y[:, None] * 0.7), y


def test_gaussian_columns_one_by_one_match_scikit_learn(x64, on_the_kernels):
    """30 one-column Gaussian blocks of scales 1e-2..1e3 (one group in the kernels):
    ``method="ml"`` with frequency class priors is ``GaussianNB(var_smoothing=0)``."""
    X, y = gaussian_data()
    clf = bnb.NaiveBayes({c: bnb.Gaussian() for c in range(X.shape[1])}, method="ml",
                         class_alpha=0).fit(X, y)
    assert len(clf.blocks_) == X.shape[1]
    ref = GaussianNB(var_smoothing=0.0).fit(X, y)
    for c, block in enumerate(clf.blocks_):  # per class: count, mean, sum of squares
        assert_allclose(block.stats.m2[:, 0] / block.stats.count[:, 0], ref.var_[:, c],
                        rtol=1e-10)
    assert_allclose(clf.predict_joint_log_proba(X), ref.predict_joint_log_proba(X),
                    rtol=1e-10, atol=1e-8)
    assert_allclose(clf.predict_proba(X), ref.predict_proba(X), rtol=1e-8, atol=1e-12)


def poisson_exact_joint(X, y, prior, shape=1.0, rate=1.0):
    """log p(x, c | data): the class prior times, per column, SciPy's negative binomial (the
    Poisson-Gamma posterior predictive)."""
    out = np.tile(np.log(prior), (len(X), 1))
    for k in range(len(prior)):
        a = shape + X[y == k].sum(axis=0)
        b = rate + np.sum(y == k)
        out[:, k] += st.nbinom.logpmf(X, a, b / (b + 1.0)).sum(axis=1)
    return out


def student_t_joint(X, y, prior, loc=0.0, kappa=1.0, shape=1.0, rate=1.0):
    """log p(x, c | data) under the Normal-Gamma posterior: SciPy's Student-t per column."""
    out = np.tile(np.log(prior), (len(X), 1))
    for k in range(len(prior)):
        xk = X[y == k]
        n, mean = len(xk), xk.mean(axis=0)
        m2 = ((xk - mean) ** 2).sum(axis=0)
        kn, an = kappa + n, shape + n / 2
        ln = (kappa * loc + n * mean) / kn
        bn = rate + m2 / 2 + kappa * n * (mean - loc) ** 2 / (2 * kn)
        out[:, k] += st.t.logpdf(X, 2 * an, ln, np.sqrt(bn * (kn + 1) / (an * kn))).sum(axis=1)
    return out


def test_mixed_blocks_one_by_one_match_scipy(x64, on_the_kernels):
    """Poisson and Gaussian columns declared one by one, interleaved, with a two-column
    Poisson block among them (a group of its own): the exact predictive and the joint density
    are SciPy's negative binomial and Student-t per column, and ``log_evidence`` is the sum
    of the one-block models' (each column's evidence is its own)."""
    rng = np.random.default_rng(1)
    n, K = 150, 3
    y = np.arange(n) % K
    counts = rng.poisson(rng.gamma(2.0, 1.0, (K, 9))[y]).astype(float)
    reals = rng.normal(size=(n, 7)) + y[:, None]
    X = np.empty((n, 16))
    poisson_cols, gaussian_cols = [0, 1, 3, 4, 6, 8, 10, 12, 15], [2, 5, 7, 9, 11, 13, 14]
    X[:, poisson_cols], X[:, gaussian_cols] = counts, reals
    pair = bnb.Poisson(shape=1.0, rate=1.0)
    features = {c: bnb.Poisson(shape=1.0, rate=1.0) for c in poisson_cols} | {
        c: bnb.Gaussian(kappa=1.0, rate=1.0) for c in gaussian_cols} | {8: pair, 10: pair}
    prior = np.full(K, 1.0 / K)
    clf = bnb.NaiveBayes(features, method="bayes", class_prior=prior).fit(X, y)
    assert len(clf.blocks_) == 15
    joint = (poisson_exact_joint(X[:, poisson_cols], y, prior)
             + student_t_joint(X[:, gaussian_cols], y, prior) - np.log(prior))
    assert_allclose(clf.predict_joint_log_proba(X), joint, rtol=1e-9, atol=1e-9)
    assert_allclose(clf.predict_proba(X),
                    np.exp(joint - logsumexp(joint, axis=1, keepdims=True)), rtol=1e-7,
                    atol=1e-12)
    # the Poisson-Gamma evidence of each column by hand: the data given the class and the
    # class counts, Gamma(1, 1) prior
    evidence = 0.0
    for k in range(K):
        xk = counts[y == k]
        a, b = 1.0 + xk.sum(axis=0), 1.0 + len(xk)
        evidence += np.sum(gammaln(a) - a * np.log(b) - gammaln(1.0)
                           - gammaln(xk + 1).sum(axis=0))
    alone = bnb.NaiveBayes(bnb.Gaussian(kappa=1.0, rate=1.0), method="bayes",
                           class_prior=prior).fit(reals, y).log_evidence()
    assert_allclose(clf.log_evidence(), alone + evidence, rtol=1e-10)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_a_bad_value_is_named_by_its_own_column(request, on_the_kernels, dtype):
    """A negative count in one of 40 one-column Poisson blocks (one group in the kernels):
    the fit refuses it naming that column, not another of its group."""
    if dtype == "float64":
        request.getfixturevalue("x64")
    rng = np.random.default_rng(2)
    X = rng.poisson(2.0, (200, 40)).astype(float)
    X[77, 23] = -1.0
    y = np.arange(200) % 2
    with pytest.raises(ValueError, match=r"column 23: .*non-negative"):
        bnb.NaiveBayes({c: bnb.Poisson() for c in range(40)}).fit(X, y)
    X[77, 23] = 1.0
    clf = bnb.NaiveBayes({c: bnb.Poisson() for c in range(40)}).fit(X, y)
    X[5, 31] = np.inf
    with pytest.raises(ValueError, match=r"column 31: .*infinite"):
        clf.predict_proba(X)


def test_float32_refusal_names_its_own_column(on_the_kernels):
    """Float32 (the default): of 12 one-column Gaussian blocks, the one whose classes differ
    by far less than its offset resolves is refused by name; the others alone are scored
    within 1e-4 of float64."""
    X, y = gaussian_data(f=12)
    z = np.random.default_rng(3).normal(size=len(y))
    X[:, 7] = np.where(y == 2, 1e6 + 10 * z, z)  # float32 resolves 1e6 + 10 z to 1e-3 of it
    features = {c: bnb.Gaussian() for c in range(12)}
    clf = bnb.NaiveBayes(features, method="ml").fit(X, y)
    with pytest.raises(ValueError, match=r"column 7.*x64"):
        clf.predict_proba(X)
    keep = [c for c in range(12) if c != 7]
    fine = bnb.NaiveBayes({c: bnb.Gaussian() for c in range(11)}, method="ml").fit(
        X[:, keep], y)
    with jax.enable_x64(True):
        exact = bnb.NaiveBayes({c: bnb.Gaussian() for c in range(11)}, method="ml").fit(
            X[:, keep], y).predict_proba(X[:, keep])
    assert np.max(np.abs(fine.predict_proba(X[:, keep]) - exact)) < 1e-4


def _statistics_kernel_size(n_blocks: int) -> int:
    """Operations in the statistics kernel's program for ``n_blocks`` one-column blocks."""
    families = (bnb.Poisson,) * n_blocks
    xs = tuple(np.ones((64, 1), np.float32) for _ in range(n_blocks))
    codes, weights = np.zeros(64, np.int32), np.ones(64, np.float32)
    text = _kernels.suff_stats.lower(families, (None,) * n_blocks, 2, xs, codes,
                                     weights).as_text()
    return text.count("\n")


def test_kernel_size_does_not_grow_with_the_blocks():
    """The statistics kernel of 200 one-column blocks is about as large as that of 5 (it
    was 40 times larger: each block traced its own copy, 19 s of compilation for 100)."""
    assert _statistics_kernel_size(200) < 1.5 * _statistics_kernel_size(5)


def test_groups_follow_family_key_and_shapes():
    """Blocks group by key and by their arguments' shapes and dtypes, in order of first
    appearance; a per-block value is read back in block order."""
    a, b = np.zeros((4, 1)), np.zeros((4, 2))
    keys = ["p", "g", "p", "p", "g"]
    xs = [a, a, b, a, a]
    assert _groups.groups(keys, xs) == [[0, 3], [1, 4], [2]]
    grouped = jax.jit(lambda xs: _groups.per_block(
        lambda key, x: (x.sum() + (key == "g"), x.shape[1]), keys, xs))(
        [np.full((4, x.shape[1]), i, float) for i, x in enumerate(xs)])
    assert [float(grouped[i][0]) for i in range(5)] == [0.0, 5.0, 16.0, 12.0, 17.0]
    assert [int(grouped[i][1]) for i in range(5)] == [1, 1, 2, 1, 1]
    assert len(grouped) == 5 and len(list(grouped)) == 5


def _boundary_rows(clf, base, step, lo=-60.0, hi=60.0):
    """Rows ``base + t step`` around the float64 model's decision boundary between classes 0
    and 1 (``t`` by bisection)."""
    def gap(t):
        joint = clf.predict_joint_log_proba((base + t * step)[None])[0]
        return joint[1] - joint[0]

    below = gap(lo) > 0
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if (gap(mid) > 0) == below else (lo, mid)
    return base + (lo + np.linspace(-1e-4, 1e-4, 7))[:, None] * step


def test_blocks_whose_sums_float32_cannot_hold_are_refused(on_the_kernels):
    """400 one-column Gaussian blocks whose first half favours one class by 8 nats each and
    second half the other, on the float64 boundary: their float32 sum passed 1,600 nats and
    probabilities moved by 1.2e-4 (7.4e-4 with 2,000 blocks) with no error, each block's own
    bound being small. Refused, naming the blocks and x64; as one block, refused too."""
    rng = np.random.default_rng(0)
    y = np.arange(400) % 2
    X = rng.normal(size=(400, 400)) + y[:, None]
    base = np.where(np.arange(400) < 200, 8.5, -7.5)
    features = {c: bnb.Gaussian(kappa=1e-6) for c in range(400)}
    with jax.enable_x64(True):
        Xt = _boundary_rows(bnb.NaiveBayes(features, method="ml").fit(X, y), base,
                            np.ones(400))
    with pytest.raises(ValueError, match=r"400 blocks \(column 0, column 1, .*x64"):
        bnb.NaiveBayes(features, method="ml").fit(X, y).predict_proba(Xt)
    with pytest.raises(ValueError, match=r"column 0.*x64"):
        bnb.NaiveBayes(bnb.Gaussian(kappa=1e-6), method="ml").fit(X, y).predict_proba(Xt)


@pytest.mark.parametrize("method", ["ml", "mean", "bayes"])
def test_ordinary_wide_data_in_many_blocks_is_answered(on_the_kernels, method):
    """1,000 weakly informative one-column Gaussian blocks and 300 Poisson ones (float32, the
    default): answered within 1e-4 of float64, not refused (the blocks' sum is bounded by
    what separates the classes, not by the Student-t's absolute log densities)."""
    rng = np.random.default_rng(1)
    y = np.arange(600) % 2
    X = np.hstack([rng.normal(size=(600, 1000)) + 0.03 * y[:, None] * rng.normal(size=1000),
                   rng.poisson(5 * np.exp(0.05 * y[:, None] * rng.normal(size=300)),
                               (600, 300))])
    features = {c: bnb.Gaussian() for c in range(1000)} | {
        c: bnb.Poisson() for c in range(1000, 1300)}
    with jax.enable_x64(True):
        reference = bnb.NaiveBayes(features, method=method).fit(X, y).predict_proba(X)
    assert np.mean(np.abs(reference[:, 0] - 0.5) < 0.4) > 0.02  # rows between the classes
    proba = bnb.NaiveBayes(features, method=method).fit(X, y).predict_proba(X)
    assert np.max(np.abs(proba - reference)) < 1e-4


@pytest.mark.filterwarnings("ignore::bayesnb.inference.ConvergenceWarning")  # short chains
def test_joined_blocks_have_the_log_density_of_the_blocks_apart(x64):
    """NUTS samples one-column blocks of one family as one block (``_joined_blocks``): that
    program's log density (NumPyro's ``log_density``) at the run's own draws equals the
    density of the model as declared, every block apart, with unlabeled rows (the
    semi-supervised term) and a replaced prior, whose block stays apart."""
    import numpyro.distributions as dist
    import pandas as pd
    from numpyro.infer.util import log_density

    from bayesnb import inference
    from bayesnb._joined_blocks import Joined, joined_blocks
    from bayesnb.model import block_sites

    rng = np.random.default_rng(5)
    n = 80
    codes = rng.integers(0, 2, n)
    X = pd.DataFrame({"g0": rng.normal(codes, 1.0), "g1": rng.normal(2 * codes, 3.0),
                      "p0": rng.poisson(2 + 3 * codes), "g2": rng.normal(-codes, 0.5),
                      "g3": rng.normal(codes, 2.0), "p1": rng.poisson(5 - 2 * codes)})
    y = np.array(["a", "b"], dtype=object)[codes]
    y[::7] = None  # unlabeled rows
    families = {c: bnb.Poisson() if c.startswith("p") else bnb.Gaussian() for c in X.columns}
    priors = {"gaussian1.mean": dist.Normal(0.0, 10.0)}
    clf = bnb.NaiveBayes(families, method="mcmc", priors=priors, num_warmup=60,
                         num_samples=20, num_chains=1, progress_bar=False).fit(X, y)
    sites = block_sites(clf)
    groups = joined_blocks(clf.blocks_, sites, priors)
    assert [g.blocks for g in groups] == [(0, 3, 4), (1,), (2, 5)]  # gaussian1 stays apart
    apart = tuple(Joined((i,), s) for i, s in enumerate(sites))
    setup = clf._class_setup()
    for draw in (0, 7, 19):
        params = {k: np.asarray(v[0, draw], np.float64) for k, v in clf.draws_.items()}
        joined_params = dict(params)
        for g in groups:
            for key in ("mean", "precision", "rate"):
                names = [f"{sites[i]}.{key}" for i in g.blocks]
                if len(g.blocks) > 1 and names[0] in params:
                    joined_params[f"{g.site}.{key}"] = np.concatenate(
                        [joined_params.pop(name) for name in names], axis=-1)
        densities = []
        for grouping, values in ((apart, params), (groups, joined_params)):
            static, data = inference.nuts_arguments(clf.fitted_, grouping, *setup, priors)
            densities.append(float(log_density(inference._stats_model_with_priors, (),
                                               {**static, **data}, values)[0]))
        assert densities[1] == pytest.approx(densities[0], rel=1e-12, abs=1e-9)


def test_log_likelihood_group_of_columns_one_by_one_matches_scipy(x64):
    """``to_arviz``'s ``log_likelihood`` group of Gaussian and Poisson columns declared one by
    one, with a missing value (their draws scored as one block a family, ``_joined_blocks``):
    per draw and row, log p(x_i, y_i | theta) and log p(y_i | x_i, theta) by SciPy."""
    from scipy.special import logsumexp

    rng = np.random.default_rng(11)
    n = 40
    y = np.arange(n) % 2
    X = np.column_stack([rng.normal(y, 1.0), rng.poisson(1 + 2 * y), rng.normal(-y, 2.0),
                         rng.poisson(3, n), rng.normal(0.5 * y, 0.5)]).astype(float)
    X[4, 2] = np.nan
    kinds = ["gaussian0", "poisson0", "gaussian1", "poisson1", "gaussian2"]
    clf = bnb.NaiveBayes({j: bnb.Poisson() if kinds[j].startswith("p") else bnb.Gaussian()
                          for j in range(5)}, method="bayes").fit(X, y)
    draws = clf.sample_posterior(25, seed=2)
    flat = {k: np.asarray(v).reshape((-1,) + v.shape[2:]) for k, v in draws.items()}
    s = np.repeat(np.log(flat["class_probs"])[:, None, :], n, axis=1)  # (draws, rows, K)
    for j, site in enumerate(kinds):
        x = X[:, j][None, :, None]
        if site.startswith("poisson"):
            term = st.poisson.logpmf(x, flat[f"{site}.rate"][:, None, :, 0])
        else:
            term = st.norm.logpdf(x, flat[f"{site}.mean"][:, None, :, 0],
                                  1.0 / np.sqrt(flat[f"{site}.precision"][:, None, :, 0]))
        s += np.where(np.isnan(x), 0.0, term)
    own = s[:, np.arange(n), y]
    for quantity, name, want in (("joint", "xy", own),
                                 ("conditional", "y_given_x", own - logsumexp(s, axis=2))):
        idata = clf.to_arviz(draws, prior_draws=None, X=X, y=y, log_likelihood=quantity)
        got = idata.log_likelihood[name].values.reshape(-1, n)
        assert_allclose(got, want, rtol=1e-10, atol=1e-10, err_msg=quantity)


def test_simulation_of_columns_one_by_one_keeps_each_column_its_own(x64):
    """``simulate`` of Gaussian and Poisson columns declared one by one (traced as one block a
    family, ``_joined_blocks``): every column, under its own name and dtype, reproduces its
    own class-conditional mean (columns of far-apart scales: a column's values given to
    another would be off by hundreds), from the posterior and from a prior centred on it."""
    import pandas as pd

    rng = np.random.default_rng(8)
    n = 400
    y = np.array(["u", "v"])[np.arange(n) % 2]
    shift = (y == "v").astype(float)
    X = pd.DataFrame({"g0": rng.normal(shift, 1.0), "p0": rng.poisson(2 + 4 * shift),
                      "g1": rng.normal(300 - 20 * shift, 5.0), "p1": rng.poisson(40 - 10 * shift),
                      "g2": rng.normal(-150 + 3 * shift, 2.0)})
    clf = bnb.NaiveBayes({c: bnb.Poisson() if c.startswith("p") else bnb.Gaussian()
                          for c in X.columns}, method="bayes").fit(X, y)
    sim = clf.simulate(500, num_draws=4, seed=1)
    assert list(sim.columns) == [*X.columns, "y", "draw"]
    assert [sim[c].dtype.kind for c in ("p0", "p1")] == ["i", "i"]
    for label in ("u", "v"):
        train, fake = X[y == label], sim[sim["y"] == label]
        for col in X.columns:
            se = train[col].std() * (1 / np.sqrt(len(train)) + 1 / np.sqrt(len(fake)))
            assert abs(fake[col].mean() - train[col].mean()) < 6 * se + 0.05, (label, col)
    prior = bnb.NaiveBayes({"g0": bnb.Gaussian(loc=10.0, kappa=1e4, rate=1.0),
                            "g1": bnb.Gaussian(loc=-10.0, kappa=1e4, rate=1.0)},
                           method="bayes").fit(X[["g0", "g1"]], y).simulate(
        300, posterior=False, num_draws=3, seed=2)
    assert abs(prior["g0"].mean() - 10.0) < 1.0 and abs(prior["g1"].mean() + 10.0) < 1.0


def test_closed_form_scoring_streams_one_table_a_family(x64, on_the_kernels, monkeypatch):
    """200 one-column Gaussian blocks and 100 one-column Poisson ones of one prior each are
    scored as two blocks (``scoring.TableScorer.joined``: one table a family for the kernels,
    where 300 tables made a program of 300 arguments), and the answers are SciPy's Student-t
    and negative binomial per column; ``explain`` still reads the 300 blocks' own tables."""
    rng = np.random.default_rng(5)
    n, K = 120, 2
    y = np.arange(n) % K
    reals = rng.normal(size=(n, 200)) + 0.3 * y[:, None]
    counts = rng.poisson(2.0 + y[:, None], (n, 100)).astype(float)
    features = {c: bnb.Gaussian(kappa=1.0, rate=1.0) for c in range(200)} | {
        c: bnb.Poisson(shape=1.0, rate=1.0) for c in range(200, 300)}
    prior = np.full(K, 1.0 / K)
    clf = bnb.NaiveBayes(features, method="bayes", class_prior=prior).fit(
        np.hstack([reals, counts]), y)
    assert len(clf.blocks_) == 300
    streamed = []

    def recording(stream):
        def recorded(families, *args, **kwargs):
            streamed.append(families)
            return stream(families, *args, **kwargs)
        return recorded

    monkeypatch.setattr(_kernels, "stream_scores", recording(_kernels.stream_scores))
    monkeypatch.setattr(_exact, "stream", recording(_exact.stream))  # the count predictive
    X = np.hstack([reals, counts])
    joint = (student_t_joint(reals, y, prior) + poisson_exact_joint(counts, y, prior)
             - np.log(prior))
    assert_allclose(clf.predict_proba(X), np.exp(joint - logsumexp(joint, axis=1,
                                                                   keepdims=True)),
                    rtol=1e-7, atol=1e-12)
    assert streamed == [(bnb.Gaussian, bnb.Poisson)]
    assert_allclose(clf.predict_joint_log_proba(X), joint, rtol=1e-9, atol=1e-9)
    factors = clf.explain(X[0]).loc[list(range(300))].to_numpy(dtype=float)  # per column
    assert_allclose(np.log(factors).sum(axis=0), joint[0] - np.log(prior), rtol=1e-9)


def test_draw_batches_are_padded_to_their_own_size():
    """Rows of a batch are padded as ``bucket`` pads a call, but no further than the batches'
    own size: 8-row batches of a wide model stay 8 rows (64 did eight times the work)."""
    assert [_kernels.batch_bucket(m, 8) for m in (1, 5, 8)] == [8, 8, 8]
    assert [_kernels.batch_bucket(m, 100) for m in (37, 100)] == [64, 128]
    assert _kernels.batch_bucket(1100, 1100) == _kernels.bucket(1100) == 1152
    assert _kernels.even_rows(1000, 8) == 8 and _kernels.even_rows(1000, 300) == 250


def test_inference_data_of_many_columns_is_arviz_from_dict(x64):
    """``to_arviz`` on arviz 0.x builds each group with its coords once (``from_dict``
    deep-copies them all per variable: O(columns^2)); groups, dims, coords and values equal
    ``az.from_dict``'s for a mixed model of one-column blocks with NUTS statistics, a
    per-row log likelihood and the class counts."""
    import arviz as az

    from bayesnb.inference import _from_dict_0x, dims_and_coords

    rng = np.random.default_rng(6)
    n = 90
    y = np.arange(n) % 3
    X = pd.DataFrame({**{f"g{i}": rng.normal(size=n) + y for i in range(4)},
                      **{f"c{i}": rng.choice(["a", "b", "c"], n) for i in range(5)}})
    features = {f"g{i}": bnb.Gaussian() for i in range(4)} | {
        f"c{i}": bnb.Categorical() for i in range(5)}
    clf = bnb.NaiveBayes(features, method="bayes").fit(X, y)
    draws = clf.sample_posterior(20, seed=1, num_chains=2)
    dims, coords = dims_and_coords(clf.fitted_)
    groups = {"posterior": draws,
              "sample_stats": {"diverging": np.zeros((2, 20), bool),
                               "lp": rng.normal(size=(2, 20))},
              "log_likelihood": {"y": rng.normal(size=(2, 20, n))},
              "observed_data": {"class_count": np.asarray(clf.class_count_)}}
    dims = {**dims, "class_count": ["class"], "y": ["row"]}
    ours = _from_dict_0x(az, groups, coords, dims)
    theirs = az.from_dict(**groups, coords=coords, dims=dims)
    assert set(ours.groups()) == set(theirs.groups())
    for group in theirs.groups():
        a, b = ours[group], theirs[group]
        assert set(a.data_vars) == set(b.data_vars), group
        for name in b.data_vars:
            assert a[name].dims == b[name].dims, (group, name)
            for dim in b[name].dims:
                assert list(a[name][dim].values) == list(b[name][dim].values), (group, dim)
            assert_allclose(a[name].values, b[name].values)


def test_one_column_blocks_are_counted_as_one_block(x64, on_the_kernels, monkeypatch):
    """200 one-column Gaussian blocks are counted as one block and their statistics split back
    by column (``fitted._joined_for_counting``): each block's count, mean and centred sum of
    squares are NumPy's of its column and class. Poisson blocks, whose log x! is one sum over
    their columns, are counted apart, each its own ``sum log x!``."""
    rng = np.random.default_rng(8)
    n, K = 150, 3
    y = np.arange(n) % K
    reals = rng.normal(size=(n, 200)) * 10.0 ** rng.uniform(-2, 3, 200) + y[:, None]
    counts = rng.poisson(3.0, (n, 4)).astype(float)
    features = {c: bnb.Gaussian() for c in range(200)} | {
        c: bnb.Poisson() for c in range(200, 204)}
    counted = []
    real_stream = _kernels.stream_suff_stats

    def recording(families, *args, **kwargs):
        counted.append(families)
        return real_stream(families, *args, **kwargs)

    monkeypatch.setattr(_kernels, "stream_suff_stats", recording)
    clf = bnb.NaiveBayes(features).fit(np.hstack([reals, counts]), y)
    assert counted == [(bnb.Gaussian,) + (bnb.Poisson,) * 4]
    for c in (0, 77, 199):
        stats = clf.blocks_[c].stats
        for k in range(K):
            column = reals[y == k, c]
            assert_allclose(stats.count[k, 0], len(column))
            assert_allclose(stats.mean[k, 0], column.mean(), rtol=1e-12)
            assert_allclose(stats.m2[k, 0], ((column - column.mean()) ** 2).sum(), rtol=1e-10)
    for c in range(4):
        assert_allclose(clf.blocks_[200 + c].stats.log_factorial,
                        gammaln(counts[:, c] + 1).sum(), rtol=1e-12)


@pytest.mark.parametrize("kind", ["one float dtype", "ints and floats", "with bool",
                                  "with text", "with category", "with nullable ints"])
def test_frame_blocks_are_pandas_own_columns(kind):
    """A DataFrame's blocks are read with the frame's column kinds taken once per call
    (``_data.FrameLayout``; per block they cost 0.2 ms, 0.6 s at 2,000 one-column blocks):
    every block must still be pandas' own ``frame.iloc[:, positions]`` as NumPy, dtype
    included (objects where a column holds text; pandas' extension columns read lazily)."""
    from bayesnb._data import FrameBlock, as_table

    rng = np.random.default_rng(0)
    frame = pd.DataFrame(rng.normal(size=(6, 4)), columns=list("abcd"))
    if kind == "ints and floats":
        frame["b"] = rng.integers(0, 5, 6)
    if kind == "with bool":
        frame["c"] = rng.random(6) < 0.5
    if kind == "with text":
        frame["d"] = list("xyzxyz")
    if kind == "with category":
        frame["d"] = pd.Categorical(list("xyzxyz"))
    if kind == "with nullable ints":
        frame["a"] = pd.array([1, None, 3, 4, 5, 6], dtype="Int64")
    table = as_table(frame)
    for positions in ([0], [1], [2], [3], [0, 2], [1, 3], [0, 1, 2, 3], [3, 0]):
        cols = tuple(frame.columns[positions])
        block = table.block(cols, tuple(positions))
        sub = frame.iloc[:, positions]
        if any(isinstance(t, pd.api.extensions.ExtensionDtype) for t in sub.dtypes):
            assert isinstance(block, FrameBlock)
            block = np.asarray(block)
            expected = sub.astype(object).to_numpy()
        elif all(pd.api.types.is_numeric_dtype(t) or pd.api.types.is_bool_dtype(t)
                 for t in sub.dtypes):
            expected = sub.to_numpy()
        else:
            expected = sub.astype(object).to_numpy()
        assert block.dtype == expected.dtype, (kind, positions)
        assert block.shape == expected.shape
        for a, b in zip(block.ravel().tolist(), expected.ravel().tolist(), strict=True):
            assert (pd.isna(a) and pd.isna(b)) or (not pd.isna(a) and a == b), positions
