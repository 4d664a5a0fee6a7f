"""NumPyro distributions as data, for model files: a class name from an allow-list plus
parameter arrays, never code.

A hyperprior (``Multinomial(alpha=dist.Gamma(1, 1))``) or a replacement prior
(``priors={"poisson.rate": dist.LogNormal(0, 1)}``) is written as a JSON spec

* ``{"distribution": "Gamma", "params": {"concentration": ARRAY, "rate": ARRAY}}`` for a class
  of :data:`ALLOWED` (``ARRAY`` names a ``.npy`` member of the model file);
* ``{"distribution": "ExpandedDistribution", "batch_shape": [..], "base": SPEC}``
  (``d.expand(shape)``) and ``{"distribution": "Independent", "reinterpreted_batch_ndims": n,
  "base": SPEC}`` (``d.to_event(n)``), nested at most :data:`MAX_DEPTH` deep.

Loading looks the class up in :data:`ALLOWED` by its exact name (no import of a path) and checks
every parameter against the class's ``arg_constraints``. Anything else (a user subclass, a
``TransformedDistribution`` with its own transforms, a mixture) cannot be stated this way and
is refused at ``save`` with a ``TypeError`` naming the site.
"""

from __future__ import annotations

import numpy as np

#: the NumPyro classes a model file may name, with their constructor parameters in order
ALLOWED: dict[str, tuple[str, ...]] = {
    "Beta": ("concentration1", "concentration0"),
    "Cauchy": ("loc", "scale"),
    "Chi2": ("df",),
    "Dirichlet": ("concentration",),
    "Exponential": ("rate",),
    "Gamma": ("concentration", "rate"),
    "Gumbel": ("loc", "scale"),
    "HalfCauchy": ("scale",),
    "HalfNormal": ("scale",),
    "InverseGamma": ("concentration", "rate"),
    "Kumaraswamy": ("concentration1", "concentration0"),
    "Laplace": ("loc", "scale"),
    "Logistic": ("loc", "scale"),
    "LogNormal": ("loc", "scale"),
    "LogUniform": ("low", "high"),
    "Normal": ("loc", "scale"),
    "Pareto": ("scale", "alpha"),
    "StudentT": ("df", "loc", "scale"),
    "Uniform": ("low", "high"),
    "Weibull": ("scale", "concentration"),
}
WRAPPERS = ("ExpandedDistribution", "Independent")
MAX_DEPTH = 4
#: at most this many dimensions in a stated batch shape
MAX_NDIM = 8


def to_spec(d, where: str, prefix: str, put, depth: int = 0) -> dict:
    """The JSON spec of distribution ``d``; ``put(name, array)`` stores a parameter array and
    returns its name. ``where`` names the site in errors."""
    import numpyro.distributions as dist

    cls = type(d)
    name = cls.__name__
    if depth >= MAX_DEPTH:
        raise TypeError(f"cannot save {where}: distributions nested more than {MAX_DEPTH} deep.")
    # exact classes only: a subclass may change any method, and a file holds no code
    if cls is dist.ExpandedDistribution:
        return {"distribution": name, "batch_shape": [int(s) for s in d.batch_shape],
                "base": to_spec(d.base_dist, where, f"{prefix}/base", put, depth + 1)}
    if cls is dist.Independent:
        return {"distribution": name,
                "reinterpreted_batch_ndims": int(d.reinterpreted_batch_ndims),
                "base": to_spec(d.base_dist, where, f"{prefix}/base", put, depth + 1)}
    if name not in ALLOWED or cls is not getattr(dist, name):
        raise TypeError(
            f"cannot save {where}: {cls.__module__}.{name} is not one of the NumPyro "
            f"distributions a model file can state as data ({', '.join(sorted(ALLOWED))}, "
            f"and their .expand()/.to_event()); a model file holds no code.")
    params = {}
    for p in ALLOWED[name]:
        value = np.asarray(getattr(d, p))
        if value.dtype.kind in "biu":
            value = value.astype(np.float64)
        if value.dtype.kind != "f":
            raise TypeError(f"cannot save {where}: parameter {p} of {name} has dtype "
                            f"{value.dtype}, not a float.")
        params[p] = put(f"{prefix}/{p}", value)
    return {"distribution": name, "params": params}


def array_names(spec, where: str, depth: int = 0) -> list[str]:
    """The parameter arrays a spec names, after checking its structure (no array read)."""
    if not isinstance(spec, dict) or not isinstance(spec.get("distribution"), str):
        raise ValueError(f"{where}: not a distribution spec.")
    name = spec["distribution"]
    if depth >= MAX_DEPTH:
        raise ValueError(f"{where}: distributions nested more than {MAX_DEPTH} deep.")
    if name in WRAPPERS:
        if name == "ExpandedDistribution":
            shape = spec.get("batch_shape")
            if (not isinstance(shape, list) or len(shape) > MAX_NDIM or not all(
                    isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in shape)):
                raise ValueError(f"{where}: invalid batch_shape {shape!r}.")
        else:
            n = spec.get("reinterpreted_batch_ndims")
            if not isinstance(n, int) or isinstance(n, bool) or not 0 <= n <= MAX_NDIM:
                raise ValueError(f"{where}: invalid reinterpreted_batch_ndims {n!r}.")
        return array_names(spec.get("base"), where, depth + 1)
    if name not in ALLOWED:
        raise ValueError(f"{where}: distribution {name!r} is not one a model file may name "
                         f"(allowed: {', '.join(sorted(ALLOWED))}, {', '.join(WRAPPERS)}).")
    params = spec.get("params")
    if not isinstance(params, dict) or sorted(params) != sorted(ALLOWED[name]):
        raise ValueError(f"{where}: {name} needs the parameters {list(ALLOWED[name])}, the "
                         f"file gives {sorted(params) if isinstance(params, dict) else params!r}.")
    if not all(isinstance(a, str) for a in params.values()):
        raise ValueError(f"{where}: parameter array names must be strings.")
    return list(params.values())


def from_spec(spec, arrays: dict, where: str, max_size: int):
    """The distribution a checked spec states, built from its (already read) arrays; every
    parameter is finite and inside its ``arg_constraints``, and no batch shape holds more than
    ``max_size`` elements."""
    import numpyro.distributions as dist

    name = spec["distribution"]
    if name in WRAPPERS:
        base = from_spec(spec["base"], arrays, where, max_size)
        if name == "Independent":
            n = spec["reinterpreted_batch_ndims"]
            if n > len(base.batch_shape):
                raise ValueError(f"{where}: Independent reinterprets {n} batch dimensions of a "
                                 f"distribution with batch shape {tuple(base.batch_shape)}.")
            return dist.Independent(base, n)
        shape = tuple(spec["batch_shape"])
        if int(np.prod(shape, dtype=object)) > max_size:
            raise ValueError(f"{where}: batch shape {shape} is larger than any site of this "
                             f"model ({max_size} values).")
        try:
            np.broadcast_shapes(tuple(base.batch_shape), shape)
        except ValueError:
            raise ValueError(f"{where}: cannot expand batch shape {tuple(base.batch_shape)} to "
                             f"{shape}.") from None
        return dist.ExpandedDistribution(base, shape)
    cls = getattr(dist, name)
    values = {p: arrays[a] for p, a in spec["params"].items()}
    for p, v in values.items():
        if not np.all(np.isfinite(v)):
            raise ValueError(f"{where}: parameter {p} of {name} is not finite.")
    for p, constraint in cls.arg_constraints.items():
        if p not in values or isinstance(constraint, dist.constraints._Dependent):
            continue  # a dependent constraint (Uniform's low < high) is checked below
        if not bool(np.all(np.asarray(constraint(values[p])))):
            raise ValueError(f"{where}: parameter {p} of {name} is outside its support "
                             f"({constraint}).")
    if "low" in values and not np.all(values["low"] < values["high"]):
        raise ValueError(f"{where}: {name} needs low < high.")
    try:
        return cls(**values)
    except (ValueError, TypeError) as err:
        raise ValueError(f"{where}: invalid {name} parameters ({err}).") from None
