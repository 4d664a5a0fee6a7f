"""Hand-made Beta/Dirichlet draws of a small Bernoulli model (not the library's sampler), and
rows with missing values to score them on: shared by the tests of ``predict_uncertainty``."""

import numpy as np

import bayesnb as bnb

#: rows, columns, classes, chains and draws per chain of :func:`bernoulli_draws`
SHAPE = (70, 4, 3, 2, 40)


def bernoulli_draws(seed):
    """``(clf, draws, rows)``: a Bernoulli model fitted on 70 rows of 3 classes, 2 chains x 40
    draws from Dirichlet(4) class proportions and Beta(2, 2) probabilities, and 25 of its
    training rows with about 30% of the values missing."""
    rng = np.random.default_rng(seed)
    n, f, k, chains, d = SHAPE
    y = rng.integers(0, k, n)
    X = (rng.random((n, f)) < rng.uniform(0.1, 0.9, (k, f))[y]).astype(float)
    clf = bnb.NaiveBayes(bnb.Bernoulli(), method="bayes").fit(X, y)
    draws = {"class_probs": rng.dirichlet(np.full(k, 4.0), (chains, d)),
             "bernoulli.theta": rng.beta(2.0, 2.0, (chains, d, k, f))}
    rows = X[:25].copy()
    rows[rng.random(rows.shape) < 0.3] = np.nan
    return clf, draws, rows
