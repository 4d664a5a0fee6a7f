"""Plots for comparing ML, MAP and Bayes (matplotlib: ``pip install bayesnb[plot]``).

Every function returns the matplotlib ``Figure`` (its axes are ``fig.axes``) and draws on a new
figure unless ``ax`` is given, so they compose and save headlessly (``fig.savefig``).
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from ._typing import ArrayLike, Data
    from .estimator import NaiveBayes

#: one look per method in every figure: colour, marker, and a size that shrinks down the list, so
#: methods whose curves coincide (MAP with alpha = 1 is ML) show as nested markers, not one line
METHOD_STYLES = {
    "ml": {"color": "tab:red", "marker": "o", "markersize": 10, "linewidth": 3.2},
    "map": {"color": "tab:orange", "marker": "s", "markersize": 8, "linewidth": 2.4},
    "mean": {"color": "tab:green", "marker": "^", "markersize": 6.5, "linewidth": 1.8},
    "bayes": {"color": "tab:blue", "marker": "D", "markersize": 4.5, "linewidth": 1.2},
    "mcmc": {"color": "tab:purple", "marker": "v", "markersize": 4, "linewidth": 1.0},
}
_OTHER_COLOURS = ("tab:brown", "tab:pink", "tab:gray", "tab:olive", "tab:cyan")

#: the range each metric lives in; bands are clipped to it (log loss and entropy are unbounded)
METRIC_RANGES = {"accuracy": (0.0, 1.0), "log_loss": (0.0, np.inf), "brier": (0.0, 2.0),
                 "ece": (0.0, 1.0), "entropy": (0.0, np.inf)}


def method_style(name: str) -> dict:
    """Matplotlib style (``color``, ``marker``, ``markersize``, ``linewidth``) of a method or
    named model: fixed for the five methods, and for other names picked from the rest of the
    palette by a stable hash of the name, so a name looks the same in every figure."""
    if name in METHOD_STYLES:
        return dict(METHOD_STYLES[name])
    import zlib

    colour = _OTHER_COLOURS[zlib.crc32(str(name).encode()) % len(_OTHER_COLOURS)]
    return {"color": colour, "marker": "P", "markersize": 6, "linewidth": 1.5}


#: markers of named models once each of ``_OTHER_COLOURS`` is taken in one figure
_OTHER_MARKERS = ("P", "X", "*", "h", "d", "p")


def figure_styles(names) -> dict:
    """:func:`method_style` of each of ``names``, drawn in one figure: a named model whose
    hashed colour another name of the figure already has takes the next free colour (then
    the next marker), the names taken in sorted order, so the figure's lines stay apart and
    a figure of the same names looks the same whatever their order.

    Examples
    --------
    >>> from bayesnb.plots import figure_styles
    >>> styles = figure_styles(["alpha=0.5", "alpha=1", "ml"])
    >>> [(styles[n]["color"], styles[n]["marker"]) for n in styles]
    [('tab:olive', 'P'), ('tab:cyan', 'P'), ('tab:red', 'o')]
    """
    styles = {name: method_style(name) for name in names}
    taken: set = set()
    for name in sorted((n for n in styles if n not in METHOD_STYLES), key=str):
        k = _OTHER_COLOURS.index(styles[name]["color"])  # from its own colour on
        colours = _OTHER_COLOURS[k:] + _OTHER_COLOURS[:k]
        looks = [(c, m) for m in _OTHER_MARKERS for c in colours]
        free = next((look for look in looks if look not in taken), looks[0])
        styles[name].update(color=free[0], marker=free[1])
        taken.add(free)
    return styles


def _drawing_order(names) -> list:
    """Largest markers first, so a smaller one drawn over it stays visible where curves
    coincide."""
    return sorted(names, key=lambda name: -method_style(name)["markersize"])


#: line styles of curves that coincide with one drawn before them (the first keeps "-")
_SAME_AS_STYLES = ("--", ":", "-.")


def _coinciding(curves: dict) -> dict:
    """``{name: (earlier name, everywhere)}`` for each curve whose values equal (within float
    rounding; infinities alike) those of a curve before it in ``curves`` wherever both have
    a value (not NaN), at one point at least; ``everywhere`` when they also lack the same
    values (an ML fit that failed where MAP did not has a NaN there)."""
    same, names = {}, list(curves)
    for i, name in enumerate(names):
        for earlier in names[:i]:
            a, b = (np.asarray(curves[k], dtype=float) for k in (earlier, name))
            if earlier in same or a.shape != b.shape:
                continue
            both = ~np.isnan(a) & ~np.isnan(b)
            if both.any() and np.allclose(a[both], b[both], rtol=1e-9, atol=1e-12):
                same[name] = (earlier, bool(np.array_equal(np.isnan(a), np.isnan(b))))
                break
    return same


def _same_as_styles(same: dict) -> dict:
    """A line style per coinciding curve, different for each one that repeats the same
    curve, so every method stays visible where the curves are drawn over each other."""
    seen: dict = {}
    out = {}
    for name, (earlier, _) in same.items():
        k = seen.setdefault(earlier, 0)
        out[name] = _SAME_AS_STYLES[k % len(_SAME_AS_STYLES)]
        seen[earlier] = k + 1
    return out


def _legend_outside(ax, **kw):
    """The axes' legend to the right of it, clear of the data."""
    return ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0,
                     fontsize=8, **kw)


def _class_colours(n: int) -> list:
    """``n`` distinct colours, one per class: the style's colour cycle (``C0``, ``C1``, ...;
    matplotlib's tab10 by default) while it has that many colours, else tab20 (tab10's ten
    colours, then their light versions) up to 20 classes, else evenly spaced colours along
    the continuous turbo colormap (interpolated, so they stay distinct past its 256 entries)."""
    import matplotlib as mpl

    cycle = mpl.rcParams["axes.prop_cycle"].by_key().get("color", [])
    if n <= len(dict.fromkeys(cycle)) and n <= len(cycle):  # today's colours for few classes
        return [f"C{k}" for k in range(n)]
    if n <= 20:
        tab20 = mpl.colormaps["tab20"].colors  # pairs (dark, light): the dark ten come first
        return [tuple(c) for c in (*tab20[0::2], *tab20[1::2])[:n]]
    table = np.asarray(mpl.colormaps["turbo"].colors, dtype=np.float64)  # (256, 3)
    at = np.linspace(0.0, len(table) - 1.0, n)
    return [tuple(float(np.interp(t, np.arange(len(table)), table[:, c])) for c in range(3))
            for t in at]


def _class_legend(ax, entries: int, created: bool, **kw):
    """The legend right of the axes (:func:`_legend_outside`), in as many columns as keep
    its ``entries`` within the figure's height (a smaller font past one column); on a figure
    the plot made itself (``created``) the figure is widened by the extra columns, so the
    axes keep their width. Constrained layout then keeps it inside the saved figure."""
    fig = ax.figure
    fontsize = 8
    # rows that fit: about 15 points a row at font size 8, less a title row and margins
    rows = max(4, int(fig.get_figheight() * 72 / 15) - 3)
    ncols = -(-entries // rows)
    if ncols > 1:
        fontsize = 7
        rows = max(4, int(fig.get_figheight() * 72 / 13) - 3)
        ncols = -(-entries // rows)
        if created:
            fig.set_figwidth(fig.get_figwidth() + 1.4 * (ncols - 1))
    return ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0,
                     fontsize=fontsize, ncols=ncols, **kw)


def _axes(ax, ncols=1, figsize=(5, 4), layout="constrained"):
    import matplotlib.pyplot as plt

    if ax is not None:
        return ax.figure, [ax]
    # constrained layout keeps a legend outside the axes inside the figure
    fig, axes = plt.subplots(1, ncols, figsize=(figsize[0] * ncols, figsize[1]), squeeze=False,
                             layout=layout)
    return fig, list(axes[0])


def reliability_diagram(y_true: ArrayLike, probas: Mapping[str, ArrayLike], classes: ArrayLike, *,
                        n_bins: int = 10, ax: Axes | None = None,
                        evaluation: str | None = None) -> Figure:
    """Calibration of several models: per confidence bin, the accuracy of the predicted class
    against its mean predicted probability (the diagonal is perfect calibration).

    ``probas`` maps a model name to its ``(n, K)`` class probabilities, columns in ``classes``
    order. The bins are those of :func:`bayesnb.compare.calibration_table` (the table behind
    ``compare``'s ECE); empty bins are not drawn. Each model keeps its :func:`method_style`
    (named models told apart: :func:`figure_styles`).
    Rows with no defined posterior (every probability 0) are left out and counted in the
    legend. Models whose points coincide are drawn with their own line styles and said so in
    the legend (``"map (= ml here: the same points)"``). On a new figure (``ax=None``) a panel
    below gives the rows in each bin, so a point made of a handful of rows is seen as such;
    ``fig.axes[0]`` is the diagram, ``fig.axes[1]`` the counts. The legend is right of the
    diagram, clear of the points.

    ``evaluation`` says in the title which rows were scored (e.g. a ``compare`` table's
    ``attrs["evaluation"]``); a diagram without it does not know.

    Examples
    --------
    >>> import bayesnb as bnb
    >>> from bayesnb.plots import reliability_diagram
    >>> from bayesnb.datasets import load_titanic
    >>> X, y = load_titanic()
    >>> probas = {m: bnb.NaiveBayes(method=m).fit(X, y).predict_proba(X) for m in ("ml", "bayes")}
    >>> fig = reliability_diagram(y, probas, classes=["No", "Yes"])
    >>> fig.axes[0].get_title()
    'Reliability diagram'
    >>> [line.get_label() for line in fig.axes[0].get_lines()]
    ['calibrated', 'ml', 'bayes']
    """
    import textwrap

    from .compare import calibration_table

    if ax is None:
        import matplotlib.pyplot as plt

        fig, (ax, counts_ax) = plt.subplots(2, 1, figsize=(6.6, 5.4), sharex=True,
                                            gridspec_kw={"height_ratios": (4, 1.2)},
                                            layout="constrained")
    else:
        fig, counts_ax = ax.figure, None
    classes = np.asarray(classes)
    y_true = np.asarray(y_true)
    position = {c: k for k, c in enumerate(classes.tolist())}
    unknown = [v for v in np.unique(y_true).tolist() if v not in position]
    if unknown:
        raise ValueError(f"y_true holds {unknown[0]!r}, which is not one of classes "
                         f"{classes.tolist()}.")
    codes = np.array([position[v] for v in y_true.tolist()], dtype=int)
    ax.plot([0, 1], [0, 1], color="grey", linestyle=":", label="calibrated")
    order = _drawing_order(probas)
    styles = figure_styles(order)
    tables, defined = {}, {}
    for name in order:
        proba = np.asarray(probas[name], dtype=float)
        if proba.shape != (len(codes), len(classes)):
            raise ValueError(f"probas[{name!r}] has shape {proba.shape}: with {len(codes)} "
                             f"rows in y_true and {len(classes)} classes it must be "
                             f"({len(codes)}, {len(classes)}), columns in classes order.")
        # a row with no posterior (every class probability 0, possible under ML) has no
        # confidence to draw: left out, and counted in the legend (not put at the origin)
        total = np.nan_to_num(proba, nan=0.0).sum(axis=1)
        defined[name] = total > 0
        off = defined[name] & (np.abs(total - 1.0) > 1e-4)  # float32 rows: within ~1e-6
        if off.any():
            i = int(np.argmax(off))
            raise ValueError(f"probas[{name!r}] row {i} sums to {total[i]:.6g}, not 1: give "
                             f"each row's class probabilities.")
        tables[name] = calibration_table(proba[defined[name]], codes[defined[name]],
                                         n_bins=n_bins)
    same = _coinciding({name: tables[name][["count", "mean_predicted", "observed"]]
                        for name in order})
    dashes = _same_as_styles(same)
    for name in order:
        table, style = tables[name], styles[name]
        full = table[table["count"] > 0]
        label = str(name)
        if name in same:
            earlier, everywhere = same[name]
            label += (f" (= {earlier} here: the same points"
                      f"{'' if everywhere else ' where both have one'})")
        if not defined[name].all():
            label += f" ({int((~defined[name]).sum())} rows without a posterior not drawn)"
        ax.plot(full["mean_predicted"], full["observed"], label=label,
                linestyle=dashes.get(name, "-"), **style)
        if counts_ax is not None:
            counts_ax.stairs(table["count"], np.r_[table["lower"], table["upper"].iloc[-1]],
                             color=style["color"], linewidth=style["linewidth"],
                             linestyle=dashes.get(name, "-"), label=name)
    title = "Reliability diagram"
    if evaluation:
        title += "\n" + textwrap.fill(evaluation, 60)
    ax.set(ylabel="observed accuracy", xlim=(0, 1), ylim=(0, 1))
    ax.set_title(title, fontsize=10)
    _legend_outside(ax)
    if counts_ax is None:
        ax.set_xlabel("mean predicted probability")
    else:
        counts_ax.set(xlabel="mean predicted probability (bins of the top class probability)",
                      ylabel="rows", xlim=(0, 1))
        counts_ax.set_yscale("symlog", linthresh=1)  # a bin of 3 rows beside one of 300 shows
        counts_ax.set_ylim(bottom=0)
    return fig


#: what a learning-curve plot draws: its centre line and the band around it
_STATISTICS = {"mean": "mean over repeats, band: mean +- 1 sd",
               "median": "median over repeats, band: quartiles (q25 to q75)"}


def learning_curves_plot(curves: pd.DataFrame,
                         metrics: Sequence[str] = ("accuracy", "log_loss", "brier"), *,
                         statistic: str = "mean", evaluation: str | None = None) -> Figure:
    """One panel per metric from :func:`bayesnb.compare.learning_curves`: the ``statistic``
    over repeats against training-set size, one line per method (styles of
    :func:`method_style`).

    ``statistic="mean"`` draws the mean with a +- 1 sd band; ``"median"`` the median with the
    quartiles as band (columns ``median``, ``q25``, ``q75``; robust where one repeat's log
    loss is infinite). The figure's title says which, and ``evaluation`` which rows were
    scored (default: ``curves.attrs["evaluation"]``, which ``learning_curves`` sets).

    Nothing is drawn that the data do not say:

    - an infinite value (some repeat gave a true class probability 0) is a triangle at the top
      edge of the panel marked "inf", never a point on the axis; lines break around it;
    - the band is clipped to the metric's range (:data:`METRIC_RANGES`) and left out where it
      is undefined (one repeat, or an infinite value);
    - repeats that could not be fitted or scored are counted beside the point ("2/5 failed"):
      the statistic is over the others; a size where all failed is an "x" at the bottom edge.
    - methods whose values coincide at every size in every panel (ML and MAP under flat
      priors) are drawn with their own line styles and said so in the legend
      (``"map (= ml here: the same values at every size)"``), not left as one line.

    The legend (below the panels) gives each method's total of failed repeats and says what
    the markers mean.

    Examples
    --------
    >>> import bayesnb as bnb
    >>> from bayesnb.compare import learning_curves
    >>> from bayesnb.plots import learning_curves_plot
    >>> from bayesnb.datasets import load_titanic
    >>> X, y = load_titanic()
    >>> curves = learning_curves(X, y, methods=("ml", "bayes"), train_sizes=(10, 200), repeats=3,
    ...                          features=bnb.Categorical(unseen="smooth"))
    >>> fig = learning_curves_plot(curves)
    >>> [ax.get_title() for ax in fig.axes]
    ['accuracy', 'log_loss', 'brier']
    """
    import textwrap

    from matplotlib.lines import Line2D
    from matplotlib.ticker import NullFormatter

    if statistic not in _STATISTICS:
        raise ValueError(f"statistic must be one of {sorted(_STATISTICS)}, got {statistic!r}.")
    metrics = [metrics] if isinstance(metrics, str) else list(metrics)
    there = list(dict.fromkeys(curves["metric"])) if "metric" in curves.columns else []
    absent = [m for m in metrics if m not in there]
    if not metrics or absent:  # an empty panel, or none, would say nothing
        raise ValueError(f"metrics must name metrics of curves ({there}), got "
                         f"{absent[0] if absent else 'none'!r}.")
    spread = ("sd",) if statistic == "mean" else ("q25", "q75")
    missing = [c for c in (statistic, *spread) if c not in curves.columns]
    if missing:
        raise ValueError(f"curves has no column {missing[0]!r} (statistic={statistic!r}); "
                         f"make them with bayesnb.compare.learning_curves.")
    if evaluation is None:
        evaluation = curves.attrs.get("evaluation")
    fig, axes = _axes(None, ncols=len(metrics), figsize=(5, 4.6), layout=None)
    shown = curves[curves["metric"].isin(metrics)]
    order = _drawing_order(list(dict.fromkeys(shown["method"])))
    styles = figure_styles(order)
    values = shown.set_index(["metric", "n_train", "method"])[statistic].unstack("method")
    same = _coinciding({method: values[method] for method in order})
    dashes = _same_as_styles(same)
    handles, marks = {}, set()
    for ax, metric in zip(axes, metrics, strict=True):
        part = curves[curves["metric"] == metric]
        low, high = METRIC_RANGES.get(metric, (-np.inf, np.inf))
        edge = ax.get_xaxis_transform()  # x in data, y in axes: 1 is the top edge, 0 the bottom
        groups = dict(list(part.groupby("method", sort=False)))
        for method in _drawing_order(groups):
            rows = groups[method]
            style = styles[method]
            rows = rows.sort_values("n_train")
            n = rows["n_train"].to_numpy(dtype=float)
            centre = rows[statistic].to_numpy(dtype=float)
            if statistic == "mean":
                sd = rows["sd"].to_numpy(dtype=float)
                lower, upper = centre - sd, centre + sd
            else:
                lower, upper = (rows[q].to_numpy(dtype=float) for q in spread)
            failed = rows["failed"].to_numpy(dtype=int)
            repeats = rows["repeats"].to_numpy(dtype=int)
            finite = np.isfinite(centre)
            infinite = np.isinf(centre)
            everything = failed == repeats
            label = str(method)
            if method in same:
                earlier, everywhere = same[method]
                label += (f" (= {earlier} here: the same values "
                          f"{'at every size' if everywhere else 'wherever both have one'})")
            if failed.sum():
                label += f" ({failed.sum()} of {repeats.sum()} repeats failed)"
            if rows["unscored_rows"].sum():
                label += f" ({rows['unscored_rows'].sum()} test rows of unseen classes unscored)"
            line, = ax.plot(n, np.where(finite, centre, np.nan), label=label,
                            linestyle=dashes.get(method, "-"), **style)
            handles.setdefault(label, line)
            band = finite & np.isfinite(lower) & np.isfinite(upper)
            if band.any():
                ax.fill_between(n[band], np.clip(lower[band], low, high),
                                np.clip(upper[band], low, high),
                                color=style["color"], alpha=0.15, linewidth=0)
            if infinite.any():
                marks.add("infinite")
                ax.plot(n[infinite], np.ones(infinite.sum()), transform=edge, clip_on=False,
                        linestyle="none", marker="^", color=style["color"],
                        markersize=style["markersize"], gid="infinite")
            if everything.any():
                marks.add("all_failed")
                ax.plot(n[everything], np.zeros(everything.sum()), transform=edge,
                        clip_on=False, linestyle="none", marker="x", color=style["color"],
                        markersize=style["markersize"], gid="all_failed")
            for x, y, k, r, shown in zip(n, centre, failed, repeats, finite, strict=True):
                if k:
                    where = (x, y) if shown else (x, 1.0 if np.isinf(y) else 0.0)
                    ax.annotate(f"{k}/{r} failed", where, xycoords="data" if shown else edge,
                                xytext=(6, -12 if np.isinf(y) else 4),
                                textcoords="offset points", fontsize=7, color=style["color"],
                                gid="failed")
        for x in np.unique(part["n_train"][np.isinf(part[statistic])]):
            ax.annotate("inf", (x, 1.0), xycoords=edge, xytext=(0, 8), ha="center",
                        textcoords="offset points", fontsize=7, gid="inf_label")
        ax.set(xscale="log", xlabel="training rows", ylabel=f"{metric} ({statistic})")
        sizes = np.unique(part["n_train"].to_numpy())
        ax.set_xticks(sizes, [str(int(v)) for v in sizes])  # the sizes drawn, as numbers
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.set_title(metric, pad=18)
    explained = {"infinite": ("^", f"inf: {statistic} is infinite (a true class got "
                                   f"probability 0)"),
                 "all_failed": ("x", "every repeat failed (no value)")}
    for key in sorted(marks):
        marker, text = explained[key]
        handles[text] = Line2D([], [], color="black", marker=marker, linestyle="none")
    title = f"Learning curves: {_STATISTICS[statistic]}"
    if evaluation:
        title += "\n" + textwrap.fill(evaluation, 150)
    fig.suptitle(title, fontsize=10)
    ncol = min(len(handles), 3)
    rows = -(-len(handles) // ncol)
    bottom = 0.06 + 0.045 * rows  # room for the legend's rows
    fig.tight_layout(rect=(0, bottom, 1, 1))
    fig.legend(list(handles.values()), list(handles), loc="lower center", fontsize=8,
               ncol=ncol, bbox_to_anchor=(0.5, 0.0), frameon=False)
    return fig


def credible_intervals_plot(clf: NaiveBayes, X: Data, *, class_label: Hashable | None = None,
                            interval: float = 0.9, draws: Mapping[str, ArrayLike] | None = None,
                            ax: Axes | None = None, num_draws: int = 1000,
                            seed: int = 0) -> Figure:
    """Per row, p(class | x) with its central ``interval`` over the posterior of the
    parameters (``NaiveBayes.predict_uncertainty``), rows sorted by the predictive.

    Examples
    --------
    >>> import bayesnb as bnb
    >>> from bayesnb.plots import credible_intervals_plot
    >>> from bayesnb.datasets import load_playtennis
    >>> days, play = load_playtennis()
    >>> clf = bnb.NaiveBayes(method="bayes").fit(days, play)
    >>> fig = credible_intervals_plot(clf, days, class_label="Yes")
    >>> fig.axes[0].get_title(), fig.axes[0].get_ylabel()
    ('Per-row uncertainty of the class probability', 'p(Yes | x)')"""
    fig, (ax,) = _axes(ax, figsize=(7, 4))
    u = clf.predict_uncertainty(X, interval=interval, draws=draws, num_draws=num_draws,
                                seed=seed)
    if class_label is not None and class_label not in list(clf.classes_):
        from .families._levels import _show

        raise ValueError(f"class_label={class_label!r} is not one of the classes "
                         f"[{_show(clf.classes_.tolist(), 10)}].")
    k = 0 if class_label is None else list(clf.classes_).index(class_label)
    order = np.argsort(u["proba"][:, k])
    p, lo, hi = u["proba"][order, k], u["lower"][order, k], u["upper"][order, k]
    rows = np.arange(len(p))
    ax.vlines(rows, lo, hi, alpha=0.5, label=f"{100 * interval:g}% interval over the posterior")
    ax.plot(rows, p, ".", label="posterior predictive")
    ax.set(xlabel="row (sorted)", ylabel=f"p({clf.classes_[k]!s} | x)", ylim=(0, 1),
           title="Per-row uncertainty of the class probability")
    _legend_outside(ax)
    return fig


def posterior_density_plot(clf: NaiveBayes, site: str, index: tuple = (), *,
                           draws: Mapping[str, ArrayLike] | None = None, ax: Axes | None = None,
                           num_draws: int = 4000, seed: int = 0) -> Figure:
    """Density of one parameter's posterior draws (NUTS draws under ``method="mcmc"``, else
    exact conjugate draws), with the ML, MAP and posterior-mean plug-in values marked.

    ``site`` is a parameter site (``"bernoulli.theta"``, ``"categorical.Outlook.probs"``,
    ``"class_probs"``, ...; see ``bayesnb.model``) and ``index`` picks one entry, e.g.
    ``(class, column)`` or ``(class, level)``: each by its label (``("Yes", "1st")``) or, as
    an integer, by its position (integers are positions even where the labels are integers).

    Examples
    --------
    p(Sunny | No) in PlayTennis: 3 of the 5 "No" days were sunny, so ML and MAP (flat prior)
    give 3/5 and the posterior mean (3 + 1) / (5 + 3):

    >>> import bayesnb as bnb
    >>> from bayesnb.plots import posterior_density_plot
    >>> from bayesnb.datasets import load_playtennis
    >>> days, play = load_playtennis()
    >>> clf = bnb.NaiveBayes(method="bayes").fit(days, play)
    >>> fig = posterior_density_plot(clf, "categorical.Outlook.probs", ("No", "Sunny"))
    >>> fig.axes[0].get_xlabel()
    'categorical.Outlook.probs[No, Sunny]'
    >>> fig.axes[0].get_legend_handles_labels()[1]
    ['posterior draws', 'ML 0.6', 'MAP 0.6', 'MEAN 0.5']
    """
    fig, (ax,) = _axes(ax)
    if draws is None:
        draws = clf.draws_ if hasattr(clf, "draws_") else clf.sample_posterior(num_draws, seed)
    if site not in draws:
        raise ValueError(f"unknown parameter site {site!r} (sites: {sorted(draws)}).")
    index = _positions(clf, site, tuple(index), np.shape(draws[site])[2:])
    values = np.asarray(draws[site]).reshape((-1,) + np.shape(draws[site])[2:])
    values = values[(slice(None), *index)]
    ax.hist(values, bins=50, density=True, alpha=0.6, label="posterior draws")
    for method, style in (("ml", "--"), ("map", ":"), ("mean", "-")):
        point = plug_in_value(clf, site, index, method)
        if point is not None and np.isfinite(point):
            ax.axvline(point, linestyle=style, color=method_style(method)["color"],
                       label=f"{method.upper()} {point:.3g}")
    ax.set(xlabel=_entry_label(clf, site, index), ylabel="density",
           title="Posterior and point estimates")
    _legend_outside(ax)
    return fig


def _positions(clf, site: str, index: tuple, shape: tuple) -> tuple:
    """``index`` as positions: labels looked up in the site's ArviZ coordinates (classes,
    columns, levels), integers checked against the site's shape; one-line errors."""
    from .inference import dims_and_coords

    dims, coords = dims_and_coords(clf.fitted_)
    site_dims = dims.get(site, ())
    if len(index) != len(shape):  # one entry: one index per dimension
        named = f" ({', '.join(site_dims)})" if len(site_dims) == len(shape) else ""
        raise ValueError(f"index {index!r} has {len(index)} entries; site {site!r} has "
                         f"{len(shape)} dimension(s) {shape}{named}: give one entry of "
                         f"each, e.g. a label or a position per dimension.")
    out = []
    for axis, entry in enumerate(index):
        values = list(coords[site_dims[axis]]) if axis < len(site_dims) else None
        if isinstance(entry, int | np.integer) and not isinstance(entry, bool | np.bool_):
            if not -shape[axis] <= entry < shape[axis]:
                raise ValueError(f"index {index!r}: position {entry} is outside the "
                                 f"{shape[axis]} entries of axis {axis} of {site!r}.")
            out.append(int(entry))
            continue
        found = [i for i, v in enumerate(values or []) if type(v) is type(entry) and v == entry
                 or str(v) == str(entry)]
        if not found:
            known = ", ".join(map(repr, (values or [])[:20]))
            raise ValueError(f"index {index!r}: {entry!r} is not an entry of axis {axis} of "
                             f"{site!r} ({site_dims[axis] if values else 'no labels'}: "
                             f"{known}).")
        out.append(found[0])
    return tuple(out)


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

    sites = parameter_sites(clf.blocks_)
    if site != "class_probs" and site not in sites:
        raise ValueError(f"unknown parameter site {site!r} (sites: "
                         f"{['class_probs', *sites]}).")
    try:
        if site == "class_probs":
            lp = class_log_prior(clf.class_count_, clf._class_alpha_array(),
                                 clf._class_prior_array(), method)
            return float(np.exp(lp[index]))
        i, key = sites[site]
        block = clf.blocks_[i]
        if block.family.pooling_prior() is not None:  # a learned prior: no closed form
            return None
        block.family.check_prior(block.prior, block.schema, method)
        table = type(block.family).estimate(block.prior, block.stats, method)
    except ValueError:  # e.g. MAP undefined under this prior
        return None
    # outside the handler: a family that does not give its sites' values says so
    return float(block.family.plug_in_sites(block.prior, table)[key][index])


#: what ``density_plot`` draws per class: p(x | class), or p(x, class) = p(class) p(x | class)
_PROBS = {"conditional": "P(x | class)", "marginal": "P(class) P(x | class)"}


def density_plot(clf: NaiveBayes, column: Hashable, X: Data | None = None,
                 y: ArrayLike | None = None, *, prob: str = "conditional",
                 sample_weight: ArrayLike | None = None, bins: int = 30, grid: int = 512,
                 ax: Axes | None = None) -> Figure:
    """Per-class distributions of one column next to its training data, as R naivebayes'
    ``plot(naive_bayes, prob=)`` draws them.

    A family of real values (a ``density_label``: Gaussian, Exponential, KernelDensity) is
    drawn as one density curve per class over histograms of its training values; a family of
    discrete values (a ``pmf_label``: Bernoulli, Categorical, Poisson) as bars of the
    probability of each value per class (``Family.pmf_support``), each beside a hatched bar of
    the value's observed (weighted) frequency in that class.

    The curves and bars are those of ``conditional_tables()`` (the current method's estimate;
    the posterior mean under ``"bayes"``). A nonparametric column (``KernelDensity``) draws
    its stored training sample; a parametric one ``X[column]`` by ``y`` when they are given
    (weighted by ``sample_weight``). For densities, ``grid`` points span the data and three
    spreads (``Family.density_scale``: sds, bandwidths) beyond; histograms have ``bins`` bins.

    ``prob="conditional"`` (default) draws p(x | class); ``"marginal"`` draws p(class) p(x |
    class), each class scaled by its prior (the method's, ``class_log_prior_``), and the
    data as joint frequencies: each class's frequencies times its share of the (weighted)
    rows where the column is observed.

    Examples
    --------
    >>> import bayesnb as bnb
    >>> from bayesnb.plots import density_plot
    >>> from bayesnb.datasets import load_temperature
    >>> X, y = load_temperature()
    >>> clf = bnb.NaiveBayes(method="ml").fit(X, y)
    >>> fig = density_plot(clf, "Temperature", X, y)
    >>> fig.axes[0].get_title()
    'Temperature: Gaussian per class'
    >>> fig.axes[0].get_legend_handles_labels()[1]
    ['No', 'Yes']

    A discrete column: bars of P(Outlook | class) beside the observed frequencies; under
    ``prob="marginal"`` each class's bars are scaled by its prior (9/14 of the days are "Yes",
    4, 3 and 2 of those 9 overcast, rainy and sunny: 4/14, 3/14, 2/14):

    >>> from bayesnb.datasets import load_playtennis
    >>> days, play = load_playtennis()
    >>> clf = bnb.NaiveBayes(method="ml").fit(days, play)
    >>> fig = density_plot(clf, "Outlook", days, play, prob="marginal")
    >>> fig.axes[0].get_title()
    'Outlook: Categorical per class, times P(class)'
    >>> [tick.get_text() for tick in fig.axes[0].get_xticklabels()]
    ['Overcast', 'Rain', 'Sunny']
    >>> [round(float(bar.get_height()), 4) for bar in fig.axes[0].containers[2]]  # Yes: 4, 3, 2
    [0.2857, 0.2143, 0.1429]
    """
    if prob not in _PROBS:
        raise ValueError(f"prob must be one of {sorted(_PROBS)}, got {prob!r}.")
    if (X is None) != (y is None):  # the data are drawn per class: both, or neither
        raise ValueError(f"density_plot draws the data by class: pass both X and y (got "
                         f"{'X' if y is None else 'y'} alone), or neither for the model's "
                         f"curves alone.")
    blocks = clf.blocks_
    where = [(i, b.schema.columns.index(column)) for i, b in enumerate(blocks)
             if column in b.schema.columns]
    if not where:
        raise ValueError(f"column {column!r} is not a column of this model.")
    i, j = where[0]
    block, classes = blocks[i], clf.classes_
    family = block.family
    if family.density_label is None and family.pmf_label is None:
        from .families import REGISTRY

        drawn = [cls.__name__ for cls in REGISTRY.values()
                 if cls.density_label is not None or cls.pmf_label is not None]
        raise ValueError(f"column {column!r}: density_plot draws the columns of "
                         f"{', '.join(drawn)}, not {type(family).__name__}.")
    created = ax is None
    fig, (ax,) = _axes(ax, figsize=(6, 4))
    tables, exact = clf._shown_tables()  # those of conditional_tables (NUTS: their means)
    table = (type(family).estimate(block.prior, block.stats, "mean")
             if exact and not family.nonparametric else tables[i])
    samples = []
    if family.nonparametric:  # its training sample is kept: draw it
        samples = [family.stored_sample(table, j, k) for k in range(len(classes))]
    elif X is not None and y is not None:
        samples = _column_samples(clf, i, j, X, y, sample_weight)
    # p(class) for the model; each class's share of the observed data for the frequencies
    scale = np.ones(len(classes))
    share = np.ones(len(classes))
    if prob == "marginal":
        scale = clf.class_prior_.to_numpy(dtype=np.float64)
        if samples:
            totals = np.array([np.sum(w) for _, w in samples], dtype=np.float64)
            share = totals / totals.sum()
    draw = _draw_bars if family.pmf_label is not None else _draw_densities
    draw(ax, family, table, block, j, classes, samples, scale, share, bins, grid)
    label = family.pmf_label or family.density_label
    ax.set(xlabel=str(column), title=f"{column}: {label} per class"
           + (", times P(class)" if prob == "marginal" else ""))
    what = "probability" if family.pmf_label is not None else "density"
    ax.set_ylabel(f"{what}, {_PROBS[prob]}")
    # one entry per class, and one more per class for the observed-frequency bars
    entries = len(classes) * (2 if family.pmf_label is not None and samples else 1)
    _class_legend(ax, entries, created, title="class")
    return fig


def _column_samples(clf, i: int, j: int, X, y, sample_weight) -> list:
    """Per class ``(values, weights)`` of column ``j`` of block ``i`` of ``X``, encoded as the
    family encodes it (codes for levels), missing values left out."""
    from scipy import sparse

    from ._blocks import raw_blocks

    block = clf.blocks_[i]
    family = block.family
    encoded = family.encode(raw_blocks(clf.fitted_, X)[0][i], block.schema)
    values = (np.asarray(encoded[:, [j]].toarray())[:, 0] if sparse.issparse(encoded)
              else np.asarray(encoded)[:, j])
    observed = values >= 0 if family.integer_codes else ~np.isnan(values)
    labels = np.asarray(y)
    if len(labels) != len(values):
        raise ValueError(f"X has {len(values)} rows but y has {len(labels)} labels.")
    unknown = [v for v in pd.unique(labels).tolist() if v not in set(clf.classes_.tolist())]
    if unknown:  # its rows would be drawn in no class
        from .families._levels import _show

        raise ValueError(f"y holds {unknown[0]!r}, which is not one of the classes "
                         f"[{_show(clf.classes_.tolist(), 10)}].")
    weight = (np.ones(len(values)) if sample_weight is None
              else np.asarray(sample_weight, dtype=np.float64))
    if weight.shape != values.shape:
        raise ValueError(f"sample_weight has shape {weight.shape}; X has {len(values)} rows.")
    return [(values[(labels == c) & observed], weight[(labels == c) & observed])
            for c in clf.classes_]


def _draw_densities(ax, family, table, block, j, classes, samples, scale, share, bins, grid):
    """One density curve per class (times ``scale``) over a histogram of its sample (as a
    density, times ``share``), the bins shared by the classes."""
    points, spread = family.density_scale(table, j)
    seen = np.concatenate([*(v for v, _ in samples), np.asarray(points, dtype=np.float64)])
    low = seen.min() - 3 * spread
    if family.refuses_negative:  # no density below 0 to draw
        low = max(low, 0.0)
    x = np.linspace(low, seen.max() + 3 * spread, grid)
    density = np.exp(_column_log_density(family, table, j, x, len(block.schema.columns)))
    data = np.concatenate([v for v, _ in samples]) if samples else np.zeros(0)
    edges = np.histogram_bin_edges(data, bins=bins) if data.size else bins  # shared by classes
    colours = _class_colours(len(classes))
    for k, c in enumerate(classes):
        colour = colours[k]
        if samples and len(samples[k][0]):
            values, weights = samples[k]
            weights = np.asarray(weights, dtype=np.float64)
            # the histogram as a density (the bins are equal), times the class's share
            width = float(edges[1] - edges[0]) if len(edges) > 1 else 1.0
            ax.hist(values, bins=edges, weights=weights * share[k] / (weights.sum() * width),
                    alpha=0.25, color=colour)
        ax.plot(x, density[:, k] * scale[k], color=colour, label=str(c))


def _draw_bars(ax, family, table, block, j, classes, samples, scale, share, bins, grid):
    """Per value of the column's support (and any other value seen), one bar per class of
    its probability (times ``scale``) and, beside it, a hatched bar of its observed weighted
    frequency in the class (times ``share``)."""
    values, names = family.pmf_support(table, block.schema, j)
    values = np.asarray(values)
    seen = np.unique(np.concatenate([v for v, _ in samples])) if samples else values[:0]
    extra = np.setdiff1d(seen, values)
    if extra.size:  # values seen in the data beyond the support: drawn too
        names = [*names, *(f"{v:g}" for v in extra)]
        values = np.concatenate([values, extra.astype(values.dtype)])
        order = np.argsort(values, kind="stable")
        values, names = values[order], [names[o] for o in order]
    pmf = np.exp(_column_log_density(family, table, j, values, len(block.schema.columns)))
    n_bars = len(classes) * (2 if samples else 1)
    width = 0.8 / n_bars
    # levels one slot each; counts at their own value, so a count far beyond the rest is
    # drawn that far away, not in the next slot
    position = (np.arange(len(values), dtype=np.float64) if family.integer_codes
                else values.astype(np.float64))
    colours = _class_colours(len(classes))
    for k, c in enumerate(classes):
        colour = colours[k]
        left = position - 0.4 + width * (k * (2 if samples else 1) + 0.5)
        ax.bar(left, pmf[:, k] * scale[k], width, color=colour, label=str(c))
        if samples:
            v, w = samples[k]
            w = np.asarray(w, dtype=np.float64)
            frequency = np.array([w[v == value].sum() for value in values])
            frequency = frequency / w.sum() * share[k] if w.sum() > 0 else frequency
            ax.bar(left + width, frequency, width, facecolor="none", edgecolor=colour,
                   hatch="///", label=f"{c} (observed)")
    if family.integer_codes or len(values) <= 12:  # one named tick per value
        ax.set_xticks(position, names, rotation=45 if max(map(len, names)) > 3 else 0)
    else:  # many counts on a number line: integer ticks, as many as fit
        from matplotlib.ticker import MaxNLocator

        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlim(position[0] - 0.6, position[-1] + 0.6)


def _column_log_density(family, table, j: int, x: np.ndarray, n_columns: int) -> np.ndarray:
    """``(len(x), K)`` log density of column ``j`` at ``x`` under ``table``, constants
    included, in float64: the block's other columns are missing, so they drop out."""
    if family.integer_codes:  # level codes: -1 is missing
        block = np.full((len(x), n_columns), -1, dtype=np.int32)
    else:
        block = np.full((len(x), n_columns), np.nan)
    block[:, j] = x
    if family.nonparametric:
        return family.host_log_likelihood(table, block)
    import jax
    import jax.numpy as jnp

    from .families._base import host_f64

    with jax.enable_x64(True):
        b = jnp.asarray(block)
        return np.asarray(type(family).log_likelihood(host_f64(table), b)
                          + type(family).log_normalizer(b)[:, None])
