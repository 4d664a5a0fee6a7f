"""bayesnb: Naive Bayes as a generative NumPyro model with conjugate priors.

>>> import bayesnb as bnb
>>> clf = bnb.NaiveBayes(features=bnb.Multinomial(alpha=1.0), method="mean")
"""

from .coursework import from_tables
from .estimator import METHODS, NaiveBayes
from .families import REGISTRY, Bernoulli, Categorical, Family, Gaussian, Multinomial, Poisson

__version__ = "0.1.0"

__all__ = [
    "METHODS",
    "REGISTRY",
    "Bernoulli",
    "Categorical",
    "Family",
    "Gaussian",
    "Multinomial",
    "NaiveBayes",
    "Poisson",
    "from_tables",
]
