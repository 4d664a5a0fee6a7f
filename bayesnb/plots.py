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

    ``site`` is a parameter site (``"bernoulli.theta"``, ``"categorical.Outlook.probs"``,
    ``"class_probs"``, ...; see ``bayesnb.model``) and ``index`` picks one entry, e.g.
    ``(class, column)`` or ``(class, level)``.
    """
    fig, (ax,) = _axes(ax)
    if draws is None:
        draws = clf.draws_ if hasattr(clf, "draws_") else clf.sample_posterior(num_draws, seed)
    if site not in draws:
        raise ValueError(f"unknown parameter site {site!r} (sites: {sorted(draws)}).")
    values = np.asarray(draws[site]).reshape((-1,) + np.shape(draws[site])[2:])
    values = values[(slice(None), *index)]
    ax.hist(values, bins=50, density=True, alpha=0.6, label="posterior draws")
    for method, style in (("ml", "--"), ("map", ":"), ("mean", "-")):
        point = plug_in_value(clf, site, index, method)
        if point is not None and np.isfinite(point):
            ax.axvline(point, linestyle=style, color="k", label=f"{method.upper()} {point:.3g}")
    ax.set(xlabel=_entry_label(clf, site, index), ylabel="density",
           title="Posterior and point estimates")
    ax.legend()
    return fig


def _entry_label(clf, site, index):
    """``"categorical.Outlook.probs[No, Rain]"``: the entry named by its ArviZ coordinates."""
    from .inference import dims_and_coords

    dims, coords = dims_and_coords(clf.fitted_)
    site_dims = dims.get(site, ())
    if not index or len(index) != len(site_dims):
        return f"{site}{list(index)}" if index else site
    names = (str(coords[d][i]) for d, i in zip(site_dims, index, strict=True))
    return f"{site}[{', '.join(names)}]"


def plug_in_value(clf, site: str, index: tuple, method: str):
    """The ``method`` plug-in estimate of one parameter entry (None where it is undefined)."""
    from ._classes import class_log_prior
    from .model import parameter_sites

    try:
        if site == "class_probs":
            lp = class_log_prior(clf.class_count_, clf.class_alpha, clf._class_prior_array(),
                                 method)
            return float(np.exp(lp[index]))
        if site in parameter_sites(clf.blocks_):
            i, key = parameter_sites(clf.blocks_)[site]
            block = clf.blocks_[i]
            family = type(block.family)
            block.family.check_prior(block.prior, block.schema, method)
            table = family.estimate(block.prior, block.stats, method)
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
    raise ValueError(f"unknown parameter site {site!r} (sites: "
                     f"{['class_probs', *parameter_sites(clf.blocks_)]}).")


def density_plot(clf, column, X=None, y=None, *, bins=30, grid=512, ax=None):
    """Per-class densities of one numeric column over histograms of its training values, as R's
    ``plot(naive_bayes)`` draws them.

    A ``KernelDensity`` column draws its exact kernel density per class over histograms of the
    stored training sample (weighted, one per class); a ``Gaussian`` column draws
    N(mean, sd) from ``conditional_tables()`` (the current method's estimate) over histograms
    of ``X[column]`` by ``y`` when they are given. ``grid`` points span the data and three
    bandwidths (or sds) beyond.
    """
    from .families.kde import _group, column_log_density

    fig, (ax,) = _axes(ax, figsize=(6, 4))
    blocks = clf.blocks_
    where = [(i, b.schema.columns.index(column)) for i, b in enumerate(blocks)
             if column in b.schema.columns]
    if not where:
        raise ValueError(f"column {column!r} is not a column of this model.")
    i, j = where[0]
    block, classes = blocks[i], clf.classes_
    if block.family.name == "kde":
        table = clf._scorer().tables[i]
        samples = [_group(table, j, k, len(classes)) for k in range(len(classes))]
        spread = np.nanmax(table.bandwidth[:, j])
    elif block.family.name == "gaussian":
        frame = clf.conditional_tables()[column]
        samples = []
        if X is not None and y is not None:
            from ._blocks import raw_blocks

            values = block.family.encode(raw_blocks(clf.fitted_, X)[0][i], block.schema)[:, j]
            labels = np.asarray(y)
            samples = [(values[(labels == c) & ~np.isnan(values)],
                        np.ones(int(np.sum((labels == c) & ~np.isnan(values)))))
                       for c in classes]
        spread = float(frame["sd"].max())
    else:
        raise ValueError(f"column {column!r}: density_plot draws numeric columns "
                         f"(KernelDensity, Gaussian), not {type(block.family).__name__}.")
    seen = np.concatenate([v for v, _ in samples]) if samples else np.zeros(0)
    if block.family.name == "gaussian":
        seen = np.concatenate([seen, frame["mean"].to_numpy(dtype=float)])
    x = np.linspace(seen.min() - 3 * spread, seen.max() + 3 * spread, grid)
    if block.family.name == "kde":
        density = np.exp(column_log_density(table, j, x))
    else:
        mean, sd = (frame[c].to_numpy(dtype=float) for c in ("mean", "sd"))
        density = np.exp(-0.5 * ((x[:, None] - mean) / sd) ** 2) / (sd * np.sqrt(2 * np.pi))
    colours = [f"C{k % 10}" for k in range(len(classes))]
    data = np.concatenate([v for v, _ in samples]) if samples else np.zeros(0)
    edges = np.histogram_bin_edges(data, bins=bins) if data.size else bins  # shared by classes
    for k, c in enumerate(classes):
        if samples and len(samples[k][0]):
            ax.hist(samples[k][0], bins=edges, weights=samples[k][1], density=True, alpha=0.25,
                    color=colours[k])
        ax.plot(x, density[:, k], color=colours[k], label=str(c))
    kind = "kernel density" if block.family.name == "kde" else "Gaussian"
    ax.set(xlabel=str(column), ylabel="density", title=f"{column}: {kind} per class")
    ax.legend(title="class")
    return fig
