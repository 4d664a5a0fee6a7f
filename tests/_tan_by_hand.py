"""Tree-augmented naive Bayes by hand, for three discrete columns and two classes: the
Dirichlet-multinomial evidence of each tree's tables, written out from the formula, and the
predictive averaged over the three spanning trees of three columns (uniform prior)."""

import itertools

import numpy as np
from scipy.special import gammaln, logsumexp


def log_dm(counts, alpha):
    """Dirichlet-multinomial evidence of a table of counts, by the formula."""
    counts = np.asarray(counts, dtype=float).ravel()
    a = alpha / counts.size
    return (gammaln(alpha) - gammaln(alpha + counts.sum())
            + np.sum(gammaln(a + counts) - gammaln(a)))


def log_evidence(codes, y, sizes, tree, ess):
    """log p(X | y, T) of two classes: each class's edge tables over its (degree - 1) columns."""
    degree = np.bincount(np.ravel(tree), minlength=len(sizes))
    total = 0.0
    for c in range(2):
        rows = codes[y == c]
        for i, j in tree:
            table = np.zeros((sizes[i], sizes[j]))
            np.add.at(table, (rows[:, i], rows[:, j]), 1.0)
            total += log_dm(table, ess)
        for i, v in enumerate(sizes):
            total -= (degree[i] - 1) * log_dm(np.bincount(rows[:, i], minlength=v), ess)
    return total


def by_hand(codes, y, sizes, new, ess):
    """p(c | x, data) averaged over the three trees of three columns (uniform prior): the
    evidence with the new row in class c over the evidence without it, times p(c | data)."""
    trees = [list(t) for t in itertools.combinations([(0, 1), (0, 2), (1, 2)], 2)]
    before = logsumexp([log_evidence(codes, y, sizes, t, ess) for t in trees])
    n = np.bincount(y, minlength=2)
    out = np.empty((len(new), 2))
    for r, x in enumerate(new):
        for c in range(2):
            more, labels = np.vstack([codes, x]), np.append(y, c)
            after = logsumexp([log_evidence(more, labels, sizes, t, ess) for t in trees])
            out[r, c] = np.log((n[c] + 1.0) / (n.sum() + 2.0)) + after - before
    return np.exp(out - logsumexp(out, axis=1, keepdims=True))
