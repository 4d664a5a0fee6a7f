"""Saved models: exact round trips, clear errors for bad files, and old files keep loading."""

import io
import json
import warnings
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import bayesnb as bnb
from bayesnb import datasets

MODELS = Path(__file__).resolve().parent.parent / "models"
METHODS = ["ml", "map", "mean", "bayes"]


def mixed_data(seed=0, n=120):
    rng = np.random.default_rng(seed)
    y = rng.choice(["a", "b", "c"], n)
    k = np.searchsorted(["a", "b", "c"], y)
    df = pd.DataFrame({
        "flag": rng.random(n) < 0.2 + 0.3 * k,
        "colour": rng.choice(["red", "green", "blue"], n),
        "size": rng.normal(k, 1.0),
        "visits": rng.poisson(1 + k).astype(float),
    })
    for j in range(4):
        df[f"w{j}"] = rng.poisson(1 + (j == k), n)
    df.loc[::9, "size"] = np.nan
    df.loc[::7, "colour"] = None
    bag = bnb.Multinomial(alpha=1.5)
    features = {"visits": bnb.Poisson(shape=2.0), "size": bnb.Gaussian(pooled=True),
                **{f"w{j}": bag for j in range(4)}}
    return df, y, features


@pytest.mark.parametrize("x64_mode", [False, True])
@pytest.mark.parametrize("method", METHODS)
def test_round_trip_is_bit_exact_for_every_family(tmp_path, method, x64_mode):
    import jax

    df, y, features = mixed_data()
    with jax.enable_x64(x64_mode):
        clf = bnb.NaiveBayes(features, method=method, class_alpha=2.0).fit(df, y)
        path = bnb.save(clf, tmp_path / "m.bnb")
        loaded = bnb.load(path)
        assert {type(b.family) for b in clf.blocks_} == {
            bnb.Bernoulli, bnb.Categorical, bnb.Gaussian, bnb.Poisson, bnb.Multinomial}
        np.testing.assert_array_equal(loaded.predict_proba(df), clf.predict_proba(df))
        np.testing.assert_array_equal(loaded.predict(df), clf.predict(df))
        assert loaded.log_evidence() == clf.log_evidence()
        assert loaded.get_params()["method"] == method
        np.testing.assert_array_equal(loaded.classes_, clf.classes_)
        # a loaded model keeps learning: the statistics are in the file
        loaded.partial_fit(df.iloc[:10], y[:10])
        clf.partial_fit(df.iloc[:10], y[:10])
        np.testing.assert_array_equal(loaded.predict_proba(df), clf.predict_proba(df))


def test_round_trip_from_tables_and_label_types(tmp_path):
    clf = bnb.from_tables({1: 0.25, 2: 0.75}, gaussian={"t": {1: (0.0, 1.0), 2: (1.0, 2.0)}},
                          bernoulli={"b": {1: 0.1, 2: 0.6}})
    loaded = bnb.load(bnb.save(clf, tmp_path / "t.bnb"))
    X = pd.DataFrame({"t": [0.0, 1.5], "b": [1, 0]})
    np.testing.assert_array_equal(loaded.predict_proba(X), clf.predict_proba(X))
    assert loaded.classes_.tolist() == [1, 2]
    with pytest.raises(ValueError, match="no evidence"):
        loaded.log_evidence()


def test_stated_gaussian_tables_of_an_earlier_release_load(tmp_path):
    """Earlier releases kept the Gaussian's float32 shift (``center``) in its table, so their
    stated-table files hold one more array: such a file still loads and scores as stated."""
    from scipy import stats

    clf = bnb.from_tables({1: 0.25, 2: 0.75}, gaussian={"t": {1: (0.0, 1.0), 2: (1.0, 2.0)}})
    path = bnb.save(clf, tmp_path / "t.bnb")
    buf = io.BytesIO()
    np.save(buf, np.array([0.5]))

    def with_center(m):
        m["blocks"][0]["tables"]["center"] = "block0/tables/center"
        return m

    rewrite(path, manifest=with_center, replace={"arrays/block0/tables/center.npy":
                                                 buf.getvalue()})
    x = np.array([0.3, 1.5, -2.0])
    joint = np.stack([0.25 * stats.norm.pdf(x, 0.0, 1.0), 0.75 * stats.norm.pdf(x, 1.0, 2.0)], 1)
    np.testing.assert_allclose(bnb.load(path).predict_proba(pd.DataFrame({"t": x})),
                               joint / joint.sum(axis=1, keepdims=True), rtol=1e-6)


def test_unsaveable_labels_are_refused(tmp_path):
    X = np.array([[0.0], [1.0], [2.0], [3.0]])
    y = [(1, 2), (1, 2), (3, 4), (3, 4)]
    clf = bnb.NaiveBayes(method="mean").fit(X, np.array(y, dtype=object)[:, 0])
    clf.fitted_ = clf.fitted_.replace(classes=np.array([(1, 2), (3, 4)], dtype=object))
    with pytest.raises(TypeError, match="class label"):
        bnb.save(clf, tmp_path / "x.bnb")


@pytest.fixture
def saved(tmp_path):
    X, y = datasets.load_playtennis()
    return bnb.save(bnb.NaiveBayes().fit(X, y), tmp_path / "p.bnb")


def rewrite(path, manifest=None, drop=None, replace=None):
    with zipfile.ZipFile(path) as zf:
        members = {n: zf.read(n) for n in zf.namelist()}
    if manifest is not None:
        members["manifest.json"] = json.dumps(manifest(json.loads(members["manifest.json"])))
    for name in drop or []:
        members.pop(name)
    members.update(replace or {})
    with zipfile.ZipFile(path, "w") as zf:
        for n, data in members.items():
            zf.writestr(n, data)
    return path


def test_truncated_file(saved):
    data = saved.read_bytes()
    for cut in (10, len(data) // 2, len(data) - 5):
        saved.write_bytes(data[:cut])
        with pytest.raises(bnb.ModelFileError, match="corrupt or truncated"):
            bnb.load(saved)


def test_flipped_byte_is_caught_by_the_checksum(saved):
    data = bytearray(saved.read_bytes())
    with zipfile.ZipFile(saved) as zf:
        info = zf.getinfo("arrays/block0/stats/counts.npy")
    data[info.header_offset + 30 + len(info.filename) + 2] ^= 0xFF  # inside the member's data
    saved.write_bytes(bytes(data))
    with pytest.raises(bnb.ModelFileError):
        bnb.load(saved)


def test_not_a_model_file(tmp_path):
    p = tmp_path / "x.bnb"
    p.write_text("hello")
    with pytest.raises(bnb.ModelFileError, match="corrupt"):
        bnb.load(p)
    with zipfile.ZipFile(p, "w") as zf:
        zf.writestr("other.txt", "x")
    with pytest.raises(bnb.ModelFileError, match="no manifest"):
        bnb.load(p)


def test_newer_version_is_refused(saved):
    rewrite(saved, manifest=lambda m: {**m, "format_version": 99})
    with pytest.raises(bnb.ModelFileError, match="format version 99"):
        bnb.load(saved)


def test_unknown_family_is_refused(saved):
    def edit(m):
        m["blocks"][0]["family"] = "os.system"
        return m

    rewrite(saved, manifest=edit)
    with pytest.raises(bnb.ModelFileError) as info:
        bnb.load(saved)
    assert str(info.value).startswith(f"{saved}: unknown family 'os.system' in block 0")


def test_a_save_that_cannot_be_written_names_the_path_asked_for(tmp_path):
    """Not the temporary file it would have been written to first."""
    model = bnb.NaiveBayes().fit(*datasets.load_playtennis())
    for path, error in ((tmp_path / "no" / "such" / "x.bnb", FileNotFoundError),
                        (tmp_path, IsADirectoryError)):
        with pytest.raises(error) as info:
            bnb.save(model, path)
        assert info.value.filename == str(path)
    assert [p.name for p in tmp_path.iterdir()] == []  # and no temporary file is left


def test_missing_array(saved):
    rewrite(saved, drop=["arrays/block0/stats/counts.npy"])
    with pytest.raises(bnb.ModelFileError, match="missing"):
        bnb.load(saved)


def test_wrong_shape_statistics(saved):
    buf = io.BytesIO()
    np.save(buf, np.zeros((3, 10)))
    rewrite(saved, replace={"arrays/block0/stats/counts.npy": buf.getvalue()})
    with pytest.raises(bnb.ModelFileError,
                       match=r"shape \(3, 10\), the manifest implies \(2, 10\)"):
        bnb.load(saved)


def test_pickled_arrays_are_never_loaded(saved):
    buf = io.BytesIO()
    np.save(buf, np.array([{"evil": 1}], dtype=object), allow_pickle=True)
    rewrite(saved, replace={"arrays/class_count.npy": buf.getvalue()})
    with pytest.raises(bnb.ModelFileError, match="safely"):
        bnb.load(saved)


def test_unsaved_model_cannot_be_saved(tmp_path):
    with pytest.raises(ValueError, match="fitted"):
        bnb.save(bnb.NaiveBayes(), tmp_path / "x.bnb")


@pytest.mark.parametrize("path", sorted(MODELS.glob("*.bnb")), ids=lambda p: p.stem)
def test_shipped_model_files_reproduce_their_stored_predictions(path, x64):
    name = path.stem
    dataset = name.split("_")[0]
    X, _ = datasets.load(dataset)
    model = bnb.load(path)
    stored = pd.read_csv(MODELS / f"{name}.predictions.csv")
    assert [str(c) for c in model.classes_] == list(stored.columns)
    np.testing.assert_allclose(model.predict_proba(X), stored.to_numpy(), rtol=1e-12, atol=1e-14)


def test_every_shipped_model_has_predictions():
    files = sorted(MODELS.glob("*.bnb"))
    assert len(files) >= 5
    for f in files:
        assert (MODELS / f"{f.stem}.predictions.csv").exists()


def test_mcmc_draws_are_saved_and_not_rerun(tmp_path, monkeypatch):
    import bayesnb.inference as inference

    X, y = datasets.load_playtennis()
    clf = bnb.NaiveBayes(method="mcmc", num_warmup=50, num_samples=100, num_chains=1,
                         progress_bar=False)
    with pytest.warns(inference.ConvergenceWarning):  # deliberately short chains
        clf.fit(X, y)
    loaded = bnb.load(bnb.save(clf, tmp_path / "mcmc.bnb"))

    def refuse(*args, **kwargs):
        raise AssertionError("NUTS ran again after loading")

    monkeypatch.setattr(inference, "run_nuts", refuse)
    for site, draws in clf.draws_.items():
        np.testing.assert_array_equal(loaded.draws_[site], draws)
    np.testing.assert_array_equal(loaded.predict_proba(X), clf.predict_proba(X))
    assert loaded.get_params()["num_samples"] == 100


def test_merged_fits_equal_one_fit(x64):
    df, y, features = mixed_data()
    halves = [bnb.NaiveBayes(features, method="bayes").partial_fit(
        df.iloc[s], y[s], classes=["a", "b", "c"]) for s in (slice(0, 50), slice(50, None))]
    whole = bnb.NaiveBayes(features, method="bayes").fit(df, y)
    merged = bnb.merge(*halves)
    np.testing.assert_allclose(merged.predict_proba(df), whole.predict_proba(df), rtol=1e-12)
    assert merged.log_evidence() == pytest.approx(whole.log_evidence(), rel=1e-12)
    other = bnb.NaiveBayes(method="bayes").fit(df, y)
    with pytest.raises(ValueError, match="columns"):
        bnb.merge(whole, other)


def test_count_and_kernel_inference_settings_are_saved(tmp_path):
    """infer_counts and use_kernel decide how a refit reads columns features does not
    declare: a clone of the loaded model infers them as the original does (they were lost:
    a count column came back Gaussian); files written before them read the defaults."""
    from sklearn.base import clone

    X = pd.DataFrame({"calls": [1, 3, 0, 2, 4, 1], "t": [2.5, 0.1, 1.2, 3.3, 0.7, 1.9]})
    y = ["a", "b", "a", "b", "a", "b"]
    for setting in ("infer_counts", "use_kernel"):
        model = bnb.NaiveBayes(**{setting: True}).fit(X, y)
        loaded = bnb.load(bnb.save(model, tmp_path / f"{setting}.bnb"))
        assert getattr(loaded, setting) is True
        np.testing.assert_array_equal(loaded.predict_proba(X), model.predict_proba(X))
        refit = clone(loaded).set_params(features=None).fit(X, y)
        assert ([type(b.family) for b in refit.blocks_]
                == [type(b.family) for b in model.blocks_]), setting
    old = bnb.load(MODELS / "titanic_ml_v1.bnb")  # written before them
    assert (old.infer_counts, old.use_kernel) == (False, False)
    path = rewrite(bnb.save(bnb.NaiveBayes().fit(X, y), tmp_path / "bad.bnb"),
                   manifest=lambda m: {**m, "infer_counts": "yes"})
    with pytest.raises(bnb.ModelFileError, match="infer_counts"):
        bnb.load(path)


def test_a_semi_supervised_mcmc_model_keeps_its_unlabeled_rows(tmp_path):
    """The unlabeled rows were not written: the loaded model answered log_evidence and the
    closed-form tables from the labelled rows (the original refuses them), and a NUTS rerun
    after set_params left those rows out (0.10 off the original's rerun). Against the
    original: its refusals, and the rerun's probabilities exactly."""
    rng = np.random.default_rng(0)
    y = pd.Series(np.array(["a", "b"])[rng.integers(0, 2, 60)])
    X = pd.DataFrame({"g": rng.normal((y == "b") * 2.0, 1.0),
                      "c": np.array(["u", "v", "w"])[rng.integers(0, 3, 60)]})
    y = y.where(np.arange(60) % 3 != 0, None)  # 20 unlabeled rows
    X.loc[0, "c"] = "z"  # a level of an unlabeled row only (code -2: refused at load once)
    clf = bnb.NaiveBayes({"g": bnb.Gaussian(), "c": bnb.Categorical(unseen="smooth")},
                         method="mcmc", num_warmup=60, num_samples=60, num_chains=1,
                         progress_bar=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bnb.inference.ConvergenceWarning)
        clf.fit(X, y)
        loaded = bnb.load(bnb.save(clf, tmp_path / "semi.bnb"))
        np.testing.assert_array_equal(loaded.fitted_.unlabeled[1], clf.fitted_.unlabeled[1])
        assert loaded.n_unlabeled_ == 20
        for model in (clf, loaded):
            with pytest.raises(ValueError, match="20 unlabeled rows"):
                model.log_evidence()
        np.testing.assert_array_equal(loaded.predict_proba(X), clf.predict_proba(X))
        rerun = [m.set_params(num_samples=80).predict_proba(X) for m in (clf, loaded)]
    np.testing.assert_array_equal(rerun[1], rerun[0])
    # a tampered row: a level code past the column's levels is refused
    path = tmp_path / "semi.bnb"
    with zipfile.ZipFile(path) as zf:
        name = next(n for n in zf.namelist() if n.endswith("unlabeled.npy")
                    and np.load(io.BytesIO(zf.read(n))).dtype.kind == "i")
        codes = np.load(io.BytesIO(zf.read(name)))
    codes[0, 0] = 3
    buffer = io.BytesIO()
    np.save(buffer, codes)
    rewrite(path, replace={name: buffer.getvalue()})
    with pytest.raises(bnb.ModelFileError, match="a level code outside the block's levels"):
        bnb.load(path)


def test_a_file_of_big_endian_arrays_loads(tmp_path):
    """np.save on a big-endian machine writes '>f8': it was refused as "dtype >f8, expected
    float32/float64"; it is read in native order, the model equal to the saved one."""
    X, y = datasets.load_playtennis()
    clf = bnb.NaiveBayes(method="bayes").fit(X, y)
    path = bnb.save(clf, tmp_path / "native.bnb")
    swapped = {}
    with zipfile.ZipFile(path) as zf:
        for name in zf.namelist():
            data = zf.read(name)
            if name.endswith(".npy"):
                a = np.load(io.BytesIO(data))
                buffer = io.BytesIO()
                np.save(buffer, a.astype(a.dtype.newbyteorder(">")))
                data = buffer.getvalue()
            swapped[name] = data
    rewrite(path, replace=swapped)
    np.testing.assert_array_equal(bnb.load(path).predict_proba(X), clf.predict_proba(X))


def test_settings_a_file_cannot_hold_are_refused_at_save_saying_so(tmp_path):
    """A bayes model fitted with num_samples=200,000 (an MCMC setting it does not use) could
    not be saved, and the message did not say it was the file format's limit (hunt 52)."""
    X, y = datasets.load_playtennis()
    model = bnb.NaiveBayes(method="bayes", num_samples=200_000).fit(X, y)
    with pytest.raises(ValueError, match=r"num_samples=200000.*A model file holds MCMC settings "
                                         r"up to .*num_samples=100,000.*here 'bayes'.*set_params"):
        bnb.save(model, tmp_path / "m.bnb")
    model.set_params(num_samples=1_000)
    assert bnb.load(bnb.save(model, tmp_path / "m.bnb")).num_samples == 1_000
