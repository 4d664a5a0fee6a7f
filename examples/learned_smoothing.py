"""Learned smoothing
=================

A hyperprior on the Dirichlet concentration (hierarchical Naive Bayes).

Laplace's alpha = 1 assumes every word is a priori as likely as any other. When each class
uses only a few words of the vocabulary (true word probabilities drawn from a Dirichlet(0.1)),
that over-smooths. Giving alpha a prior, ``Multinomial(alpha=dist.Gamma(1, 1))``, lets MCMC
learn it from the data; the script compares held-out log loss with the fixed alpha = 1 (exact
Bayes) and shows the learned alpha's posterior next to the empirical-Bayes point estimate.

Data: simulated, printed at the start: two classes ("spam", "ham") of 3-word documents over a
``--vocabulary`` of words, ``--train`` training documents and 3,000 held-out ones. ``--samples``
sets NUTS's warm-up and draws (the tests and the gallery run ``--samples 200``).

Run it as a script::

    python examples/learned_smoothing.py
"""

import argparse
import warnings

import numpy as np
import numpyro.distributions as dist
from sklearn.metrics import log_loss

import bayesnb as bnb
from bayesnb.analysis import empirical_bayes
from bayesnb.inference import ConvergenceWarning


def corpus(rng, theta, n, length):
    y = rng.integers(0, len(theta), n)
    return np.stack([rng.multinomial(length, theta[k]) for k in y]).astype(float), y


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.partition("\n")[0])
    parser.add_argument("--vocabulary", type=int, default=60)
    parser.add_argument("--train", type=int, default=40)
    parser.add_argument("--samples", type=int, default=500)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(0)
    theta = rng.dirichlet(np.full(args.vocabulary, 0.1), size=2)
    X, y = corpus(rng, theta, args.train, 3)
    X_test, y_test = corpus(rng, theta, 3000, 3)
    labels = np.array(["ham", "spam"])
    y, y_test = labels[y], labels[y_test]
    print(f"data: simulated 3-word documents over {args.vocabulary} words, classes "
          f"{', '.join(labels)}; {args.train} training and {len(y_test)} held-out documents")

    fixed = bnb.NaiveBayes(bnb.Multinomial(alpha=1.0), method="bayes").fit(X, y)
    learned = bnb.NaiveBayes(bnb.Multinomial(alpha=dist.Gamma(1.0, 1.0)), method="mcmc",
                             num_warmup=args.samples, num_samples=args.samples,
                             num_chains=1, progress_bar=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        learned.fit(X, y)
    best, _ = empirical_bayes(bnb.NaiveBayes(bnb.Multinomial(), method="bayes"), X, y)
    alpha = learned.draws_["multinomial.alpha"].ravel()
    print(f"held-out log loss, fixed alpha = 1 (exact Bayes): "
          f"{log_loss(y_test, fixed.predict_proba(X_test)):.4f}")
    print(f"held-out log loss, learned alpha (MCMC):          "
          f"{log_loss(y_test, learned.predict_proba(X_test)):.4f}")
    print(f"learned alpha: posterior mean {alpha.mean():.3f}, 90% interval "
          f"[{np.quantile(alpha, 0.05):.3f}, {np.quantile(alpha, 0.95):.3f}]; "
          f"empirical Bayes {best:.3f}; the truth generated words with 0.1")
    doc = X_test[:1]
    for name, clf in (("fixed alpha", fixed), ("learned alpha", learned)):
        cells = ", ".join(f"P({c}) = {p:.3f}" for c, p in
                          zip(clf.classes_, clf.predict_proba(doc)[0], strict=True))
        print(f"first held-out document ({y_test[0]}), {name}: {cells}")


# %%
# Run as a script, this prints the following (the documentation's gallery runs it with the
# quick settings listed on its index page).

if __name__ == "__main__":
    main()
