"""How NUTS runs the chains (``bayesnb._nuts``): every ``chain_method`` draws the same chains,
a model of the same structure compiles nothing again, one labelled progress bar (or none),
and a model file with a ``chain_method`` setting loads.

The draws' agreement with the exact posterior is ``test_mcmc.py``'s; here the reference is
the sampler itself run another way (the chains are independent of how they are batched)."""

import warnings

import numpy as np
import pytest

import bayesnb as bnb
from bayesnb import _nuts
from bayesnb.inference import ConvergenceWarning


def data(seed, n=120):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    X = (rng.random((n, 3)) < np.where(y[:, None] == 0, 0.3, 0.6)).astype(float)
    return X, y


def fit(X, y, **settings):
    settings = {"num_warmup": 60, "num_samples": 40, "num_chains": 2, "progress_bar": False,
                **settings}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # short chains
        return bnb.NaiveBayes(bnb.Bernoulli(), method="mcmc", **settings).fit(X, y)


def test_chain_methods_draw_the_same_chains():
    X, y = data(0)
    vectorized = fit(X, y, chain_method="vectorized")
    assert vectorized.draws_["bernoulli.theta"].shape == (2, 40, 2, 3)
    for method in ("sequential", "auto"):
        other = fit(X, y, chain_method=method)
        for site, draws in vectorized.draws_.items():
            np.testing.assert_allclose(other.draws_[site], draws, rtol=1e-6, err_msg=site)
        np.testing.assert_array_equal(other.sample_stats_["n_steps"],
                                      vectorized.sample_stats_["n_steps"])
    with pytest.warns(UserWarning, match="the chains run one after the other"):
        parallel = fit(X, y, chain_method="parallel")  # one CPU device: sequential
    np.testing.assert_allclose(parallel.draws_["class_probs"],
                               vectorized.draws_["class_probs"], rtol=1e-6)


def test_a_model_of_the_same_structure_compiles_nothing_again():
    def held():  # programs traced here, and programs loaded from the kernel cache's folder
        return (_nuts._start._cache_size(), _nuts._advance._cache_size(), len(_nuts._LOADED),
                _nuts._LOADED._cache_size())

    fit(*data(1))
    before = held()
    clf = fit(*data(2, n=90))  # other rows, other statistics, the same structure
    assert held() == before
    assert np.isfinite(clf.draws_["bernoulli.theta"]).all()


def test_one_labelled_progress_bar_or_none(capfd):
    X, y = data(3)
    fit(X, y, progress_bar=True, chain_method="vectorized")
    err = capfd.readouterr().err
    assert "NUTS (2 chains): sampling" in err and "100%" in err, err
    assert "Running chain" not in err and "warmup" not in err, err  # NumPyro's own bars
    fit(X, y, progress_bar=False)
    captured = capfd.readouterr()
    assert captured.err == "" and captured.out == ""


def test_a_saved_chain_method_loads_and_runs(tmp_path):
    X, y = data(4)
    clf = fit(X, y, chain_method="sequential")
    path = bnb.save(clf, tmp_path / "m.bnb")
    loaded = bnb.load(path)
    assert loaded.get_params()["chain_method"] == "sequential"
    np.testing.assert_allclose(loaded.predict_proba(X[:5]), clf.predict_proba(X[:5]),
                               rtol=1e-6)


def test_the_same_seed_draws_the_same_chains_compiled_or_read_from_the_cache(tmp_path):
    """NUTS draws are bit for bit the same whether the sampler's programs were traced and
    compiled in the process (cache off, or cold) or read from the compiled-kernel cache's
    folder (warm: the exported programs and their executables)."""
    import os
    import subprocess
    import sys

    script = (
        "import numpy as np, numpyro.distributions as dist, bayesnb as bnb\n"
        "rng = np.random.default_rng(0)\n"
        "y = np.arange(40) % 2\n"
        "X = rng.poisson(np.where(y[:, None] == 1, 0.3, 0.1), (40, 30)).astype(float)\n"
        "clf = bnb.NaiveBayes(bnb.Multinomial(alpha=dist.Gamma(1.0, 1.0)), method='mcmc',\n"
        "                     num_warmup=100, num_samples=100, num_chains=1,\n"
        "                     progress_bar=False).fit(X, y)\n"
        "flat = [np.ravel(v) for _, v in sorted(clf.draws_.items())]\n"
        "print(repr(np.concatenate(flat).tolist()))\n")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

    def draws(cache):  # the suite's own JAX cache folder (conftest) left out: bayesnb's only
        env = {k: v for k, v in os.environ.items() if k != "JAX_COMPILATION_CACHE_DIR"}
        env.update(BAYESNB_COMPILATION_CACHE=cache,
                   PYTHONPATH=os.pathsep.join([root, os.environ.get("PYTHONPATH", "")]))
        out = subprocess.run([sys.executable, "-W", "ignore", "-c", script], env=env,
                             capture_output=True, text=True, timeout=600, check=True)
        return out.stdout.strip().splitlines()[-1]

    off = draws("0")
    assert not list(tmp_path.glob("**/nuts-*.jax"))
    assert draws(str(tmp_path / "cache")) == off  # traced and compiled here, both written
    saved = sorted(p.name for p in (tmp_path / "cache").glob("nuts-*.jax"))
    assert [name.split("-")[1] for name in saved] == ["advance", "start"], saved
    assert draws(str(tmp_path / "cache")) == off  # neither traced nor compiled: both read


def test_a_damaged_saved_program_is_exported_again(tmp_path, monkeypatch):
    """A program file that cannot be read (truncated, written by another jax) is a cache miss:
    the program is traced, run and written again, and the draws are those of a fit without
    the cache."""
    from bayesnb import _kernel_cache

    X, y = data(5)
    monkeypatch.setattr(_kernel_cache, "active_folder", lambda: None)
    expected = fit(X, y).draws_
    monkeypatch.setattr(_kernel_cache, "active_folder", lambda: tmp_path)
    _nuts._LOADED.clear_cache()
    fit(X, y)
    saved = sorted(tmp_path.glob("nuts-*.jax"))
    assert len(saved) == 2
    for path in saved:
        path.write_bytes(path.read_bytes()[:100])
    _nuts._LOADED.clear_cache()
    again = fit(X, y).draws_
    for site, draws in expected.items():
        np.testing.assert_array_equal(again[site], draws, err_msg=site)
    assert all(path.stat().st_size > 100 for path in saved)
