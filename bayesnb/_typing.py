"""Type aliases of the public API's annotations (the package is ``py.typed``).

They are for type checkers and readers: nothing checks them at run time, and the modules that
use them never evaluate their annotations (``from __future__ import annotations``).
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import TYPE_CHECKING, Any, TypeAlias

from numpy.typing import ArrayLike

if TYPE_CHECKING:
    from numpyro.distributions import Distribution
    from scipy import sparse

    from .families import Family

#: rows of data, shape (n_samples, n_features): a NumPy array or anything NumPy reads as one
#: (nested lists, a pandas DataFrame, a JAX array, a Dask array or DataFrame), or a SciPy sparse
#: matrix or array
Data: TypeAlias = "ArrayLike | sparse.spmatrix | sparse.sparray"

#: ``NaiveBayes(features=...)``: one family for every column; ``{column: family}``, a column
#: given by name or position, or a list or tuple of them for one block; or None (inferred)
Features: TypeAlias = "Family | Mapping[Hashable | list, Family] | None"

#: a family's hyperparameter: a number, one per column, or a NumPyro distribution (a hyperprior,
#: learned by ``method="mcmc"``)
Hyper: TypeAlias = "ArrayLike | Distribution"

#: one row of data: a Series, a dict ``{column: value}``, a one-row DataFrame or a 1-D sequence
Row: TypeAlias = "ArrayLike | Mapping[Hashable, Any]"

__all__ = ["ArrayLike", "Data", "Features", "Hyper", "Row"]
