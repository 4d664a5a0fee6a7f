"""Shared helpers of the family conformance tests (``test_family_conformance.py``, the fits
and numerics; ``test_family_conformance_sampling.py``, the posterior and its sampling): the
families to run over, the data from each family's own NumPyro statements, and fitting.

The data come from the family's generative model: its NumPyro statements (``sample_params``,
then ``observe`` with ``x=None``) sampled from the prior and decoded to raw column values
(``decode``). A ``nonparametric`` family has no such statements and no posterior; it gets
positive real values and only the checks that need no parameters.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from numpyro import handlers

import bayesnb as bnb
from bayesnb.families import REGISTRY
from bayesnb.families._base import host_f64

FAMILIES = [pytest.param(cls, id=name) for name, cls in REGISTRY.items()]
PARAMETRIC = [pytest.param(cls, id=name) for name, cls in REGISTRY.items()
              if not cls.nonparametric]
N_CLASSES = 2
#: the arguments of a family that has required ones (a likelihood constant the user knows)
ARGUMENTS = {"negative_binomial": {"r": 2.5}}
#: a simulator draws a power of two of rows, at least this many, and a test takes the first
#: ``n``: one compiled program (per family and column count) serves every check, the wide
#: float32 one included (compiling the program is most of a simulation's cost, drawing 2,048
#: rows a few milliseconds)
_MIN_ROWS = 2048
#: float32 draws widened as the x64 mode would have drawn them
_WIDE = {np.dtype(np.float32): np.float64, np.dtype(np.int32): np.int64}


def make(cls):
    """An instance of ``cls`` with its default hyperparameters."""
    return cls(**ARGUMENTS.get(cls.name, {}))


@functools.cache
def _simulator(cls, n_columns: int, rows: int):
    """``(family, schema, sample)``: ``sample(codes, key)`` draws ``rows`` rows of the family's
    prior predictive for the class codes ``codes``. Compiled once per family and shape (class
    codes and key are arguments, not constants), so tests of equal shapes share the program
    in this process and, through JAX's persistent cache, across processes."""
    family = make(cls)
    # a block of 0/1 for the schema (levels of a categorical family), valid for every family
    schema = family.learn_schema(np.tile([[0], [1]], (1, n_columns)), tuple(range(n_columns)))
    prior = jax.tree_util.tree_map(jnp.asarray, family.prior(schema))

    def model(codes):
        # the instance's class: the one the package hands the NumPyro program
        params = type(family).sample_params(prior, N_CLASSES, "b")
        type(family).observe(params, None, codes, "b", total_count=30)

    @jax.jit  # one compiled program, not an op-by-op run of the distributions
    def sample(codes, key):
        trace = handlers.trace(handlers.seed(model, rng_seed=key)).get_trace(codes)
        if cls.column_sites:
            return jnp.stack([trace[f"b.{j}.x"]["value"] for j in range(n_columns)], axis=1)
        return trace["b.x"]["value"]

    return family, schema, sample


def simulate(cls, n: int, n_columns: int = 3, seed: int = 0, shared: bool = False):
    """``(X, y)``: ``n`` raw rows of ``n_columns`` columns from the family's prior predictive
    (classes drawn with their own parameters, or with one set for all when ``shared``: close
    classes, whose probabilities are far from 0 and 1)."""
    rng = np.random.default_rng(seed)
    y = np.arange(n) % N_CLASSES
    rng.shuffle(y)
    if cls.nonparametric:  # no generative statements: positive real values
        return rng.lognormal(0.0, 1.0, (n, n_columns)) * (1.0 + (0 if shared else y[:, None])), y
    rows = max(_MIN_ROWS, 1 << (n - 1).bit_length())
    # rows are independent given their class's parameters, so the first n of the drawn rows
    # are n rows of the model; ``shared``: every row of class 0, whose parameters are one
    # draw from the prior like the one set of a one-class model
    codes = np.zeros(rows, np.int32)
    if not shared:
        codes[:n] = y
    x64 = jax.config.jax_enable_x64
    with jax.enable_x64(False):  # one program for the tests in and out of the x64 mode
        family, schema, sample = _simulator(cls, n_columns, rows)
        values = np.asarray(sample(jnp.asarray(codes), jax.random.PRNGKey(seed)))[:n]
    if x64:
        values = values.astype(_WIDE.get(values.dtype, values.dtype))
    return family.decode(values, schema), y


def fit(cls, X, y, method="mean", **kw):
    return bnb.NaiveBayes(features=make(cls), method=method, **kw).fit(X, y)


def block_arrays(clf, X):
    """The fitted block's family class, prior and statistics (float64) and ``X`` encoded."""
    block = clf.blocks_[0]
    x = block.family.encode(X, block.schema)
    return type(block.family), host_f64(block.prior), host_f64(block.stats), x, block
