"""Empirical Bayes at the edge of its search, ``python -m bayesnb``, and loss matrices that are
not numbers.

The evidence of a Categorical model is written out here by hand (gammaln sums of the count
tables, SciPy's, not the library's), so "still rising at the bound" is checked against the
formula, not against the search that reports it."""

from __future__ import annotations

import os
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.special import gammaln

import bayesnb as bnb
from bayesnb.analysis import EvidenceBoundWarning, empirical_bayes
from bayesnb.cli import main
from bayesnb.datasets import load_playtennis

ROOT = Path(__file__).resolve().parents[1]


# ---------------------------------------------------------------------- empirical Bayes
def log_evidence(X: pd.DataFrame, y, alpha: float) -> float:
    """log p(y, X | alpha): the labels under a Dirichlet(1, ..., 1), each column in each class
    a Dirichlet(alpha)-multinomial over the column's levels seen in training."""
    y = np.asarray(y)
    classes, n = np.unique(y, return_counts=True)
    total = gammaln(len(classes)) - gammaln(len(classes) + n.sum()) + np.sum(gammaln(1 + n))
    for column in X.columns:
        values = X[column].to_numpy()
        levels = np.unique(values)
        for c in classes:
            counts = np.array([np.sum((values == v) & (y == c)) for v in levels])
            total += (gammaln(len(levels) * alpha) - gammaln(len(levels) * alpha + counts.sum())
                      + np.sum(gammaln(alpha + counts) - gammaln(alpha)))
    return float(total)


def separated():
    """Every column copies the class: the evidence rises as alpha falls (tables of counts)."""
    X = pd.DataFrame({"c": ["x"] * 6 + ["y"] * 6, "d": ["u"] * 6 + ["v"] * 6})
    return X, np.array(["a"] * 6 + ["b"] * 6)


def informative():
    """One column that follows the class, one that is noise: an interior maximum."""
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 200)
    X = pd.DataFrame({"c": np.where(rng.random(200) < 0.7, y, rng.integers(0, 3, 200))
                      .astype(str), "d": rng.choice(list("pqr"), 200)})
    return X, y


def test_the_hand_written_evidence_is_the_models():
    days, play = load_playtennis()
    for alpha in (0.01, 1.0, 1e3):
        model = bnb.NaiveBayes(bnb.Categorical(alpha=alpha)).fit(days, play)
        assert model.log_evidence() == pytest.approx(log_evidence(days, play, alpha), rel=1e-9)


def test_playtennis_evidence_still_rising_at_the_upper_bound_warns_and_returns_the_bound():
    days, play = load_playtennis()
    # the formula: the evidence keeps rising past 1e3 (towards its limit, even tables)
    grid = [log_evidence(days, play, a) for a in (1e2, 1e3, 1e4, 1e6)]
    assert np.all(np.diff(grid) > 0)
    with pytest.warns(EvidenceBoundWarning, match=r"still rising at the upper bound alpha = 1000 "
                      r"of the search \(bounds = \(0\.001, 1000\)\): the data favour a larger "
                      r"alpha") as caught:
        alpha, clf = empirical_bayes(bnb.NaiveBayes(bnb.Categorical()), days, play)
    assert len(caught) == 1
    assert alpha == 1e3  # the bound itself, not 999.9995
    assert clf.get_params()["features"].alpha == 1e3
    assert clf.log_evidence() == pytest.approx(grid[1], rel=1e-9)
    # a wider search goes on to its own bound: the evidence has no maximum here
    with pytest.warns(EvidenceBoundWarning, match="upper bound alpha = 10000 "):
        alpha, _ = empirical_bayes(bnb.NaiveBayes(bnb.Categorical()), days, play,
                                   bounds=(1e-3, 1e4))
    assert alpha == 1e4


def test_a_search_stopped_short_of_a_higher_bound_returns_the_bound(monkeypatch):
    """Where the evidence is nearly flat, rounding can stop the search short of the bound:
    the bound, whose evidence is higher, is returned with the warning."""
    import bayesnb.analysis as analysis

    days, play = load_playtennis()
    search = analysis.minimize_scalar

    def stopped_short(objective, bounds, **options):
        result = search(objective, bounds=bounds, **options)
        result.x = bounds[1] - 0.05  # alpha = 951, still inside the rise
        result.fun = objective(result.x)
        return result

    monkeypatch.setattr(analysis, "minimize_scalar", stopped_short)
    assert log_evidence(days, play, 1e3) > log_evidence(days, play, 1e3 * np.exp(-0.05))
    with pytest.warns(EvidenceBoundWarning, match="upper bound alpha = 1000 "):
        alpha, clf = empirical_bayes(bnb.NaiveBayes(bnb.Categorical()), days, play)
    assert alpha == 1e3 and clf.get_params()["features"].alpha == 1e3


def test_evidence_rising_towards_the_lower_bound_warns_and_returns_it():
    X, y = separated()
    grid = [log_evidence(X, y, a) for a in (1e-4, 1e-3, 1e-2, 1.0)]
    assert np.all(np.diff(grid) < 0)  # the smaller alpha, the higher the evidence
    with pytest.warns(EvidenceBoundWarning, match=r"lower bound alpha = 0\.001 .*favour a smaller "
                      r"alpha"):
        alpha, clf = empirical_bayes(bnb.NaiveBayes(bnb.Categorical()), X, y)
    assert alpha == 1e-3
    assert clf.log_evidence() == pytest.approx(grid[1], rel=1e-9)


def test_an_interior_maximum_is_returned_without_a_warning():
    X, y = informative()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no EvidenceBoundWarning (nor any other)
        alpha, clf = empirical_bayes(bnb.NaiveBayes(bnb.Categorical()), X, y)
    best = log_evidence(X, y, alpha)
    assert 1e-2 < alpha < 1e2
    assert best > max(log_evidence(X, y, alpha * 0.99), log_evidence(X, y, alpha * 1.01))
    assert clf.log_evidence() == pytest.approx(best, rel=1e-9)
    # bounds that leave the maximum out: the nearer bound, with the warning
    with pytest.warns(EvidenceBoundWarning, match=r"lower bound alpha = 5 .*bounds = \(5, 50\)"):
        low, _ = empirical_bayes(bnb.NaiveBayes(bnb.Categorical()), X, y, bounds=(5.0, 50.0))
    with pytest.warns(EvidenceBoundWarning, match=r"upper bound alpha = 0\.5 "):
        high, _ = empirical_bayes(bnb.NaiveBayes(bnb.Categorical()), X, y, bounds=(0.01, 0.5))
    assert (low, high) == (5.0, 0.5)
    assert log_evidence(X, y, 5.0) > log_evidence(X, y, 5.5)  # falling past the lower bound
    assert log_evidence(X, y, 0.5) > log_evidence(X, y, 0.45)  # rising up to the upper one


# ---------------------------------------------------------------------- python -m bayesnb
def _run_module(*args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, JAX_PLATFORMS="cpu")
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [env.get("PYTHONPATH")])])
    return subprocess.run([sys.executable, "-m", "bayesnb", *args], capture_output=True,
                          text=True, env=env, timeout=300, check=False)


def test_python_dash_m_runs_the_command_line(capsys):
    out = _run_module("--help")
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.startswith("usage: bayesnb ")  # the script's parser and name
    assert main(["--help"]) == 0
    assert out.stdout == capsys.readouterr().out  # what the console script prints
    bad = _run_module("nonsense")
    assert bad.returncode == 2  # the exit status comes through
    assert bad.stderr.startswith("bayesnb: error: argument COMMAND: invalid choice")


def test_importing_the_main_module_runs_nothing():
    import importlib

    module = importlib.import_module("bayesnb.__main__")  # as pkgutil.walk_packages does
    assert module.main is main


# ---------------------------------------------------------------------- loss matrices
@pytest.fixture(scope="module")
def tennis():
    days, play = load_playtennis()
    return bnb.NaiveBayes(method="bayes").fit(days, play), days.head(4)


@pytest.mark.parametrize("loss, shown", [
    (np.array([["0", "1"], ["5", "0"]]), r"loss\['No', 'No'\] is '0' \(a str\)"),
    ([[0, 1], ["5", 0]], r"loss\['Yes', 'No'\] is '5' \(a str\)"),
    (np.array([[0, 1], [5, "x"]], dtype=object), r"loss\['Yes', 'Yes'\] is 'x'"),
    (pd.DataFrame([["0", "1"], ["5", "0"]], index=["No", "Yes"], columns=["No", "Yes"]),
     r"loss\['No', 'No'\] is '0'"),
    (~np.eye(2, dtype=bool), r"loss\['No', 'No'\] is False \(a bool\)"),
    ([[0, True], [1, 0]], r"loss\['No', 'Yes'\] is True \(a bool\)"),  # NumPy reads it as 1
    ([[0, None], [1, 0]], r"loss\['No', 'Yes'\] is None"),
    ([[0, 1 + 0j], [1, 0]], r"loss\['No', 'Yes'\] is \(1\+0j\) \(a complex\)"),
])
def test_a_loss_that_is_not_numbers_is_refused_naming_the_entry(tennis, loss, shown):
    clf, rows = tennis
    for call in (clf.decide, clf.expected_loss):
        with pytest.raises(ValueError, match=r"loss must be a \(2, 2\) array of numbers: "
                           + shown):
            call(rows, loss=loss)


def test_numeric_losses_still_work_in_any_form(tennis):
    clf, rows = tennis
    proba = clf.predict_proba(rows)
    want = proba @ np.array([[0.0, 1.0], [5.0, 0.0]])  # rho[i, a] = sum_c L[c, a] p(c | x_i)
    frame = pd.DataFrame([[0, 5], [1, 0]], index=["Yes", "No"], columns=["Yes", "No"])
    for loss in ([[0, 1], [5, 0]], np.array([[0, 1], [5, 0]], dtype=np.int8),
                 np.array([[0.0, 1.0], [5.0, 0.0]], dtype=np.float32),
                 np.array([[0, 1.0], [np.int64(5), 0]], dtype=object), frame,
                 frame.astype("Float64")):
        np.testing.assert_allclose(clf.expected_loss(rows, loss=loss), want, rtol=1e-12)
        np.testing.assert_array_equal(clf.decide(rows, loss=loss),
                                      clf.classes_[want.argmin(axis=1)])
