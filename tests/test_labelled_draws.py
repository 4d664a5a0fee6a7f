"""Draws remember the classes, columns and levels they were drawn for (``_labelled_draws``):
draws of one model handed to another laid out otherwise are refused, not read by position.

The reference for what the draws mean is the model they were drawn from: the same draws, put
in the other model's order by name, must give that model's own answer."""

import jax
import numpy as np
import pandas as pd
import pytest

import bayesnb as bnb
from bayesnb._labelled_draws import Draws


@pytest.fixture
def two_level_orders(x64):
    """The same data fitted twice: levels sorted (hi, lo, mid) and a category's own order
    (lo, mid, hi)."""
    rng = np.random.default_rng(0)
    c = rng.choice(["lo", "mid", "hi"], 60)
    y = np.where(c == "hi", "a", rng.choice(["a", "b"], 60))
    sorted_levels = pd.DataFrame({"c": c, "d": rng.choice(["u", "v"], 60)})
    own_order = sorted_levels.assign(c=pd.Categorical(c, categories=["lo", "mid", "hi"]))
    fit = lambda X: bnb.NaiveBayes(method="bayes").fit(X, y)  # noqa: E731
    return fit(sorted_levels), sorted_levels, fit(own_order), own_order


def test_draws_of_another_level_order_are_refused_and_plain_ones_read_by_position(
        two_level_orders):
    m1, X1, m2, X2 = two_level_orders
    draws = m1.sample_posterior(300, seed=1)
    assert isinstance(draws, Draws) and draws.labels.classes == ("a", "b")
    for call in (lambda: m2.predict_uncertainty(X2, draws=draws),
                 lambda: m2.to_arviz(draws=draws)):
        with pytest.raises(ValueError, match=r"column 'c' with the levels \['hi', 'lo', 'mid'\]"
                                             r"; this model's levels of 'c' are \['lo', 'mid'"):
            call()
    mine = m1.predict_uncertainty(X1, draws=draws)["proba"]
    # the same draws in m2's level order, by name: m2 then answers as m1 does
    order = [("hi", "lo", "mid").index(level) for level in ("lo", "mid", "hi")]
    moved = dict(draws, **{"categorical.c.probs": draws["categorical.c.probs"][..., order]})
    np.testing.assert_allclose(m2.predict_uncertainty(X2, draws=moved)["proba"], mine,
                               rtol=1e-12)
    # a plain dict is read by position, as documented: another answer, not an error
    misread = m2.predict_uncertainty(X2, draws=dict(draws))["proba"]
    assert np.abs(misread - mine).max() > 0.05


def test_draws_of_other_classes_or_column_order_are_refused(x64):
    rng = np.random.default_rng(1)
    X = pd.DataFrame(rng.normal(size=(40, 2)), columns=["u", "v"])
    y = rng.choice(["a", "b"], 40)
    gaussian = lambda: bnb.NaiveBayes(bnb.Gaussian(), method="bayes")  # noqa: E731
    draws = gaussian().fit(X, y).sample_posterior(20)
    with pytest.raises(ValueError, match=r"block 'gaussian' with the columns \['u', 'v'\]"):
        gaussian().fit(X[["v", "u"]], y).predict_uncertainty(X[["v", "u"]], draws=draws)
    relabelled = gaussian().fit(X, np.where(y == "a", "z", "b"))  # classes b, z: a's is z's
    with pytest.raises(ValueError, match=r"classes \['a', 'b'\], in that order; this "
                                         r"model's classes_ are \['b', 'z'\]"):
        relabelled.predict_uncertainty(X, draws=draws)


def test_draws_stay_labelled_through_tree_map_and_copies(x64):
    import copy

    days, play = bnb.datasets.load_playtennis()
    draws = bnb.NaiveBayes().fit(days, play).sample_posterior(10)
    firsts = jax.tree_util.tree_map(lambda a: a[:, :5], draws)
    assert isinstance(firsts, Draws) and firsts.labels == draws.labels
    assert {k: v.shape[1] for k, v in firsts.items()} == dict.fromkeys(draws, 5)
    assert copy.deepcopy(draws).labels == draws.labels
