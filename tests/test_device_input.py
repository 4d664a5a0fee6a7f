"""A ``jax.Array`` input is read where it lives (issue 12 section 5).

On a GPU, copying a device-resident X to the host and streaming it back chunk by chunk ran
at 1.7 GB/s against the card's 4,800 (``benchmarks/README.md`` of 897bae7, "Stop 30"). The
blocks the kernels read raw (Bernoulli, Multinomial, Poisson, Gaussian) are now sliced into
chunks on the device (a Gaussian's centring shift subtracted there too); everything else
(categorical codes, the exact count predictive's host tails) still reads NumPy. The tests
run on the CPU (``conftest.py``), where a ``jax.Array`` takes the same device path: the
answers must be those of the NumPy input, which the rest of the suite checks against SciPy
and scikit-learn, and here against scikit-learn directly; bad values are refused naming the
column, as for NumPy.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from sklearn.naive_bayes import BernoulliNB, MultinomialNB

import bayesnb as bnb
from bayesnb.fast import _kernels


@pytest.fixture
def device_chunks(monkeypatch, kernel_fits):
    """Counts the chunks sliced on the device; small chunks, so a call streams several and
    the last one is short (padded on the device). NumPy input takes the kernels too, chunk by
    chunk, not the host a table this small would take (``kernel_fits``), so the two inputs
    take the same kernels."""
    calls = {"n": 0}
    fill = _kernels._DeviceChunks.fill

    def counted(self, *args):
        calls["n"] += 1
        return fill(self, *args)

    monkeypatch.setattr(_kernels._DeviceChunks, "fill", counted)
    monkeypatch.setattr(_kernels, "CHUNK_BYTES", 4096)
    return calls


def device_result(got, expected, log=False):
    """``got`` is a ``jax.Array`` in JAX's float dtype on the input's (the only CPU) device,
    normalised there: equal to the NumPy input's float64 answer ``expected`` to that dtype's
    precision (float32: a few units of its epsilon)."""
    assert isinstance(got, jax.Array)
    assert got.dtype == jnp.result_type(float)
    assert got.devices() == {jax.devices()[0]}
    tol = 1e-12 if got.dtype == jnp.float64 else 1e-6
    np.testing.assert_allclose(np.asarray(got, dtype=np.float64), expected, rtol=tol,
                               atol=tol if log else tol / 10)
    return np.asarray(got, dtype=np.float64)


def _data(seed=0, n=1_000, f=12, k=3):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, k, n)
    X = rng.poisson(1.0 + y[:, None] * np.linspace(0, 1, f), (n, f)).astype(np.float32)
    return X, y


def test_multinomial_on_device_matches_sklearn_in_several_chunks(device_chunks, x64):
    X, y = _data()
    Xd = jnp.asarray(X)
    clf = bnb.NaiveBayes(bnb.Multinomial(alpha=1.0), method="mean", class_alpha=0).fit(Xd, y)
    assert device_chunks["n"] > 3  # the fit's chunks came from the device
    fitted_from = device_chunks["n"]
    proba = clf.predict_proba(Xd)
    assert device_chunks["n"] > fitted_from + 3
    ref = MultinomialNB(alpha=1.0).fit(X, y)
    np.testing.assert_allclose(np.asarray(clf.fitted_.blocks[0].stats.counts),
                               ref.feature_count_, rtol=0, atol=0)
    device_result(proba, ref.predict_proba(X))


@pytest.mark.parametrize("family", [bnb.Multinomial(), bnb.Poisson(), bnb.Gaussian(),
                                    bnb.Bernoulli()], ids=lambda f: type(f).__name__)
@pytest.mark.parametrize("method", ["mean", "bayes"])
def test_device_input_answers_as_numpy_input_float32(device_chunks, family, method):
    X, y = _data(1)
    if isinstance(family, bnb.Bernoulli):
        X = (X > 1).astype(np.float32)
    host = bnb.NaiveBayes(family, method=method).fit(X, y)
    device = bnb.NaiveBayes(family, method=method).fit(jnp.asarray(X), y)
    for a, b in zip(jax.tree.leaves(host.fitted_.blocks[0].stats),
                    jax.tree.leaves(device.fitted_.blocks[0].stats), strict=True):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    expected = host.predict_proba(X)
    device_result(device.predict_proba(jnp.asarray(X)), expected)
    device_result(host.predict_log_proba(jnp.asarray(X)), host.predict_log_proba(X), log=True)
    np.testing.assert_array_equal(host.predict(jnp.asarray(X)), host.predict(X))


@pytest.mark.parametrize("offset", [0.0, 1e4, 3e5])
@pytest.mark.parametrize("method", ["mean", "bayes"])
def test_gaussian_device_input_is_shifted_on_the_device(device_chunks, offset, method):
    """A float32 Gaussian block is centred by a per-column shift float32 holds
    (``_base.kernel_shift``), so the device's float32 subtraction rounds as the host's
    float64 one: the same classes and, normalised on the device in float32, the same
    probabilities to float32's precision, far from zero too, and within the float32
    guarantee of the float64 fit."""
    rng = np.random.default_rng(10)
    y = rng.integers(0, 3, 1_000)
    # the shape of ``_data`` (12 columns), so the Gaussian kernels of the test above serve
    X = (offset + y[:, None] * 0.3 + rng.normal(size=(1_000, 12))).astype(np.float32)
    clf = bnb.NaiveBayes(bnb.Gaussian(), method=method).fit(X, y)
    expected = clf.predict_proba(X)
    before = device_chunks["n"]
    got = clf.predict_proba(jnp.asarray(X))
    assert device_chunks["n"] > before + 3  # scored from device chunks, not host copies
    got = device_result(got, expected)
    np.testing.assert_array_equal(clf.predict(jnp.asarray(X)), clf.predict(X))
    with jax.enable_x64(True):
        ref = bnb.NaiveBayes(bnb.Gaussian(), method=method).fit(
            X.astype(np.float64), y).predict_proba(X.astype(np.float64))
    np.testing.assert_allclose(got, ref, atol=1e-4)


def test_bernoulli_device_input_matches_sklearn_x64(device_chunks, x64):
    X, y = _data(2)
    X = (X > 1).astype(np.float64)
    clf = bnb.NaiveBayes(bnb.Bernoulli(alpha=1.0), method="mean",
                         class_alpha=0).fit(jnp.asarray(X), y)
    ref = BernoulliNB(alpha=1.0, binarize=None).fit(X, y)
    device_result(clf.predict_proba(jnp.asarray(X)), ref.predict_proba(X))


def test_integer_device_input_is_converted_on_the_device(device_chunks):
    X, y = _data(3)
    Xi = jnp.asarray(X.astype(np.int32))
    clf = bnb.NaiveBayes(bnb.Multinomial(), method="mean").fit(X, y)
    device_result(clf.predict_proba(Xi), clf.predict_proba(X))


def test_weighted_fit_from_the_device_matches_numpy(device_chunks):
    X, y = _data(4)
    w = np.random.default_rng(4).uniform(0.5, 2.0, len(y))  # summed in float64 (x64 pass)
    host = bnb.NaiveBayes(bnb.Poisson(), method="mean").fit(X, y, sample_weight=w)
    device = bnb.NaiveBayes(bnb.Poisson(), method="mean").fit(jnp.asarray(X), y,
                                                             sample_weight=w)
    np.testing.assert_array_equal(device.predict_proba(X), host.predict_proba(X))


def test_mixed_blocks_on_the_device(device_chunks):
    X, y = _data(5, f=8)
    features = {(0, 1, 2, 3): bnb.Multinomial(), (4, 5): bnb.Poisson(), 6: bnb.Gaussian(),
                7: bnb.Gaussian()}
    host = bnb.NaiveBayes(features, method="mean").fit(X, y)
    device = bnb.NaiveBayes(features, method="mean").fit(jnp.asarray(X), y)
    device_result(device.predict_proba(jnp.asarray(X)), host.predict_proba(X))


@pytest.mark.parametrize("where", ["fit", "predict"])
def test_a_bad_value_on_the_device_names_its_column(device_chunks, where):
    X, y = _data(6)
    bad = X.copy()
    bad[-3, 7] = -2.0  # in the last, short chunk
    clf = bnb.NaiveBayes(bnb.Multinomial(), method="mean")
    with pytest.raises(ValueError, match="column 7: Multinomial needs non-negative counts"):
        if where == "fit":
            clf.fit(jnp.asarray(bad), y)
        else:
            clf.fit(X, y).predict_proba(jnp.asarray(bad))
    if where == "fit":
        assert not hasattr(clf, "fitted_")  # the fit completed or changed nothing


def test_non_finite_device_input_is_refused(device_chunks):
    # (``device_chunks``: the chunk shape of the tests above, whose kernels then serve)
    X, y = _data(7)
    bad = X.copy()
    bad[10, 2] = np.inf
    with pytest.raises(ValueError, match="column 2"):
        bnb.NaiveBayes(bnb.Poisson()).fit(X, y).predict_proba(jnp.asarray(bad))


def test_device_input_shape_errors(device_chunks):
    clf = bnb.NaiveBayes(bnb.Multinomial()).fit(*_data(8))
    with pytest.raises(ValueError, match="X has 5 features, but NaiveBayes is expecting 12"):
        clf.predict_proba(jnp.ones((3, 5)))
    with pytest.raises(ValueError, match="must be 2-D"):
        clf.predict_proba(jnp.ones(12))
    with pytest.raises(ValueError, match="0 feature"):
        bnb.NaiveBayes(bnb.Multinomial()).fit(jnp.ones((4, 0)), [0, 1, 0, 1])


def test_exact_and_categorical_blocks_read_device_input_on_the_host():
    X, y = _data(9)
    host = bnb.NaiveBayes(bnb.Multinomial(), method="bayes").fit(X, y)
    # read on the host, and the answer put on the input's device like the streamed ones
    device_result(host.predict_proba(jnp.asarray(X)), host.predict_proba(X))
    codes = (X[:, :3] % 3).astype(np.int32)
    cat = bnb.NaiveBayes(bnb.Categorical(), method="mean").fit(codes, y)
    device_result(cat.predict_proba(jnp.asarray(codes)), cat.predict_proba(codes))


def test_accelerator_chunks_are_larger(monkeypatch):
    """On an accelerator every chunk budget is :data:`_kernels.ACCELERATOR_BUDGET_SCALE`
    times the CPU's (the CPU's 512-row chunks took 2.2 s on an H200 where 262,144-row
    chunks took 11 ms); the CPU's stays cache-sized."""
    cpu = _kernels.chunk_rows(10_000_000, 4_000)
    monkeypatch.setattr(jax, "default_backend", lambda: "gpu")
    assert _kernels.budget_scale() == _kernels.ACCELERATOR_BUDGET_SCALE
    assert _kernels.chunk_rows(10_000_000, 4_000) == cpu * _kernels.ACCELERATOR_BUDGET_SCALE


def test_the_docs_state_the_accelerator_chunks():
    # the numerics page's numbers for an accelerator come from the constants, not from memory
    from pathlib import Path

    page = Path(__file__).resolve().parents[1] / "docs" / "user_guide" / "numerics.md"
    text = " ".join(page.read_text().split())
    scale = _kernels.ACCELERATOR_BUDGET_SCALE
    assert f"the chunks are {scale} times larger (about " \
           f"{_kernels.CHUNK_BYTES * scale >> 20} MB)" in text
    assert f"chunks of about {_kernels.CHUNK_BYTES >> 20} MB" in text


def test_device_rows_stay_on_the_device_to_the_end(device_chunks, monkeypatch):
    """No chunk's results come back to the host one by one (``_kernels._store``): the flags
    are read once, the probabilities are joined and normalised on the device, and their rows
    sum to 1 to float32's precision; against scikit-learn as the NumPy input is."""
    X, y = _data(11)
    clf = bnb.NaiveBayes(bnb.Multinomial(alpha=1.0), method="mean", class_alpha=0).fit(X, y)
    monkeypatch.setattr(_kernels, "_store", lambda *a: pytest.fail("read back per chunk"))
    before = device_chunks["n"]
    proba = clf.predict_proba(jnp.asarray(X))
    assert device_chunks["n"] > before + 3
    ref = MultinomialNB(alpha=1.0).fit(X, y)
    got = device_result(proba, ref.predict_proba(X))
    np.testing.assert_allclose(got.sum(axis=1), 1.0, rtol=0, atol=4 * np.finfo(np.float32).eps)
    device_result(clf.predict_log_proba(jnp.asarray(X)), ref.predict_log_proba(X), log=True)
    np.testing.assert_array_equal(clf.predict(jnp.asarray(X)), ref.predict(X))


def test_device_rows_keep_the_float32_refusals(device_chunks):
    """What float32 cannot resolve is refused from device rows as from NumPy rows: a column
    1e5 standard deviations out under the pooled Student-t (``test_float32_guarantee``),
    found from the chunks' rounding bounds read back at the end; and a bad value in a middle
    chunk."""
    rng = np.random.default_rng(8)
    y = rng.integers(0, 3, 2_000)
    X = rng.normal(y[:, None] * 0.5, 1.0, (2_000, 12))
    Xt = rng.normal(0.5, 1.0, (600, 12))
    Xt[300:, 0] = 1e5  # the later chunks only
    clf = bnb.NaiveBayes(bnb.Gaussian(pooled=True), method="bayes").fit(X, y)
    for rows in (Xt, jnp.asarray(Xt, dtype=jnp.float32)):
        with pytest.raises(ValueError, match=r"column 0 .*float32 class scores inexact.*x64"):
            clf.predict_proba(rows)
    device_result(clf.predict_proba(jnp.asarray(Xt[:300], dtype=jnp.float32)),
                  clf.predict_proba(Xt[:300].astype(np.float32)))
    X, y = _data(12)
    bad = X.copy()
    bad[400, 5] = 0.5  # a fraction, in a middle chunk
    clf = bnb.NaiveBayes(bnb.Poisson(), method="mean").fit(X, y)
    with pytest.raises(ValueError, match="column 5"):
        clf.predict_proba(jnp.asarray(bad))


def test_accelerator_fit_reads_each_chunk_at_once(device_chunks, monkeypatch):
    """On an accelerator a fit chunk's results are copied to the host as soon as they are
    computed and read in one call (``jax.device_get``); taken here on the CPU by reporting
    an accelerator's budget scale: the class counts equal scikit-learn's, every row once."""
    X, y = _data(13, n=3_000)
    monkeypatch.setattr(_kernels, "budget_scale", lambda: 32)
    monkeypatch.setattr(_kernels, "CHUNK_BYTES", 4096 // 32)
    clf = bnb.NaiveBayes(bnb.Multinomial(alpha=1.0), method="mean",
                         class_alpha=0).fit(jnp.asarray(X), y)
    assert device_chunks["n"] > 3
    ref = MultinomialNB(alpha=1.0).fit(X, y)
    np.testing.assert_array_equal(np.asarray(clf.fitted_.blocks[0].stats.counts),
                                  ref.feature_count_)
    device_result(clf.predict_proba(jnp.asarray(X)), ref.predict_proba(X))


def test_device_rows_with_missing_values_and_no_rows(device_chunks):
    """Missing values (NaN) in device rows are left out of each row's score as in NumPy rows
    (scored on the device, normalised there); zero rows give an empty device array."""
    X, y = _data(14, f=8)
    features = {(0, 1, 2, 3): bnb.Multinomial(), (4, 5): bnb.Poisson(), 6: bnb.Gaussian(),
                7: bnb.Gaussian()}
    clf = bnb.NaiveBayes(features, method="mean").fit(X, y)
    holes = X.copy()
    holes[np.random.default_rng(14).random(X.shape) < 0.1] = np.nan
    device_result(clf.predict_proba(jnp.asarray(holes)), clf.predict_proba(holes))
    empty = clf.predict_proba(jnp.zeros((0, 8), jnp.float32))
    assert isinstance(empty, jax.Array) and empty.shape == (0, 3)


def test_device_rows_of_new_counts_reuse_the_compiled_kernel(device_chunks):
    """The score kernel is compiled per chunk shape, not per input: device-resident inputs of
    other row counts stream through the same compiled kernel (only the device slice follows
    X's shape), with answers equal to the NumPy input's to float32 precision."""
    X, y = _data(15)
    clf = bnb.NaiveBayes(bnb.Multinomial(), method="mean").fit(X, y)
    clf.predict_proba(jnp.asarray(X[:700]))
    traced = _kernels.TRACES["scores"]
    for n in (650, 999, 333):
        device_result(clf.predict_proba(jnp.asarray(X[:n])), clf.predict_proba(X[:n]))
    assert _kernels.TRACES["scores"] == traced


def test_device_input_of_a_family_scored_in_float64():
    """A family with no float32 fast form (NegativeBinomial) is scored in float64 whatever the
    dtype; with a ``jax.Array`` X its results came back as float64 device arrays, and
    ``predict`` and ``score`` crashed (JAX's float32 ``argmax`` refused a float64 operand).
    Every output is now in JAX's float dtype; the reference is the ML plug-in with SciPy's
    ``nbinom`` (``p = r n / (r n + sum x)``) and the class frequencies."""
    from scipy.special import softmax
    from scipy.stats import nbinom

    rng = np.random.default_rng(3)
    y = np.arange(200) % 3
    X = rng.poisson(3 + y[:, None], (200, 4)).astype(float)
    Xt = X[:5]
    p = np.array([2.0 * 1 / (2.0 + X[y == k].mean(axis=0)) for k in range(3)])
    reference = softmax(np.stack([nbinom.logpmf(Xt, 2.0, p[k]).sum(axis=1) + np.log(
        np.mean(y == k)) for k in range(3)], axis=1), axis=1)
    model = bnb.NaiveBayes(bnb.NegativeBinomial(r=2.0), method="ml").fit(X, y)
    proba = model.predict_proba(jnp.asarray(Xt))
    assert proba.dtype == jnp.float32
    np.testing.assert_allclose(np.asarray(proba), reference, rtol=1e-5)
    assert np.array_equal(model.predict(jnp.asarray(Xt)), reference.argmax(axis=1))
    assert model.score(jnp.asarray(Xt), y[:5]) == np.mean(reference.argmax(axis=1) == y[:5])
