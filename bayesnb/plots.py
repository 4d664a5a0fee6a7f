"""Plots for comparing ML, MAP and Bayes (matplotlib: ``pip install bayesnb[plot]``).

Every function returns the matplotlib ``Figure`` (its axes are ``fig.axes``) and draws on a new
figure unless ``ax`` is given, so they compose and save headlessly (``fig.savefig``).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd


def _axes(ax, ncols=1, figsize=(5, 4)):
    import matplotlib.pyplot as plt

    if ax is not None:
        return ax.figure, [ax]
    fig, axes = plt.subplots(1, ncols, figsize=(figsize[0] * ncols, figsize[1]), squeeze=False)
    return fig, list(axes[0])


def reliability_diagram(y_true, probas: Mapping[str, np.ndarray], classes, *, n_bins=10,
                        ax=None):
    """Calibration of several models: per confidence bin, the accuracy of the predicted class
    against its mean predicted probability (the diagonal is perfect calibration).

    ``probas`` maps a model name to its ``(n, K)`` class probabilities, columns in ``classes``
    order.
    """
    fig, (ax,) = _axes(ax)
    y_true = np.asarray(y_true)
    edges = np.linspace(0, 1, n_bins + 1)
    ax.plot([0, 1], [0, 1], color="grey", linestyle=":", label="calibrated")
    for name, proba in probas.items():
        proba = np.asarray(proba)
        confidence = proba.max(axis=1)
        correct = np.asarray(classes)[proba.argmax(axis=1)] == y_true
        bins = np.clip(np.digitize(confidence, edges) - 1, 0, n_bins - 1)
        xs, ys = [], []
        for b in range(n_bins):
            inside = bins == b
            if inside.any():
                xs.append(confidence[inside].mean())
                ys.append(correct[inside].mean())
        ax.plot(xs, ys, marker="o", label=name)
    ax.set(xlabel="mean predicted probability", ylabel="observed accuracy", xlim=(0, 1),
           ylim=(0, 1), title="Reliability diagram")
    ax.legend()
    return fig


def learning_curves_plot(curves: pd.DataFrame, metrics=("accuracy", "log_loss", "brier")):
    """One panel per metric from :func:`bayesnb.compare.learning_curves`: mean +- sd against
    training-set size, one line per method (infinite log loss is drawn at the top edge)."""
    fig, axes = _axes(None, ncols=len(metrics))
    for ax, metric in zip(axes, metrics, strict=True):
        part = curves[curves["metric"] == metric]
        finite = part["mean"][np.isfinite(part["mean"])]
        top = finite.max() * 1.2 if len(finite) else 1.0
        for method, rows in part.groupby("method"):
            mean = rows["mean"].to_numpy()
            shown = np.where(np.isfinite(mean), mean, top)
            ax.plot(rows["n_train"], shown, marker="o", label=method)
            sd = np.nan_to_num(rows["sd"].to_numpy(), nan=0.0, posinf=0.0)
            ax.fill_between(rows["n_train"], shown - sd, shown + sd, alpha=0.15)
        ax.set(xscale="log", xlabel="training rows", ylabel=metric, title=metric)
    axes[0].legend()
    fig.tight_layout()
    return fig


def credible_intervals_plot(clf, X, *, class_label=None, interval=0.9, draws=None, ax=None,
                            num_draws=1000, seed=0):
    """Per row, p(class | x) with its central ``interval`` over the posterior of the
    parameters (``NaiveBayes.predict_uncertainty``), rows sorted by the predictive."""
    fig, (ax,) = _axes(ax, figsize=(7, 4))
    u = clf.predict_uncertainty(X, interval=interval, draws=draws, num_draws=num_draws,
                                seed=seed)
    k = 0 if class_label is None else list(clf.classes_).index(class_label)
    order = np.argsort(u["proba"][:, k])
    p, lo, hi = u["proba"][order, k], u["lower"][order, k], u["upper"][order, k]
    rows = np.arange(len(p))
    ax.vlines(rows, lo, hi, alpha=0.5, label=f"{interval:.0%} interval over the posterior")
    ax.plot(rows, p, ".", label="posterior predictive")
    ax.set(xlabel="row (sorted)", ylabel=f"p({clf.classes_[k]!s} | x)", ylim=(0, 1),
           title="Per-row uncertainty of the class probability")
    ax.legend()
    return fig


def posterior_density_plot(clf, site: str, index: tuple = (), *, draws=None, ax=None,
                           num_draws=4000, seed=0):
    """Density of one parameter's posterior draws (NUTS draws under ``method="mcmc"``, else
    exact conjugate draws), with the ML, MAP and posterior-mean plug-in values marked.

    ``site`` is a parameter site (``"bernoulli.theta"``, ``"categorical.0.probs"``,
    ``"class_probs"``, ...) and ``index`` picks one entry, e.g. ``(class, column)``.
    """
    fig, (ax,) = _axes(ax)
    if draws is None:
        draws = clf.draws_ if hasattr(clf, "draws_") else clf.sample_posterior(num_draws, seed)
    values = np.asarray(draws[site]).reshape((-1,) + np.shape(draws[site])[2:])
    values = values[(slice(None), *index)]
    ax.hist(values, bins=50, density=True, alpha=0.6, label="posterior draws")
    for method, style in (("ml", "--"), ("map", ":"), ("mean", "-")):
        point = plug_in_value(clf, site, index, method)
        if point is not None and np.isfinite(point):
            ax.axvline(point, linestyle=style, color="k", label=f"{method.upper()} {point:.3g}")
    ax.set(xlabel=f"{site}{list(index)}", ylabel="density", title="Posterior and point estimates")
    ax.legend()
    return fig


def plug_in_value(clf, site: str, index: tuple, method: str):
    """The ``method`` plug-in estimate of one parameter entry (None where it is undefined)."""
    from ._classes import class_log_prior
    from .model import block_sites

    try:
        if site == "class_probs":
            lp = class_log_prior(clf.class_count_, clf.class_alpha, clf._class_prior_array(),
                                 method)
            return float(np.exp(lp[index]))
        for block, prefix in zip(clf.blocks_, block_sites(clf.blocks_), strict=True):
            if not site.startswith(prefix + "."):
                continue
            family = type(block.family)
            block.family.check_prior(block.prior, block.schema, method)
            table = family.estimate(block.prior, block.stats, method)
            key = site[len(prefix) + 1:]
            if key == "theta":
                return float(np.exp(np.asarray(table.log_p)[index]))
            if key == "rate":
                return float(np.asarray(table.rate)[index])
            if key in ("mean", "precision"):
                return float(np.broadcast_to(np.asarray(getattr(table, key)),
                                             np.shape(table.mean))[index])
            if key == "probs":
                return float(np.exp(np.asarray(table.log_prob)[index]))
            if key.endswith(".probs"):
                j = int(key.split(".")[0])
                k, v = index
                return float(np.exp(np.asarray(table.log_prob)[k, int(table.offset[j]) + v]))
    except ValueError:  # e.g. MAP undefined under this prior
        return None
    raise ValueError(f"unknown parameter site {site!r}.")
