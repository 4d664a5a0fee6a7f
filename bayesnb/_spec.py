"""The estimator's specification objects: cloning and owning the families of ``features``
(scikit-learn's clone contract) and checking NUTS settings (also those read from a file)."""

from __future__ import annotations

import threading
from collections.abc import Mapping

import numpy as np
from sklearn.base import clone

from .families import Family
from .families._base import checked_bool
from .fitted import FittedModel

#: guards the creation of each estimator's update lock
_LOCK_OF_LOCKS = threading.Lock()
#: ways of running several chains (``bayesnb._nuts``): NumPyro's three, and "auto" (a device
#: per chain where there are enough, else vectorized)
CHAIN_METHODS = ("auto", "sequential", "parallel", "vectorized")
#: the least value of each integer NUTS setting
MCMC_MINIMUMS = {"num_warmup": 0, "num_samples": 1, "num_chains": 1}


def _given_families(features) -> list:
    """The family objects of a ``features`` spec (a family or a mapping), once each."""
    values = features.values() if isinstance(features, Mapping) else [features]
    return list({id(f): f for f in values if isinstance(f, Family)}.values())


def cloned_features(features):
    """``features`` with every family cloned once: identity shared between columns is kept."""
    copies = {id(f): clone(f) for f in _given_families(features)}
    if isinstance(features, Family):
        return copies[id(features)]
    if isinstance(features, Mapping):
        return {k: copies.get(id(v), v) if isinstance(v, Family) else clone(v, safe=False)
                for k, v in features.items()}
    return clone(features, safe=False)


def owned(model: FittedModel, features) -> FittedModel:
    """``model`` with copies of the families that are the caller's objects in ``features``,
    so that changing those objects later (``set_params``) never changes a fitted model."""
    given = {id(f) for f in _given_families(features)}
    if not any(id(b.family) in given for b in model.blocks):
        return model
    return model.replace(blocks=tuple(b._replace(family=clone(b.family))
                                      if id(b.family) in given else b for b in model.blocks))


def check_mcmc_settings(settings: dict, maximums: dict | None = None) -> None:
    """Refuse a NUTS setting NumPyro cannot run (``num_chains=0`` would fail deep in JAX),
    naming it; ``maximums``: upper bounds too (settings read from a file)."""
    for key, low in MCMC_MINIMUMS.items():
        v = settings.get(key, low)
        high = (maximums or {}).get(key)
        if (not isinstance(v, int | np.integer) or isinstance(v, bool) or v < low
                or (high is not None and v > high)):
            bound = f">= {low}" if high is None else f"from {low} to {high}"
            raise ValueError(f"MCMC setting {key}={v!r}: expected an integer {bound}.")
    seed = settings.get("seed", 0)
    if not isinstance(seed, int | np.integer) or isinstance(seed, bool) or not (
            -2**63 <= seed < 2**63):
        raise ValueError(f"MCMC setting seed={seed!r}: expected a 64-bit integer.")
    if settings.get("chain_method", "auto") not in CHAIN_METHODS:
        raise ValueError(f"MCMC setting chain_method={settings['chain_method']!r}: expected one "
                         f"of {CHAIN_METHODS}.")
    if not isinstance(settings.get("progress_bar", True), bool | np.bool_):
        raise ValueError(f"MCMC setting progress_bar={settings['progress_bar']!r}: expected "
                         "True or False.")


def check_settings(method: str, methods: tuple, priors, **switches) -> None:
    """Refuse an estimator's ``method`` not in ``methods``; ``priors`` that is not a mapping
    of NumPyro distributions (:func:`bayesnb.model.check_prior_values`); and a switch
    (``infer_counts``, ``use_kernel``) that is not a real boolean, naming it: the string
    "False" (from a config file, say) is truthy, so it would silently switch it on."""
    if method not in methods:
        raise ValueError(f"method must be one of {methods}, got {method!r}.")
    for name, value in switches.items():
        checked_bool(value, name)
    if priors:
        from .model import check_prior_values  # NumPyro loads for priors, not for a plain fit

        check_prior_values(priors)


def update_lock(estimator) -> threading.RLock:
    """The estimator's lock of updates to ``fitted_``, made on first use (``partial_fit``
    reads, updates and installs under it; it is not pickled: a copy has its own)."""
    with _LOCK_OF_LOCKS:
        return estimator.__dict__.setdefault("_lock", threading.RLock())


def clone_estimator(estimator):
    """scikit-learn's clone: new, unfitted, equal parameters. ``features`` is cloned as a
    whole, so a family given for several columns stays one instance (one block), and
    ``set_params(features__alpha=...)`` on the clone (GridSearchCV) never changes the
    caller's family objects."""
    params = {k: clone(v, safe=False) for k, v in estimator.get_params(deep=False).items()
              if k != "features"}
    return type(estimator)(cloned_features(estimator.features), **params)


class SpecMixin:
    """scikit-learn's clone contract for ``features`` (:func:`clone_estimator`), and pickling
    without the update lock or the scoring cache (JAX arrays: a float64 table unpickled in
    float32 mode came back float32, and an Exponential model's probabilities moved 1.6e-3)."""

    def __sklearn_clone__(self):
        return clone_estimator(self)

    def __getstate__(self):
        return {k: v for k, v in super().__getstate__().items() if k not in ("_lock", "_cache")}


def freeze(value):
    """A hashable key of a class setting (``class_alpha``, ``class_prior``) for the caches."""
    if isinstance(value, dict):
        return tuple(sorted((repr(k), float(v)) for k, v in value.items()))
    if value is None:
        return None
    a = np.asarray(value, dtype=np.float64)
    return a.tobytes() + str(a.shape).encode()
