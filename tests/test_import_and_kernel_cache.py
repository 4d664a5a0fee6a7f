"""``import bayesnb`` loads what a call needs when it needs it, and the compiled kernels are kept
on disk between processes (``bayesnb._kernel_cache``).

Each case runs in a fresh Python process: what an import loads, and what JAX's persistent cache
reads and writes, are decided once per process. The cache is checked through its folder and
JAX's own cache-hit log lines, never by timing."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from bayesnb import _kernel_cache

ROOT = Path(__file__).resolve().parents[1]

#: heavy packages that a plain ``import bayesnb`` must not load
LAZY = ("arviz", "matplotlib", "dask", "numpyro", "sklearn", "pandas", "scipy.stats")

FIT = """
import logging, sys
import numpy as np
import bayesnb as bnb
import bayesnb.fast._host
import jax
bayesnb.fast._host.HOST_MATHS_ENTRIES = -1  # the kernels, however small the table
logging.basicConfig(level=logging.DEBUG, stream=sys.stdout, format="%(message)s")
logging.getLogger("jax._src.compiler").setLevel(logging.DEBUG)
rng = np.random.default_rng(0)
X = rng.normal(size=(150, 4))
y = rng.integers(0, 3, 150)
p = bnb.NaiveBayes(features=bnb.Gaussian()).fit(X, y).predict_proba(X)
assert np.allclose(p.sum(axis=1), 1.0)
print("CACHE_DIR", jax.config.jax_compilation_cache_dir)
"""


def _python(code: str, **env_changes) -> subprocess.CompletedProcess:
    """Run ``code`` in a new interpreter on this checkout, with no JAX cache configured
    outside (the suite's own folder is dropped) and ``env_changes`` applied."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("JAX_COMPILATION_CACHE", "JAX_PERSISTENT_CACHE", "BAYESNB_"))}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [env.get("PYTHONPATH")])])
    env["JAX_PLATFORMS"] = "cpu"
    env.update(env_changes)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=env, timeout=600, check=False)
    assert out.returncode == 0, out.stderr[-3000:]
    return out


def _entries(folder: Path) -> set[str]:
    return {p.name for p in folder.glob("*-cache")}


def test_import_loads_none_of_the_heavy_packages_and_every_public_name_resolves(tmp_path):
    out = _python(
        "import sys, bayesnb as bnb\n"
        f"print(sorted(m for m in {LAZY!r} if m in sys.modules))\n"
        "missing = [n for n in bnb.__all__ if n not in dir(bnb) or getattr(bnb, n) is None]\n"
        "print(missing, bnb.compare.__name__)\n"
        "import gc; print(gc.isenabled())\n",
        BAYESNB_COMPILATION_CACHE=str(tmp_path))
    loaded, names, collector = out.stdout.splitlines()
    assert loaded == "[]"
    assert names == "[] bayesnb.compare"
    assert collector == "True"  # paused during the imports only (``_collector_paused``)


def test_the_closed_form_analyses_load_no_sampler():
    """``loo``, ``explain`` and ``log_evidence`` of a closed-form fit are exact: they must not
    pay NumPyro's import (0.3 s of a first ``loo`` of 0.05 s)."""
    out = _python(
        "import sys, numpy as np, bayesnb as bnb\n"
        "X = np.random.default_rng(0).poisson(2.0, (60, 5)).astype(float); y = np.arange(60) % 3\n"
        "clf = bnb.NaiveBayes(bnb.Multinomial()).fit(X, y)\n"
        "clf.loo(X, y); clf.explain(X[0]); clf.log_evidence()\n"
        "print(sorted(m for m in ('numpyro', 'arviz') if m in sys.modules))\n")
    assert out.stdout.strip() == "[]"


def test_imports_leave_the_garbage_collector_as_they_found_it():
    import gc

    import bayesnb

    was_enabled = gc.isenabled()
    try:
        for enabled in (True, False):
            (gc.enable if enabled else gc.disable)()
            with pytest.raises(RuntimeError), bayesnb._collector_paused():
                assert not gc.isenabled()
                raise RuntimeError("an import that fails")
            assert gc.isenabled() is enabled
            bayesnb.__getattr__("decisions")  # a submodule imported on first use
            assert gc.isenabled() is enabled
    finally:
        (gc.enable if was_enabled else gc.disable)()


def test_what_an_import_makes_goes_to_the_oldest_generation_unless_the_program_froze_objects():
    import gc

    import bayesnb

    assert gc.isenabled() and gc.get_freeze_count() == 0
    with bayesnb._collector_paused():
        loaded = [[]]  # a container the collector tracks, as a module's objects are
    assert any(o is loaded for o in gc.get_objects(generation=2))
    assert gc.isenabled()

    kept = [[]]
    gc.freeze()  # a program that keeps frozen objects (a pre-fork server): left as it is
    try:
        with bayesnb._collector_paused():
            young = [[]]
        # The frozen count itself is no witness: another thread (pytest-xdist's) may free a
        # frozen object meanwhile. What was frozen stays frozen, outside every generation.
        assert gc.get_freeze_count() > 0
        assert not any(o is kept for o in gc.get_objects())
        assert not any(o is young for o in gc.get_objects(generation=2))
        assert gc.isenabled()
    finally:
        gc.unfreeze()
    assert kept


def test_unknown_attribute_is_an_attribute_error():
    import bayesnb

    with pytest.raises(AttributeError, match="no attribute 'no_such_name'"):
        bayesnb.no_such_name  # noqa: B018


def test_a_fit_writes_kernels_and_a_new_process_reads_them(tmp_path):
    first = _python(FIT, BAYESNB_COMPILATION_CACHE=str(tmp_path))
    assert f"CACHE_DIR {tmp_path}" in first.stdout
    written = _entries(tmp_path)
    assert any(name.startswith("jit_suff_stats") for name in written)
    assert any(name.startswith("jit_scores") for name in written)
    assert "Persistent compilation cache hit" not in first.stdout

    second = _python(FIT, BAYESNB_COMPILATION_CACHE=str(tmp_path))
    hits = [line for line in second.stdout.splitlines()
            if line.startswith("Persistent compilation cache hit")]
    assert any("jit_suff_stats" in h for h in hits) and any("jit_scores" in h for h in hits)
    assert _entries(tmp_path) == written  # nothing compiled again


def test_zero_turns_the_cache_off(tmp_path):
    out = _python(FIT, BAYESNB_COMPILATION_CACHE="0", XDG_CACHE_HOME=str(tmp_path),
                  HOME=str(tmp_path))
    assert "CACHE_DIR None" in out.stdout
    assert not any(tmp_path.rglob("*"))


def test_the_default_folder_follows_xdg(tmp_path):
    out = _python(FIT, XDG_CACHE_HOME=str(tmp_path))
    folder = tmp_path / "bayesnb" / "jax"
    assert f"CACHE_DIR {folder}" in out.stdout
    assert _entries(folder)


def test_a_cache_the_user_configured_is_left_alone(tmp_path):
    mine, ours = tmp_path / "mine", tmp_path / "ours"
    out = _python(FIT + "print('MAX', jax.config.jax_compilation_cache_max_size)\n",
                  JAX_COMPILATION_CACHE_DIR=str(mine), BAYESNB_COMPILATION_CACHE=str(ours))
    assert f"CACHE_DIR {mine}" in out.stdout
    assert "MAX -1" in out.stdout  # JAX's defaults, not ours
    assert not ours.exists()


def test_concurrent_processes_share_one_folder_without_errors(tmp_path):
    """Two processes compile the same kernels into one empty folder at once: JAX locks each
    read and write (the size bound turns the lock on), so neither reads a half-written entry."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("JAX_COMPILATION_CACHE", "JAX_PERSISTENT_CACHE", "BAYESNB_"))}
    env.update(PYTHONPATH=str(ROOT), JAX_PLATFORMS="cpu", BAYESNB_COMPILATION_CACHE=str(tmp_path))
    runs = [subprocess.Popen([sys.executable, "-W", "error::UserWarning", "-c", FIT], env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            for _ in range(2)]
    for run in runs:
        stdout, stderr = run.communicate(timeout=600)
        assert run.returncode == 0, stderr[-3000:]
        assert "persistent compilation cache" not in stderr.lower()
    assert _entries(tmp_path)


def test_folder_reads_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.delenv(_kernel_cache.ENV, raising=False)
    assert _kernel_cache.folder() == tmp_path / "bayesnb" / "jax"
    monkeypatch.setenv(_kernel_cache.ENV, "1")
    assert _kernel_cache.folder() == tmp_path / "bayesnb" / "jax"
    for off in ("0", "off", "False"):
        monkeypatch.setenv(_kernel_cache.ENV, off)
        assert _kernel_cache.folder() is None
    monkeypatch.setenv(_kernel_cache.ENV, str(tmp_path / "here"))
    assert _kernel_cache.folder() == tmp_path / "here"


def test_an_error_tracing_a_new_nuts_program_is_not_chained_to_the_missing_file(
        tmp_path, monkeypatch):
    """With the program cache cold, an error while the NUTS program was traced was raised
    inside the handler of the missing file's read: the traceback led with FileNotFoundError
    (hunt 48). The trace now runs after the handler."""
    from jax import export

    from bayesnb import _nuts

    def failing(*args, **kwargs):
        def trace(*a, **k):
            raise ValueError("an error of the model")
        return trace

    monkeypatch.setattr(export, "export", failing)
    with pytest.raises(ValueError, match="an error of the model") as info:
        _nuts._load(None, None, tmp_path / "nuts-missing.jax", ())
    assert info.value.__context__ is None
