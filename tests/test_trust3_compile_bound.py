"""Issue 38, section 3: a process fitting many models of different shapes holds a bounded
number of compiled kernels (``bayesnb.fast._compiled``), and the answers stay right when
kernels are dropped and compiled again."""

import numpy as np
from sklearn.naive_bayes import GaussianNB

import bayesnb as bnb
from bayesnb.fast import _compiled


def test_kernels_of_many_class_counts_stay_within_the_bound(monkeypatch, kernel_fits):
    monkeypatch.setattr(_compiled, "MAX_EXECUTABLES", 4)
    rng = np.random.default_rng(5)
    held = []
    for k in range(2, 9):  # each class count compiles kernels of its own shape
        y = np.arange(120) % k
        X = rng.normal(y[:, None] * np.array([1.0, -0.5, 2.0]), 1.0)
        clf = bnb.NaiveBayes(bnb.Gaussian(), method="ml", class_alpha=0).fit(X, y)
        got = clf.predict_proba(X[:20])
        ref = GaussianNB(var_smoothing=0.0).fit(X, y).predict_proba(X[:20])
        np.testing.assert_allclose(got, ref, atol=1e-5)
        held.append(_compiled.executables())
    # one model's fit and prediction add a few kernels; the bound drops them all past 4
    assert max(held) <= 4 + 4, held
    assert min(held[3:]) < max(held), held  # dropped at least once


def test_every_jit_of_the_package_is_counted():
    """No kernel escapes the bound: the package compiles through ``compiled`` only."""
    import pathlib

    package = pathlib.Path(bnb.__file__).parent
    offenders = [str(p.relative_to(package)) for p in package.rglob("*.py")
                 if p.name != "_compiled.py" and ("jax.jit(" in p.read_text()
                                                   or "@jax.jit" in p.read_text())]
    assert not offenders, offenders


def test_the_bound_holds_two_models_over_every_batch_size():
    """Two models scoring batches of every size up to 5,000 rows need a score kernel per row
    bucket each; a bound below that dropped and recompiled them all on every pass (a service
    alternating two Gaussian models: 46 compiles a pass, never settling)."""
    from bayesnb.fast._kernels import bucket

    buckets = len({bucket(n) for n in range(1, 5001)})
    assert 2 * buckets + 8 <= _compiled.MAX_EXECUTABLES  # + each model's fit kernels
