"""Side-by-side comparison of methods and specifications on the same data splits.

``compare`` answers "what does the Bayesian treatment buy me on my data?": every method (or
named model) is fitted and scored on the same folds, and the table reports each metric's mean
and spread over folds. Zero probabilities are reported honestly: under ``method="ml"`` a test row
whose true class has probability 0 has infinite log loss, and that is what the table shows (with
the count of such rows), rather than a clipped number.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping

import numpy as np
import pandas as pd
from scipy.special import logsumexp
from sklearn.base import clone
from sklearn.model_selection import StratifiedKFold

from ._progress import progress_bar
from .estimator import METHODS as METHODS_ALL
from .estimator import NaiveBayes

METRICS = ("accuracy", "log_loss", "brier", "ece", "entropy", "fit_s", "predict_s")


def classification_metrics(log_joint: np.ndarray, true_codes: np.ndarray,
                           n_bins: int = 10) -> dict:
    """Metrics from ``(n, K)`` log p(x, c) scores and the true class codes.

    Rows where every class has probability zero (possible under ML) have no defined posterior:
    they count as wrong, with infinite log loss, and are reported in ``undefined_rows``.
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
    confidence = prob.max(axis=1)
    bins = np.minimum((confidence * n_bins).astype(int), n_bins - 1)
    ece = sum(abs(correct[bins == b].mean() - confidence[bins == b].mean()) * np.mean(bins == b)
              for b in range(n_bins) if np.any(bins == b))
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


def compare(X, y, methods: Iterable[str] = ("ml", "map", "mean", "bayes"), *, features=None,
            models: Mapping[str, NaiveBayes] | None = None, cv: int = 5, split=None,
            random_state: int = 0, progress: bool = False, **params) -> pd.DataFrame:
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

    Returns
    -------
    DataFrame
        One row per model; for every metric its mean over folds and ``<metric>_sd``, plus
        ``zero_prob_rows`` (test rows whose true class got probability 0, summed over folds) and
        ``error`` (the message when a model could not be fitted, e.g. an undefined ML variance).
    """
    methods = list(methods)
    unknown = [m for m in methods if m not in METHODS_ALL]
    if unknown:
        raise ValueError(f"method must be one of {METHODS_ALL}, got {unknown[0]!r}.")
    candidates: dict[str, NaiveBayes] = {
        m: NaiveBayes(features, method=m, **params) for m in methods}
    candidates.update(models or {})
    y_arr = np.asarray(y)
    frame = X if isinstance(X, pd.DataFrame) else None
    if split is not None:
        folds = [tuple(np.asarray(s) for s in split)]
    else:
        folds = list(StratifiedKFold(cv, shuffle=True, random_state=random_state)
                     .split(np.zeros(len(y_arr)), y_arr))

    def take(idx):
        return frame.iloc[idx] if frame is not None else np.asarray(X)[idx]

    rows = []
    bar = progress_bar(len(candidates) * len(folds), progress, "compare")
    for name, template in candidates.items():
        per_fold, error = [], ""
        for train, test in folds:
            bar.update(1)
            model = clone(template)
            try:
                start = time.perf_counter()
                model.fit(take(train), y_arr[train])
                fit_s = time.perf_counter() - start
                start = time.perf_counter()
                log_joint = model.predict_joint_log_proba(take(test))
                predict_s = time.perf_counter() - start
            except ValueError as err:
                error = str(err)
                break
            codes = np.searchsorted(model.classes_, y_arr[test])
            unseen = (codes >= len(model.classes_)) | (model.classes_[
                np.minimum(codes, len(model.classes_) - 1)] != y_arr[test])
            if unseen.any():
                error = f"test label {y_arr[test][unseen][0]!r} absent from a training fold"
                break
            per_fold.append({**classification_metrics(log_joint, codes),
                             "fit_s": fit_s, "predict_s": predict_s})
        row = {"model": name}
        if error:
            row.update({m: np.nan for m in METRICS}, error=error)
        else:
            folds_df = pd.DataFrame(per_fold)
            for m in METRICS:
                values = folds_df[m].to_numpy()
                with np.errstate(invalid="ignore"):  # inf log loss has an undefined spread
                    row[m] = values.mean()
                    row[f"{m}_sd"] = values.std(ddof=1) if len(values) > 1 else 0.0
            row["zero_prob_rows"] = int(folds_df["zero_prob_rows"].sum())
            row["error"] = ""
        rows.append(row)
    bar.close()
    table = pd.DataFrame(rows).set_index("model")
    ordered = [c for m in METRICS for c in (m, f"{m}_sd")] + ["zero_prob_rows", "error"]
    return table.reindex(columns=ordered)


def learning_curves(X, y, methods: Iterable[str] = ("ml", "map", "mean", "bayes"), *,
                    train_sizes=(10, 20, 40, 80, 160), repeats: int = 5, test_size=0.3,
                    features=None, random_state: int = 0, progress: bool = False,
                    **params) -> pd.DataFrame:
    """The comparison metrics against training-set size, where small-data differences between
    ML, MAP and Bayes show.

    One stratified test split (``test_size``) is held out; for each size, ``repeats`` random
    training subsets of that size are drawn from the rest. Returns a tidy DataFrame with
    columns ``n_train, method, metric, mean, sd, undefined`` (``undefined``: repeats where the
    method could not be fitted, e.g. an ML variance from a single row).
    """
    from sklearn.model_selection import train_test_split

    y_arr = np.asarray(y)
    index = np.arange(len(y_arr))
    pool, test = train_test_split(index, test_size=test_size, stratify=y_arr,
                                  random_state=random_state)
    rng = np.random.default_rng(random_state)
    frame = X if isinstance(X, pd.DataFrame) else None

    def take(idx):
        return frame.iloc[idx] if frame is not None else np.asarray(X)[idx]

    methods = list(methods)
    records = []
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
                try:
                    model.fit(take(train), y_arr[train])
                    log_joint = model.predict_joint_log_proba(take(test))
                except ValueError:
                    records.append({"n_train": n, "method": method, "repeat": r,
                                    "undefined": 1})
                    continue
                known = np.isin(y_arr[test], model.classes_)
                codes = np.searchsorted(model.classes_, y_arr[test][known])
                m = classification_metrics(log_joint[known], codes)
                records.append({"n_train": n, "method": method, "repeat": r, "undefined": 0,
                                **{k: m[k] for k in ("accuracy", "log_loss", "brier", "ece",
                                                     "entropy")}})
    bar.close()
    raw = pd.DataFrame(records)
    metrics = ["accuracy", "log_loss", "brier", "ece", "entropy"]
    long = raw.melt(id_vars=["n_train", "method", "repeat", "undefined"], value_vars=metrics,
                    var_name="metric")
    with np.errstate(invalid="ignore"):
        out = long.groupby(["n_train", "method", "metric"], sort=True).agg(
            mean=("value", "mean"), sd=("value", "std"), undefined=("undefined", "sum"))
    return out.reset_index()
