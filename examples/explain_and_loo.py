"""Explanations and exact leave-one-out
====================================

Show the working of a prediction, and score a model by exact leave-one-out.

* PlayTennis under ML (the course notes, seed 003): ``explain`` lists p(class), each column's
  p(x_j | class), the joint and the posterior for x' = (Sunny, Cool, High, Strong): the notes'
  9/14, 2/9, 3/9, 3/9, 3/9 and 0.0053; ``weight_of_evidence`` gives each column's log odds.
* Titanic: exact leave-one-out (``loo``, no refit) under exact Bayes,
  beside ``compare``'s 5-fold log loss, and its cost beside one prediction.
* PSIS-LOO (``az.loo``) from the ``log_likelihood`` group of ``to_arviz`` against the exact
  joint leave-one-out it estimates.

Lines starting with "docs: " are quoted in the user guide (``docs/user_guide/explain_loo.md``;
the test suite checks them).

Run it as a script::

    python examples/explain_and_loo.py
"""

import time
import warnings

import arviz as az
import pandas as pd

import bayesnb as bnb
from bayesnb import datasets
from bayesnb.compare import compare


def playtennis():
    X, y = datasets.load_playtennis()
    clf = bnb.NaiveBayes(method="ml").fit(X, y)
    x = pd.Series({"Outlook": "Sunny", "Temperature": "Cool", "Humidity": "High",
                   "Wind": "Strong"})
    frame = clf.explain(x)
    print("PlayTennis, method='ml': the factors of p(x', class)")
    print(frame.round(4).to_string(), "\n")
    print(clf.weight_of_evidence(x, "No", "Yes").round(4).to_string(), "\n")
    yes = frame["Yes"]
    print(f"docs: p(x', Yes) = 9/14 x 2/9 x 3/9 x 3/9 x 3/9 = {yes['joint']:.4f}; "
          f"p(x', No) = {frame.loc['joint', 'No']:.4f}; p(No | x') = "
          f"{frame.loc['posterior', 'No']:.4f}")


def titanic():
    X, y = datasets.load_titanic()
    cv = compare(X, y, methods=("bayes",), cv=5)["log_loss"]  # indexed by method
    print(f"\nTitanic ({len(y)} rows): exact leave-one-out vs 5-fold cross-validation")
    for method in ("bayes",):
        clf = bnb.NaiveBayes(method=method).fit(X, y)
        clf.predict_proba(X)
        clf.loo(X, y)  # compile once, then time both
        start = time.perf_counter()
        result = clf.loo(X, y)
        loo_s = time.perf_counter() - start
        start = time.perf_counter()
        clf.predict_proba(X)
        predict_s = time.perf_counter() - start
        print(f"docs: titanic {method:5s} elpd_loo = {result.elpd_loo:.2f} "
              f"(se {result.se:.2f}), LOO log loss {-result.elpd_loo / result.n:.4f}; "
              f"5-fold CV log loss {cv[method]:.4f}")
        print(f"  time: loo {loo_s * 1e3:.1f} ms, predict_proba {predict_s * 1e3:.1f} ms")


def psis():
    X, y = datasets.load_playtennis()
    clf = bnb.NaiveBayes(method="bayes").fit(X, y)
    exact = clf.loo(X, y, quantity="joint")  # float64 inside, whatever JAX's dtype
    idata = clf.to_arviz(clf.sample_posterior(4000, seed=0), prior_draws=None, X=X, y=y,
                         log_likelihood="joint")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # ArviZ's Pareto-k notes on 14 rows
        estimate = az.loo(idata)
    print(f"\ndocs: PlayTennis (bayes), log p(x_i, y_i | rest) summed: exact "
          f"{exact.elpd_loo:.2f}, az.loo {estimate.elpd_loo:.2f} (se {estimate.se:.2f})")


# %%
# Run as a script, this prints the following (the documentation's gallery runs it with the
# quick settings listed on its index page).

if __name__ == "__main__":
    playtennis()
    titanic()
    psis()
