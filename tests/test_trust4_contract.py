"""The family contract is checked where a family is written (hunt 4: a Geometric family written
from the docs). A class that leaves out a required declaration is a ``TypeError`` when it is
made, naming it, instead of a hyperprior silently replaced by its mean, an MCMC model that
cannot predict, or a model file that will not load; a MAP estimate left undefined by its
prior says so; and docs/architecture.md lists what a newcomer writes."""

import re
from pathlib import Path

import numpy as np
import numpyro.distributions as dist
import pandas as pd
import pytest

import bayesnb as bnb
from bayesnb.families import REGISTRY
from bayesnb.families._contract import REQUIRED, check_declarations

#: what a subclass cannot inherit: Python's own and ABCMeta's bookkeeping
_BOOKKEEPING = ("__dict__", "__weakref__", "__abstractmethods__", "_abc_impl")


def exponential_without(*names, **changes) -> type:
    """A family written from scratch: the Exponential's members but ``names`` (and with
    ``changes``) in a class directly under ``ConjugateFamily``, named ``Rate``."""
    body = {k: v for k, v in vars(bnb.Exponential).items()
            if k not in _BOOKKEEPING and k not in names}
    named = {} if "name" in names else {"name": "trust4_rate"}
    return type("Rate", (bnb.ConjugateFamily,), {**body, **named, **changes})


def data():
    rng = np.random.default_rng(4)
    y = np.arange(30) % 2
    return pd.DataFrame({"t": rng.exponential(1.0 + y), "u": rng.exponential(2.0 - y)}), y


@pytest.mark.parametrize("attribute", [*REQUIRED, "param_names"])
def test_a_family_without_a_required_attribute_is_refused_when_made(attribute):
    if attribute == "param_names":  # stated empty, as the Capabilities default
        make = lambda: exponential_without(param_names=())  # noqa: E731
    else:
        make = lambda: exponential_without(attribute)  # noqa: E731
    with pytest.raises(TypeError, match=rf"^Rate does not state {attribute} \("):
        make()


def test_every_missing_attribute_is_named_at_once():
    with pytest.raises(TypeError, match=r"does not state stats_type \(.*\); params_type \("):
        exponential_without("stats_type", "params_type")


@pytest.mark.parametrize("hyper", [(), ("rate", "shape"), ("shape",)])
def test_hyper_must_be_the_init_parameters_in_order(hyper):
    with pytest.raises(TypeError, match=r"Rate\._hyper is .* but its __init__ takes "
                                        r"\('shape', 'rate'\)"):
        exponential_without(_hyper=hyper)


def test_the_built_in_families_and_subclasses_pass_and_abstract_classes_are_skipped():
    for cls in REGISTRY.values():
        check_declarations(cls)
    # a per-column family overrides param_dims instead (Categorical): no param_names needed
    assert bnb.Categorical.param_names == () and check_declarations(bnb.Categorical) is None
    exponential_without(param_names=(), param_dims=lambda self, prior, schema: {"rate": ()})
    exponential_without("_hyper", "__init__", _hyper=())  # no hyperparameters: () stated

    class Unfinished(bnb.ConjugateFamily):  # abstract: Python refuses it when instantiated
        pass

    with pytest.raises(TypeError, match="abstract"):
        Unfinished()


@pytest.mark.filterwarnings("ignore::bayesnb.inference.ConvergenceWarning")  # a short chain
def test_a_declared_hyperprior_of_a_runtime_family_is_refused_by_closed_forms_and_sampled(
        monkeypatch):
    Rate = exponential_without()
    monkeypatch.setitem(REGISTRY, Rate.name, Rate)
    X, y = data()
    family = Rate(shape=dist.Gamma(2.0, 1.0))
    assert list(family.get_params()) == ["shape", "rate"] and repr(family).startswith(
        "Rate(shape=Gamma(...)")
    with pytest.raises(ValueError, match=r"Rate has a hyperprior on shape .* method='bayes' "
                                         r"is unavailable"):
        bnb.NaiveBayes(features=family, method="bayes").fit(X, y)
    clf = bnb.NaiveBayes(features=family, method="mcmc", num_warmup=50, num_samples=50,
                         num_chains=1, progress_bar=False).fit(X, y)
    assert clf.draws_["trust4_rate.shape"].shape == (1, 50)
    assert np.isfinite(clf.predict_proba(X)).all()


class NoMapCheck(bnb.Bernoulli):
    """A Bernoulli that, as a newcomer's family might, does not refuse MAP under a prior
    concentration below 1 (``check_prior`` left at its default)."""

    name = "trust4_no_map_check"

    def check_prior(self, prior, schema, method):
        pass


def test_an_undefined_map_estimate_blames_the_prior_not_missing_data():
    X, y = np.array([[1], [1], [0], [1]]), ["a", "a", "b", "b"]  # no zero in class a
    with pytest.raises(ValueError) as info:
        bnb.NaiveBayes(features=NoMapCheck(beta=0.5), method="map").fit(X, y)
    message = str(info.value)
    assert re.match(r"column 0, class 'a': the posterior mode is undefined or on the boundary "
                    r"under method='map'", message)
    assert "concentration is at most 1" in message and "no observed value" not in message
    # ML keeps its reason: a class with no observed value is 0/0
    with pytest.raises(ValueError, match=r"class 'b': no observed value in this class, so the "
                                         r"estimate is 0/0 under method='ml'"):
        bnb.NaiveBayes(features=bnb.Exponential(), method="ml").fit(
            np.array([[1.0], [2.0], [np.nan], [np.nan]]), ["a", "a", "b", "b"])


def test_the_architecture_page_lists_what_a_new_family_writes():
    text = (Path(__file__).parents[1] / "docs" / "architecture.md").read_text()
    section = text[text.index("- **A new likelihood family**"):text.index("- **A fast form**")]
    written = set(re.findall(r"`([A-Za-z_]+)`", section))
    needed = (set(bnb.ConjugateFamily.__abstractmethods__)
              | set(bnb.NonparametricFamily.__abstractmethods__) | set(REQUIRED)
              | {"param_names", "param_dims"})
    assert needed <= written, sorted(needed - written)
    assert "betaln" in section and "gammaln_of" in section and "-p " in section
