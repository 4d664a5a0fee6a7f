"""Built-in datasets: the seeds' worked examples, shipped as CSV files with the package.

=============  ======  =====================================================================
name           rows    what
=============  ======  =====================================================================
playtennis     14      Mitchell's PlayTennis days (seed 003): four categorical columns
temperature    14      the continuous-temperature variant of PlayTennis (seed 003)
titanic        2201    R's ``datasets::Titanic`` expanded to one row per person (seed 004)
topics         600     short synthetic documents of 3 topics (sport, finance, science), drawn
                       from topic word lists with a fixed seed: a text-like count data set
=============  ======  =====================================================================

scikit-learn's shipped sets (``iris``, ``wine``, ``breast_cancer``, ``digits``) load through
the same :func:`load` when scikit-learn is installed. ``digits`` (1797 8x8 images, each pixel
an ink count 0-16) defaults to one Multinomial over the 64 pixels (see :func:`default_features`).
"""

from __future__ import annotations

from importlib import resources
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

if TYPE_CHECKING:
    from ..families import Family

_TARGETS = {"playtennis": "PlayTennis", "temperature": "PlayTennis", "titanic": "Survived"}
_SKLEARN = ("iris", "wine", "breast_cancer", "digits")


def _read(name: str) -> pd.DataFrame:
    with resources.files(__package__).joinpath("data", f"{name}.csv").open("r") as f:
        return pd.read_csv(f)


def load_playtennis() -> tuple[pd.DataFrame, pd.Series]:
    """The 14 PlayTennis days: Outlook, Temperature, Humidity, Wind -> PlayTennis.

    Returns
    -------
    X : DataFrame of shape (14, 4)
        Four text columns.
    y : Series of shape (14,)
        ``PlayTennis``, "No" or "Yes".

    Examples
    --------
    >>> from bayesnb.datasets import load_playtennis
    >>> days, play = load_playtennis()
    >>> days.head(2)
      Outlook Temperature Humidity    Wind
    0   Sunny         Hot     High    Weak
    1   Sunny         Hot     High  Strong
    >>> play.value_counts().to_dict()
    {'Yes': 9, 'No': 5}"""
    frame = _read("playtennis").drop(columns="Day")
    return frame.drop(columns="PlayTennis"), frame["PlayTennis"]


def load_temperature() -> tuple[pd.DataFrame, pd.Series]:
    """Temperatures (degrees C) of the 9 'Yes' and 5 'No' days of seed 003.

    Returns
    -------
    X : DataFrame of shape (14, 1)
        ``Temperature``.
    y : Series of shape (14,)
        ``PlayTennis``, "No" or "Yes".

    Examples
    --------
    >>> from bayesnb.datasets import load_temperature
    >>> X, y = load_temperature()
    >>> X.groupby(y)["Temperature"].mean().round(2).to_dict()
    {'No': 23.88, 'Yes': 21.64}"""
    frame = _read("temperature")
    return frame[["Temperature"]], frame["PlayTennis"]


def titanic_counts() -> pd.DataFrame:
    """R's ``Titanic`` as a frequency table: Class, Sex, Age, Survived, Freq (32 rows).

    Examples
    --------
    >>> from bayesnb.datasets import titanic_counts
    >>> counts = titanic_counts()
    >>> counts.head(3)
      Class   Sex    Age Survived  Freq
    0   1st  Male  Child       No     0
    1   2nd  Male  Child       No     0
    2   3rd  Male  Child       No    35
    >>> int(counts["Freq"].sum())
    2201"""
    return _read("titanic")


def load_titanic(*, shuffle: bool = False, random_state: int | None = None
                 ) -> tuple[pd.DataFrame, pd.Series]:
    """R's ``Titanic`` with one row per person (2201 rows): Class, Sex, Age -> Survived.

    Parameters
    ----------
    shuffle : bool, default=False
        Return the rows in a random order. By default the rows come in the order of R's
        table, **sorted by the label** (the 1490 who died, then the 711 who survived; within
        each, by age, sex and class of travel): the unshuffled folds of
        ``cross_val_score(clf, X, y, cv=3)`` then hold different mixes of passengers and
        score far apart (0.44 / 0.78 / 0.85 with ``NaiveBayes()``). Pass ``shuffle=True``,
        or give ``cv=StratifiedKFold(5, shuffle=True, random_state=0)``. The default keeps
        R's order, which the out-of-core user guide (``docs/user_guide/outofcore.md``) and
        stored model files rely on.
    random_state : int, optional
        Seed of the shuffle (``numpy.random.default_rng``); used only with ``shuffle=True``.

    Returns
    -------
    X : DataFrame of shape (2201, 3)
        Columns ``Class``, ``Sex``, ``Age`` (text).
    y : Series of shape (2201,)
        ``Survived``, "No" or "Yes".

    Examples
    --------
    >>> from bayesnb.datasets import load_titanic
    >>> X, y = load_titanic()
    >>> X.shape, y.value_counts().to_dict()
    ((2201, 3), {'No': 1490, 'Yes': 711})
    >>> X, y = load_titanic(shuffle=True, random_state=0)
    >>> y.head(5).tolist()
    ['No', 'Yes', 'No', 'No', 'No']
    """
    counts = titanic_counts()
    people = counts.loc[np.repeat(counts.index.to_numpy(), counts["Freq"])].reset_index(drop=True)
    people = people.drop(columns="Freq")
    if shuffle:
        order = np.random.default_rng(random_state).permutation(len(people))
        people = people.iloc[order].reset_index(drop=True)
    return people.drop(columns="Survived"), people["Survived"]


def load_topics() -> tuple[pd.Series, pd.Series]:
    """600 short documents (``text``) and their topic. Each document mixes its topic's words
    (55%), common words (35%) and other topics' words (10%), so the classes overlap. Turn
    the texts into counts with scikit-learn's ``CountVectorizer``.

    Examples
    --------
    >>> from sklearn.feature_extraction.text import CountVectorizer
    >>> from bayesnb.datasets import load_topics
    >>> text, topic = load_topics()
    >>> text.iloc[0]
    'energy protein to physics new energy climate data protein and'
    >>> topic.value_counts().to_dict()
    {'science': 200, 'sport': 200, 'finance': 200}
    >>> CountVectorizer().fit_transform(text).shape  # documents x words, "a" left out
    (600, 65)"""
    frame = _read("topics")
    return frame["text"], frame["topic"]


def load(name: str) -> tuple[pd.DataFrame, pd.Series]:
    """``(X, y)`` of a built-in or scikit-learn dataset by name (see :func:`names`).

    Examples
    --------
    >>> from bayesnb import datasets
    >>> X, y = datasets.load("topics")  # the documents as word counts
    >>> X.shape, X.columns[:3].tolist()
    ((600, 66), ['a', 'after', 'and'])
    >>> X, y = datasets.load("iris")  # from scikit-learn
    >>> X.shape
    (150, 4)"""
    loaders = {"playtennis": load_playtennis, "temperature": load_temperature,
               "titanic": load_titanic, "topics": _topic_counts}
    if name in loaders:
        return loaders[name]()
    if name in _SKLEARN:
        try:
            import sklearn.datasets as skd
        except ImportError:  # pragma: no cover - scikit-learn is a dependency
            raise ImportError(f"dataset {name!r} needs scikit-learn.") from None
        bunch = getattr(skd, f"load_{name}")(as_frame=True)
        return bunch.data, bunch.target
    raise ValueError(f"unknown dataset {name!r}; choose one of {names()}.")


def _topic_counts() -> tuple[pd.DataFrame, pd.Series]:
    """The topics documents as a word-count DataFrame (one column per word)."""
    text, topic = load_topics()
    vocabulary = sorted({w for doc in text for w in doc.split()})
    index = {w: j for j, w in enumerate(vocabulary)}
    counts = np.zeros((len(text), len(vocabulary)), dtype=np.int64)
    for i, doc in enumerate(text):
        for w in doc.split():
            counts[i, index[w]] += 1
    return pd.DataFrame(counts, columns=vocabulary), topic


def default_features(name: str) -> Family | None:
    """The family specification a built-in dataset calls for (``None``: infer from dtypes).

    ``topics`` and ``digits`` are counts: one Multinomial over all columns. For ``digits`` the
    pixels are ink counts 0-16 and a class is a distribution of ink over the 64 pixels, the
    model of scikit-learn's ``MultinomialNB`` on these data. Gaussians (what the dtypes infer)
    fit border pixels of near-zero variance within a class: 5-fold CV log loss 103 under the
    posterior mean (5.3 exact Bayes), against 2.77 (2.71) for Multinomial and 2.79 (2.74) for
    Poisson; accuracy 0.89-0.90 for all.

    Examples
    --------
    >>> import bayesnb as bnb
    >>> from bayesnb import datasets
    >>> datasets.default_features("digits")
    Multinomial(alpha=1.0)
    >>> print(datasets.default_features("titanic"))
    None
    >>> X, y = datasets.load("topics")
    >>> clf = bnb.NaiveBayes(datasets.default_features("topics")).fit(X, y)
    >>> [block.family.name for block in clf.blocks_]  # one block over the 66 words
    ['multinomial']
    """
    if name in ("topics", "digits"):
        from ..families import Multinomial

        return Multinomial()
    return None


#: one line per dataset for ``bayesnb datasets``: rows, columns, target and where it comes from
_DESCRIPTIONS = {
    "playtennis": "14 rows, 4 columns: Mitchell's PlayTennis days (Outlook, Temperature, "
                  "Humidity, Wind; categorical) -> PlayTennis",
    "temperature": "14 rows, 1 column: PlayTennis with a numeric Temperature (degrees C) "
                   "-> PlayTennis",
    "titanic": "2201 rows, 3 columns: R's datasets::Titanic, one row per person (Class, Sex, "
               "Age; categorical) -> Survived",
    "topics": "600 rows, 66 columns: word counts of synthetic short documents (multinomial) "
              "-> topic (sport, finance, science)",
    "iris": "150 rows, 4 columns: Fisher's iris flowers (sepal and petal sizes, cm) -> "
            "species 0-2 (scikit-learn)",
    "wine": "178 rows, 13 columns: chemical analysis of Italian wines -> cultivar 0-2 "
            "(scikit-learn)",
    "breast_cancer": "569 rows, 30 columns: Wisconsin breast cancer cell-nucleus "
                     "measurements -> 0 malignant / 1 benign (scikit-learn)",
    "digits": "1797 rows, 64 columns: 8x8 images of handwritten digits, pixel counts 0-16 "
              "-> digit 0-9 (scikit-learn)",
}


def describe(name: str) -> str:
    """One line about a dataset of :func:`names`: rows, columns, target, source.

    Examples
    --------
    >>> from bayesnb import datasets
    >>> print(datasets.describe("playtennis"))
    14 rows, 4 columns: Mitchell's PlayTennis days (Outlook, Temperature, Humidity, Wind; ...
    """
    if name not in _DESCRIPTIONS:
        raise ValueError(f"unknown dataset {name!r}; choose one of {names()}.")
    return _DESCRIPTIONS[name]


def names() -> list[str]:
    """Names :func:`load` accepts (``topics`` loads as word counts).

    Examples
    --------
    >>> from bayesnb import datasets
    >>> datasets.names()
    ['playtennis', 'temperature', 'titanic', 'topics', 'iris', 'wine', 'breast_cancer', 'digits']"""
    return ["playtennis", "temperature", "titanic", "topics", *_SKLEARN]


__all__ = ["default_features", "describe", "load", "load_playtennis", "load_temperature",
           "load_titanic", "load_topics", "names", "titanic_counts"]
