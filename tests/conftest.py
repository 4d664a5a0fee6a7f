"""Shared fixtures. Reference comparisons run in float64 inside the ``x64`` fixture; the library
itself never switches x64 on (see the dtype policy in the README)."""

import os

import jax
import pytest

jax.config.update("jax_platforms", "cpu")


@pytest.fixture
def x64():
    """Run the test body with JAX's float64 mode on, and restore the default afterwards."""
    with jax.enable_x64(True):
        yield


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
