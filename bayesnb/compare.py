"""Side-by-side comparison of methods and specifications on the same data splits.

``compare`` answers "what does the Bayesian treatment buy me on my data?": every method (or
named model) is fitted and scored on the same folds, and the table reports each metric's mean
and spread over folds. Zero probabilities are reported honestly: under ``method="ml"`` (and
``"map"`` where a prior's concentration is 1, which makes MAP equal ML) a test row whose true
class has probability 0 has infinite log loss, and that is what the table shows (with the count
of such rows), rather than a clipped number; :func:`zero_probability_note` says which models did
it on the data at hand. Times are taken after a warm-up run, with JAX's compilation apart
(``compile_s``), and :func:`calibration_table` gives the bins behind the ECE as data.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from scipy.special import logsumexp
from sklearn.base import clone
from sklearn.model_selection import StratifiedKFold
from sklearn.utils import _safe_indexing

from ._progress import progress_bar
from .estimator import METHODS as METHODS_ALL
from .estimator import NaiveBayes
from .families.categorical import UnseenCategoryWarning

if TYPE_CHECKING:
    from ._typing import ArrayLike, Data, Features

METRICS = ("accuracy", "log_loss", "brier", "ece", "entropy", "fit_s", "predict_s")

#: the clock of the timings (a name of this module, so tests can give it a fake one)
_clock = time.perf_counter

#: why each method can put probability 0 on a true class (said only for methods that did)
_ZERO_REASONS = {
    "ml": "ML estimates a value (or class) a training fold never showed at probability 0",
    "map": "MAP does the same wherever the prior's mode leaves a zero count at zero (a "
           "Dirichlet or Beta alpha of 1, a Gamma shape of 1: there MAP equals ML)",
}


def calibration_table(proba: np.ndarray, true_codes: np.ndarray, n_bins: int = 10
                      ) -> pd.DataFrame:
    r"""The table behind the expected calibration error: per confidence bin, how many rows,
    their mean predicted probability and how often the prediction was right.

    The confidence of a row is its largest class probability :math:`\hat p_i = \max_c p(c
    \mid x_i)`, and bin :math:`b = \min(\lfloor n_{bins} \hat p_i \rfloor, n_{bins} - 1)`
    (equal-width bins of [0, 1], the top one closed). A row with no defined posterior (every
    probability 0 or NaN, possible under ML) has confidence 0 and counts as wrong.

    Parameters
    ----------
    proba : (n, K) class probabilities.
    true_codes : (n,) index of each row's true class in the columns of ``proba``.
    n_bins : number of bins.

    Returns
    -------
    DataFrame
        Indexed by ``bin`` (all ``n_bins``, empty ones included) with columns ``lower``,
        ``upper`` (the bin's edges), ``count``, ``mean_predicted`` (mean confidence),
        ``observed`` (fraction predicted right; NaN in an empty bin). The expected
        calibration error is :math:`\sum_b \frac{count_b}{n} |observed_b -
        mean\_predicted_b|` (:func:`expected_calibration_error`).

    Examples
    --------
    Four rows, confidences 0.9, 0.8, 0.7, 0.6, the second predicted wrong:

    >>> import numpy as np
    >>> from bayesnb.compare import calibration_table
    >>> proba = np.array([[0.9, 0.1], [0.8, 0.2], [0.3, 0.7], [0.6, 0.4]])
    >>> calibration_table(proba, np.array([0, 1, 1, 0]), n_bins=5)
         lower  upper  count  mean_predicted  observed
    bin
    0      0.0    0.2      0             NaN       NaN
    1      0.2    0.4      0             NaN       NaN
    2      0.4    0.6      0             NaN       NaN
    3      0.6    0.8      2            0.65       1.0
    4      0.8    1.0      2            0.85       0.5
    """
    proba = np.asarray(proba, dtype=float)
    true_codes = np.asarray(true_codes)
    defined = np.nan_to_num(proba, nan=0.0).sum(axis=1) > 0
    safe = np.nan_to_num(proba, nan=0.0)
    confidence = np.where(defined, safe.max(axis=1), 0.0)
    correct = defined & (safe.argmax(axis=1) == true_codes)
    bins = np.minimum((confidence * n_bins).astype(int), n_bins - 1)
    count = np.bincount(bins, minlength=n_bins)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_predicted = np.bincount(bins, confidence, minlength=n_bins) / count
        observed = np.bincount(bins, correct.astype(float), minlength=n_bins) / count
    edges = np.linspace(0.0, 1.0, n_bins + 1)
    return pd.DataFrame({"lower": edges[:-1], "upper": edges[1:], "count": count,
                         "mean_predicted": mean_predicted, "observed": observed},
                        index=pd.RangeIndex(n_bins, name="bin"))


def expected_calibration_error(table: pd.DataFrame) -> float:
    """ECE from a :func:`calibration_table`: the count-weighted mean of
    ``|observed - mean_predicted|`` over the non-empty bins.

    Examples
    --------
    >>> import numpy as np
    >>> from bayesnb.compare import calibration_table, expected_calibration_error
    >>> proba = np.array([[0.9, 0.1], [0.8, 0.2], [0.3, 0.7], [0.6, 0.4]])
    >>> table = calibration_table(proba, np.array([0, 1, 1, 0]), n_bins=5)
    >>> round(expected_calibration_error(table), 4)  # 2/4 |1 - 0.65| + 2/4 |0.5 - 0.85|
    0.35"""
    full = table[table["count"] > 0]
    n = table["count"].sum()
    return float(np.sum(full["count"] * np.abs(full["observed"] - full["mean_predicted"])) / n)


def zero_probability_note(table: pd.DataFrame) -> str | None:
    """The footnote to a :func:`compare` table about zero probabilities, from what happened:
    which models gave a test row's true class probability 0 on this data (None if none)."""
    counts = table["zero_prob_rows"]
    hit = counts[counts.fillna(0) > 0]
    if hit.empty:
        return None
    said = ", ".join(f"{name} ({int(n)} rows)" for name, n in hit.items())
    note = (f"zero_prob_rows: test rows whose true class got probability 0 (infinite log "
            f"loss); on this data: {said}.")
    reasons = [_ZERO_REASONS[name] for name in hit.index if name in _ZERO_REASONS]
    if reasons:
        note += " " + "; ".join(reasons) + "."
    clean = [str(name) for name, n in counts.items() if n == 0]
    if clean:
        note += f" None under {', '.join(clean)}."
    return note


def classification_metrics(log_joint: np.ndarray, true_codes: np.ndarray,
                           n_bins: int = 10) -> dict:
    """Metrics from ``(n, K)`` log p(x, c) scores and the true class codes.

    Rows where every class has probability zero (possible under ML) have no defined posterior:
    they count as wrong, with infinite log loss, and are reported in ``undefined_rows``.

    Examples
    --------
    The log loss is scikit-learn's:

    >>> import numpy as np
    >>> from sklearn.metrics import log_loss
    >>> from bayesnb.compare import classification_metrics
    >>> proba = np.array([[0.9, 0.1], [0.8, 0.2], [0.3, 0.7], [0.6, 0.4]])
    >>> true = np.array([0, 1, 1, 0])
    >>> metrics = classification_metrics(np.log(proba), true)
    >>> for name, value in metrics.items():
    ...     print(name, round(value, 4))
    accuracy 0.75
    log_loss 0.6456
    brier 0.45
    ece 0.25
    entropy 0.5273
    zero_prob_rows 0
    undefined_rows 0
    >>> round(log_loss(true, proba), 4)
    0.6456
    """
    norm = logsumexp(log_joint, axis=1, keepdims=True)
    undefined = ~np.isfinite(norm[:, 0])
    with np.errstate(invalid="ignore"):
        log_post = np.where(undefined[:, None], -np.inf, log_joint - norm)
    prob = np.exp(log_post)
    n = len(true_codes)
    rows = np.arange(n)
    pred = np.argmax(log_post, axis=1)
    correct = (pred == true_codes) & ~undefined
    onehot = np.zeros_like(prob)
    onehot[rows, true_codes] = 1.0
    ece = expected_calibration_error(calibration_table(prob, true_codes, n_bins))
    with np.errstate(divide="ignore", invalid="ignore"):
        entropy = -np.sum(np.where(prob > 0, prob * log_post, 0.0), axis=1)
    return {
        "accuracy": float(correct.mean()),
        "log_loss": float(-np.mean(log_post[rows, true_codes])),
        "brier": float(np.mean(np.sum((prob - onehot) ** 2, axis=1))),
        "ece": float(ece),
        "entropy": float(np.mean(entropy)),
        "zero_prob_rows": int(np.sum(~np.isfinite(log_post[rows, true_codes]))),
        "undefined_rows": int(undefined.sum()),
    }


def compare(X: Data, y: ArrayLike, methods: Iterable[str] = ("ml", "map", "mean", "bayes"), *,
            features: Features = None, models: Mapping[str, NaiveBayes] | None = None,
            cv: int = 5, split: tuple[ArrayLike, ArrayLike] | None = None,
            random_state: int = 0, progress: bool = False, warm_up: bool = True,
            n_bins: int = 10, **params: Any) -> pd.DataFrame:
    """Fit and score every method (or named model) on the same folds.

    Parameters
    ----------
    X, y : training data (array-like or DataFrame, labels).
    methods : the ``method`` values to compare, each on ``NaiveBayes(features, **params)``.
    models : mapping {name: NaiveBayes}, optional
        Compare whole specifications instead of (or as well as) methods.
    cv : int, default=5
        Stratified K-fold with shuffling (``random_state``).
    split : (train_index, test_index), optional
        One given split instead of cross-validation.
    progress : bool, default=False
        Show a progress bar (tqdm) over models x folds.
    warm_up : bool, default=True
        Fit and predict each model once on the first fold before the timed runs, so that
        ``fit_s`` and ``predict_s`` time the computation and not JAX's compilation (which is
        reported as ``compile_s``). Costs one more fit per model (a second NUTS run under
        ``mcmc``).
    n_bins : int, default=10
        Confidence bins of the ECE and of the calibration table.
    **params
        Settings of every ``NaiveBayes`` compared. Rows whose label is missing are left out of
        every fold under ``missing_label="drop"`` (a ``MissingLabelWarning`` says how many),
        and refused otherwise: each row is scored against its label.

    Returns
    -------
    DataFrame
        One row per model; for every metric its mean over folds and ``<metric>_sd``, plus
        ``zero_prob_rows`` (test rows whose true class got probability 0, summed over folds) and
        ``error`` (the message when a model could not be fitted, e.g. an undefined ML variance).
        ``compile_s`` is the first (cold) fit and prediction on fold 1 less the same timed
        warm: JAX compilation and first-call set-up. Compiled kernels are shared by models of
        the same shapes, so the first model of a kind pays for those after it; timing noise can
        make the difference slightly negative, and it is then shown as 0. Without ``warm_up``
        it is NaN and the first fold's times include compilation.

        ``table.attrs["calibration"]`` is the calibration table as data: per model and
        confidence bin, :func:`calibration_table` of the test rows of every fold together
        (columns ``model, bin, lower, upper, count, mean_predicted, observed``); the ``ece``
        column is the mean of the per-fold ECEs of the same bins.
        :func:`zero_probability_note` turns the table into its footnote.
        ``table.attrs["evaluation"]`` says in words which rows were scored (e.g. "5-fold
        stratified CV (random_state=0): the out-of-fold predictions of all 891 rows"), for
        the header of a table or the title of a plot drawn from it.

    Examples
    --------
    PlayTennis in 3 folds: ML, and MAP under flat priors (where it is ML), give 10 of the 14
    held-out days probability 0 on their true class; the smoothed methods give none.

    >>> from bayesnb.compare import compare, zero_probability_note
    >>> from bayesnb.datasets import load_playtennis
    >>> days, play = load_playtennis()
    >>> table = compare(days, play, cv=3)
    >>> table[["accuracy", "log_loss", "brier", "zero_prob_rows"]].round(3)
           accuracy  log_loss  brier  zero_prob_rows
    model
    ml        0.300       inf  1.038              10
    map       0.300       inf  1.038              10
    mean      0.567     0.881  0.635               0
    bayes     0.567     0.881  0.635               0
    >>> print(zero_probability_note(table))
    zero_prob_rows: test rows whose true class got probability 0 (infinite log loss); ...
    """
    return _compare(X, y, methods, features=features, models=models, cv=cv, split=split,
                    random_state=random_state, progress=progress, warm_up=warm_up,
                    n_bins=n_bins, **params)[0]


def _labelled(X, y, missing_label) -> tuple:
    """``(X, y)`` without the rows of missing labels under ``missing_label="drop"`` (said in
    a warning), which a comparison cannot score; refused otherwise, naming the setting."""
    from ._missing_labels import MissingLabelWarning, keep_rows, missing_labels

    missing = missing_labels(y)
    if missing is None or not missing.any():
        return X, y
    n, first = int(missing.sum()), int(np.argmax(missing))
    what = f"y has {n} missing label(s) (first at row {first})"
    if missing_label != "drop":
        raise ValueError(f"{what}; compare scores every row against its label: "
                         f"missing_label='drop' leaves such rows out.")
    if missing.all():
        raise ValueError(f"{what}: every label is missing, so missing_label='drop' leaves no "
                         f"row.")
    warnings.warn(f"{what}: missing_label='drop' leaves these {n} row(s) out of every fold.",
                  MissingLabelWarning, stacklevel=4)
    X, y, _ = keep_rows(X, y, None, ~missing)
    return X, y


def _compare(X, y, methods, *, features, models, cv, split, random_state, progress, warm_up,
             n_bins, **params) -> tuple[pd.DataFrame, dict]:
    """:func:`compare`'s table, and per model that was scored on every fold the pooled
    ``(proba, true_codes)`` of the test rows of all folds (the rows of its calibration
    table), for a reliability diagram of the same evaluation."""
    methods = list(methods)
    unknown = [m for m in methods if m not in METHODS_ALL]
    if unknown:
        raise ValueError(f"method must be one of {METHODS_ALL}, got {unknown[0]!r}.")
    candidates: dict[str, NaiveBayes] = {
        m: NaiveBayes(features, method=m, **params) for m in methods}
    candidates.update(models or {})
    X, y = _labelled(X, y, params.get("missing_label"))
    y_arr = np.asarray(y)
    if split is not None:
        folds = [tuple(np.asarray(s) for s in split)]
        evaluation = f"one given split: {len(folds[0][1])} test rows"
    else:
        folds = list(StratifiedKFold(cv, shuffle=True, random_state=random_state)
                     .split(np.zeros(len(y_arr)), y_arr))
        evaluation = (f"{cv}-fold stratified CV (random_state={random_state}): the "
                      f"out-of-fold predictions of all {len(y_arr)} rows")

    def take(idx):  # rows by position: a DataFrame's, a sparse matrix's (as sparse), ...
        return _safe_indexing(X, idx)

    def fit_predict(model, train, test):
        start = _clock()
        model.fit(take(train), y_arr[train])
        middle = _clock()
        log_joint = model.predict_joint_log_proba(take(test))
        return log_joint, middle - start, _clock() - middle

    rows, calibration, pooled_proba, fitted = [], [], {}, {}
    unseen_fits, n_fits = [], 0  # per fit with an unseen level, its first message
    bar = progress_bar(len(candidates) * len(folds), progress, "compare")
    for name, template in candidates.items():
        per_fold, probas, error, compile_s = [], [], "", np.nan
        for i, (train, test) in enumerate(folds):
            bar.update(1)
            n_fits += 1
            unseen_values: list = []
            try:
                with warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter("always", UnseenCategoryWarning)
                    if warm_up and i == 0:  # the cold run compiles; the timed one is warm
                        _, cold_fit, cold_predict = fit_predict(clone(template), train, test)
                    model = clone(template)
                    log_joint, fit_s, predict_s = fit_predict(model, train, test)
            except ValueError as err:
                error = str(err)
                break
            finally:
                _pass_on(caught, unseen_values)
                unseen_fits += unseen_values[:1]
            if warm_up and i == 0:
                compile_s = max(cold_fit + cold_predict - fit_s - predict_s, 0.0)
            codes = np.searchsorted(model.classes_, y_arr[test])
            unseen = (codes >= len(model.classes_)) | (model.classes_[
                np.minimum(codes, len(model.classes_) - 1)] != y_arr[test])
            if unseen.any():
                error = f"test label {y_arr[test][unseen][0]!r} absent from a training fold"
                break
            per_fold.append({**classification_metrics(log_joint, codes, n_bins),
                             "fit_s": fit_s, "predict_s": predict_s})
            probas.append((_posterior(log_joint), codes))
        row = {"model": name}
        if error:
            row.update({m: np.nan for m in METRICS}, compile_s=np.nan, error=error)
        else:
            folds_df = pd.DataFrame(per_fold)
            for m in METRICS:
                values = folds_df[m].to_numpy()
                with np.errstate(invalid="ignore"):  # inf log loss has an undefined spread
                    row[m] = values.mean()
                    row[f"{m}_sd"] = values.std(ddof=1) if len(values) > 1 else 0.0
            row["compile_s"] = compile_s
            row["zero_prob_rows"] = int(folds_df["zero_prob_rows"].sum())
            row["error"] = ""
            pooled_proba[name] = (np.concatenate([p for p, _ in probas]),
                                  np.concatenate([c for _, c in probas]))
            fitted[name] = model
            pooled = calibration_table(*pooled_proba[name], n_bins)
            calibration.append(pooled.reset_index().assign(model=name))
        rows.append(row)
    bar.close()
    if unseen_fits:  # a fold's training rows may lack a rare level: one warning, not one a fit
        warnings.warn(f"compare: in {len(unseen_fits)} of {n_fits} fits (models x folds) a "
                      f"test value absent from that fold's training rows got the smoothed "
                      f"probability of a zero-count level (first: {unseen_fits[0]})",
                      UnseenCategoryWarning, stacklevel=3)
    table = pd.DataFrame(rows).set_index("model")
    ordered = [c for m in METRICS for c in (m, f"{m}_sd")] + [
        "compile_s", "zero_prob_rows", "error"]
    table = table.reindex(columns=ordered)
    columns = ["model", "bin", "lower", "upper", "count", "mean_predicted", "observed"]
    table.attrs["calibration"] = (pd.concat(calibration, ignore_index=True)[columns]
                                  if calibration else pd.DataFrame(columns=columns))
    table.attrs["identical"] = _identical_pairs({k: p for k, (p, _) in pooled_proba.items()},
                                                fitted)
    table.attrs["evaluation"] = evaluation
    return table, pooled_proba


#: probabilities closer than this on every test row are reported as the same predictions
#: (float32 kernels round the same number differently by ~1e-7 along different paths)
IDENTICAL_ATOL = 1e-6


def _identical_pairs(probas: dict, fitted: dict) -> list[dict]:
    """Pairs of models whose test-row probabilities agree on every row (within
    :data:`IDENTICAL_ATOL`), with the largest difference and the reason when it is known
    from the fitted specification (:func:`_why_identical`)."""
    names = list(probas)
    out = []
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            if probas[a].shape != probas[b].shape:
                continue
            diff = float(np.max(np.abs(probas[a] - probas[b]))) if probas[a].size else 0.0
            if diff <= IDENTICAL_ATOL:
                out.append({"models": (a, b), "max_difference": diff,
                            "reason": _why_identical(fitted[a], fitted[b])})
    return out


def _flat_prior(family) -> bool:
    """Dirichlet/Beta concentrations of exactly 1 (a flat prior: its mode adds no counts)."""
    keys = family.concentrations
    if not keys:
        return False
    try:
        return all(np.all(np.asarray(getattr(family, k), dtype=float) == 1.0) for k in keys)
    except (TypeError, ValueError):  # a hyperprior (a distribution): no fixed mode
        return False


def _why_identical(a, b) -> str | None:
    """Why two fitted NaiveBayes give the same probabilities, where the mathematics says so
    for their methods and families; None where the coincidence is specific to the data."""
    if a.get_params(deep=False).get("priors") or b.get_params(deep=False).get("priors"):
        return None
    methods = {a.method, b.method}
    families = [blk.family for blk in a.blocks_]
    same_spec = [type(f) for f in families] == [type(blk.family) for blk in b.blocks_]
    if not same_spec or a.feature_prior is not None or b.feature_prior is not None:
        return None
    class_flat = a.class_prior is not None or np.all(np.asarray(a._class_alpha_array()) == 1.0)
    if methods == {"ml", "map"} and class_flat and all(map(_flat_prior, families)):
        return ("MAP under flat priors (Dirichlet/Beta concentration 1 on every column, "
                "class_alpha 1) is ML: the prior's mode adds alpha - 1 = 0 pseudo-counts")
    if methods == {"mean", "bayes"} and all(f.predictive_is_plug_in for f in families):
        kinds = " and ".join(sorted({type(f).__name__ for f in families}))
        return (f"for {kinds} columns the exact posterior predictive of a row is the "
                "plug-in of the posterior means, so 'bayes' predicts as 'mean'")
    return None


def identical_note(table: pd.DataFrame) -> list[str]:
    """The footnote lines to a :func:`compare` table about models that gave the same
    probabilities on every test row (from ``table.attrs["identical"]``), each with its
    reason where one is known; an empty list if none coincide."""
    lines = []
    for pair in table.attrs.get("identical", []):
        a, b = pair["models"]
        diff = pair["max_difference"]
        said = ("identical probabilities" if diff == 0 else
                f"the same probabilities (largest difference {diff:.1g})")
        line = f"{a} = {b}: {said} on every test row, so every metric is the same"
        lines.append(line + (f"; {pair['reason']}." if pair["reason"] else
                             " on this data (not a general identity)."))
    return lines


def _posterior(log_joint: np.ndarray) -> np.ndarray:
    """p(c | x) from log p(x, c); rows with no defined posterior are all zeros."""
    norm = logsumexp(log_joint, axis=1, keepdims=True)
    with np.errstate(invalid="ignore"):
        return np.where(np.isfinite(norm), np.exp(log_joint - norm), 0.0)


def _pass_on(caught, unseen: list) -> None:
    """Warnings caught around one refit: unseen-category ones are collected in ``unseen``
    (reported once), the others are warned again."""
    for w in caught:
        if issubclass(w.category, UnseenCategoryWarning):
            unseen.append(str(w.message))
        else:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)


def learning_curves(X: Data, y: ArrayLike, methods: Iterable[str] = ("ml", "map", "mean", "bayes"),
                    *, train_sizes: Iterable[int] = (10, 20, 40, 80, 160), repeats: int = 5,
                    test_size: float | int = 0.3, features: Features = None,
                    random_state: int = 0, progress: bool = False,
                    **params: Any) -> pd.DataFrame:
    """The comparison metrics against training-set size, where small-data differences between
    ML, MAP and Bayes show.

    One stratified test split (``test_size``) is held out; for each size, ``repeats`` random
    training subsets of that size are drawn from the rest.

    Returns
    -------
    DataFrame
        Tidy, one row per ``n_train, method, metric``, with

        - ``mean``, ``sd``: over the repeats that were fitted and scored (``inf`` when one of
          them is infinite, whose ``sd`` is then NaN); ``median``, ``q25``, ``q75``: their
          median and quartiles (:func:`summarise_repeats`);
        - ``repeats``: repeats drawn; ``failed``: those where the method could not be fitted
          or could not score the test rows (e.g. an ML variance from a single row, or a test
          value ML gives probability zero in every class), left out of ``mean``;
          ``failure``: the first such message;
        - ``infinite``: repeats whose value is infinite (a true class of probability 0);
        - ``unscored_rows``: test rows, summed over repeats, whose class was absent from the
          training subset (no model can score them; left out of the metrics).

        ``curves.attrs["evaluation"]`` says in words which rows were scored, for a plot's
        caption.

    A test value absent from a small training subset is scored as ``Categorical(unseen=...)``
    says; its warnings are gathered into one :class:`UnseenCategoryWarning` at the end.

    Examples
    --------
    On 10 Titanic passengers ML cannot score a class of travel it has not seen; the exact
    predictive can:

    >>> import bayesnb as bnb
    >>> from bayesnb.compare import learning_curves
    >>> from bayesnb.datasets import load_titanic
    >>> X, y = load_titanic()
    >>> curves = learning_curves(X, y, methods=("ml", "bayes"), train_sizes=(10, 200), repeats=3,
    ...                          features=bnb.Categorical(unseen="smooth"))
    >>> log_loss = curves[curves["metric"] == "log_loss"]
    >>> log_loss.pivot(index="n_train", columns="method", values="mean").round(3)
    method   bayes    ml
    n_train
    10       0.606   NaN
    200      0.517  0.52
    >>> log_loss.pivot(index="n_train", columns="method", values="failed")
    method   bayes  ml
    n_train
    10           0   3
    200          0   0
    """
    from sklearn.model_selection import train_test_split

    y_arr = np.asarray(y)
    index = np.arange(len(y_arr))
    pool, test = train_test_split(index, test_size=test_size, stratify=y_arr,
                                  random_state=random_state)
    rng = np.random.default_rng(random_state)

    def take(idx):  # rows by position: a DataFrame's, a sparse matrix's (as sparse), ...
        return _safe_indexing(X, idx)

    methods = list(methods)
    metrics = ["accuracy", "log_loss", "brier", "ece", "entropy"]
    records, unseen = [], []
    bar = progress_bar(len(train_sizes) * repeats * len(methods), progress, "learning curves")
    for n in train_sizes:
        if n > len(pool):
            raise ValueError(f"train size {n} exceeds the {len(pool)} rows left after the "
                             f"test split.")
        for r in range(repeats):
            train = rng.choice(pool, size=n, replace=False)
            for method in methods:
                bar.update(1)
                model = NaiveBayes(features, method=method, **params)
                record = {"n_train": n, "method": method, "repeat": r}
                try:
                    with warnings.catch_warnings(record=True) as caught:
                        warnings.simplefilter("always", UnseenCategoryWarning)
                        model.fit(take(train), y_arr[train])
                        log_joint = model.predict_joint_log_proba(take(test))
                except ValueError as err:
                    records.append({**record, "failed": 1, "failure": str(err),
                                    "unscored_rows": 0})
                    continue
                finally:
                    _pass_on(caught, unseen)
                known = np.isin(y_arr[test], model.classes_)
                codes = np.searchsorted(model.classes_, y_arr[test][known])
                m = classification_metrics(log_joint[known], codes)
                records.append({**record, "failed": 0, "failure": None,
                                "unscored_rows": int((~known).sum()),
                                **{k: m[k] for k in metrics}})
    bar.close()
    if unseen:  # small subsets lack rare levels by design: one warning, not one per refit
        warnings.warn(f"learning_curves: in {len(unseen)} of {len(records)} refits a test "
                      f"value absent from that training subset got the smoothed probability "
                      f"of a zero-count level (first: {unseen[0]})", UnseenCategoryWarning,
                      stacklevel=2)
    out = summarise_repeats(pd.DataFrame(records), metrics)
    size = f"{test_size:.0%}" if isinstance(test_size, float) else f"{len(test)}-row"
    out.attrs["evaluation"] = (f"test rows: one stratified {size} hold-out split ({len(test)} "
                               f"rows, random_state={random_state}); training rows: {repeats} "
                               f"random subsets of each size from the others")
    return out


def summarise_repeats(records: pd.DataFrame, metrics) -> pd.DataFrame:
    """The tidy table of :func:`learning_curves` from one record per repeat and method.

    Parameters
    ----------
    records : DataFrame
        One row per (``n_train``, ``method``, ``repeat``) with ``failed`` (1 where the method
        could not be fitted or scored; its metrics NaN), ``failure`` (its message or None),
        ``unscored_rows`` and one column per metric.
    metrics : sequence of str
        The metric columns to summarise.

    Returns
    -------
    DataFrame
        One row per ``n_train, method, metric`` with, over the repeats that did not fail,
        ``mean`` and ``sd``, ``median`` and the quartiles ``q25``, ``q75`` (empirical
        quantiles: observed values, never interpolated, so an infinite value stays
        infinite and never makes a NaN); ``repeats``, ``failed``, ``infinite`` (repeats with
        an infinite value), ``unscored_rows`` and ``failure`` (the first message).
    """
    raw = records.copy()
    for k in metrics:  # every repeat failed: the metric columns were never made
        if k not in raw:
            raw[k] = np.nan
    long = raw.melt(id_vars=["n_train", "method", "repeat", "failed", "failure",
                             "unscored_rows"], value_vars=list(metrics), var_name="metric")
    with np.errstate(invalid="ignore"):
        out = long.groupby(["n_train", "method", "metric"], sort=True).agg(
            mean=("value", "mean"), sd=("value", "std"), median=("value", "median"),
            q25=("value", lambda v: _observed_quantile(v, 0.25)),
            q75=("value", lambda v: _observed_quantile(v, 0.75)),
            repeats=("repeat", "size"), failed=("failed", "sum"),
            infinite=("value", lambda v: int(np.isinf(v).sum())),
            unscored_rows=("unscored_rows", "sum"), failure=("failure", "first"))
    return out.reset_index()


def _observed_quantile(values: pd.Series, q: float) -> float:
    """The ``q`` quantile of the non-missing values as one of them (NumPy's inverted CDF:
    interpolating between a finite and an infinite value would give NaN)."""
    values = values.dropna().to_numpy(dtype=float)
    return float(np.quantile(values, q, method="inverted_cdf")) if values.size else np.nan
