"""bayesnb: Naive Bayes as a generative NumPyro model with conjugate priors.

>>> import bayesnb as bnb
>>> clf = bnb.NaiveBayes(features=bnb.Multinomial(alpha=1.0), method="mean")
"""

__version__ = "0.1.0"

from .coursework import from_tables  # noqa: E402
from .dependence_plot import dependence_heatmap  # noqa: E402
from .estimator import METHODS, NaiveBayes, merge  # noqa: E402
from .families import (  # noqa: E402
    REGISTRY,
    Bernoulli,
    Categorical,
    Exponential,
    Family,
    Gaussian,
    KernelDensity,
    Multinomial,
    Poisson,
)
from .joining import JoinColumns, join_columns  # noqa: E402
from .persistence import ModelFileError, load, save  # noqa: E402

__all__ = [
    "METHODS",
    "REGISTRY",
    "Bernoulli",
    "Categorical",
    "Exponential",
    "Family",
    "Gaussian",
    "JoinColumns",
    "KernelDensity",
    "ModelFileError",
    "Multinomial",
    "NaiveBayes",
    "Poisson",
    "dependence_heatmap",
    "from_tables",
    "join_columns",
    "load",
    "merge",
    "save",
]
