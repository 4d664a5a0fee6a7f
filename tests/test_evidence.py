"""The log evidence against brute-force numerical integration, and against the NumPyro program.

1. On a tiny data set, every block's evidence p(X_block | y) and the class term p(y) are
   integrals of likelihood x prior over the parameters, done here with ``scipy.integrate.quad``
   (nested for the 2-D and 3-D cases) on densities written out by hand.
2. At parameter points in the supports the NumPyro program's own sample sites declare, Bayes'
   rule ``log p(theta, y, X) - log p(theta | y, X) = log p(y, X)`` must hold with the
   conjugate posterior: this checks the generative program, the posterior and the evidence
   together.
"""

from __future__ import annotations

import functools
import math

import jax
import numpy as np
import pandas as pd
import pytest
import scipy.stats as st
from numpy.testing import assert_allclose
from numpyro import handlers
from numpyro.distributions.transforms import biject_to
from numpyro.infer.util import log_density
from scipy.integrate import quad
from scipy.optimize import minimize_scalar

import bayesnb as bnb
from bayesnb import _nuts
from bayesnb.fast import form_of
from bayesnb.model import block_sites, model_and_data, parameter_sites

TOL = 1e-6  # |log p_lib - log p_quad|, i.e. the evidence itself to relative 1e-6
LOG_2PI = math.log(2 * math.pi)

# ---------------------------------------------------------------------------- the tiny data set
Y_TINY = np.array([0, 1, 0, 1, 1, 0, 1])
NAN = np.nan
TINY = pd.DataFrame({
    "b0": [1, 0, 1, 1, 0, 0, 1],
    "b1": [0, 0, NAN, 1, 1, 1, 1],
    "p0": [3, 0, 5, 1, 2, NAN, 4],
    "g": [0.3, -1.2, 1.1, 0.4, NAN, 0.9, -0.5],
    "gp": [1.5, 0.2, 2.1, -0.3, 0.6, 1.0, 0.1],
    "c2": ["u", "v", "v", "u", "v", None, "v"],
    "c3": ["x", "z", "y", "x", "x", "z", None],
    "m0": [2, 0, 1, 3, 0, 1, 0],
    "m1": [1, 2, 0, 0, 3, 0, 0],
}).astype({"b0": float, "b1": float, "p0": float, "m0": float, "m1": float})
CLASS_ALPHA = np.array([0.9, 1.8])
BERN = dict(alpha=np.array([0.7, 2.0]), beta=np.array([1.3, 0.6]))
POIS = dict(shape=2.5, rate=0.8)
G_CLASS = dict(loc=0.5, kappa=2.0, shape=3.0, rate=2.0)
G_POOL = dict(loc=-0.2, kappa=0.8, shape=2.5, rate=1.5)
CAT_ALPHA = [np.array([0.8, 1.6]), np.array([1.5, 2.0, 1.2])]
MULT_ALPHA = np.array([0.6, 1.7])


def tiny_features():
    return {
        ("b0", "b1"): bnb.Bernoulli(**BERN),
        "p0": bnb.Poisson(**POIS),
        "g": bnb.Gaussian(**G_CLASS),
        "gp": bnb.Gaussian(**G_POOL, pooled=True),
        ("c2", "c3"): bnb.Categorical(alpha=CAT_ALPHA),
        ("m0", "m1"): bnb.Multinomial(alpha=MULT_ALPHA),
    }


def fit_tiny():
    return bnb.NaiveBayes(features=tiny_features(), method="bayes",
                          class_alpha=CLASS_ALPHA).fit(TINY, Y_TINY)


def lib_term(clf, columns):
    """The per-block evidence entry of the block holding exactly ``columns``."""
    per_block = clf.log_evidence(per_block=True)
    (i,) = [i for i, b in enumerate(clf.blocks_) if tuple(b.schema.columns) == tuple(columns)]
    return float(per_block.iloc[1 + i])


def observed(col, k):
    v = TINY[col].to_numpy()[Y_TINY == k]
    return v[~pd.isna(v)]


# ---------------------------------------------------------------------------- quadrature
def log_quad(logf, lo, hi, grid=400):
    """log of the integral of exp(logf) over (lo, hi): rescaled by the peak found on a grid,
    with the peak as a breakpoint for the adaptive rule."""
    ts = np.linspace(lo, hi, grid + 2)[1:-1]
    vals = np.array([logf(t) for t in ts])
    c = float(np.max(vals))
    peak = float(ts[int(np.argmax(vals))])
    val, err = quad(lambda t: math.exp(logf(t) - c), lo, hi, points=[peak], epsabs=0.0,
                    epsrel=1e-11, limit=500)
    assert err <= 1e-8 * val
    return c + math.log(val)


def log_beta_pdf(t, a, b):
    return ((a - 1) * math.log(t) + (b - 1) * math.log1p(-t) + math.lgamma(a + b)
            - math.lgamma(a) - math.lgamma(b))


def log_gamma_pdf(lam, a, b):  # shape a, rate b
    return a * math.log(b) - math.lgamma(a) + (a - 1) * math.log(lam) - b * lam


def log_normal_pdf(x, mu, precision):
    return 0.5 * (math.log(precision) - LOG_2PI) - 0.5 * precision * (x - mu) ** 2


def log_dirichlet_pdf(p, a):
    return (math.lgamma(sum(a)) - sum(math.lgamma(v) for v in a)
            + sum((v - 1) * math.log(q) for v, q in zip(a, p, strict=True)))


def log_simplex3(log_lik, a):
    """log of the integral over the 2-simplex of exp(log_lik(p)) Dirichlet(p; a)."""
    def logf(p1, p2):
        p = (p1, p2, 1.0 - p1 - p2)
        return log_lik(p) + log_dirichlet_pdf(p, a)

    grid = np.linspace(0.01, 0.98, 60)
    c = max(logf(u, v) for u in grid for v in grid if u + v < 0.99)

    def inner(p1):
        return quad(lambda p2: math.exp(logf(p1, p2) - c), 0.0, 1.0 - p1, epsabs=0.0,
                    epsrel=1e-12, limit=200)[0]

    val, err = quad(inner, 0.0, 1.0, epsabs=0.0, epsrel=1e-11, limit=200)
    return c + math.log(val)


def log_mean_integral(x, lam, loc, kappa):
    """log of the integral over mu of N(mu | loc, 1/(kappa lam)) prod_i N(x_i | mu, 1/lam)."""
    def logf(mu):
        return log_normal_pdf(mu, loc, kappa * lam) + sum(log_normal_pdf(v, mu, lam) for v in x)

    lo, hi = min(loc, *x) if len(x) else loc, max(loc, *x) if len(x) else loc
    width = 1.0 / math.sqrt(lam * max(kappa, len(x)))  # >= the integrand's sd
    peak = minimize_scalar(lambda m: -logf(m), bounds=(lo - 1, hi + 1), method="bounded",
                           options={"xatol": 1e-10}).x
    c = logf(peak)
    val, _ = quad(lambda m: math.exp(logf(m) - c), peak - 40 * width, peak + 40 * width,
                  points=[peak], epsabs=0.0, epsrel=1e-12, limit=200)
    return c + math.log(val)


# ---------------------------------------------------------------------------- per-block integrals
@functools.cache
def quad_bernoulli():
    total = 0.0
    for j, col in enumerate(["b0", "b1"]):
        a, b = BERN["alpha"][j], BERN["beta"][j]
        for k in (0, 1):
            x = observed(col, k)
            s, f = float(x.sum()), float(len(x) - x.sum())
            total += log_quad(lambda t, s=s, f=f, a=a, b=b: s * math.log(t)
                              + f * math.log1p(-t) + log_beta_pdf(t, a, b), 0.0, 1.0)
    return total


@functools.cache
def quad_poisson():
    total = 0.0
    for k in (0, 1):
        x = observed("p0", k)

        def logf(lam, x=x):
            return (sum(v * math.log(lam) - lam - math.lgamma(v + 1) for v in x)
                    + log_gamma_pdf(lam, POIS["shape"], POIS["rate"]))

        total += log_quad(logf, 0.0, 60.0)
    return total


@functools.cache
def quad_gaussian_per_class():
    """2-D: precision (outer) and mean (inner) for each class."""
    p = G_CLASS
    total = 0.0
    for k in (0, 1):
        x = tuple(observed("g", k))

        def logf(lam, x=x):
            return (log_gamma_pdf(lam, p["shape"], p["rate"])
                    + log_mean_integral(x, lam, p["loc"], p["kappa"]))

        total += log_quad(logf, 0.0, 40.0, grid=120)
    return total


@functools.cache
def quad_gaussian_pooled():
    """3-D: the shared precision (outer) and both class means (inner; given the precision the
    two mean integrals are independent, so the inner 2-D integral is their product)."""
    p = G_POOL
    xs = [tuple(observed("gp", k)) for k in (0, 1)]

    def logf(lam):
        return (log_gamma_pdf(lam, p["shape"], p["rate"])
                + sum(log_mean_integral(x, lam, p["loc"], p["kappa"]) for x in xs))

    return log_quad(logf, 0.0, 40.0, grid=120)


@functools.cache
def quad_categorical():
    total = 0.0
    a2, a3 = CAT_ALPHA
    for k in (0, 1):
        x2 = observed("c2", k)
        nu, nv = float(np.sum(x2 == "u")), float(np.sum(x2 == "v"))
        total += log_quad(lambda t, nu=nu, nv=nv: nu * math.log(t) + nv * math.log1p(-t)
                          + log_beta_pdf(t, a2[0], a2[1]), 0.0, 1.0)
        x3 = observed("c3", k)
        n3 = [float(np.sum(x3 == v)) for v in ("x", "y", "z")]
        total += log_simplex3(
            lambda q, n3=n3: sum(n * math.log(v) for n, v in zip(n3, q, strict=True)), a3)
    return total


@functools.cache
def quad_multinomial():
    total = 0.0
    for k in (0, 1):
        rows = TINY[["m0", "m1"]].to_numpy()[Y_TINY == k]

        def logf(t, rows=rows):
            return (sum(st.binom.logpmf(r[0], r[0] + r[1], t) for r in rows)
                    + log_beta_pdf(t, MULT_ALPHA[0], MULT_ALPHA[1]))

        total += log_quad(logf, 0.0, 1.0, grid=200)
    return total


@functools.cache
def quad_class_term(labels: tuple, gamma: tuple):
    counts = np.bincount(np.asarray(labels), minlength=len(gamma)).astype(float)
    if len(gamma) == 2:
        return log_quad(lambda t: counts[0] * math.log(t) + counts[1] * math.log1p(-t)
                        + log_beta_pdf(t, gamma[0], gamma[1]), 0.0, 1.0)
    assert len(gamma) == 3
    return log_simplex3(
        lambda q: sum(n * math.log(v) for n, v in zip(counts, q, strict=True)), gamma)


# ---------------------------------------------------------------------------- tests: quadrature
def test_tiny_data_has_what_the_integrals_assume(x64):
    clf = fit_tiny()
    blocks = {tuple(b.schema.columns): b for b in clf.blocks_}
    assert {c: b.family.name for c, b in blocks.items()} == {
        ("b0", "b1"): "bernoulli", ("p0",): "poisson", ("g",): "gaussian", ("gp",): "gaussian",
        ("c2", "c3"): "categorical", ("m0", "m1"): "multinomial"}
    assert blocks[("c2", "c3")].schema.levels == (("u", "v"), ("x", "y", "z"))
    assert list(clf.class_count_) == [3, 4]
    assert list(clf.log_evidence(per_block=True).index)[0] == "class"


def test_bernoulli_evidence_by_quadrature(x64):
    assert abs(lib_term(fit_tiny(), ("b0", "b1")) - quad_bernoulli()) < TOL


def test_poisson_evidence_by_quadrature(x64):
    assert abs(lib_term(fit_tiny(), ("p0",)) - quad_poisson()) < TOL


def test_gaussian_evidence_by_quadrature(x64):
    assert abs(lib_term(fit_tiny(), ("g",)) - quad_gaussian_per_class()) < TOL


def test_gaussian_pooled_evidence_by_quadrature(x64):
    assert abs(lib_term(fit_tiny(), ("gp",)) - quad_gaussian_pooled()) < TOL


def test_categorical_evidence_by_quadrature(x64):
    assert abs(lib_term(fit_tiny(), ("c2", "c3")) - quad_categorical()) < TOL


def test_multinomial_evidence_by_quadrature(x64):
    assert abs(lib_term(fit_tiny(), ("m0", "m1")) - quad_multinomial()) < TOL


def test_class_evidence_by_quadrature(x64):
    clf = fit_tiny()
    ref = quad_class_term(tuple(Y_TINY), tuple(CLASS_ALPHA))
    assert abs(clf.log_evidence(per_block=True)["class"] - ref) < TOL


def test_three_class_evidence_by_quadrature(x64):
    """The class term over the 2-simplex, and a Bernoulli block with three classes."""
    y = np.array([0, 2, 1, 2, 2, 0, 1])
    gamma = (0.7, 1.4, 2.2)
    clf = bnb.NaiveBayes(features={"b0": bnb.Bernoulli(alpha=0.6, beta=1.9)}, method="bayes",
                         class_alpha=np.array(gamma)).fit(TINY[["b0"]], y)
    per_block = clf.log_evidence(per_block=True)
    assert abs(per_block["class"] - quad_class_term(tuple(y), gamma)) < TOL
    ref = 0.0
    for k in range(3):
        x = TINY["b0"].to_numpy()[y == k]
        ref += log_quad(lambda t, x=x: float(x.sum()) * math.log(t)
                        + float(len(x) - x.sum()) * math.log1p(-t)
                        + log_beta_pdf(t, 0.6, 1.9), 0.0, 1.0)
    assert abs(per_block.iloc[1] - ref) < TOL
    assert abs(clf.log_evidence() - per_block.sum()) < 1e-12


def test_total_evidence_by_quadrature(x64):
    clf = fit_tiny()
    ref = (quad_class_term(tuple(Y_TINY), tuple(CLASS_ALPHA)) + quad_bernoulli()
           + quad_poisson() + quad_gaussian_per_class() + quad_gaussian_pooled()
           + quad_categorical() + quad_multinomial())
    assert abs(clf.log_evidence() - ref) < 7 * TOL
    assert abs(clf.log_evidence() - clf.log_evidence(per_block=True).sum()) < 1e-10


def test_the_evidence_runs_on_numpy_and_matches_the_quadratures(monkeypatch):
    """Every family's ``log_evidence`` runs on the host's float64 NumPy (``xp_of``,
    ``gammaln_of``), in either dtype policy: with ``jax.numpy`` unreachable from the family
    modules the quadratures still hold (as JAX operations, a first evidence compiled each one:
    0.2-0.4 s)."""
    import bayesnb.families as families

    clf = fit_tiny()
    for name in ("bernoulli", "poisson", "gaussian", "categorical", "multinomial", "_levels"):
        monkeypatch.setattr(getattr(families, name), "jnp", None)
    assert abs(lib_term(clf, ("b0", "b1")) - quad_bernoulli()) < TOL
    assert abs(lib_term(clf, ("p0",)) - quad_poisson()) < TOL
    assert abs(lib_term(clf, ("g",)) - quad_gaussian_per_class()) < TOL
    assert abs(lib_term(clf, ("gp",)) - quad_gaussian_pooled()) < TOL
    assert abs(lib_term(clf, ("c2", "c3")) - quad_categorical()) < TOL
    assert abs(lib_term(clf, ("m0", "m1")) - quad_multinomial()) < TOL


def test_fixed_class_prior_evidence(x64):
    pi = np.array([0.35, 0.65])
    clf = bnb.NaiveBayes(features={"b0": bnb.Bernoulli()}, method="bayes",
                         class_prior=pi).fit(TINY[["b0"]], Y_TINY)
    counts = np.bincount(Y_TINY)
    assert_allclose(clf.log_evidence(per_block=True)["class"], np.sum(counts * np.log(pi)),
                    rtol=1e-12)


# ---------------------------------------------------------------------------- tests: NumPyro
def _case_data(name, seed=0):
    """(features, class_alpha, class_prior, X, y) for the Bayes'-rule identity."""
    rng = np.random.default_rng(seed)
    n, k = 14, 3
    y = rng.permutation(np.arange(n) % k)
    probs = np.array([[0.2, 0.5], [0.7, 0.4], [0.5, 0.9]])
    Xb = (rng.random((n, 2)) < probs[y]).astype(float)
    Xg = rng.normal(size=(n, 2)) + np.array([[0, 1], [1, -1], [2, 0.5]])[y]
    Xp = rng.poisson(np.array([[1, 4], [3, 1], [6, 2]])[y]).astype(float)
    Xm = rng.poisson(np.array([[1, 3, 2], [3, 1, 1], [2, 2, 5]])[y]).astype(float)
    Xc = rng.choice(np.array(["r", "s", "t"], dtype=object), (n, 2))
    gamma = np.array([0.8, 1.5, 2.5])
    frame = pd.DataFrame({"b0": Xb[:, 0], "b1": Xb[:, 1], "g0": Xg[:, 0], "g1": Xg[:, 1],
                          "p0": Xp[:, 0], "p1": Xp[:, 1], "m0": Xm[:, 0], "m1": Xm[:, 1],
                          "m2": Xm[:, 2], "c0": Xc[:, 0], "c1": Xc[:, 1]})
    # single-family cases reuse the mixed model's blocks, so the eager JAX primitives the
    # NumPyro program runs are compiled once for the whole set
    blocks = {
        "bernoulli": (("b0", "b1"), bnb.Bernoulli(alpha=[0.5, 2.0], beta=[1.5, 0.8])),
        "gaussian": ("g1", bnb.Gaussian(loc=-0.4, kappa=2.0, shape=1.2, rate=1.9)),
        "gaussian_pooled": ("g0", bnb.Gaussian(loc=0.2, kappa=0.6, shape=2.0, rate=0.7,
                                                pooled=True)),
        "poisson": (("p0", "p1"), bnb.Poisson(shape=[2.0, 0.7], rate=[0.4, 1.3])),
        "multinomial": (("m0", "m1", "m2"), bnb.Multinomial(alpha=[0.5, 1.0, 2.5])),
        "categorical": (("c0", "c1"), bnb.Categorical(alpha=[0.6, 1.7])),
    }
    if name in blocks:
        cols, family = blocks[name]
        cols = list(cols) if isinstance(cols, tuple) else [cols]
        return {tuple(cols) if len(cols) > 1 else cols[0]: family}, gamma, None, frame[cols], y
    features = dict(blocks.values())
    if name == "mixed":
        return features, gamma, None, frame, y
    if name == "mixed_missing":
        return features, gamma, None, frame.mask(rng.random(frame.shape) < 0.15), y
    if name == "mixed_fixed_prior":
        return features, None, np.array([0.2, 0.3, 0.5]), frame, y
    raise AssertionError(name)


@functools.partial(jax.jit, static_argnums=(0, 1),
                   compiler_options={"xla_backend_optimization_level": 0})
def _draw_and_score(model, layout, numbers, xs, y, key):
    """A point of every latent site of the NumPyro program, and its log joint density there:
    the program is traced with each latent site's value put at the image of a standard normal
    draw under ``biject_to`` of the support the site's distribution declares (any point of
    the support satisfies Bayes' rule; JAX's rejection samplers of the Gamma, Beta and
    Dirichlet priors took 5x as long to compile as the rest). One compile for the three
    points, defined once with the data as arguments, so the cases of one structure (mixed,
    mixed_missing) share it; LLVM at level 0 (as bayesnb's NUTS programs)."""
    data = dict(_nuts._join(layout, numbers), xs=xs, y=y)
    keys = iter(jax.random.split(key, 64))  # more than any case's latent sites

    def point(site):
        if site["type"] != "sample" or site["is_observed"]:
            return None  # observed values stay as the program has them
        to_support = biject_to(site["fn"].support)
        shape = site["fn"].shape(site["kwargs"].get("sample_shape", ()))
        return to_support(jax.random.normal(next(keys), to_support.inverse_shape(shape)))

    trace = handlers.trace(handlers.substitute(model, substitute_fn=point)).get_trace(**data)
    params = {name: site["value"] for name, site in trace.items()
              if site["type"] == "sample" and not site["is_observed"]}
    return params, log_density(model, (), data, params)[0]


CASES = ["mixed", "mixed_missing", "mixed_fixed_prior", "bernoulli", "gaussian",
         "gaussian_pooled", "poisson", "multinomial", "categorical"]


@pytest.mark.parametrize("case", CASES)
def test_bayes_rule_with_numpyro_program(x64, case):
    features, gamma, class_prior, X, y = _case_data(case)
    kwargs = dict(class_prior=class_prior) if class_prior is not None else \
        dict(class_alpha=gamma)
    clf = bnb.NaiveBayes(features=features, method="bayes", **kwargs).fit(X, y)
    model, data = model_and_data(clf, X, y)
    sites = block_sites(clf)
    evidence = clf.log_evidence()
    assert np.isfinite(evidence)
    layout, numbers = _nuts._split({k: v for k, v in data.items() if k not in ("xs", "y")})

    for seed in range(3):
        params, log_joint = _draw_and_score(model, layout, numbers, data["xs"], data["y"],
                                            jax.random.PRNGKey(seed))
        latent = {"class_probs"} if class_prior is None else set()
        for site in sites:  # every latent site belongs to a block or is the class proportions
            latent |= {name for name in params if name.startswith(site + ".")}
        assert latent == set(params)
        log_post = 0.0
        for i, (block, post) in enumerate(zip(clf.blocks_, clf.posterior_, strict=True)):
            own = {key: params[name] for name, (b, key) in parameter_sites(clf).items()
                   if b == i}  # keyed as the family keys them
            log_post += float(type(block.family).posterior_log_density(post, own))
        if class_prior is None:
            log_post += st.dirichlet.logpdf(np.asarray(params["class_probs"], dtype=np.float64),
                                            gamma + clf.class_count_)
        assert_allclose(float(log_joint) - log_post, evidence, rtol=1e-10, atol=1e-8)


# ------------------------------------------------------------------ float32 (the default dtype)
def _count_evidence_reference(family: str, X: np.ndarray, y: np.ndarray) -> float:
    """float64 SciPy block evidence log p(X | y) of the default priors: the
    Dirichlet-multinomial of the class totals plus every row's log multinomial coefficient
    (``Multinomial(alpha=1)``), or the Gamma-Poisson per (class, column) minus every log x!
    (``Poisson(shape=1, rate=0.1)``)."""
    from scipy.special import gammaln

    X = X.astype(np.float64)
    classes = np.unique(y)
    if family == "multinomial":
        alpha = np.ones(X.shape[1])
        total = 0.0
        for k in classes:
            n_kv = X[y == k].sum(axis=0)
            total += (gammaln(alpha.sum()) - gammaln(alpha.sum() + n_kv.sum())
                      + np.sum(gammaln(alpha + n_kv) - gammaln(alpha)))
        return total + np.sum(gammaln(X.sum(axis=1) + 1.0)) - np.sum(gammaln(X + 1.0))
    a, b = 1.0, 0.1
    total = 0.0
    for k in classes:
        rows = X[y == k]
        a1, b1 = a + rows.sum(axis=0), b + rows.shape[0]
        total += np.sum(a * np.log(b) - a1 * np.log(b1) + gammaln(a1) - gammaln(a))
    return total - np.sum(gammaln(X + 1.0))


@pytest.mark.parametrize("case", ["multinomial 1e7 per row", "poisson mean 1e6",
                                  "poisson mean 2, 200 columns", "documents of 100 words"])
def test_float32_count_evidence_against_scipy(kernel_fits, case):
    """Default float32. The count blocks' evidence is a small difference of large terms (the
    class totals' log Gamma and the rows' log factorials, up to 1e10 here): the closed forms
    are evaluated in float64 and the rows' coefficients added up on the host in float64,
    recomputed there when float32 rounded them. It was 56% off (7,776 nats) for the first
    case, 1,660 nats for the second and 1.35 for the third before."""
    rng = np.random.default_rng(3)
    if case == "multinomial 1e7 per row":
        y = np.repeat([0, 1], 100)
        X, family = rng.multinomial(10**7, rng.dirichlet(np.ones(10)), 200), "multinomial"
    elif case == "poisson mean 1e6":
        y = np.repeat([0, 1], 100)
        X, family = rng.poisson(1e6, (200, 10)), "poisson"
    elif case == "poisson mean 2, 200 columns":
        y = rng.integers(0, 5, 20_000)
        X, family = rng.poisson(2.0, (20_000, 200)), "poisson"
    else:
        y = rng.integers(0, 5, 20_000)
        # 100 words drawn uniformly from 1,000 per document, counted: a multinomial(100, 1e-3
        # each) row, drawn 15x faster than by ``rng.multinomial``'s binomial per category
        words = rng.integers(0, 1_000, (20_000, 100)) + 1_000 * np.arange(20_000)[:, None]
        X = np.bincount(words.ravel(), minlength=20_000 * 1_000).reshape(20_000, 1_000)
        family = "multinomial"
    block = bnb.Multinomial() if family == "multinomial" else bnb.Poisson()
    model = bnb.NaiveBayes(block).fit(X.astype(np.float32), y)
    got = model.log_evidence(per_block=True).iloc[1]
    ref = _count_evidence_reference(family, X, y)
    assert abs(got - ref) <= 1e-9 * abs(ref) + 5e-3, (got, ref)


@pytest.mark.parametrize("family", ["multinomial", "poisson"])
def test_float32_coefficient_recomputed_with_missing_counts(family):
    """Default float32, counts near 1,000 (every chunk's rows are recomputed on the host) with
    missing counts: the fitted log coefficient (log factorials) is SciPy's float64 sum over
    the observed counts, a missing count counting as 0."""
    from scipy.special import gammaln

    rng = np.random.default_rng(8)
    X = rng.poisson(1_000.0, (3_000, 12)).astype(np.float64)
    X[rng.random(X.shape) < 0.05] = np.nan
    y = rng.integers(0, 3, 3_000)
    block = bnb.Multinomial() if family == "multinomial" else bnb.Poisson()
    stats = bnb.NaiveBayes(block).fit(X.astype(np.float32), y).fitted_.blocks[0].stats
    x0 = np.nan_to_num(X, nan=0.0)
    if family == "multinomial":
        ref, got = np.sum(gammaln(x0.sum(axis=1) + 1.0)) - np.sum(gammaln(x0 + 1.0)), \
            stats.log_coef
    else:
        ref, got = np.sum(gammaln(x0 + 1.0)), stats.log_factorial
    assert abs(float(got) - ref) <= 1e-10 * abs(ref), (float(got), ref)


@pytest.mark.parametrize("case", ["poisson mean 2, 200 columns", "poisson mean 12",
                                  "documents of 2,000 words"])
def test_float32_coefficient_of_large_integer_counts_in_the_kernel(monkeypatch, case):
    """Default float32, integer counts whose rows' sum of log x! is past
    ``COEFFICIENT_FLOAT32_MAX``: the kernel sums log x! in two parts (a grid of 1/256 whose row
    sums float32 holds exactly, and the rest), so no chunk goes back to the host, and the fitted
    log coefficient is SciPy's float64 sum to 1e-10 (one float32 rounding of log x! in every
    entry, the same in row after row, was what the host recomputed)."""
    from scipy.special import gammaln

    rng = np.random.default_rng(11)
    if case == "poisson mean 2, 200 columns":
        X, block = rng.poisson(2.0, (6_000, 200)), bnb.Poisson()
    elif case == "poisson mean 12":
        X, block = rng.poisson(12.0, (2_000, 400)), bnb.Poisson()
    else:
        X = rng.multinomial(2_000, rng.dirichlet(np.ones(500)), 2_000)
        block = bnb.Multinomial()
    reads = []
    form = form_of(block)
    refine = form.refine_stats

    def spy(stats, read):
        return refine(stats, lambda: reads.append(1) or read())

    monkeypatch.setattr(form, "refine_stats", staticmethod(spy))
    y = rng.integers(0, 4, X.shape[0])
    stats = bnb.NaiveBayes(block).fit(X.astype(np.float32), y).fitted_.blocks[0].stats
    x = X.astype(np.float64)
    if isinstance(block, bnb.Multinomial):
        ref = np.sum(gammaln(x.sum(axis=1) + 1.0) - gammaln(x + 1.0).sum(axis=1))
        got = float(stats.log_coef)
    else:
        ref, got = np.sum(gammaln(x + 1.0)), float(stats.log_factorial)
    assert np.max(gammaln(x + 1.0).sum(axis=1)) > 128  # past COEFFICIENT_FLOAT32_MAX
    assert reads == []
    assert abs(got - ref) <= 1e-10 * abs(ref), (got, ref)


def test_log_factorial_of_row_totals_is_scipys():
    """The float64 log n! of row totals (``multinomial.log_factorial``: a table below
    ``TOTALS_TABLE``, else gammaln) equals SciPy's gammaln(n + 1) bit for bit on integer
    totals on both sides of the table's end, fractional totals and an empty chunk."""
    from scipy.special import gammaln

    from bayesnb.fast._counts import TOTALS_TABLE, log_factorial

    edge = float(TOTALS_TABLE)
    for n in (np.array([0.0, 1.0, 2.0, 170.0, 171.0, edge - 1.0]),
              np.array([0.0, 5.0, edge, 1e7]), np.array([3.0, 2.5, 0.25]), np.zeros(0)):
        np.testing.assert_array_equal(log_factorial(n), gammaln(n + 1.0))


@pytest.mark.parametrize("weight", [1e9, 1e12, 1e15])
def test_evidence_of_heavy_rows_against_mpmath(weight, x64):
    """A row of weight 1e15 in each class: the Dirichlet and Beta evidences as differences of
    log-Gammas of the counts lost 10 nats (Categorical), 3 (the class term) and 8 (a
    NegativeBinomial class of zero counts), now pivoted on the largest side. Against
    50-digit mpmath, from the families' stated formulas."""
    import mpmath

    mpmath.mp.dps = 50
    w = np.array([weight, 1.0, 1.0, weight])
    y = np.array([0, 0, 1, 1])

    def log_beta(*a):
        return sum(mpmath.loggamma(v) for v in a) - mpmath.loggamma(sum(a))

    heavy = mpmath.mpf(weight)
    # the class term: Dirichlet(1, 1) over the classes' weights
    classes = log_beta(heavy + 2, heavy + 2) - log_beta(1, 1)
    X = pd.DataFrame({"c": pd.Categorical(["a", "b", "a", "c"])})
    clf = bnb.NaiveBayes(bnb.Categorical()).fit(X, y, sample_weight=w)
    levels = (log_beta(heavy + 1, 2, 1) + log_beta(2, 1, heavy + 1) - 2 * log_beta(1, 1, 1))
    assert clf.log_evidence() == pytest.approx(float(classes + levels), rel=1e-13, abs=1e-12)
    Xb = np.array([[1.0], [0.0], [1.0], [0.0]])
    clf = bnb.NaiveBayes(bnb.Bernoulli()).fit(Xb, y, sample_weight=w)
    beta = log_beta(heavy + 1, 2) + log_beta(2, heavy + 1) - 2 * log_beta(1, 1)
    assert clf.log_evidence() == pytest.approx(float(classes + beta), rel=1e-13, abs=1e-12)
    # Multinomial: rows of two words, the heavy ones all of one word
    Xm = np.array([[2.0, 0.0], [1.0, 1.0], [1.0, 1.0], [0.0, 2.0]])
    clf = bnb.NaiveBayes(bnb.Multinomial()).fit(Xm, y, sample_weight=w)
    words = (log_beta(1 + 2 * heavy + 1, 2) + log_beta(2, 1 + 2 * heavy + 1)
             - 2 * log_beta(1, 1) + 2 * math.log(2))  # the (1, 1) rows' coefficient, 2!/1!1!
    assert clf.log_evidence() == pytest.approx(float(classes + words), rel=1e-13, abs=1e-12)
    # NegativeBinomial(r=1.5): the heavy rows count 0 (s huge, f small)
    Xn = np.array([[0.0], [3.0], [2.0], [0.0]])
    clf = bnb.NaiveBayes(bnb.NegativeBinomial(r=1.5)).fit(Xn, y, sample_weight=w)
    r = mpmath.mpf(1.5)

    def log_coef(x):
        return mpmath.loggamma(x + r) - mpmath.loggamma(r) - mpmath.loggamma(x + 1)

    nb = (log_beta(1 + r * (heavy + 1), 1 + 3) + log_beta(1 + r * (heavy + 1), 1 + 2)
          - 2 * log_beta(1, 1) + log_coef(3) + log_coef(2))
    assert clf.log_evidence() == pytest.approx(float(classes + nb), rel=1e-13, abs=1e-12)
    # its exact predictive of a new count in each class: beta negative binomial
    for x in (0.0, 5.0):
        joint = [float(mpmath.log((heavy + 2) / (2 * heavy + 4)) + log_coef(x)
                       + log_beta(1 + r * (heavy + 1) + r, 1 + f + x)
                       - log_beta(1 + r * (heavy + 1), 1 + f)) for f in (3, 2)]
        assert_allclose(clf.set_params(method="bayes").predict_joint_log_proba([[x]])[0],
                        joint, rtol=1e-12, atol=1e-12)
        clf.set_params(method="mean")
