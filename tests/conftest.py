"""Shared fixtures. Reference comparisons run in float64 inside the ``x64`` fixture; the library
itself never switches x64 on (see the dtype policy in docs/user_guide/numerics.md)."""

import os
import shutil
import sys
import tempfile

import jax
import pytest
from hypothesis import settings

jax.config.update("jax_platforms", "cpu")

# The same examples on every run: a property test that fails does so here first, not at random
# in CI (HYPOTHESIS_PROFILE=explore draws new examples each run, to hunt for failures).
settings.register_profile("repeatable", derandomize=True, database=None)
settings.register_profile("explore", derandomize=False)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "repeatable"))

#: the folder of compiled kernels this run shares between its processes (see below)
_KERNEL_CACHE = "JAX_COMPILATION_CACHE_DIR"
_made_here = []


def pytest_configure(config):
    """Compiling kernels is most of the suite's time, and the test processes (pytest-xdist's
    workers, the examples and the CLI run as scripts) compile many of the same ones. JAX's
    persistent compilation cache lets each kernel be compiled once per run: a new, empty
    folder per run (made by the first process, inherited by the others through the
    environment), deleted at the end. A cached kernel is the same executable, so what the
    tests check is what a user runs; ``JAX_COMPILATION_CACHE_DIR`` set outside keeps its own
    folder. Either way the package leaves the user's cache folder alone (bayesnb's own cache
    is on only where no JAX cache folder is set), and with ``BAYESNB_TEST_KERNEL_CACHE=0``
    it is turned off, so no run of the suite writes into the home folder."""
    _configure_kernel_cache()
    # the suite bounds its compiled kernels between tests (``_bounded_jit_caches``); the
    # package's own bound (tested in test_trust3_compile_bound.py) would drop them in the
    # middle of tests that count retraces; imported after the cache is chosen, since
    # importing bayesnb turns its own cache on where none is configured
    from bayesnb.fast import _compiled

    _compiled.MAX_EXECUTABLES = 1 << 30


def _configure_kernel_cache():
    if os.environ.get("BAYESNB_TEST_KERNEL_CACHE", "1") == "0":
        os.environ["BAYESNB_COMPILATION_CACHE"] = "0"  # inherited by the suite's subprocesses
        return
    if not os.environ.get(_KERNEL_CACHE):
        os.environ[_KERNEL_CACHE] = tempfile.mkdtemp(prefix="bayesnb-test-kernels-")
        _made_here.append(os.environ[_KERNEL_CACHE])
    # every kernel, however quick to compile (most compile in well under a second)
    os.environ.setdefault("JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS", "0")
    os.environ.setdefault("JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES", "-1")
    jax.config.update("jax_compilation_cache_dir", os.environ[_KERNEL_CACHE])
    jax.config.update("jax_persistent_cache_min_compile_time_secs",
                      float(os.environ["JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS"]))
    jax.config.update("jax_persistent_cache_min_entry_size_bytes",
                      int(os.environ["JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES"]))


def pytest_unconfigure(config):
    for folder in _made_here:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def x64():
    """Run the test body with JAX's float64 mode on, and restore the default afterwards."""
    with jax.enable_x64(True):
        yield


@pytest.fixture
def kernel_fits(monkeypatch):
    """Fits counted by the statistics kernels however small (``fast._host.SMALL_FIT_CELLS``
    sends a small dense fit of the count families to the host's float64 products), and
    Gaussian fits and predictions, and count blocks with missing values, computed by them
    (``HOST_MATHS_ENTRIES`` sends small ones to the family's float64 NumPy maths): for the
    tests of the kernels' own paths (chunks, float32 forms and rounding bounds, masked forms,
    redone passes, value checks)."""
    from bayesnb.fast import _host

    monkeypatch.setattr(_host, "SMALL_FIT_CELLS", -1)
    monkeypatch.setattr(_host, "HOST_MATHS_ENTRIES", -1)


@pytest.fixture
def kernel_draws(monkeypatch):
    """Predictions over draws streamed through the kernels however small
    (``_draws_host.HOST_DRAW_ENTRIES`` sends a small call to the host's float64 NumPy): for the
    tests of the kernels' chunks, float32 forms and rounding bounds."""
    from bayesnb import _draws_host

    monkeypatch.setattr(_draws_host, "HOST_DRAW_ENTRIES", -1)


#: drop JAX's compiled kernels past this many memory maps (vm.max_map_count is 65,530 here)
_MAX_MAPS = 20_000


def _map_count() -> int:
    try:
        with open(f"/proc/{os.getpid()}/maps") as maps:  # count, without splitting lines
            return maps.read().count("\n")
    except OSError:  # not Linux: nothing to bound
        return 0


@pytest.fixture(autouse=True)
def _bounded_jit_caches():
    """Every kernel compiled in this long process stays cached, and each XLA executable holds
    about three memory maps. The suite compiles thousands of distinct shapes, and a full run
    reached the kernel's map limit and segfaulted inside XLA's compiler; clearing JAX's caches
    past a bound releases them (measured: 300 kernels, 1,387 maps -> 499 after clearing)."""
    yield
    _TESTS_SEEN[0] += 1
    # reading the maps costs milliseconds; every 10th test is often enough (a test adds
    # hundreds of maps, far from the 45,000 between the bound and the kernel's limit)
    if _TESTS_SEEN[0] % 10 == 0 and _map_count() > _MAX_MAPS:
        jax.clear_caches()


_TESTS_SEEN = [0]


@pytest.fixture(autouse=True)
def _close_figures():
    """Close every matplotlib figure a test left open (only where pyplot is loaded: most tests
    draw nothing and need not import matplotlib)."""
    yield
    plt = sys.modules.get("matplotlib.pyplot")
    if plt is not None:
        plt.close("all")
