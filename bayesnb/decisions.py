r"""Decisions under a stated loss, with an optional reject option.

Given the predictive probabilities p(c | x) of a row and a loss matrix ``L`` whose entry
``L[c, a]`` is the loss of choosing class ``a`` when the true class is ``c``, the expected loss
of choosing ``a`` is

.. math::

    \rho(a \mid x) = \sum_c L[c, a]\, p(c \mid x),

and the Bayes decision is the ``a`` that minimises it. Ties, expected losses equal to within
their rounding, go to the more probable class, then to the first in ``classes_`` (a tie of the
exact sums may round either way). Under the 0-1 loss (``1 - I``) this is ``predict``. With a reject
cost ``r``, a row whose smallest expected loss exceeds ``r`` is not classified: it gets the
reject label (Chow's rule, Chow 1970; under the 0-1 loss: reject when max_c p(c | x) < 1 - r).

Losses may be negative (a gain written as a negative loss): only finiteness and the shape are
required. The probabilities are the estimator's own ``predict_proba`` (the exact predictive
under ``"bayes"``, the draws' average under ``"mcmc"``); the functions below are pure NumPy.

References
----------
Chow, C. K. (1970). On optimum recognition error and reject tradeoff. IEEE Trans. Inf.
Theory 16(1), 41-46.
"""

from __future__ import annotations

import numbers

import numpy as np
import pandas as pd


def loss_matrix(loss, classes) -> np.ndarray:
    """The loss as a float64 ``(K, K)`` array ``L[true, chosen]`` in the order of ``classes``.

    ``loss`` is an array-like in that order, or a DataFrame whose index (true class) and
    columns (chosen class) are the class labels, in any order (it is reordered). A missing or
    unknown label, a wrong shape or a value that is not a finite number is refused: text such
    as ``"5"``, a boolean or another object is not read as a number.

    Examples
    --------
    >>> import pandas as pd
    >>> from bayesnb.decisions import loss_matrix
    >>> frame = pd.DataFrame([[0, 5], [1, 0]], index=["yes", "no"], columns=["yes", "no"])
    >>> loss_matrix(frame, ["no", "yes"])  # reordered to classes_ = [no, yes]
    array([[0., 1.],
           [5., 0.]])
    """
    classes = np.asarray(classes).tolist()  # Python labels in messages, not np.str_
    k = len(classes)
    if isinstance(loss, pd.DataFrame):
        for axis, labels in (("index (true class)", loss.index), ("columns (chosen class)",
                                                                   loss.columns)):
            unknown = [c for c in labels if c not in classes]
            if unknown:
                raise ValueError(f"loss {axis} has label(s) {unknown[:5]} that are not classes "
                                 f"of the model {classes[:20]}.")
            missing = [c for c in classes if c not in list(labels)]
            if missing:
                raise ValueError(f"loss {axis} gives no entry for class(es) {missing[:5]}.")
            if len(set(labels)) != len(labels):
                raise ValueError(f"loss {axis} repeats a class label: {list(labels)[:20]}.")
        # by position: ``.loc`` reads a list of booleans (classes False, True) as a mask
        loss = loss.to_numpy(dtype=object)[np.ix_(loss.index.get_indexer(classes),
                                                  loss.columns.get_indexer(classes))]
    try:  # as Python objects: np.asarray would read "5" or True as a number
        cells = np.asarray(loss, dtype=object)
    except (TypeError, ValueError) as err:
        raise ValueError(f"loss must be a ({k}, {k}) array of numbers: {err}") from None
    if cells.shape != (k, k):
        raise ValueError(f"loss must have shape ({k}, {k}) (true class x chosen class, in the "
                         f"order of classes_ {classes[:20]}), got {cells.shape}.")
    for (i, j), value in np.ndenumerate(cells):
        if isinstance(value, bool | np.bool_) or not isinstance(value, numbers.Real):
            raise ValueError(f"loss must be a ({k}, {k}) array of numbers: loss[{classes[i]!r}, "
                             f"{classes[j]!r}] is {value!r} (a {type(value).__name__}); text "
                             "and booleans are not read as numbers (the 0-1 loss is "
                             "1 - np.eye(K)).")
    matrix = cells.astype(np.float64)
    bad = ~np.isfinite(matrix)
    if bad.any():
        i, j = np.argwhere(bad)[0]
        raise ValueError(f"loss[{classes[i]!r}, {classes[j]!r}] is {matrix[i, j]}: every loss "
                         f"must be a finite number.")
    return matrix


def expected_loss(proba: np.ndarray, loss: np.ndarray) -> np.ndarray:
    """``(n, K)`` expected loss of each choice: ``proba @ loss`` (``rho[i, a] = sum_c
    L[c, a] p(c | x_i)``), in float64.

    Examples
    --------
    >>> import numpy as np
    >>> from bayesnb.decisions import expected_loss
    >>> expected_loss(np.array([[0.7, 0.3]]), np.array([[0.0, 1.0], [5.0, 0.0]]))
    array([[1.5, 0.7]])
    """
    return np.asarray(proba, dtype=np.float64) @ loss


def _same_label(a, b) -> bool:
    try:
        return bool(a == b)
    except (TypeError, ValueError):  # an array or an incomparable object: not one label
        return False


def check_reject_cost(reject_cost) -> float | None:
    """``reject_cost`` as a float (or None): a finite real number."""
    if reject_cost is None:
        return None
    real = isinstance(reject_cost, numbers.Real) and not isinstance(reject_cost, bool)
    if not real or not np.isfinite(reject_cost):
        raise ValueError(f"reject_cost must be a finite number (the loss of not deciding), "
                         f"got {reject_cost!r}.")
    return float(reject_cost)


def decide(proba: np.ndarray, loss: np.ndarray, classes, reject_cost=None,
           reject_label=None) -> np.ndarray:
    """Per row the class of least expected loss (ties within rounding: the more probable,
    then the first), or ``reject_label`` where that least expected loss exceeds
    ``reject_cost``.

    Examples
    --------
    >>> import numpy as np
    >>> from bayesnb.decisions import decide
    >>> proba = np.array([[0.7, 0.3], [0.95, 0.05]])
    >>> loss = np.array([[0.0, 1.0], [5.0, 0.0]])  # missing a true "b" costs 5
    >>> decide(proba, loss, np.array(["a", "b"]))
    array(['b', 'a'], dtype='<U1')
    >>> decide(proba, loss, np.array(["a", "b"]), reject_cost=0.5, reject_label="?")
    array(['?', 'a'], dtype=object)
    """
    cost = check_reject_cost(reject_cost)
    proba = np.asarray(proba, dtype=np.float64)
    rho = expected_loss(proba, loss)
    classes = np.asarray(classes)
    if cost is not None and any(_same_label(reject_label, c) for c in classes.tolist()):
        raise ValueError(f"reject_label={reject_label!r} is a class label: a rejected row "
                         f"could not be told from that class; choose another label.")
    # each expected loss sums its K terms in its own order: equal sums differ by rounding,
    # bounded per row by the size of its terms (a huge loss of an improbable class is no term)
    sizes = np.abs(proba) @ np.abs(np.asarray(loss, dtype=np.float64))
    rounding = 2 * len(classes) * np.finfo(np.float64).eps * np.max(
        sizes, axis=1, keepdims=True, initial=0.0)
    tied = rho <= rho.min(axis=1, keepdims=True, initial=np.inf) + rounding
    chosen = classes[np.argmax(np.where(tied, proba, -np.inf), axis=1)]
    if cost is None:
        return chosen
    reject = rho.min(axis=1, initial=np.inf) > cost
    out = chosen.astype(object)
    out[reject] = reject_label
    return out
