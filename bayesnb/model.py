"""The generative NumPyro program behind a fitted specification.

.. math::

    \\boldsymbol\\pi \\sim \\mathrm{Dirichlet}(\\boldsymbol\\gamma), \\quad
    \\theta_b \\sim p_b(\\theta_b) \\text{ for every block } b, \\quad
    c_i \\sim \\mathrm{Categorical}(\\boldsymbol\\pi), \\quad
    x_{i,b} \\mid c_i \\sim p_b(x_{i,b} \\mid \\theta_{b, c_i}).

Each family contributes its own ``sample_params`` and ``observe`` statements; this module only
strings them together. Missing feature values are masked out of the likelihood, never imputed.

Site names (the one place they are defined; NUTS draws, exact draws, ``priors=``, model files,
``mcmc_summary`` and ``to_arviz`` all use them):

* ``"class_probs"``: the class proportions; ``"y"``: the labels;
* ``"{block}.{parameter}"``: a parameter shared by a block's columns, laid out (class, column),
  e.g. ``"bernoulli.theta"``, ``"gaussian.mean"``, ``"poisson.rate"``, ``"multinomial.probs"``;
  ``block`` is the family's name, numbered (``"gaussian0"``, ``"gaussian1"``) when a family
  has several blocks, and ArviZ names the column dimension ``"{block}_feature"``;
* ``"{block}.{column}.{parameter}"``: a parameter of one column, e.g.
  ``"categorical.Class.probs"`` (each Categorical column has its own levels, so its own
  Dirichlet, laid out (class, level); ArviZ names the level dimension ``"{column}_level"``);
  ``"{block}.{column}.x"`` are that column's simulated values;
* ``"{block}.{hyperparameter}"``: a hyperparameter with a hyperprior, e.g.
  ``"multinomial.alpha"``;
* under ``pooling="partial"`` (``families._pooling``) the classes' shared mean and
  concentration sit beside the parameter they pool: ``"{block}.shared_mean"`` and
  ``"{block}.concentration"`` (``"bernoulli.shared_mean"``, laid out by column), or
  ``"{block}.{column}.shared_mean"`` and ``"{block}.{column}.concentration"`` for a
  parameter of one column (``"categorical.Class.shared_mean"``, laid out by level).

``{column}`` is ``str(column)``: a DataFrame's column name, and 0, 1, ... for a NumPy array (so
an array's sites are ``"categorical.0.probs"``, ...). When two columns of a model print alike
(the int 1 and the string "1"), every column is named by its position instead. Families key a
column's parameters ``"{j}.{parameter}"`` by the column's position ``j`` in the block;
:func:`site_name` turns that into the public name, and the NumPyro program publishes it under
that name (:class:`ColumnSites`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import jax
import jax.numpy as jnp
import numpy as np
import numpyro
import numpyro.distributions as dist

from ._classes import _concentration, _fixed
from ._joined_blocks import join_draws, joined_blocks, joined_model, split_draws
from .fast import form_of
from .fast._compiled import compiled

if TYPE_CHECKING:
    import pandas as pd

    import bayesnb

    from ._typing import ArrayLike, Data


def block_sites(blocks) -> list[str]:
    """The site prefix of every fitted block (``NaiveBayes.blocks_``, or a fitted
    ``NaiveBayes`` itself)."""
    names = [b.family.name for b in getattr(blocks, "blocks_", blocks)]
    count, seen = Counter(names), Counter()
    out = []
    for name in names:
        out.append(name if count[name] == 1 else f"{name}{seen[name]}")
        seen[name] += 1
    return out


def column_labels(blocks) -> list[tuple[str, ...]]:
    """How each block's columns appear in site names and ArviZ coordinates: ``str(column)``, or
    every column's position in the model when two columns' strings coincide."""
    blocks = getattr(blocks, "blocks_", blocks)
    labels = [str(c) for b in blocks for c in b.schema.columns]
    if len(set(labels)) == len(labels):
        return [tuple(str(c) for c in b.schema.columns) for b in blocks]
    return [tuple(str(p) for p in b.positions) for b in blocks]


def site_name(block_site: str, key: str, labels) -> str:
    """The public site of a family's key ``key`` in the block whose prefix is ``block_site``:
    a per-column key ``"{j}.{parameter}"`` (``j`` the column's position in the block) becomes
    ``"{block_site}.{labels[j]}.{parameter}"``, any other key ``"{block_site}.{key}"``."""
    head, dot, rest = key.partition(".")
    if dot and head.isdigit():
        return f"{block_site}.{labels[int(head)]}.{rest}"
    return f"{block_site}.{key}"


def positional_site(name: str, sites, labels) -> str:
    """The site that ``name`` in the older positional form ``"{block}.{j}.{parameter}"`` (the
    block's j-th column) stands for, ``"{block}.{column}.{parameter}"``; other names as given.
    ``sites`` are the blocks' prefixes (:func:`block_sites`), ``labels`` their
    :func:`column_labels`."""
    for prefix, labs in zip(sites, labels, strict=True):
        key = name[len(prefix) + 1:] if name.startswith(prefix + ".") else ""
        head, dot, _ = key.partition(".")
        if dot and head.isdigit() and int(head) < len(labs):
            return site_name(prefix, key, labs)
    return name


def parameter_sites(blocks) -> dict[str, tuple[int, str]]:
    """``{site: (block index, family key)}`` of every block parameter (not ``class_probs``)."""
    blocks = getattr(blocks, "blocks_", blocks)
    return {site_name(prefix, key, labels): (i, key)
            for i, (b, prefix, labels) in enumerate(zip(blocks, block_sites(blocks),
                                                        column_labels(blocks), strict=True))
            for key in param_keys(b)}


def block_draws(draws: dict, blocks) -> list[dict]:
    """Every block's draws keyed as its family keys them (``"{j}.probs"``, ``"theta"``), one
    dict a block (the sites named once: per block, O(blocks^2) on a wide model)."""
    out: list[dict] = [{} for _ in getattr(blocks, "blocks_", blocks)]
    for site, (i, key) in parameter_sites(blocks).items():
        out[i][key] = draws[site]
    return out


class ColumnSites(numpyro.primitives.Messenger):
    """Publish a block's per-column sites under their column names: the family samples
    ``"{block}.{j}.{parameter}"`` (it knows positions, not names) and the trace, ``priors=``
    and ``Predictive`` see ``site_name(block, "{j}.{parameter}", labels)``."""

    def __init__(self, fn=None, block_site: str = "", labels=None):
        self.prefix, self.labels = block_site + ".", labels
        super().__init__(fn)

    def process_message(self, msg):
        name = msg["name"]
        if msg["type"] == "sample" and self.labels is not None and name.startswith(self.prefix):
            key = name[len(self.prefix):]
            head = key.partition(".")[0]
            if head.isdigit() and int(head) < len(self.labels):
                msg["name"] = site_name(self.prefix[:-1], key, self.labels)


def param_keys(block) -> list:
    """The family's keys of a block's parameters (``"{j}.probs"`` per Categorical column);
    :func:`site_name` gives their public sites."""
    return list(block.family.param_dims(block.prior, block.schema))


def batched_blocks(blocks, priors=None) -> tuple[bool, ...]:
    """Per block whether its family's form samples it batched (``FastForm.batched_sites``):
    where nothing is sampled or replaced beside it (no ``priors=``, hyperprior or pooling)."""
    return tuple(form_of(b.family).batched_sites and not priors and not b.family.hyperpriors()
                 and b.family.pooling_prior() is None for b in blocks)


def unbatched_draws(draws: dict, blocks, sites, labels, batched) -> dict:
    """Draws (or simulated values) of the ``batched`` blocks' sites under their own sites,
    named by column as :class:`ColumnSites` names them; others as given."""
    out = dict(draws)
    for block, site, labs, batch in zip(blocks, sites, labels, batched, strict=True):
        if batch:
            mine = [k for k in out if k.startswith(f"{site}.#")]
            apart = form_of(block.family).unbatched_draws(
                {k[len(site) + 1:]: out.pop(k) for k in mine}, block.prior)
            out.update({site_name(site, key, labs): v for key, v in apart.items()})
    return dict(sorted(out.items()))


def batched_draws(draws: dict, blocks, sites, labels, batched) -> dict:
    """The inverse of :func:`unbatched_draws` for the parameters' draws (named by column)."""
    out = dict(draws)
    for block, site, labs, batch in zip(blocks, sites, labels, batched, strict=True):
        if batch:
            together = form_of(block.family).batched_draws(
                {k: out.pop(site_name(site, k, labs)) for k in param_keys(block)}, block.prior)
            # a batched key ("#3levels.probs") is no column's: site_name keeps it as it is
            out.update({site_name(site, k, labs): v for k, v in together.items()})
    return out


def sample_block(family, prior, hyper: dict, n_classes: int, site: str, pooling=None):
    """A block's parameters; hyperparameters given as distributions are sampled first
    (site ``"{site}.{name}"``): a hierarchical prior, so the data choose the smoothing. With
    ``pooling`` (the family's ``pooling_prior``) the classes' prior is the shared mean and
    concentration the family samples (``sample_pooled``)."""
    for name, hyperprior in (hyper or {}).items():
        prior = family.with_hyper(prior, name, numpyro.sample(f"{site}.{name}", hyperprior))
    if pooling is not None:
        prior = family.sample_pooled(prior, pooling, site)
    return family.sample_params(prior, n_classes, site), prior


def naive_bayes_model(families, priors, sites, class_alpha, class_prior, xs, y, n_rows=None,
                      total_count=None, hyper=None, labels=None, pooling=None, batched=None):
    """The joint model p(pi, theta, y, X). ``xs`` are the encoded blocks, ``y`` label codes;
    ``y=None`` and ``xs`` of ``None`` make it simulate ``n_rows`` rows (Multinomial blocks
    then draw documents of ``total_count`` words). ``labels`` (:func:`column_labels`) name the
    per-column sites; without them they keep the columns' positions. ``pooling``: per block
    its family's ``pooling_prior()`` (None: the classes do not share strength). ``batched``:
    per block, sampled (and, with no values, simulated) by the family's batched sites
    (:func:`batched_blocks`)."""
    n_classes = len(class_alpha) if class_prior is None else len(class_prior)
    if class_prior is None:
        pi = numpyro.sample("class_probs", dist.Dirichlet(class_alpha))
    else:
        pi = class_prior
    hyper = hyper or (None,) * len(families)
    labels = labels or (None,) * len(families)
    pooling = pooling or (None,) * len(families)
    batched = batched or (False,) * len(families)
    params = []
    for family, prior, site, h, lab, pool, batch in zip(families, priors, sites, hyper, labels,
                                                        pooling, batched, strict=True):
        with ColumnSites(block_site=site, labels=lab):
            params.append(
                form_of(family).sample_params_batched(prior, n_classes, site) if batch
                else sample_block(family, prior, h, n_classes, site, pool)[0])
    if y is None and n_rows is None:
        # y=None with observed blocks (numpyro.infer.Predictive): sample a label per row
        sizes = [x.shape[0] for x in xs if x is not None and hasattr(x, "shape")]
        if not sizes:
            raise ValueError("naive_bayes_model: with y=None give the encoded blocks xs "
                             "(their rows get sampled labels) or n_rows=N (rows to simulate).")
        n_rows = sizes[0]
    with numpyro.plate("row", n_rows if y is None else y.shape[0], dim=-1):
        y = numpyro.sample("y", dist.Categorical(pi), obs=y)
    for family, p, x, site, lab, batch in zip(families, params, xs, sites, labels, batched,
                                              strict=True):
        with ColumnSites(block_site=site, labels=lab):
            if batch and x is None:
                form_of(family).observe_batched(p, y, site, total_count=total_count)
            else:
                family.observe(p, x, y, site, total_count=total_count)


def model_and_data(clf: bayesnb.NaiveBayes, X: Data, y: ArrayLike | None = None
                   ) -> tuple[Callable[..., None], dict[str, Any]]:
    """``(model, kwargs)`` for ``clf``'s specification and the data (X, y), ready for
    ``numpyro.infer`` (``MCMC(NUTS(model)).run(key, **kwargs)``, ``log_density`` ...).

    ``y=None`` leaves the labels unobserved: ``numpyro.infer.Predictive(model, ...)(key,
    **kwargs)`` then samples a label per row of ``X`` (site ``"y"``, codes into
    ``clf.classes_``) from the class proportions, as Predictive samples every unobserved
    site; the rows' features stay observed.

    Examples
    --------
    The program's sites, and its likelihood of each row at the posterior-mean parameters,
    which is what ``predict_joint_log_proba`` scores (labels ``y`` and values ``bernoulli.x``):

    >>> import numpy as np, numpyro, bayesnb as bnb
    >>> from numpyro.infer.util import log_likelihood
    >>> from bayesnb.model import model_and_data
    >>> X, y = np.array([[1, 0], [1, 1], [0, 1], [0, 0]]), ["spam", "spam", "ham", "ham"]
    >>> clf = bnb.NaiveBayes(bnb.Bernoulli(), method="mean").fit(X, y)
    >>> model, kwargs = model_and_data(clf, X, y)
    >>> trace = numpyro.handlers.trace(numpyro.handlers.seed(model, 0)).get_trace(**kwargs)
    >>> [(name, site["is_observed"]) for name, site in trace.items() if site["type"] == "sample"]
    [('class_probs', False), ('bernoulli.theta', False), ('y', True), ('bernoulli.x', True)]
    >>> params = {"class_probs": np.exp(clf.class_log_prior_)[None],
    ...           "bernoulli.theta": np.exp(clf.feature_log_prob_)[None]}
    >>> ll = log_likelihood(model, params, **kwargs)
    >>> per_row = np.asarray(ll["y"] + ll["bernoulli.x"].sum(-1), dtype=np.float64)[0]
    >>> per_row.round(4)
    array([-1.674, -1.674, -1.674, -1.674])
    >>> clf.predict_joint_log_proba(X)[[0, 1, 2, 3], [1, 1, 0, 0]].round(4)  # true classes
    array([-1.674, -1.674, -1.674, -1.674])"""
    from ._blocks import dense_block, encode_blocks
    from ._data import labels_to_codes

    xs, _ = encode_blocks(clf.fitted_, X, clf._unseen_rule())
    check_prior_values(clf.priors)  # before tracing turns a non-distribution into a tracer
    _, kwargs = model_and_data_for_simulation(clf)
    kwargs.update(xs=tuple(jnp.asarray(dense_block(x)) for x in xs),
                  y=None if y is None else jnp.asarray(labels_to_codes(y, clf.classes_)))
    return naive_bayes_model, kwargs


def class_setup(n_classes: int, class_alpha, class_prior):
    """``(class_alpha, class_prior)``: the Dirichlet concentration (or None) and the fixed
    class probabilities (or None), checked to define a proper generative model."""
    if class_prior is not None:
        return None, _fixed(class_prior, n_classes)
    gamma = _concentration(class_alpha, n_classes)
    if np.any(gamma <= 0):
        raise ValueError("the generative model (posterior draws, MCMC, simulation) needs "
                         "class_alpha > 0 (a proper Dirichlet prior) or a fixed class_prior.")
    return gamma, None


def simulate(clf: bayesnb.NaiveBayes, n_rows: int, *, posterior: bool = True, num_draws: int = 1,
             seed: int = 0, total_count: int | None = None) -> pd.DataFrame:
    """Synthetic (X, y) from the prior or posterior predictive, through the same NumPyro
    program and ``numpyro.infer.Predictive``.

    Returns a DataFrame of ``num_draws * n_rows`` rows: the model's columns (category values,
    0/1 for Bernoulli, integer counts), the label column ``"y"`` (class labels) and ``"draw"``.
    Posterior draws are the NUTS draws under ``method="mcmc"``, else exact conjugate draws.
    The program is compiled once per structure (families, hyperparameters, rows and draws):
    a refit, or another model of the same structure, simulates without compiling.
    Multinomial rows are documents of ``total_count`` words (default: the mean training
    document length), since document lengths are not part of the model.

    Examples
    --------
    ``NaiveBayes.simulate`` calls this:

    >>> import bayesnb as bnb
    >>> from bayesnb.model import simulate
    >>> from bayesnb.datasets import load_playtennis
    >>> days, play = load_playtennis()
    >>> clf = bnb.NaiveBayes(method="bayes").fit(days, play)
    >>> rows = simulate(clf, 4, seed=0)
    >>> rows.columns.tolist()
    ['Outlook', 'Temperature', 'Humidity', 'Wind', 'y', 'draw']
    >>> rows.equals(clf.simulate(4, seed=0))
    True
    """
    import pandas as pd

    out = simulate_sites(clf, n_rows, posterior=posterior, num_draws=num_draws, seed=seed,
                         total_count=total_count)
    frames = []
    for d in range(num_draws):
        columns = {}
        for block, site, labels in zip(clf.blocks_, block_sites(clf.blocks_),
                                       column_labels(clf.blocks_), strict=True):
            if block.family.column_sites:
                values = np.stack([np.asarray(out[site_name(site, f"{j}.x", labels)][d])
                                   for j in range(len(block.schema.columns))], axis=1)
            else:
                values = np.asarray(out[f"{site}.x"][d])
            values = block.family.decode(values, block.schema)
            for j, col in enumerate(block.schema.columns):
                columns[col] = values[:, j]
        frame = pd.DataFrame({c: columns[c] for c in clf.fitted_.columns})
        frame["y"] = clf.classes_[np.asarray(out["y"][d])]
        frame["draw"] = d
        frames.append(frame)
    return pd.concat(frames, ignore_index=True)


def simulate_sites(clf, n_rows, *, posterior=True, num_draws=1, seed=0, total_count=None):
    """The raw simulated sites ``{"y": (draws, n), "{block}.x": (draws, n, F),
    "{block}.{column}.x": (draws, n), ...}``
    (encoded: label and category codes) from ``numpyro.infer.Predictive``, compiled
    (:func:`_simulated`)."""
    _, kwargs = model_and_data_for_simulation(clf)
    # blocks of one family as one wider block (``_joined_blocks``): one set of sites to trace
    sites = kwargs["sites"]
    groups = joined_blocks(clf.blocks_, sites, clf.priors or ())
    kwargs.update(_joined_arguments(kwargs, clf.blocks_, groups))
    joined = joined_model(clf.blocks_, groups)
    # a Categorical's columns of one level count as one site: one a column took 0.4 s each
    kwargs["batched"] = batched = batched_blocks(joined, clf.priors)
    layout = (joined, kwargs["sites"], kwargs["labels"], batched)
    if total_count is None:
        lengths = [total for b in clf.blocks_ if b.stats is not None
                   for total in [b.family.simulation_total(b.stats)] if total is not None]
        total_count = max(1, int(round(lengths[0] / max(clf.class_count_.sum(), 1.0)))) \
            if lengths else 1
    kwargs.update(n_rows=n_rows, total_count=total_count)
    flat = None
    if posterior:
        draws = clf._posterior_draws(num_draws, seed)
        flat = {k: np.asarray(v).reshape((-1,) + v.shape[2:]) for k, v in draws.items()}
        available = next(iter(flat.values())).shape[0]
        if num_draws > available:  # distinct draws: NumPy's own message names no argument
            raise ValueError(f"num_draws={num_draws} is more than the {available} posterior "
                             f"draws (num_chains x num_samples of the NUTS run) to simulate "
                             f"from.")
        take = np.random.default_rng(seed).choice(available, num_draws, replace=False)
        flat = batched_draws(join_draws({k: v[take] for k, v in flat.items()}, groups,
                                        clf.blocks_, sites), *layout)
    # the class setup as arrays the program reads: a constant would be validated by NumPyro
    # op by op while tracing, each op compiled
    classes = {name: kwargs.pop(name) for name in ("class_alpha", "class_prior")}
    program = SimulationProgram(clf.priors, kwargs, None if posterior else num_draws)
    out = unbatched_draws({k: np.asarray(v) for k, v in _simulated(
        program, jax.random.PRNGKey(seed), flat, classes).items()}, *layout)
    return split_draws({k: v for k, v in out.items() if k == "y" or k.endswith(".x")},
                       groups, clf.blocks_, sites)


def _joined_arguments(kwargs: dict, blocks, groups) -> dict:
    """The per-block arguments of :func:`naive_bayes_model` for the blocks taken as
    ``groups`` (``_joined_blocks.joined_blocks``), each group one block of all its columns."""
    joined = joined_model(blocks, groups)
    return dict(families=tuple(kwargs["families"][g.blocks[0]] for g in groups),
                hyper=tuple(kwargs["hyper"][g.blocks[0]] for g in groups),
                pooling=tuple(kwargs["pooling"][g.blocks[0]] for g in groups),
                sites=tuple(g.site for g in groups), xs=(None,) * len(groups),
                priors=tuple(_copied(b.prior) for b in joined),
                labels=tuple(column_labels(joined)))


def joined_for_scoring(blocks, draws: dict, xs) -> tuple:
    """``(blocks, draws, xs)`` of a model scored over draws with its joinable blocks joined
    (``_joined_blocks.joined_blocks``): one wider block each, its parameters' draws
    concatenated along the columns under the joined model's site names, its encoded columns
    side by side. The same model as given when nothing joins. Only ``class_probs`` and the
    blocks' parameters are kept (what scoring reads)."""
    sites = block_sites(blocks)
    groups = joined_blocks(blocks, sites)
    if len(groups) == len(blocks):
        return blocks, draws, xs
    joined = joined_model(blocks, groups)
    old = {value: site for site, value in parameter_sites(blocks).items()}
    new_draws = {k: v for k, v in draws.items() if k == "class_probs"}
    for site, (p, key) in parameter_sites(joined).items():
        parts = [draws[old[i, key]] for i in groups[p].blocks]
        new_draws[site] = parts[0] if len(parts) == 1 else np.concatenate(parts, axis=-1)
    concatenate = np.concatenate if all(isinstance(x, np.ndarray) for x in xs) else (
        jax.numpy.concatenate)
    new_xs = tuple(xs[g.blocks[0]] if len(g.blocks) == 1 else
                   concatenate([xs[i] for i in g.blocks], axis=1) for g in groups)
    return joined, new_draws, new_xs


class SimulationProgram:
    """What :func:`_simulated` compiles once: the model's replacement priors, its simulation
    arguments but the class setup (:func:`model_and_data_for_simulation`, with ``n_rows`` and
    ``total_count``) and the number of prior draws (None: posterior draws are given). Equal
    by value, so a model of the same structure and hyperparameters reuses the compiled
    program: run op by op, NumPyro's ``Predictive`` compiled some 55 small programs on every
    first call."""

    def __init__(self, priors, kwargs: dict, num_samples: int | None):
        self.priors, self.kwargs, self.num_samples = priors, kwargs, num_samples
        leaves, treedef = jax.tree_util.tree_flatten((priors, kwargs, num_samples))
        self._key = (treedef, tuple(
            (np.dtype(leaf.dtype).str, np.shape(leaf), np.asarray(leaf).tobytes())
            if isinstance(leaf, np.ndarray | np.generic | jax.Array) else leaf
            for leaf in leaves))

    def __hash__(self) -> int:
        return hash(self._key)

    def __eq__(self, other) -> bool:
        return isinstance(other, SimulationProgram) and self._key == other._key


# compiling dominates a one-off simulation: at LLVM's level 0, with XLA's classic emitters, a
# Gaussian model's prior program compiled in 0.5 s against 2.5 s, and ran no slower than op by op
@compiled(static_argnums=(0,), compiler_options={
    "xla_backend_optimization_level": 0, "xla_cpu_use_fusion_emitters": False})
def _simulated(program: SimulationProgram, key, posterior_samples, classes: dict):
    """NumPyro's ``Predictive`` of the program: from ``posterior_samples`` (``{site: (draws,
    ...)}``), or from the prior (``program.num_samples`` draws); ``classes`` holds the
    ``class_alpha`` and ``class_prior`` arguments of :func:`naive_bayes_model`."""
    from numpyro.infer import Predictive

    model = with_priors(naive_bayes_model, program.priors)
    if posterior_samples is None:
        predictive = Predictive(model, num_samples=program.num_samples)
    else:
        predictive = Predictive(model, posterior_samples=posterior_samples)
    return predictive(key, **program.kwargs, **classes)


def model_and_data_for_simulation(clf):
    """``(model, kwargs)`` with no data: every block and the labels are sampled."""
    class_alpha, class_prior = (None if a is None else np.asarray(a)
                                for a in clf._class_setup())
    return naive_bayes_model, dict(
        families=tuple(type(b.family) for b in clf.blocks_),
        priors=tuple(_copied(b.prior) for b in clf.blocks_),
        sites=tuple(block_sites(clf.blocks_)), class_alpha=class_alpha, class_prior=class_prior,
        xs=tuple(None for _ in clf.blocks_), y=None,
        hyper=tuple(b.family.hyperpriors() for b in clf.blocks_),
        labels=tuple(column_labels(clf.blocks_)),
        pooling=tuple(b.family.pooling_prior() for b in clf.blocks_))


def _copied(prior):
    """A prior's arrays copied: a program traced with them as constants makes JAX keep their
    device buffers by the arrays' identity, in that mode's dtype; the fitted priors, passed
    to a kernel of the other mode afterwards, would get that buffer (an XLA input mismatch)."""
    return jax.tree_util.tree_map(lambda a: np.array(a, copy=True), prior)


def check_prior_values(priors) -> None:
    """Refuse ``priors`` that is not a mapping, or one whose value is not a NumPyro
    distribution (a number, a string, a ``scipy.stats`` frozen distribution), naming the site
    and the type given: such a value would otherwise fail while the program is traced (an
    ``AttributeError`` about a tracer) or be misread as having the wrong support."""
    if not priors:
        return
    if not isinstance(priors, Mapping):
        raise ValueError(f"priors must be a mapping {{site: numpyro distribution}}, got "
                         f"{type(priors).__name__}.")
    for site, prior in priors.items():
        if not isinstance(prior, dist.Distribution):
            module = type(prior).__module__
            kind = type(prior).__qualname__ if module == "builtins" else (
                f"{module}.{type(prior).__qualname__}")
            raise ValueError(f"priors[{site!r}] must be a NumPyro distribution (e.g. "
                             f"numpyro.distributions.Normal(0, 10)), got a {kind}: "
                             f"{prior!r:.80}.")


class ReplacePriors(numpyro.primitives.Messenger):
    """Swap the prior of named parameter sites for user-given NumPyro distributions.

    A replacement must have the site's event shape (and a support within the site's,
    ``inference.check_prior_sites``); its batch shape is expanded
    over the site's plates (classes, columns), so a scalar ``dist.LogNormal(0, 1)`` becomes an
    i.i.d. prior on every class x column rate. Non-conjugate: MCMC only.
    """

    def __init__(self, fn=None, priors=None):
        self.priors = dict(priors or {})
        self.seen = set()
        super().__init__(fn)

    def process_message(self, msg):
        name = msg["name"]
        if msg["type"] != "sample" or name not in self.priors or msg["is_observed"]:
            return
        old, new = msg["fn"], self.priors[name]  # supports: checked before tracing
        if tuple(new.event_shape) != tuple(old.event_shape):
            raise ValueError(f"prior for {name!r}: event shape {tuple(new.event_shape)}, the "
                             f"parameter needs {tuple(old.event_shape)}.")
        msg["fn"] = new.expand(old.batch_shape) if new.batch_shape != old.batch_shape else new
        self.seen.add(name)


def with_priors(model, priors):
    """``model`` with the parameter priors replaced (identity when ``priors`` is empty)."""
    return ReplacePriors(model, priors) if priors else model
