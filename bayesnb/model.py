"""The generative NumPyro program behind a fitted specification.

.. math::

    \\boldsymbol\\pi \\sim \\mathrm{Dirichlet}(\\boldsymbol\\gamma), \\quad
    \\theta_b \\sim p_b(\\theta_b) \\text{ for every block } b, \\quad
    c_i \\sim \\mathrm{Categorical}(\\boldsymbol\\pi), \\quad
    x_{i,b} \\mid c_i \\sim p_b(x_{i,b} \\mid \\theta_{b, c_i}).

Each family contributes its own ``sample_params`` and ``observe`` statements; this module only
strings them together. Sample sites are named ``"{block}.{parameter}"`` with ``block`` the
family's name (numbered when a family has several blocks), the class proportions are
``"class_probs"`` and the labels ``"y"``. Missing feature values are masked out of the
likelihood, never imputed.
"""

from __future__ import annotations

from collections import Counter

import jax.numpy as jnp
import numpy as np
import numpyro
import numpyro.distributions as dist

from ._classes import _concentration, _fixed


def block_sites(clf) -> list[str]:
    """The site prefix of every block of a fitted ``NaiveBayes``."""
    names = [b.family.name for b in clf.blocks_]
    count, seen = Counter(names), Counter()
    out = []
    for name in names:
        out.append(name if count[name] == 1 else f"{name}{seen[name]}")
        seen[name] += 1
    return out


def naive_bayes_model(families, priors, sites, class_alpha, class_prior, xs, y):
    """The joint model p(pi, theta, y, X). ``xs`` are the encoded blocks, ``y`` label codes."""
    n_classes = len(class_alpha) if class_prior is None else len(class_prior)
    if class_prior is None:
        pi = numpyro.sample("class_probs", dist.Dirichlet(class_alpha))
    else:
        pi = class_prior
    params = [family.sample_params(prior, n_classes, site)
              for family, prior, site in zip(families, priors, sites, strict=True)]
    with numpyro.plate("row", y.shape[0], dim=-1):
        numpyro.sample("y", dist.Categorical(pi), obs=y)
    for family, p, x, site in zip(families, params, xs, sites, strict=True):
        family.observe(p, x, y, site)


def model_and_data(clf, X, y):
    """``(model, kwargs)`` for ``clf``'s specification and the data (X, y), ready for
    ``numpyro.infer`` (``MCMC(NUTS(model)).run(key, **kwargs)``, ``log_density`` ...)."""
    from ._data import labels_to_codes

    xs, _ = clf._encoded_blocks(X)
    codes = labels_to_codes(y, clf.classes_)
    class_prior = clf._class_prior_array()
    if class_prior is None:
        gamma = _concentration(clf.class_alpha, len(clf.classes_))
        if np.any(gamma <= 0):
            raise ValueError("the generative model needs class_alpha > 0 (a proper Dirichlet).")
        class_alpha, class_prior = jnp.asarray(gamma), None
    else:
        class_alpha, class_prior = None, jnp.asarray(_fixed(class_prior, len(clf.classes_)))
    kwargs = dict(
        families=tuple(type(b.family) for b in clf.blocks_),
        priors=tuple(b.prior for b in clf.blocks_),
        sites=tuple(block_sites(clf)),
        class_alpha=class_alpha,
        class_prior=class_prior,
        xs=tuple(jnp.asarray(x) for x in xs),
        y=jnp.asarray(codes),
    )
    return naive_bayes_model, kwargs
