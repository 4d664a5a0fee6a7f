"""Issue 38, sections 2-4: nothing lost at save, everything saved loads, load never runs
inference, and every corrupt file is one ``ModelFileError``."""

import json
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import bayesnb as bnb
import bayesnb.inference as inference
from bayesnb import datasets
from bayesnb.cli import main as cli_main

ROOT = Path(__file__).resolve().parent.parent
MODELS = sorted((ROOT / "models").glob("*.bnb"))


def two_class_frame(seed=0, n=40):
    rng = np.random.default_rng(seed)
    k = np.arange(n) % 2
    X = pd.DataFrame({"colour": rng.choice(["red", "green", "blue"], n),
                      "size": rng.normal(k, 1.0)})
    return X, k


def rewrite(path, manifest):
    with zipfile.ZipFile(path) as zf:
        members = {n: zf.read(n) for n in zf.namelist()}
    members["manifest.json"] = json.dumps(manifest(json.loads(members["manifest.json"])))
    with zipfile.ZipFile(path, "w") as zf:
        for n, data in members.items():
            zf.writestr(n, data)


# ---------------------------------------------------------------- atomic saves
def test_a_save_that_fails_midway_leaves_the_previous_file(tmp_path, monkeypatch):
    X, k = two_class_frame()
    old = bnb.NaiveBayes(method="bayes").fit(X, np.array(["p", "q"])[k])
    path = bnb.save(old, tmp_path / "m.bnb")
    before = path.read_bytes()
    new = bnb.NaiveBayes(method="ml").fit(X, np.array(["u", "v"])[k])
    calls = []
    real = np.save

    def fail_on_third(*args, **kwargs):
        calls.append(1)
        if len(calls) == 3:
            raise OSError("disk full")
        return real(*args, **kwargs)

    monkeypatch.setattr(np, "save", fail_on_third)
    with pytest.raises(OSError, match="disk full"):
        bnb.save(new, path)
    monkeypatch.undo()
    assert len(calls) == 3  # it failed while writing, after two arrays
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.bnb"]  # no temporary left
    loaded = bnb.load(path)
    assert list(loaded.classes_) == ["p", "q"] and loaded.method == "bayes"
    np.testing.assert_array_equal(loaded.predict_proba(X), old.predict_proba(X))


def test_a_save_replaces_the_file_and_keeps_its_permissions(tmp_path):
    X, k = two_class_frame()
    path = tmp_path / "m.bnb"
    path.write_bytes(b"an older file")
    path.chmod(0o640)
    bnb.save(bnb.NaiveBayes().fit(X, k), path)
    assert path.stat().st_mode & 0o777 == 0o640
    assert list(bnb.load(path).classes_) == [0, 1]


def test_a_save_through_a_symbolic_link_replaces_the_file_it_names(tmp_path):
    """As ``open(link, "wb")`` would: the link stays a link, its file gets the new model."""
    X, k = two_class_frame()
    target = tmp_path / "models" / "m.bnb"
    target.parent.mkdir()
    bnb.save(bnb.NaiveBayes(method="ml").fit(X, k), target)
    link = tmp_path / "current.bnb"
    link.symlink_to(target)
    bnb.save(bnb.NaiveBayes(method="bayes").fit(X, k), link)
    assert link.is_symlink() and bnb.load(target).method == "bayes"
    assert sorted(p.name for p in target.parent.iterdir()) == ["m.bnb"]  # no temporary left
    dangling = tmp_path / "new.bnb"
    dangling.symlink_to(tmp_path / "models" / "n.bnb")
    bnb.save(bnb.NaiveBayes().fit(X, k), dangling)
    assert dangling.is_symlink() and bnb.load(tmp_path / "models" / "n.bnb").method == "mean"


def test_cli_output_naming_an_input_is_one_line_error(tmp_path, capsys):
    X, k = two_class_frame(1)
    data = tmp_path / "d.csv"
    X.assign(label=k).to_csv(data, index=False)
    before = data.read_bytes()
    assert cli_main(["fit", str(data), "--target", "label", "-o", str(data)]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "names the input file" in err
    assert data.read_bytes() == before
    model = tmp_path / "m.bnb"
    assert cli_main(["fit", str(data), "--target", "label", "-o", str(model)]) == 0
    saved = model.read_bytes()
    # the model file, or the data through another spelling of its path
    for target in (model, tmp_path / "." / "d.csv"):
        capsys.readouterr()
        assert cli_main(["predict", str(model), str(data), "-o", str(target)]) == 2
        err = capsys.readouterr().err.strip()
        assert "\n" not in err and "names the input file" in err
    assert model.read_bytes() == saved and data.read_bytes() == before
    out = tmp_path / "p.csv"
    assert cli_main(["predict", str(model), str(data), "-o", str(out)]) == 0
    assert len(pd.read_csv(out)) == len(X)


def test_cli_predict_output_is_replaced_atomically(tmp_path, monkeypatch, capsys):
    X, k = two_class_frame(2)
    data = tmp_path / "d.csv"
    X.assign(label=k).to_csv(data, index=False)
    model = tmp_path / "m.bnb"
    assert cli_main(["fit", str(data), "--target", "label", "-o", str(model)]) == 0
    out = tmp_path / "p.csv"
    out.write_text("previous predictions\n")

    def broken(self, *args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(pd.DataFrame, "to_csv", broken)
    assert cli_main(["predict", str(model), str(data), "-o", str(out)]) == 2
    assert out.read_text() == "previous predictions\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d.csv", "m.bnb", "p.csv"]


# ---------------------------------------------------------------- everything saved loads
def test_numpy_string_labels_wider_than_the_classes_round_trip(tmp_path):
    X, k = two_class_frame(3)
    labels = np.array(["low", "high", "unknown-extra"])[k]  # dtype <U13, classes 3-4 wide
    clf = bnb.NaiveBayes(method="bayes").fit(X, labels)
    loaded = bnb.load(bnb.save(clf, tmp_path / "w.bnb"))
    assert loaded.classes_.dtype == labels.dtype
    np.testing.assert_array_equal(loaded.classes_, ["high", "low"])
    np.testing.assert_array_equal(loaded.predict(X), clf.predict(X))


LABELS = st.sampled_from([
    ("U", 2), ("U", 9), ("U", 40), ("object", None), ("int8", None), ("int16", None),
    ("int64", None), ("uint8", None), ("uint64", None), ("bool", None), ("float16", None),
    ("float32", None), ("float64", None)])
LEVELS = st.sampled_from(["str", "int8", "int32", "uint16", "float32", "float64", "bool",
                          "category"])


def labels_of(kind, width, codes):
    if kind == "U":  # strings of a dtype wider than the labels present
        base = np.array(["ab", "c", "x" * width], dtype=f"<U{width}")
        return base[codes]
    if kind == "object":
        return np.array(["no", "yes"], dtype=object)[codes]
    if kind == "bool":
        return codes.astype(bool)
    values = {"u": [7, 250], "i": [-3, 100], "f": [-1.0, 3.0]}[np.dtype(kind).kind]
    return np.array(values, dtype=kind)[codes]


def levels_of(kind, values):
    if kind == "str":
        return np.array(["a", "bb", "ccc"])[values]
    if kind == "category":
        return pd.Categorical(np.array(["lo", "mid", "hi"])[values])
    if kind == "bool":
        return (values > 0)
    return np.array([1, 5, 9])[values].astype(kind) / (3 if kind.startswith("f") else 1)


@settings(max_examples=30, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(label=LABELS, level=LEVELS, method=st.sampled_from(["mean", "bayes", "ml"]),
       seed=st.integers(0, 2**16))
def test_save_load_round_trip_over_label_and_level_types(tmp_path, label, level, method, seed):
    rng = np.random.default_rng(seed)
    n = 30
    codes = np.arange(n) % 2
    y = labels_of(*label, codes)
    X = pd.DataFrame({"level": levels_of(level, rng.integers(0, 3, n)),
                      "count": rng.poisson(2 + codes)})
    clf = bnb.NaiveBayes({"level": bnb.Categorical(), "count": bnb.Poisson()},
                         method=method).fit(X, y)
    loaded = bnb.load(bnb.save(clf, tmp_path / "r.bnb"))
    assert loaded.classes_.dtype == clf.classes_.dtype
    np.testing.assert_array_equal(loaded.classes_, clf.classes_)
    np.testing.assert_array_equal(loaded.predict_proba(X), clf.predict_proba(X))
    np.testing.assert_array_equal(loaded.predict(X), clf.predict(X))
    assert loaded.predict(X).dtype == clf.predict(X).dtype


# ---------------------------------------------------------------- load never runs inference
@pytest.fixture(scope="module")
def mcmc_bytes(tmp_path_factory):
    X, y = datasets.load_playtennis()
    clf = bnb.NaiveBayes(method="mcmc", num_warmup=30, num_samples=40, num_chains=1,
                         progress_bar=False)
    with pytest.warns(inference.ConvergenceWarning):
        clf.fit(X, y)
    return bnb.save(clf, tmp_path_factory.mktemp("mc") / "m.bnb").read_bytes()


@pytest.fixture
def no_nuts(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("NUTS ran")

    monkeypatch.setattr(inference, "run_nuts", refuse)


def test_an_mcmc_file_without_draws_is_refused_unrun(tmp_path, mcmc_bytes, no_nuts):
    path = tmp_path / "m.bnb"
    path.write_bytes(mcmc_bytes)

    def strip(m):
        m["draws"] = {}
        m["mcmc"]["num_samples"] = 50_000
        return m

    rewrite(path, strip)
    with zipfile.ZipFile(path) as zf:  # leave only the arrays the stripped manifest names
        kept = {n: zf.read(n) for n in zf.namelist()
                if not n.startswith(("arrays/draws/", "arrays/sample_stats/"))}
    with zipfile.ZipFile(path, "w") as zf:
        for n, data in kept.items():
            zf.writestr(n, data)
    with pytest.raises(bnb.ModelFileError, match="MCMC model without its draws"):
        bnb.load(path)


@pytest.mark.parametrize("setting,value", [("num_samples", 10**9), ("num_warmup", 10**8),
                                           ("num_chains", 0), ("chain_method", "threads"),
                                           ("seed", 2**70), ("progress_bar", "yes")])
def test_mcmc_settings_read_from_a_file_are_bounded(tmp_path, mcmc_bytes, no_nuts, setting,
                                                    value):
    path = tmp_path / "m.bnb"
    path.write_bytes(mcmc_bytes)
    rewrite(path, lambda m: {**m, "mcmc": {**m["mcmc"], setting: value}})
    with pytest.raises(bnb.ModelFileError, match=f"MCMC setting {setting}="):
        bnb.load(path)


def test_an_mcmc_model_updated_since_its_draws_is_saved_with_draws(tmp_path):
    X, y = datasets.load_playtennis()
    clf = bnb.NaiveBayes(method="mcmc", num_warmup=30, num_samples=40, num_chains=1,
                         progress_bar=False)
    with pytest.warns(inference.ConvergenceWarning):
        clf.partial_fit(X, y)  # NUTS has not run yet
        path = bnb.save(clf, tmp_path / "m.bnb")
    loaded = bnb.load(path)
    np.testing.assert_array_equal(loaded.predict_proba(X), clf.predict_proba(X))


def test_nuts_settings_the_estimator_refuses_name_the_setting():
    X, y = datasets.load_playtennis()
    for params, name in [({"num_chains": 0}, "num_chains"), ({"num_samples": 0}, "num_samples"),
                         ({"num_warmup": -1}, "num_warmup"), ({"num_chains": 1.5}, "num_chains"),
                         ({"chain_method": "fast"}, "chain_method")]:
        with pytest.raises(ValueError, match=f"MCMC setting {name}="):
            bnb.NaiveBayes(method="mcmc", progress_bar=False, **params).fit(X, y)


# ---------------------------------------------------------------- corrupt bytes
@pytest.mark.parametrize("path", MODELS, ids=[p.stem for p in MODELS])
@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_corrupt_bytes_give_model_file_error_or_the_same_model(path, tmp_path, data):
    original = path.read_bytes()
    name = path.stem.split("_")[0]
    X, _ = datasets.load(name)
    reference = reference_proba(path, X)
    corrupt = bytearray(original)
    for _ in range(data.draw(st.integers(1, 3))):
        corrupt[data.draw(st.integers(0, len(corrupt) - 1))] = data.draw(st.integers(0, 255))
    target = tmp_path / "c.bnb"
    target.write_bytes(bytes(corrupt))
    try:
        model = bnb.load(target)
    except bnb.ModelFileError as err:
        assert "\n" not in str(err)
        return
    np.testing.assert_array_equal(model.predict_proba(X), reference)


_REFERENCES = {}


def reference_proba(path, X):
    if path not in _REFERENCES:
        _REFERENCES[path] = bnb.load(path).predict_proba(X)
    return _REFERENCES[path]


def test_cli_reports_a_corrupt_file_as_an_error_not_a_bug(tmp_path, capsys):
    data = bytearray((ROOT / "models" / "iris_pooled_map_v1.bnb").read_bytes())
    with zipfile.ZipFile(ROOT / "models" / "iris_pooled_map_v1.bnb") as zf:
        info = max(zf.infolist(), key=lambda i: i.compress_size)
    start = info.header_offset + 30 + len(info.filename.encode()) + len(info.extra)
    for offset in range(info.compress_size):  # damage the deflate stream itself
        data[start + offset] ^= 0x5A
    target = tmp_path / "c.bnb"
    target.write_bytes(bytes(data))
    assert cli_main(["show", str(target)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("bayesnb show: error:") and "internal error" not in err


def test_a_loaded_estimator_names_the_families_its_fit_inferred(tmp_path):
    """docs/user_guide/model_files.md: the loaded ``features`` is the inferred mapping, so
    a clone refits with those families (and equals the original's refit)."""
    from sklearn.base import clone

    from bayesnb.datasets import load_titanic

    X, y = load_titanic()
    clf = bnb.NaiveBayes().fit(X, y)
    loaded = bnb.load(bnb.save(clf, tmp_path / "t.bnb"))
    assert clf.get_params()["features"] is None
    assert {c: type(f).__name__ for c, f in loaded.get_params()["features"].items()} == {
        "Class": "Categorical", "Sex": "Categorical", "Age": "Categorical"}
    np.testing.assert_array_equal(clone(loaded).fit(X, y).predict_proba(X),
                                  clf.predict_proba(X))
    page = Path(__file__).resolve().parents[1] / "docs" / "user_guide" / "model_files.md"
    assert "the loaded estimator's `features` names the families the fit" in page.read_text()
