"""MCMC and ArviZ
==============

NUTS next to the exact conjugate posterior, diagnostics and plots.

Fits the Titanic model with NUTS (``method="mcmc"``), prints ArviZ's summary (r-hat, bulk and
tail ESS, MCSE) and the divergence count, checks the MCMC predictive against the exact one,
and writes three ArviZ plots with named coordinates: the posterior of the class proportions,
a forest plot of P(Class | Survived) from NUTS beside i.i.d. exact draws, and a trace plot.

Data: the built-in Titanic table (``bayesnb.datasets.load_titanic``: 2,201 passengers, Class,
Sex and Age, label Survived). The plots go to ``--out`` (default: a new temporary folder whose
name is printed). ``--samples`` and ``--chains`` make a quick run (the test runs ``--samples
40 --chains 4``); for diagnostics to rely on, run ``--chains 4 --samples 1000`` (the
estimator's defaults: at least 4 chains, as Vehtari et al. 2021 advise).

Run it as a script::

    python examples/mcmc_arviz.py --out plots/
"""

import argparse
import tempfile
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import arviz as az  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

import bayesnb as bnb  # noqa: E402
from bayesnb.datasets import load_titanic  # noqa: E402


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.partition("\n")[0])
    parser.add_argument("--out", help="folder for the PNG files (default: a new temporary "
                        "folder, printed)")
    parser.add_argument("--samples", type=int, default=1000)
    parser.add_argument("--chains", type=int, default=2)
    args = parser.parse_args(argv)
    out = Path(args.out or tempfile.mkdtemp(prefix="bayesnb-mcmc_arviz-"))
    out.mkdir(parents=True, exist_ok=True)
    print(f"plots go to {out}/")

    X, y = load_titanic()
    print(f"data: Titanic (bayesnb.datasets.load_titanic), {len(X)} passengers, columns "
          f"{', '.join(X.columns)}; label Survived ({', '.join(sorted(set(y)))})")
    mcmc = bnb.NaiveBayes(method="mcmc", num_warmup=args.samples, num_samples=args.samples,
                          num_chains=args.chains, progress_bar=False).fit(X, y)
    exact = bnb.NaiveBayes(method="bayes").fit(X, y)
    summary = mcmc.mcmc_summary()
    print(summary[["mean", "sd", "ess_bulk", "ess_tail", "r_hat"]].round(3).head(12))
    print(f"divergent transitions: {int(mcmc.sample_stats_['diverging'].sum())}")
    rows = X.drop_duplicates()
    gap = np.abs(mcmc.predict_proba(rows) - exact.predict_proba(rows)).max()
    print(f"max |p_mcmc - p_exact| over the {len(rows)} distinct passengers: {gap:.4f}")
    first = rows.head(4).reset_index(drop=True)
    names = [f"P(Survived={c}) {m}" for m in ("NUTS", "exact") for c in mcmc.classes_]
    table = np.hstack([mcmc.predict_proba(first), exact.predict_proba(first)])
    print(first.join(pd.DataFrame(table, columns=names)).round(4).to_string())

    idata = mcmc.to_arviz()
    exact_idata = exact.to_arviz(prior_draws=None)
    az.plot_posterior(idata, var_names=["class_probs"])
    plt.savefig(out / "class_probs.png", bbox_inches="tight")
    az.plot_forest([idata, exact_idata], model_names=["NUTS", "exact"],
                   var_names=["categorical.Class.probs"], combined=True)
    plt.savefig(out / "class_given_survival_forest.png", bbox_inches="tight")
    trace_plot(idata, "categorical.Sex.probs")
    plt.savefig(out / "sex_trace.png", bbox_inches="tight")
    plt.close("all")
    print(f"wrote {', '.join(sorted(p.name for p in out.glob('*.png')))} to {out}/")


def trace_plot(idata, site):
    """ArviZ's trace plot of one site with its legends (the (class, level) lines, the chains)
    below the panels, where they cover no trace."""
    axes = az.plot_trace(idata, var_names=[site], legend=True)
    for ax in np.ravel(axes):
        legend = ax.get_legend()
        if legend is None:
            continue
        handles, title = legend.legend_handles, legend.get_title().get_text()
        labels = [t.get_text() for t in legend.get_texts()]
        legend.remove()
        ax.legend(handles, labels, title=title, loc="upper center", fontsize=8,
                  bbox_to_anchor=(0.5, -0.15), ncol=min(len(labels), 4), frameon=False)
    return axes


# %%
# Run as a script, this prints the following (the documentation's gallery runs it with the
# quick settings listed on its index page).

if __name__ == "__main__":
    main()
