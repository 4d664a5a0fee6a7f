"""Shared fixtures. Reference comparisons run in float64 inside the ``x64`` fixture; the library
itself never switches x64 on (see the dtype policy in the README)."""

import jax
import pytest

jax.config.update("jax_platforms", "cpu")


@pytest.fixture
def x64():
    """Run the test body with JAX's float64 mode on, and restore the default afterwards."""
    with jax.enable_x64(True):
        yield
