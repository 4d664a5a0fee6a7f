"""bayesnb: Naive Bayes as a generative NumPyro model with conjugate priors.

>>> import bayesnb as bnb
>>> clf = bnb.NaiveBayes(features=bnb.Multinomial(alpha=1.0), method="mean")

The public names and the submodules (``bnb.compare``, ``bnb.outofcore``, ...) are imported
when first used, so ``import bayesnb`` costs little more than importing JAX; importing it
also keeps compiled kernels on disk between processes (see :mod:`bayesnb._kernel_cache`).
"""

from __future__ import annotations

import gc
import importlib
import importlib.util
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Python's cyclic garbage collector paused while modules load, then restored as it was.

    Each full collection during an import rescans every module loaded so far and frees
    nothing. The objects loaded then go straight to the oldest generation (``gc.freeze``
    then ``gc.unfreeze``, unless the program keeps frozen objects of its own), where the next
    full collection reads them, instead of through two young collections."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            if gc.get_freeze_count() == 0:
                gc.freeze()
                gc.unfreeze()
            gc.enable()


with _collector_paused():
    from . import _kernel_cache

if TYPE_CHECKING:  # what type checkers see of the names imported on first use (_PUBLIC)
    from ._blocks import AbsentColumnWarning as AbsentColumnWarning
    from ._data import InferredCategoricalWarning as InferredCategoricalWarning
    from ._missing_labels import MissingLabelWarning as MissingLabelWarning
    from .analysis import EvidenceBoundWarning as EvidenceBoundWarning
    from .coursework import from_tables as from_tables
    from .dependence_plot import dependence_heatmap as dependence_heatmap
    from .estimator import METHODS as METHODS
    from .estimator import NaiveBayes as NaiveBayes
    from .estimator import merge as merge
    from .families import REGISTRY as REGISTRY
    from .families import Bernoulli as Bernoulli
    from .families import Categorical as Categorical
    from .families import ConjugateFamily as ConjugateFamily
    from .families import Exponential as Exponential
    from .families import Family as Family
    from .families import Gaussian as Gaussian
    from .families import KernelDensity as KernelDensity
    from .families import LogNormal as LogNormal
    from .families import Multinomial as Multinomial
    from .families import NegativeBinomial as NegativeBinomial
    from .families import NonparametricFamily as NonparametricFamily
    from .families import Poisson as Poisson
    from .families._levels import UnseenCategoryWarning as UnseenCategoryWarning
    from .inference import ConvergenceWarning as ConvergenceWarning
    from .joining import JoinColumns as JoinColumns
    from .joining import join_columns as join_columns
    from .persistence import ModelFileError as ModelFileError
    from .persistence import load as load
    from .persistence import save as save
    from .tan import TreeAugmentedNB as TreeAugmentedNB

__version__ = "0.1.0"

#: each public name and the module that defines it
_PUBLIC = {
    "METHODS": "estimator",
    "NaiveBayes": "estimator",
    "merge": "estimator",
    "REGISTRY": "families",
    "Bernoulli": "families",
    "Categorical": "families",
    "ConjugateFamily": "families",
    "Exponential": "families",
    "Family": "families",
    "Gaussian": "families",
    "KernelDensity": "families",
    "LogNormal": "families",
    "Multinomial": "families",
    "NegativeBinomial": "families",
    "NonparametricFamily": "families",
    "Poisson": "families",
    "JoinColumns": "joining",
    "join_columns": "joining",
    "ModelFileError": "persistence",
    "load": "persistence",
    "save": "persistence",
    "dependence_heatmap": "dependence_plot",
    "from_tables": "coursework",
    "TreeAugmentedNB": "tan",
    "AbsentColumnWarning": "_blocks",
    "InferredCategoricalWarning": "_data",
    "MissingLabelWarning": "_missing_labels",
    "EvidenceBoundWarning": "analysis",
    "UnseenCategoryWarning": "families._levels",
    "ConvergenceWarning": "inference",
}

__all__ = sorted(_PUBLIC)

_kernel_cache.enable()


def __getattr__(name: str):
    """A public name or a submodule, imported on first use (PEP 562)."""
    if name in _PUBLIC:
        with _collector_paused():
            value = getattr(importlib.import_module(f".{_PUBLIC[name]}", __name__), name)
    elif not name.startswith("__") and importlib.util.find_spec(f"{__name__}.{name}"):
        with _collector_paused():
            value = importlib.import_module(f".{name}", __name__)
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__():
    return sorted(set(globals()) | set(__all__))
