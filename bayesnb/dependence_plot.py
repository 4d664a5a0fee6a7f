"""A heat map of the pairwise log Bayes factors of :func:`bayesnb.analysis.dependence`
(matplotlib: ``pip install bayesnb[plot]``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure


def dependence_matrix(report: pd.DataFrame) -> pd.DataFrame:
    """The report as a symmetric column-by-column matrix of log Bayes factors (NaN on the
    diagonal and for skipped pairs). Column labels are kept; a Multinomial block's tuple is
    one label."""
    names: list = []
    for c in [*report.attrs.get("columns", []), *report["column_a"], *report["column_b"]]:
        if c not in names:
            names.append(c)
    index = {c: i for i, c in enumerate(names)}
    m = np.full((len(names), len(names)), np.nan)
    for a, b, v in zip(report["column_a"], report["column_b"], report["log_bayes_factor"],
                       strict=True):
        m[index[a], index[b]] = m[index[b], index[a]] = v
    labels = [str(c) for c in names]
    return pd.DataFrame(m, index=labels, columns=labels)


def dependence_heatmap(report: pd.DataFrame, *, ax: Axes | None = None,
                       annotate: bool | None = None, limit: float | None = None) -> Figure:
    """Heat map of pairwise log Bayes factors: red favours "dependent given the class", blue
    "independent", white is even; grey cells have no factor (the diagonal, skipped pairs).

    The colour scale is symmetric around 0 and clipped at ``limit`` (default: the largest
    absolute factor, at most 50, so one copied column does not wash out the rest; the
    colour bar says so). Values are written in the cells when ``annotate`` (default: up to 12
    columns). Returns the matplotlib ``Figure``.

    Examples
    --------
    >>> import bayesnb as bnb
    >>> from bayesnb.analysis import dependence
    >>> from bayesnb.datasets import load_playtennis
    >>> days, play = load_playtennis()
    >>> doubled = days.assign(Windy=days["Wind"])
    >>> report = dependence(bnb.NaiveBayes(), doubled, play)
    >>> fig = bnb.dependence_heatmap(report)
    >>> fig.axes[0].get_title()
    'Pairwise dependence given the class'
    >>> [label.get_text() for label in fig.axes[0].get_yticklabels()]
    ['Outlook', 'Temperature', 'Humidity', 'Wind', 'Windy']
    >>> max(float(cell.get_text()) for cell in fig.axes[0].texts)  # Wind and its copy
    6.0
    """
    import matplotlib.pyplot as plt
    from matplotlib.colors import TwoSlopeNorm

    needed = {"column_a", "column_b", "log_bayes_factor"}
    if not isinstance(report, pd.DataFrame) or not needed <= set(report.columns):
        raise ValueError("report must be the DataFrame of bayesnb.analysis.dependence (columns "
                         "column_a, column_b, log_bayes_factor).")
    if limit is not None and not (np.isfinite(limit) and limit > 0):
        raise ValueError(f"limit must be a positive number (the colour scale's end), got "
                         f"{limit!r}.")
    matrix = dependence_matrix(report)
    values = matrix.to_numpy()
    finite = values[np.isfinite(values)]
    if limit is None:
        limit = float(min(50.0, np.max(np.abs(finite)))) if finite.size else 1.0
    limit = max(limit, 1e-9)
    n = len(matrix)
    if ax is None:
        size = max(4.0, 0.55 * n + 2.0)
        fig, ax = plt.subplots(figsize=(size + 1.2, size))
    else:
        fig = ax.figure
    cmap = plt.get_cmap("RdBu_r").with_extremes(bad="0.85")
    image = ax.imshow(np.ma.masked_invalid(np.clip(values, -limit, limit)), cmap=cmap,
                      norm=TwoSlopeNorm(vcenter=0.0, vmin=-limit, vmax=limit))
    ax.set_xticks(range(n), matrix.columns, rotation=45, ha="right")
    ax.set_yticks(range(n), matrix.index)
    if annotate is None:
        annotate = n <= 12
    if annotate:
        for i in range(n):
            for j in range(n):
                if np.isfinite(values[i, j]):
                    strong = abs(values[i, j]) > 0.6 * limit
                    ax.text(j, i, f"{values[i, j]:.0f}" if abs(values[i, j]) >= 10 else
                            f"{values[i, j]:.1f}", ha="center", va="center", fontsize=8,
                            color="white" if strong else "black")
    bar = fig.colorbar(image, ax=ax, shrink=0.8)
    clipped = finite.size and np.max(np.abs(finite)) > limit
    bar.set_label("log Bayes factor: dependent vs independent"
                  + (f"\n(colours clipped at ±{limit:.3g})" if clipped else ""))
    ax.set_title("Pairwise dependence given the class")
    fig.tight_layout()
    return fig
