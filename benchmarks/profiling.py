"""``run.py --profile``: where our fit and predict_proba spend their time, stage by stage.

The stages go through the library's internals as of this commit (``_data.as_table``,
``Table.block``, ``family.learn_schema``, ``_kernels.stream_suff_stats`` / ``stream_scores``
(``_host.stream_stats`` / ``stream_scores`` for Categorical, counted and scored on the host),
the staging copies and the kernel on one device-resident chunk timed apart). A stage whose
internals moved prints ``n/a`` instead of failing the run. Each case module adds its own
plain-JAX **prototypes** and host-side alternatives (``prototypes(X, y, k, ref)``), each
checked against scikit-learn's argmax, and may add stages of its own (``profile_extra``).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Iterator

import numpy as np
from harness import Context, collect_garbage, fmt_s, policy, sync

Stages = list[tuple[str, float]]


def median_time(fn, repeats):
    out, ts = None, []
    for _ in range(repeats):
        collect_garbage()
        t0 = time.perf_counter()
        out = sync(fn())
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts), out


def aligned_empty(shape, dtype, align=64):
    """An uninitialised array whose data start on a 64-byte boundary: ``jax.device_put`` then
    shares the memory instead of copying it (CPU backend)."""
    dtype = np.dtype(dtype)
    nbytes = int(np.prod(shape)) * dtype.itemsize
    buf = np.empty(nbytes + align, dtype=np.uint8)
    off = (-buf.ctypes.data) % align
    return buf[off:off + nbytes].view(dtype).reshape(shape)


def chunk_rows(row_bytes: int) -> int:
    """Rows per streamed chunk: about 8 MB of input (stays in cache), a power of two."""
    c = max(1, (8 << 20) // max(row_bytes, 1))
    return int(min(16384, max(1024, 1 << (c.bit_length() - 1))))


def stream(X, dtype, kernel, consts=(), y=None, n_out=None):
    """The design the prototypes test: rows go through ONE reused 64-byte-aligned buffer of
    ``chunk_rows`` rows in the kernel dtype (converted while copying), which ``jax`` reads
    without a copy; one compiled shape, no padding of the whole array, no fresh n x F memory.
    With ``y``: sums the kernel's per-chunk statistics (fit). Otherwise: writes the kernel's
    (chunk, n_out) output into a float64 result (predict)."""
    import jax

    n, f = X.shape
    c = chunk_rows(f * np.dtype(dtype).itemsize)
    buf = aligned_empty((c, f), dtype)
    codes = np.empty(c, dtype=np.int32)
    out = np.empty((n, n_out)) if y is None else None
    acc = None
    for s in range(0, n, c):
        m = min(c, n - s)
        np.copyto(buf[:m], X[s:s + m], casting="unsafe")
        if m < c:
            buf[m:] = 0
        if y is None:
            out[s:s + m] = np.asarray(kernel(buf, *consts))[:m]
        else:
            codes[:m] = y[s:s + m]
            codes[m:] = -1  # one_hot(-1) is a zero row: padding rows count for nothing
            r = jax.block_until_ready(kernel(buf, codes, *consts))  # buf is reused next
            acc = r if acc is None else jax.tree_util.tree_map(lambda u, v: u + v, acc, r)
    return out if y is None else acc


def numpy_predict_proba(X, weights, bias):
    """What any library's ``predict_proba`` of a linear model must do, in plain NumPy on the
    host with nothing around it: check the values (one min and one max), one float64 BLAS
    product (float32 X converted first, as scikit-learn's is), and the normalisation."""
    weights_t = np.ascontiguousarray(np.asarray(weights, dtype=np.float64).T)
    bias = np.asarray(bias, dtype=np.float64)
    ones = np.ones(len(bias))

    def run():
        if not (X.min() >= 0 and np.isfinite(X.max())):
            raise ValueError("invalid value")
        s = np.asarray(X, dtype=np.float64) @ weights_t
        s += bias
        s -= s.max(axis=1, keepdims=True)
        np.exp(s, out=s)
        s /= (s @ ones)[:, None]
        return s

    return run


def host_alternatives(X, k) -> dict:
    """Host-side stages common to every case: reductions, copies, device_put, logsumexp."""
    import jax
    import jax.numpy as jnp
    from scipy.special import logsumexp

    ft = jnp.result_type(float)
    out = {}
    if X.dtype.kind == "f":
        out["host: checks by reductions x.min(), x.max(), isnan(x.sum())"] = \
            lambda: (X.min(), X.max(), np.isnan(X.sum()))
        xa = aligned_empty(X.shape, ft)
        out["host: copy X into a NEW 64-byte-aligned array (fresh pages)"] = \
            lambda: np.copyto(aligned_empty(X.shape, ft), X, casting="unsafe")
        out["host: copy X into an EXISTING aligned array (pages already mapped)"] = \
            lambda: np.copyto(xa, X, casting="unsafe")
        out["jax.device_put(aligned array in the kernel dtype): zero-copy"] = \
            lambda: jax.device_put(xa)
        out["jax.device_put(X as given): XLA copies (and converts)"] = lambda: jax.device_put(X)
    scores = np.random.default_rng(0).normal(size=(X.shape[0], k)) * 50
    out["host: scipy.special.logsumexp on an (n, K) float64 array"] = \
        lambda: logsumexp(scores, axis=1, keepdims=True)

    def lse(a):
        m = a.max(axis=1, keepdims=True)
        return np.log(np.exp(a - m).sum(axis=1, keepdims=True)) + m

    out["host: max-shifted numpy logsumexp on the same array"] = lambda: lse(scores)
    return out


def profile_case(X, y, family, method, k, dtype, repeats, make_ref,
                 prototypes: Callable, extra: Callable | None = None) -> Stages:
    """Stage-by-stage times of our fit and predict_proba, through the library's internals as of
    this commit (a stage whose internals moved reports 'n/a')."""
    import jax.numpy as jnp

    import bayesnb as bnb
    from bayesnb import _blocks, _data
    from bayesnb.fast import _host, _kernels, form_of
    from bayesnb.scoring import normalised

    res: Stages = []

    def stage(label, fn):
        try:
            if label.startswith("PROTOTYPE"):
                sync(fn())  # compile first: prototypes are timed in steady state like ours
            t, out = median_time(fn, repeats)
        except Exception as err:  # internals changed under us
            res.append((f"{label}  [n/a: {type(err).__name__}: {str(err)[:60]}]", float("nan")))
            return None
        res.append((label, t))
        return out

    with policy(dtype):
        clf = bnb.NaiveBayes(family, method=method, class_alpha=0)
        clf.fit(X, y)
        clf.predict_proba(X)  # warm every kernel
        t, _ = median_time(lambda: clf.fit(X, y), repeats)
        res.append(("FIT total (measured)", t))
        table = stage("  as_table(X)", lambda: _data.as_table(X))
        enc = stage("  encode_labels(y)", lambda: _data.encode_labels(y, len(y)))
        spec = _data.resolve_features(clf.features, table)[0] if table is not None else None
        raw = stage("  Table.block (column selection)",
                    lambda: table.block(spec.columns, spec.positions)) if spec else None
        schema = stage("  family.learn_schema", lambda: spec.family.learn_schema(
            raw, spec.columns)) if raw is not None else None
        if enc is not None and schema is not None:
            codes, weight = enc[1], np.ones(len(y), dtype=jnp.result_type(float))
            fams, levels = (type(spec.family),), (_blocks.levels_of(schema),)
            sources = [_blocks.block_source(spec.family, raw, schema, "error")]
            if form_of(spec.family).host_counting:  # counted on the host, as fit does (no kernel)
                block = clf.blocks_[0]._replace(schema=schema)
                stage("  _host.stream_stats (encode + np.bincount per chunk, as fit calls it)",
                      lambda: _host.stream_stats(block, raw, codes, weight, k))
            else:
                stage("  stream_suff_stats (staging copies + kernels, as fit calls it)",
                      lambda: _kernels.stream_suff_stats(fams, levels, k, sources, codes,
                                                         weight))
                streamed_halves(stage, _kernels, sources, len(y), lambda xs, c, w: (
                    _kernels.suff_stats(fams, levels, k, xs, c, w)), codes, weight)
        stage("  _scorer (estimates, checks)",
              lambda: (clf.__dict__.pop("_cache", None), clf._scorer()))

        t, _ = median_time(lambda: clf.predict_proba(X), repeats)
        res.append(("PREDICT_PROBA total (measured)", t))
        blocks = stage("  raw_blocks (as_table, column selection by name)",
                       lambda: _blocks.raw_blocks(clf.fitted_, X))
        if blocks is not None:
            (raw,), n = blocks
            block = clf.blocks_[0]
            scorer = clf._scorer()
            fams, exact, log_prior, tables = ((type(block.family),), scorer.exact,
                                              scorer.log_prior, scorer.tables)
            levels = (_blocks.levels_of(block.schema),)
            sources = [_blocks.block_source(block.family, raw, block.schema, scorer.unseen)]
            if form_of(block.family).host_counting:  # scored on the host, as predict does
                host = stage("  _host.stream_scores (encode + sparse product per chunk)",
                             lambda: _host.stream_scores(block, tables[0], raw, n, k,
                                                         scorer.unseen, exact))
                if host is not None:
                    stage("  normalised (float64, on the host)",
                          lambda: normalised(host + log_prior, "proba"))
            else:
                stage("  stream_scores (staging copies + kernels + float64 finish)",
                      lambda: _kernels.stream_scores(fams, levels, exact, "proba", log_prior,
                                                     tables, sources, n, k))
                streamed_halves(stage, _kernels, sources, n, lambda xs, c, w: _kernels.scores(
                    fams, levels, exact, False, log_prior, tables, xs))
        ref = make_ref()
        t_fit, _ = median_time(lambda: ref.fit(X, y), repeats)
        t_pp, q = median_time(lambda: ref.predict_proba(X), repeats)
        res.append(("SKLEARN fit, same process", t_fit))
        res.append(("SKLEARN predict_proba, same process", t_pp))
        alternatives = {**prototypes(np.asarray(X), y, k, ref), **host_alternatives(X, k)}
        for label, fn in alternatives.items():
            out = stage(label, fn)
            if label.startswith("PROTOTYPE") and "predict" in label and out is not None:
                res[-1] = (res[-1][0] + f"  [argmax agrees with sklearn on "
                           f"{100 * np.mean(out.argmax(1) == q.argmax(1)):.3f}%]", res[-1][1])
        if extra is not None:
            extra(stage, res, clf, X, y, k)
    return res


def streamed_halves(stage, _kernels, sources, n, kernel, codes=None, weight=None):
    """The two halves of a streamed pass, timed apart: every chunk's staging copy, and the
    kernel run as many times on one chunk already on the device (cache-warm: a lower bound)."""
    import jax

    rows = _kernels.chunk_rows(n, _kernels._row_bytes(sources))
    chunks = range(0, n, rows)
    staging = _kernels._Staging(sources, rows)
    stage(f"    of which staging copies ({len(chunks)} chunks of {rows} rows)",
          lambda: [staging.fill(i, s, min(s + rows, n)) for i, s in enumerate(chunks)])
    xs = tuple(jax.device_put(x) for x in staging.fill(0, 0, min(rows, n)))
    c = w = None
    if codes is not None:
        c = jax.device_put(_kernels.pad_rows(codes[:rows].astype(np.int32), rows))
        w = jax.device_put(_kernels.pad_rows(weight[:rows], rows))
    stage(f"    of which kernel, one device-resident chunk x {len(chunks)}",
          lambda: [sync(kernel(xs, c, w)) for _ in chunks])


def profile_family(ctx: Context, name, shape, make, as_dtype, family, method, make_ref,
                   prototypes, extra=None) -> Iterator[tuple[str, Stages]]:
    """``profile_case`` for each dtype policy of the run, on one case's data: yields
    ``(title, stages)`` as each finishes."""
    X, y = make(*shape)
    for dt in ctx.dtypes:
        Xd = as_dtype(X, dt)
        res = profile_case(Xd, y, family(), method, shape[2], dt, ctx.repeats, make_ref,
                           prototypes, extra)
        yield f"{name} {dt}: X {Xd.shape} {Xd.dtype} ({Xd.nbytes / 2**20:,.0f} MB)", res
        del Xd


def print_profile(title: str, stages: Stages) -> None:
    print(f"## {title}")
    for label, t in stages:
        print(f"  {fmt_s(t):>10}  {label}")
    print(flush=True)
