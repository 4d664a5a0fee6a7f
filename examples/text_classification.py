"""Text classification with a Multinomial Naive Bayes
==================================================

Bag of words, sparse counts.

A scikit-learn ``CountVectorizer`` turns the built-in ``topics`` documents into a sparse count
matrix, which bayesnb fits without densifying. The script compares the posterior-mean plug-in
(Laplace smoothing, scikit-learn's MultinomialNB) with the exact Dirichlet-multinomial
predictive on held-out documents, lists the most probable words of each topic, and shows the
uncertainty of a few ambiguous documents.

Data: the built-in ``topics`` documents (``bayesnb.datasets.load_topics``), described in the
first line printed.

Run it as a script::

    python examples/text_classification.py
"""

import argparse

import numpy as np
import pandas as pd
from sklearn.feature_extraction.text import CountVectorizer
from sklearn.metrics import log_loss
from sklearn.model_selection import train_test_split
from sklearn.naive_bayes import MultinomialNB
from sklearn.pipeline import make_pipeline

import bayesnb as bnb
from bayesnb.datasets import load_topics


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.partition("\n")[0])
    parser.add_argument("--train-size", type=int, default=60,
                        help="training documents (small, where the methods differ)")
    args = parser.parse_args(argv)
    text, topic = load_topics()
    print(f"data: bayesnb.datasets.load_topics, {len(text)} short documents, topics "
          f"{', '.join(sorted(set(topic)))}")
    train_text, test_text, train_y, test_y = train_test_split(
        text, topic, train_size=args.train_size, stratify=topic, random_state=0)

    rows = []
    for name, model in [
        ("scikit-learn MultinomialNB", MultinomialNB(alpha=1.0)),
        ("bayesnb mean (Laplace)", bnb.NaiveBayes(bnb.Multinomial(alpha=1.0), class_alpha=0)),
        ("bayesnb bayes (Dirichlet-multinomial)",
         bnb.NaiveBayes(bnb.Multinomial(alpha=1.0), method="bayes")),
    ]:
        pipe = make_pipeline(CountVectorizer(), model).fit(train_text, train_y)
        proba = pipe.predict_proba(test_text)
        rows.append({"model": name, "accuracy": pipe.score(test_text, test_y),
                     "log_loss": log_loss(test_y, proba, labels=pipe.classes_)})
    print(f"{args.train_size} training documents, {len(test_text)} held out")
    print(pd.DataFrame(rows).set_index("model").round(4), "\n")

    vectorizer = CountVectorizer().fit(train_text)
    X = vectorizer.transform(train_text)  # scipy.sparse CSR, never densified
    clf = bnb.NaiveBayes(bnb.Multinomial(alpha=1.0), method="bayes").fit(X, train_y)
    (table,) = clf.set_params(method="mean").conditional_tables().values()
    words = vectorizer.get_feature_names_out()
    for label, probs in zip(clf.classes_, table.to_numpy(), strict=True):
        top = np.argsort(probs)[::-1][:6]
        print(f"{label:8} " + ", ".join(f"{words[j]} {probs[j]:.3f}" for j in top))

    clf.set_params(method="bayes")
    docs = ["the team market", "new study of the league", "bank report on energy data"]
    u = clf.predict_uncertainty(vectorizer.transform(docs).toarray(), num_draws=500)
    print("\nambiguous documents: predictive p(topic | doc), 90% interval over the posterior")
    for doc, p, lo, hi, mi in zip(docs, u["proba"], u["lower"], u["upper"], u["mutual_info"],
                                  strict=True):
        cells = ", ".join(f"{c} {pi:.2f} [{a:.2f}, {b:.2f}]"
                          for c, pi, a, b in zip(clf.classes_, p, lo, hi, strict=True))
        print(f"  {doc!r:32} {cells}  (mutual information {mi:.3f})")


# %%
# Run as a script, this prints the following (the documentation's gallery runs it with the
# quick settings listed on its index page).

if __name__ == "__main__":
    main()
