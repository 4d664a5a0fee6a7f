"""NUTS chains run by two compiled programs: one that starts every chain, one that moves every
chain a fixed number of steps (warm-up and sampling alike).

NumPyro's ``MCMC`` starts a chain op by op (hundreds of small compilations) and, with
``chain_method="sequential"``, compiles again for each chain; on the small posteriors of a
Naive Bayes model compiling is most of the run. Here NumPyro's own ``NUTS`` kernel
(``init``, ``sample``, ``postprocess_fn``, its defaults: diagonal mass matrix and step size
adapted over the warm-up, ``init_to_uniform``) is driven by:

* ``_start``: every chain's initial state, compiled once per model structure;
* ``_advance``: :func:`steps_per_call` transitions of every chain and their draws,
  constrained; the host calls it until the warm-up and the draws are done, so warm-up and
  sampling share one executable, and the progress bar advances between calls (no host
  callback in the program, which would keep it out of JAX's persistent compilation cache).

The data (sufficient statistics, priors, hyperpriors, replacement priors) are arguments, not
constants: a model of the same structure reuses both executables. Chains are vmapped
(``"vectorized"``), mapped one after the other (``"sequential"``) or, with as many devices as
chains, pmapped (``"parallel"``); ``"auto"`` picks ``"parallel"`` where it can and
``"vectorized"`` otherwise.
"""

from __future__ import annotations

import hashlib
import math
import os
import pickle
import tempfile
import warnings
from functools import partial
from typing import NamedTuple

import jax
import numpy as np

from .fast._compiled import compiled, exported_program, held

#: XLA:CPU options of both programs: compiling dominates these short runs. LLVM at level 0
#: compiles faster; XLA's classic fusion emitters compile these loop-heavy programs with about
#: 200 MB less peak memory than its MLIR ones (``benchmarks/mcmc.py``'s peak RSS), and in one
#: LLVM module, not split across threads, they emit the same code (the same draws) every time
_COMPILER_OPTIONS = {"xla_backend_optimization_level": 0, "xla_cpu_use_fusion_emitters": False,
                     "xla_cpu_parallel_codegen_split_count": 1}


#: the NUTS state's fields kept per transition (NumPyro's ``extra_fields`` names, the step
#: size read from ``adapt_state``): scalars per chain and step, so keeping them is free
EXTRA_FIELDS = ("diverging", "num_steps", "energy", "potential_energy", "accept_prob",
                "step_size")


class _Settings(NamedTuple):
    """What the compiled programs are specialised on (their static key)."""

    model: object  # the NumPyro model, called as model(**static, **data)
    static: tuple  # (name, hashable argument) pairs
    layout: tuple  # the data's structure and non-float leaves (``_split``)
    num_warmup: int
    target_accept_prob: float
    method: str  # "vectorized" or "sequential", within a program
    steps: int  # transitions per ``_advance`` call


def resolve_chain_method(chain_method: str, num_chains: int) -> str:
    """The way the chains run: ``"auto"`` is ``"parallel"`` with a device per chain, else
    ``"vectorized"``; ``"parallel"`` without a device per chain runs ``"sequential"`` (with a
    warning, as NumPyro does)."""
    devices = jax.local_device_count()
    if chain_method == "auto":
        return "parallel" if 1 < num_chains <= devices else "vectorized"
    if chain_method == "parallel" and num_chains > devices:
        warnings.warn(f"chain_method='parallel' needs {num_chains} devices, {devices} found: "
                      "the chains run one after the other.", UserWarning, stacklevel=3)
        return "sequential"
    return chain_method


def steps_per_call(total: int) -> int:
    """Transitions per ``_advance`` call: about 50 calls per run (each call costs a dispatch,
    well under a step's cost), at least one step."""
    return max(1, math.ceil(total / 50))


def sample(model, static: dict, data: dict, *, num_warmup: int, num_samples: int,
           num_chains: int, seed: int, chain_method: str = "auto", progress_bar: bool = True,
           target_accept_prob: float = 0.8):
    """NUTS draws of ``model(**static, **data)``: ``(draws, extra)``, draws ``{site: (chains,
    num_samples, ...)}`` (constrained, as ``MCMC.get_samples(group_by_chain=True)``), extra
    ``{field: (chains, num_samples)}`` for each of :data:`EXTRA_FIELDS` (NumPyro's
    ``MCMC.get_extra_fields(group_by_chain=True)`` of the same names).

    ``static`` are hashable arguments that fix the model's structure (families, site names);
    ``data`` a pytree of arrays (and NumPyro distributions) passed to the compiled programs.
    """
    method = resolve_chain_method(chain_method, num_chains)
    total = num_warmup + num_samples
    layout, data = _split(data)
    settings = _Settings(model, tuple(static.items()), layout, num_warmup,
                         float(target_accept_prob),
                         "vectorized" if method == "parallel" else method,
                         steps_per_call(total))
    key = jax.random.PRNGKey(seed)
    # as ``MCMC.run``: one chain runs on the seed's key itself
    keys = jax.random.split(key, num_chains) if num_chains > 1 else key[None]
    if method == "parallel":
        start = jax.pmap(partial(_start_chains, settings), in_axes=(0, None))
        advance = jax.pmap(partial(_advance_chains, settings), in_axes=(0, None))
        keys = keys[:, None]  # one chain per device, vectorized there
    else:
        key_ = _structure_key(settings, keys, data)
        start = _saved(_start, settings, "start", key_)
        advance = _saved(_advance, settings, "advance", key_)
    bar = _bar(num_chains, total, num_warmup) if progress_bar else None
    try:
        state = start(keys, data)
        kept = []
        step = settings.steps
        for first in range(0, total, step):
            state, out = advance(state, data)
            if bar is not None:
                jax.block_until_ready(state)
                bar.advance(min(step, total - first), first + step)
            lo, hi = max(num_warmup - first, 0), min(step, total - first)
            if lo < hi:  # the draws past the warm-up
                kept.append({k: _steps(np.asarray(v), method)[lo:hi] for k, v in out.items()})
    finally:
        if bar is not None:
            bar.close()
    out = {k: np.concatenate([np.asarray(part[k]) for part in kept], axis=0)
           for k in kept[0]}
    # (steps, chains, ...) to (chains, steps, ...)
    out = {k: np.swapaxes(v, 0, 1) for k, v in out.items()}
    extra = {name: out.pop(f"__{name}") for name in EXTRA_FIELDS}
    return out, extra


def _split(tree):
    """``(layout, numbers)``: the floating-point leaves of ``tree`` (arguments of the compiled
    programs) apart from its structure and other leaves (integer layouts such as a
    Categorical block's level offsets, read by Python while the model is traced), which are
    hashable in ``layout`` (part of the programs' static key)."""
    leaves, treedef = jax.tree_util.tree_flatten(tree)
    numbers = [x if _floating(x) else None for x in leaves]
    fixed = tuple(None if _floating(x) else _Fixed(x) for x in leaves)
    return (treedef, fixed), numbers


def _join(layout, numbers):
    """The tree :func:`_split` took apart."""
    treedef, fixed = layout
    return jax.tree_util.tree_unflatten(
        treedef, [x if f is None else f.value for x, f in zip(numbers, fixed, strict=True)])


def _floating(x) -> bool:
    return isinstance(x, float) or np.dtype(getattr(x, "dtype", object)).kind in "fc"


class _Fixed:
    """A leaf kept out of the compiled programs' arguments, hashed by its value."""

    def __init__(self, value):
        self.value = value
        a = np.asarray(value)
        self.key = (type(value), a.dtype.str, a.shape, a.tobytes()) if a.dtype != object \
            else (type(value), id(value))

    def __hash__(self):
        return hash(self.key)

    def __eq__(self, other):
        return isinstance(other, _Fixed) and self.key == other.key


def _steps(a, method):
    """A leaf of ``_advance``'s output as ``(steps, chains, ...)``: pmapped outputs lead with
    the device (chain) axis, then the one chain vectorized on it."""
    return np.moveaxis(a[:, :, 0], 1, 0) if method == "parallel" else a


def _kernel(settings, data):
    """``(kernel, init, constrain, potential, initial)``: NumPyro's NUTS kernel on the
    model's unconstrained parameters as one flat vector (one leaf: NumPyro's tree code then
    emits each operation once, not once per site); the kernel's ``init`` of keys and initial
    vectors; the constrained sites (``MCMC.get_samples``' values) of a vector; its potential
    energy; and :func:`_initial` of a key."""
    from jax.flatten_util import ravel_pytree
    from numpyro.infer import NUTS
    from numpyro.infer.util import constrain_fn, potential_energy

    model, num_warmup = settings.model, settings.num_warmup
    kwargs = dict(settings.static, **_join(settings.layout, data))
    sites = _site_shapes(model, kwargs)
    ravel = lambda parts: ravel_pytree(parts)[0]  # noqa: E731 (sites by sorted name)
    _, unravel = ravel_pytree({k: jax.numpy.zeros(v.shape, v.dtype) for k, v in sites})

    def potential(x):
        return potential_energy(model, (), kwargs, unravel(x))

    def constrain(x):
        return constrain_fn(model, (), kwargs, unravel(x), return_deterministic=True)

    kernel = NUTS(potential_fn=potential, target_accept_prob=settings.target_accept_prob)
    init = lambda key, x: kernel.init(key, num_warmup, init_params=x)  # noqa: E731
    return kernel, init, constrain, potential, partial(_initial, potential, sites, ravel)


def _site_shapes(model, kwargs) -> list:
    """``[(site, shape and dtype)]`` of the model's latent sites, unconstrained, in the order
    the model samples them."""
    order = []

    def sites():
        found = _unconstrained(model, kwargs)
        order.extend(found)  # the trace's order: a dict returned by eval_shape is sorted
        return found

    shapes = jax.eval_shape(sites)
    return [(k, shapes[k]) for k in order]


def _unconstrained(model, kwargs):
    """The model's latent sites in unconstrained space, at a draw from its prior (only their
    shapes are read)."""
    from numpyro import handlers
    from numpyro.distributions.transforms import biject_to

    trace = handlers.trace(handlers.seed(model, 0)).get_trace(**kwargs)
    return {name: biject_to(site["fn"].support).inv(site["value"])
            for name, site in trace.items()
            if site["type"] == "sample" and not site["is_observed"]}


def _initial(potential, sites, ravel, key):
    """NumPyro's ``init_to_uniform`` start, drawn as ``MCMC`` draws it (a seed starts where
    ``MCMC`` starts it, to the bit): each site uniform in (-2, 2) on the unconstrained scale, a
    key per site in the model's order; drawn again (up to 100 times) until the potential is finite
    (NumPyro checks the gradient too: the kernel's start computes it, and a second gradient
    here would compile again)."""
    def draw(carry):
        i, key, _, _ = carry
        key, sub = jax.random.split(key)
        parts = {}
        for name, shape in sites:
            parts[name] = jax.random.uniform(sub, shape.shape, shape.dtype, -2.0, 2.0)
            key, sub = jax.random.split(key)
        x = ravel(parts)
        return i + 1, key, x, jax.numpy.isfinite(potential(x))

    x0 = ravel({name: jax.numpy.zeros(shape.shape, shape.dtype) for name, shape in sites})
    _, _, x, _ = jax.lax.while_loop(lambda c: (c[0] < 100) & ~c[3], draw,
                                    (0, key, x0, False))
    return x


def _start_chains(settings, keys, data):
    """Every chain's initial NUTS state (chains lead)."""
    _, init, _, _, initial = _kernel(settings, data)
    # as NumPyro's ``HMC.init`` splits each chain's key: the kernel's, the start's
    split = jax.vmap(jax.random.split)(keys)
    x = jax.vmap(initial)(split[:, 1])
    if settings.method == "vectorized":
        return init(split[:, 0], x)
    return jax.lax.map(lambda a: init(*a), (split[:, 0], x))


def _advance_chains(settings, state, data):
    """``settings``' number of NUTS transitions of every chain from ``state``: ``(state,
    out)``, ``out`` the constrained draws and each transition's :data:`EXTRA_FIELDS` (as
    ``"__{field}"``), ``(steps, chains, ...)`` (a last call may run past the run's end: the
    host drops those draws)."""
    method, steps = settings.method, settings.steps
    kernel, init, constrain, _, _ = _kernel(settings, data)
    # NumPyro's ``sample`` runs what ``init`` set up: traced here abstractly, no code emitted
    if method == "vectorized":
        jax.eval_shape(init, state.rng_key, state.z)
    else:
        jax.eval_shape(init, state.rng_key[0], state.z[0])

    def transitions(s):
        def one(c, _):
            c = kernel.sample(c, (), {})
            fields = {f: c.adapt_state.step_size if f == "step_size" else getattr(c, f)
                      for f in EXTRA_FIELDS}
            return c, (c.z, fields)

        return jax.lax.scan(one, s, None, length=steps)

    if method == "vectorized":
        state, (z, fields) = transitions(state)
    else:  # the chains one after the other
        state, trace = jax.lax.map(transitions, state)
        z, fields = jax.tree_util.tree_map(lambda a: jax.numpy.swapaxes(a, 0, 1), trace)
    draws = jax.vmap(jax.vmap(constrain))(z)
    draws.update({f"__{f}": v for f, v in fields.items()})
    return state, draws


# counted against the package's bound on executables held (``fast._compiled``)
_start = compiled(_start_chains, static_argnums=(0,), compiler_options=_COMPILER_OPTIONS)
_advance = compiled(_advance_chains, static_argnums=(0,), compiler_options=_COMPILER_OPTIONS)


# ---------------------------------------------------------------- programs kept on disk
#: serialized programs kept in the compiled-kernel cache's folder (the oldest go first); one
#: model structure holds two, of a few hundred kilobytes each
MAX_SAVED_PROGRAMS = 64


class _Loaded(dict):
    """The programs loaded in this process, by key, held within the package's bound."""

    def _cache_size(self) -> int:
        return sum(program._cache_size() for program in self.values())

    def clear_cache(self) -> None:
        self.clear()


_LOADED = held(_Loaded())


def _saved(jitted, settings, name: str, key: str | None):
    """``jitted`` specialised on ``settings``, kept on disk as a serialized ``jax.export``
    module in the compilation cache's folder: a new process with the cache warm neither traces
    the program (seconds for NUTS) nor compiles it. Without a cache or a ``key``: ``jitted``."""
    from . import _kernel_cache

    where = _kernel_cache.active_folder()
    if where is None or key is None or not _exportable():
        return partial(jitted, settings)

    def call(*args):
        program = _LOADED.get((name, key))
        if program is None:
            program = _LOADED[name, key] = _load(jitted, settings,
                                                 where / f"nuts-{name}-{key}.jax", args)
        return program(*args)

    return call


def _load(jitted, settings, path, args):
    """The program at ``path`` (``jitted`` exported and written there first if it is not),
    jitted with the sampler's compiler options."""
    from jax import export

    _register_states()
    try:
        exported = export.deserialize(bytearray(path.read_bytes()))
    except Exception:  # noqa: BLE001 - none yet, or unreadable (damaged, another jax): again
        exported = None
    if exported is None:  # traced outside the handler: its errors are not chained to the read
        exported = export.export(jitted)(settings, *args)
        _write(path, exported.serialize())
    return exported_program(exported, compiler_options=_COMPILER_OPTIONS)


def _exportable() -> bool:
    """Whether this jax serializes exported programs (flatbuffers installed, a jax that
    registers named tuples)."""
    try:
        import flatbuffers  # noqa: F401
        from jax.export import register_namedtuple_serialization  # noqa: F401
    except ImportError:
        return False
    return True


def _write(path, blob: bytes) -> None:
    """Write ``blob`` atomically (concurrent processes may write the same program), then keep
    the folder's programs within :data:`MAX_SAVED_PROGRAMS`."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".nuts-")
        with os.fdopen(fd, "wb") as f:
            f.write(blob)
        os.replace(tmp, path)
        saved = sorted(path.parent.glob("nuts-*.jax"), key=lambda p: p.stat().st_mtime)
        for old in saved[:-MAX_SAVED_PROGRAMS]:
            old.unlink(missing_ok=True)
    except OSError:  # a read-only or full disk: the program runs, unsaved
        pass


def _structure_key(settings, keys, data) -> str | None:
    """A digest of everything a program depends on: ``settings`` (the model, its static
    arguments and data layout, the sampler's settings), the shapes and dtypes of the
    arguments, the platform (a program exported for the CPU does not run on a GPU), and the
    code (bayesnb's sources, jax's and numpyro's versions). ``None`` when some part cannot be
    serialized (a user's prior holding a lambda): the program is then traced in the process as
    usual."""
    shapes = [None if x is None else (np.shape(x), str(getattr(x, "dtype", type(x).__name__)))
              for x in [keys, *data]]
    try:
        blob = pickle.dumps((settings, shapes, jax.default_backend(), _code_version()),
                            protocol=5)
    except Exception:  # noqa: BLE001 - anything unpicklable: no saved program
        return None
    return hashlib.sha256(blob).hexdigest()[:40]


_CODE_VERSION: list = []


def _code_version() -> tuple:
    """bayesnb's sources (hashed) and the versions of jax, jaxlib and numpyro: a saved
    program is never reused by other code."""
    if not _CODE_VERSION:
        import jaxlib
        import numpyro

        root = os.path.dirname(os.path.abspath(__file__))
        digest = hashlib.sha256()
        for path in sorted(_python_files(root)):
            with open(path, "rb") as f:
                digest.update(path[len(root):].encode() + f.read())
        _CODE_VERSION.append((digest.hexdigest(), jax.__version__, jaxlib.__version__,
                              numpyro.__version__))
    return _CODE_VERSION[0]


def _python_files(root):
    for folder, _, names in os.walk(root):
        yield from (os.path.join(folder, n) for n in names if n.endswith(".py"))


def _register_states():
    """NumPyro's NUTS state as a serializable tree (once per process)."""
    if _REGISTERED:
        return
    from jax import export
    from numpyro.infer.hmc import HMCState
    from numpyro.infer.hmc_util import HMCAdaptState

    for cls in (HMCState, HMCAdaptState):
        export.register_namedtuple_serialization(cls, serialized_name=f"numpyro.{cls.__name__}")
    _REGISTERED.append(True)


_REGISTERED: list = []


class _bar:
    """One labelled progress bar over every chain's transitions: ``NUTS (4 chains):
    warm-up``, then ``sampling``."""

    def __init__(self, num_chains: int, total: int, num_warmup: int):
        from tqdm.auto import tqdm

        self.chains, self.num_warmup = num_chains, num_warmup
        self.label = f"NUTS ({num_chains} chain{'s' if num_chains > 1 else ''})"
        self.tqdm = tqdm(total=num_chains * total, unit="draw",
                         desc=f"{self.label}: compiling")

    def advance(self, steps: int, done: int) -> None:
        phase = "warm-up" if done <= self.num_warmup else "sampling"
        self.tqdm.set_description(f"{self.label}: {phase}", refresh=False)
        self.tqdm.update(steps * self.chains)

    def close(self) -> None:
        self.tqdm.close()
