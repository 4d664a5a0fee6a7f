"""Hostile model files (issue 11, section 4) and distributions saved as data (issue 14, section 5).

Every hostile file is a saved model whose zip is rewritten: ``load`` must refuse it with one
``ModelFileError`` line naming the member and the problem, before reading more than the
manifest says, and the CLI must print that line (exit 2), never a traceback.
"""

import io
import json
import subprocess
import sys
import warnings
import zipfile
from pathlib import Path

import numpy as np
import numpyro.distributions as dist
import pandas as pd
import pytest

import bayesnb as bnb
from bayesnb import _stored_distributions as stored
from bayesnb.cli import main as cli_main
from bayesnb.inference import ConvergenceWarning

ROOT = Path(__file__).resolve().parent.parent


def mixed_frame(seed=0, n=60):
    rng = np.random.default_rng(seed)
    y = np.repeat(["a", "b"], n // 2)
    k = (y == "b").astype(int)
    df = pd.DataFrame({"flag": rng.random(n) < 0.3 + 0.4 * k,
                       "colour": rng.choice(["red", "green", "blue"], n),
                       "size": rng.normal(k, 1.0),
                       "visits": rng.poisson(1 + k).astype(float),
                       "w0": rng.poisson(1 + k, n), "w1": rng.poisson(2 - k, n)})
    return df, y


FEATURES = {"visits": bnb.Poisson(), "w0": bnb.Multinomial(), "w1": None}
FEATURES["w1"] = FEATURES["w0"]  # one Multinomial block of two columns


@pytest.fixture(scope="module")
def saved_bytes(tmp_path_factory):
    """A mixed model (every family) saved once; each test rewrites its own copy."""
    df, y = mixed_frame()
    clf = bnb.NaiveBayes(FEATURES, method="mean").fit(df, y)
    path = bnb.save(clf, tmp_path_factory.mktemp("m") / "m.bnb")
    return path.read_bytes()


@pytest.fixture
def saved(saved_bytes, tmp_path):
    path = tmp_path / "m.bnb"
    path.write_bytes(saved_bytes)
    return path


def members(path):
    with zipfile.ZipFile(path) as zf:
        return {n: zf.read(n) for n in zf.namelist()}


def manifest_of(path):
    return json.loads(members(path)["manifest.json"])


def block_of(path, family):
    return next(i for i, b in enumerate(manifest_of(path)["blocks"]) if b["family"] == family)


def rewrite(path, manifest=None, replace=None, extra=()):
    data = members(path)
    if manifest is not None:
        data["manifest.json"] = json.dumps(manifest(json.loads(data["manifest.json"])))
    data.update(replace or {})
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for n, d in data.items():
            zf.writestr(n, d)
        for n, d in extra:
            zf.writestr(n, d)
    return path


def npy(array):
    buf = io.BytesIO()
    np.save(buf, array, allow_pickle=False)
    return buf.getvalue()


def array_of(path, name):
    return np.load(io.BytesIO(members(path)[f"arrays/{name}.npy"]))


def with_array(path, name, change):
    """Rewrite member ``arrays/{name}.npy`` as ``change(its array)``."""
    return rewrite(path, replace={f"arrays/{name}.npy": npy(change(array_of(path, name)))})


def refused(path, *patterns):
    """``load`` raises one ModelFileError line matching every pattern."""
    with pytest.raises(bnb.ModelFileError) as info:
        bnb.load(path)
    text = str(info.value)
    assert "\n" not in text, text
    for p in patterns:
        assert p in text, text
    return text


# ---------------------------------------------------------------- the saved file is untouched
def test_the_unmodified_file_loads(saved):
    df, y = mixed_frame()
    assert bnb.load(saved).predict(df).shape == (len(y),)


# ---------------------------------------------------------------- members and sizes
def huge_zero_member(path, name, n_bytes):
    """Append a member holding an ``.npy`` of ``n_bytes`` zeros, deflated to ~n_bytes/1000."""
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        header, {"descr": "<f8", "fortran_order": False, "shape": (n_bytes // 8,)})
    chunk = bytes(2**24)
    with zipfile.ZipFile(path, "a", compression=zipfile.ZIP_DEFLATED) as zf:
        with zf.open(name, "w", force_zip64=True) as f:
            f.write(header.getvalue())
            for _ in range(n_bytes // len(chunk)):
                f.write(chunk)
    return path


@pytest.fixture(scope="module")
def bomb(saved_bytes, tmp_path_factory):
    """The saved model plus an unnamed member holding a 512 MiB zero array (a 0.5 MB file)."""
    path = tmp_path_factory.mktemp("bomb") / "bomb.bnb"
    path.write_bytes(saved_bytes)
    return huge_zero_member(path, "arrays/unnamed.npy", 2**29)


def test_an_unnamed_member_is_refused_unread(bomb, monkeypatch):
    assert bomb.stat().st_size < 2**20
    opened = []
    real_open = zipfile.ZipFile.open

    def spy(self, name, *args, **kwargs):
        opened.append(getattr(name, "filename", name))
        return real_open(self, name, *args, **kwargs)

    monkeypatch.setattr(zipfile.ZipFile, "open", spy)
    refused(bomb, "arrays/unnamed.npy", "not named by the manifest")
    assert opened == ["manifest.json"]


def test_an_unnamed_member_costs_no_memory(bomb):
    """Measured in a fresh process: the refused 512 MiB member adds nothing to peak RSS (the
    old loader read such members whole: 2.3 GB for a 1 GiB one)."""
    code = (
        "import resource, sys, bayesnb as bnb\n"
        "before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
        "try:\n"
        "    bnb.load(sys.argv[1])\n"
        "except bnb.ModelFileError:\n"
        "    pass\n"
        "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before)\n")
    out = subprocess.run([sys.executable, "-c", code, str(bomb)], capture_output=True,
                         text=True, timeout=300, check=True, cwd=ROOT,
                         env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin",
                              "JAX_PLATFORMS": "cpu"})
    growth_kib = int(out.stdout.split()[-1])
    assert growth_kib < 100 * 1024, out.stdout  # under 100 MB, against 512 MiB to read it


def test_a_huge_named_member_is_refused_before_its_data(saved):
    """A 64 MiB zero array in place of a named member: its header's shape contradicts the
    manifest, refused before a byte of data is read."""
    data = members(saved)
    data.pop("arrays/class_count.npy")
    with zipfile.ZipFile(saved, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for n, d in data.items():
            zf.writestr(n, d)
    huge_zero_member(saved, "arrays/class_count.npy", 2**26)
    refused(saved, "arrays/class_count.npy", "shape (8388608,)", "the manifest implies (2,)")


def test_a_header_declaring_a_huge_shape_is_a_model_file_error(saved):
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        header, {"descr": "<f8", "fortran_order": False, "shape": (100000000000,)})
    name = f"arrays/block{block_of(saved, 'poisson')}/stats/total.npy"
    rewrite(saved, replace={name: header.getvalue() + bytes(64)})
    refused(saved, name, "shape (100000000000,)")


def test_a_header_contradicting_the_member_size_is_refused(saved):
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        header, {"descr": "<f8", "fortran_order": False, "shape": (2,)})
    rewrite(saved, replace={"arrays/class_count.npy": header.getvalue() + bytes(8)})
    refused(saved, "arrays/class_count.npy", "its header implies")


def test_other_compression_methods_are_refused(saved):
    """bzip2 or LZMA could expand far beyond deflate's ~1000:1 bound."""
    data = members(saved)
    with zipfile.ZipFile(saved, "w", compression=zipfile.ZIP_BZIP2) as zf:
        for n, d in data.items():
            zf.writestr(n, d)
    refused(saved, "manifest.json", "compressed with method 12")


def test_duplicate_members_are_refused(saved):
    data = members(saved)
    with zipfile.ZipFile(saved, "a") as zf, pytest.warns(UserWarning, match="Duplicate"):
        zf.writestr("arrays/class_count.npy", data["arrays/class_count.npy"])
    refused(saved, "arrays/class_count.npy", "appears twice")


def test_an_oversize_manifest_is_refused_unparsed(saved, monkeypatch):
    def pad(m):
        m["padding"] = "x" * (bnb.persistence.MAX_MANIFEST_BYTES + 10)
        return m

    rewrite(saved, manifest=pad)

    def no_parse(*args, **kwargs):
        raise AssertionError("the oversize manifest was parsed")

    monkeypatch.setattr(json, "loads", no_parse)
    refused(saved, "manifest.json", "more than")


def test_non_standard_json_constants_are_refused(saved):
    text = members(saved)["manifest.json"].decode().replace('"class_alpha": 1.0',
                                                           '"class_alpha": NaN')
    assert "NaN" in text
    rewrite(saved, replace={"manifest.json": text})
    refused(saved, "unreadable manifest", "NaN")


# ---------------------------------------------------------------- values
@pytest.mark.parametrize(("family", "field", "index", "value", "problem"), [
    ("poisson", "total", (1, 0), np.nan, "NaN"),
    ("gaussian", "mean", (0, 0), np.inf, "infinite"),
    ("multinomial", "counts", (0, 1), -3.0, "negative"),
    ("categorical", "counts", (1, 2), -1.0, "negative"),
    ("gaussian", "m2", (0, 0), -0.5, "negative"),
    ("bernoulli", "ones", (0, 0), np.nan, "NaN"),
])
def test_nan_infinite_or_negative_statistics(saved, family, field, index, value, problem):
    name = f"block{block_of(saved, family)}/stats/{field}"

    def change(a):
        a = a.copy()
        a[index] = value
        return a

    with_array(saved, name, change)
    refused(saved, f"arrays/{name}.npy", problem, f"index {index}")


def test_a_nan_class_count(saved):
    with_array(saved, "class_count", lambda a: np.array([a[0], np.nan]))
    refused(saved, "arrays/class_count.npy", "NaN")


def test_a_negative_class_count(saved):
    with_array(saved, "class_count", lambda a: -a)
    refused(saved, "arrays/class_count.npy", "negative")


def test_a_class_count_below_its_observed_values(saved):
    """Each array valid alone, together inconsistent: a Categorical's (or a Gaussian's)
    observed values outnumber the rows of their class."""
    with_array(saved, "class_count", lambda a: a * np.array([0.5, 1.0]))
    refused(saved, "observed values in class 0, more than its", "arrays/class_count.npy",
            "inconsistent model file")


def test_observed_values_beyond_the_class_count(saved):
    name = f"block{block_of(saved, 'gaussian')}/stats/count"
    with_array(saved, name, lambda a: a * 2)
    refused(saved, "(gaussian)", "observed values in class 0", "inconsistent model file")


def test_more_ones_than_observed_values(saved):
    """A Bernoulli class with more ones than observed values (each array valid alone)
    loaded and predicted P(x = 1 | c) above 1 under method='bayes': its Beta posterior has a
    negative concentration."""
    b = block_of(saved, "bernoulli")
    count = array_of(saved, f"block{b}/stats/count")
    with_array(saved, f"block{b}/stats/ones", lambda a: count + 5.0)
    refused(saved, "(bernoulli)", "contradict each other", "concentration0",
            "inconsistent model file")


def test_a_prior_contradicting_the_hyperparameters(saved):
    name = f"block{block_of(saved, 'poisson')}/prior/shape"
    with_array(saved, name, lambda a: a * 50)
    refused(saved, f"arrays/{name}.npy", "contradicts the manifest's hyperparameters")


def test_hyperparameters_contradicting_the_stored_prior(saved):
    i = block_of(saved, "multinomial")

    def edit(m):
        m["blocks"][i]["hyper"]["alpha"] = 7.5
        return m

    rewrite(saved, manifest=edit)
    refused(saved, f"arrays/block{i}/prior/alpha.npy", "contradicts")


def test_an_invalid_hyperparameter_names_its_block(saved):
    i = block_of(saved, "poisson")

    def edit(m):
        m["blocks"][i]["hyper"]["rate"] = -1.0
        return m

    rewrite(saved, manifest=edit)
    refused(saved, f"block {i} (poisson", "rate must be")


@pytest.mark.parametrize(("dtype", "shown"), [
    (np.int8, "int8"), (np.int64, "int64"), (np.float16, "float16"),
    (np.complex128, "complex128"), ("<U3", "<U3"), (np.bool_, "bool")])
def test_statistics_of_a_wrong_dtype(saved, dtype, shown):
    name = f"block{block_of(saved, 'categorical')}/stats/counts"
    with_array(saved, name, lambda a: a.astype(dtype))
    refused(saved, f"arrays/{name}.npy", f"dtype {shown}", "expected float32/float64")


def test_object_arrays_are_never_unpickled(saved):
    buf = io.BytesIO()
    np.save(buf, np.array([{"evil": 1}, None], dtype=object), allow_pickle=True)
    rewrite(saved, replace={"arrays/class_count.npy": buf.getvalue()})
    refused(saved, "arrays/class_count.npy", "cannot be read safely")


def test_a_structured_dtype_is_refused(saved):
    a = np.zeros(2, dtype=[("x", "<f8")])
    rewrite(saved, replace={"arrays/class_count.npy": npy(a)})
    refused(saved, "arrays/class_count.npy", "cannot be read safely")


@pytest.mark.parametrize(("change", "problem"), [
    (lambda p: [p[0]] * len(p), "not a permutation"),
    (lambda p: [x + 100 for x in p], "not a permutation"),
    (lambda p: p[1:] + p[:1], "position"),
])
def test_positions_must_permute_the_columns(saved, change, problem):
    def edit(m):
        flat = [p for b in m["blocks"] for p in b["positions"]]
        new = change(flat)
        for b in m["blocks"]:
            b["positions"], new = new[:len(b["positions"])], new[len(b["positions"]):]
        return m

    rewrite(saved, manifest=edit)
    refused(saved, problem)


def test_a_manifest_implying_more_data_than_the_file_holds(saved):
    """200,000 classes x 3,000 levels of statistics cannot fit in a small file: refused from
    the manifest alone, before any array of that size is allocated."""
    i = block_of(saved, "categorical")

    def edit(m):
        m["classes"] = {"dtype": "<i8", "values": list(range(200_000))}
        m["blocks"][i]["levels"][0] = list(range(3_000))
        return m

    rewrite(saved, manifest=edit)
    refused(saved, "the manifest implies at least", "more than this file's compressed members")


def test_duplicate_classes_are_refused(saved):
    def edit(m):
        m["classes"]["values"] = ["a", "a"]
        return m

    rewrite(saved, manifest=edit)
    refused(saved, "repeat")


def test_a_class_dtype_wider_than_its_labels_is_refused(saved):
    def edit(m):
        m["classes"]["dtype"] = "<U100000000"
        return m

    rewrite(saved, manifest=edit)
    refused(saved, "wider than")


def test_missing_fields_are_one_line_errors(saved):
    def edit(m):
        del m["blocks"][0]["columns"]
        return m

    rewrite(saved, manifest=edit)
    refused(saved, "missing field 'columns'")


# ---------------------------------------------------------------- the CLI: one line each
def _hostile_files(saved):
    """A few of the hostile files above, made on copies of ``saved``."""
    out = {}
    for label, make in {
        "nan-stats": lambda p: with_array(p, f"block{block_of(p, 'poisson')}/stats/total",
                                          lambda a: a * np.nan),
        "int8-stats": lambda p: with_array(p, f"block{block_of(p, 'categorical')}/stats/counts",
                                           lambda a: a.astype(np.int8)),
        "complex": lambda p: with_array(p, "class_count", lambda a: a.astype(complex)),
        "strings": lambda p: with_array(p, "class_count", lambda a: a.astype(str)),
        "unnamed": lambda p: rewrite(p, extra=[("arrays/x.npy", npy(np.zeros(3)))]),
    }.items():
        path = saved.with_name(f"{label}.bnb")
        path.write_bytes(saved.read_bytes())
        out[label] = make(path)
    return out


def test_cli_prints_one_line_for_each_hostile_file(saved, tmp_path, capsys):
    df, _ = mixed_frame()
    csv = tmp_path / "rows.csv"
    df.to_csv(csv, index=False)
    for label, path in _hostile_files(saved).items():
        for argv in (["show", str(path)], ["predict", str(path), str(csv)]):
            assert cli_main(argv) == 2, (label, argv)
            err = capsys.readouterr().err
            assert err.count("\n") == 1 and str(path) in err, (label, err)
            assert err.startswith(f"bayesnb {argv[0]}: error: "), err


# ---------------------------------------------------------------- distributions as data
@pytest.fixture(scope="module")
def hierarchical(tmp_path_factory):
    """An MCMC fit with a hyperprior and replacement priors (short chains), and its file."""
    import warnings

    df, y = mixed_frame(n=40)
    bag = bnb.Multinomial(alpha=dist.Gamma(2.0, 1.0))
    clf = bnb.NaiveBayes(
        {"visits": bnb.Poisson(), "w0": bag, "w1": bag, "size": bnb.Gaussian()},
        method="mcmc", priors={"poisson.rate": dist.LogNormal(0.0, 1.5),
                               "gaussian.mean": dist.Normal(0.0, 3.0).expand((2, 1))},
        num_warmup=30, num_samples=20, num_chains=1, progress_bar=False, seed=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # deliberately short chains
        clf.fit(df[["visits", "w0", "w1", "size"]], y)
    path = bnb.save(clf, tmp_path_factory.mktemp("h") / "h.bnb")
    return clf, path


def params_of(d):
    if isinstance(d, dist.ExpandedDistribution):
        return ("expand", tuple(d.batch_shape), params_of(d.base_dist))
    if isinstance(d, dist.Independent):
        return ("to_event", d.reinterpreted_batch_ndims, params_of(d.base_dist))
    return (type(d).__name__, tuple(np.asarray(getattr(d, p)).tolist()
                                    for p in stored.ALLOWED[type(d).__name__]))


def test_hyperpriors_and_priors_round_trip(hierarchical, monkeypatch):
    import bayesnb.inference as inference

    clf, path = hierarchical
    loaded = bnb.load(path)

    def refuse(*args, **kwargs):
        raise AssertionError("NUTS ran again after loading")

    monkeypatch.setattr(inference, "run_nuts", refuse)
    assert sorted(loaded.priors) == sorted(clf.priors)
    for site, d in clf.priors.items():
        assert params_of(loaded.priors[site]) == params_of(d)
    bag = next(b.family for b in loaded.blocks_ if b.family.name == "multinomial")
    assert params_of(bag.alpha) == ("Gamma", (2.0, 1.0))
    for site, draws in clf.draws_.items():
        np.testing.assert_array_equal(loaded.draws_[site], draws)
    df = mixed_frame(seed=5, n=20)[0][["visits", "w0", "w1", "size"]]
    np.testing.assert_array_equal(loaded.predict_proba(df), clf.predict_proba(df))


@pytest.mark.parametrize("name", sorted(stored.ALLOWED))
def test_every_allowed_distribution_round_trips_as_data(name):
    shapes = {"Dirichlet": (3,)}
    params = {p: np.full(shapes.get(name, ()), 0.5 + i) for i, p in
              enumerate(stored.ALLOWED[name])}
    if name in ("Uniform", "LogUniform"):
        params = {"low": np.array(0.5), "high": np.array(2.0)}
    d = getattr(dist, name)(**params)
    for wrapped in (d, d.expand((2, 3)), d.expand((2, 3)).to_event(1)):
        arrays = {}

        def put(n, a, arrays=arrays):
            arrays[n] = a
            return n

        spec = json.loads(json.dumps(stored.to_spec(wrapped, "test", "p", put)))
        assert sorted(stored.array_names(spec, "test")) == sorted(arrays)
        back = stored.from_spec(spec, arrays, "test", 100)
        assert type(back) is type(wrapped)
        assert params_of(back) == params_of(wrapped)
        assert back.batch_shape == wrapped.batch_shape
        assert back.event_shape == wrapped.event_shape


class MyGamma(dist.Gamma):
    """A user subclass: may change any method, so it is code, not data."""


@pytest.mark.parametrize("prior", [
    MyGamma(1.0, 1.0),
    dist.TransformedDistribution(dist.Normal(0.0, 1.0),
                                 [dist.transforms.ExpTransform(),
                                  dist.transforms.AffineTransform(1.0, 2.0)]),
    dist.MixtureSameFamily(dist.Categorical(probs=np.array([0.5, 0.5])),
                           dist.Gamma(np.ones(2), np.ones(2))),
], ids=["subclass", "transformed", "mixture"])
def test_a_distribution_that_is_not_data_is_refused_at_save(prior, tmp_path):
    df, y = mixed_frame()
    clf = bnb.NaiveBayes(FEATURES, method="mean").fit(df, y)
    clf.priors = {"poisson.rate": prior}
    with pytest.raises(TypeError, match=r"cannot save the prior 'poisson.rate': .* is not one "
                                        r"of the NumPyro distributions"):
        bnb.save(clf, tmp_path / "x.bnb")
    assert not (tmp_path / "x.bnb").exists()


def _edit_spec(path, change):
    def edit(m):
        change(m["priors"]["poisson.rate"])
        return m

    return rewrite(path, manifest=edit)


@pytest.mark.parametrize(("change", "problem"), [
    (lambda s: s.update(distribution="TransformedDistribution"), "is not one a model file"),
    (lambda s: s.update(distribution="os.system"), "is not one a model file"),
    (lambda s: s.update(distribution="__class__"), "is not one a model file"),
    (lambda s: s.update(distribution="Gamma"), "Gamma needs the parameters"),
    (lambda s: s.update(distribution="Independent", reinterpreted_batch_ndims=1,
                        base=dict(s)), "reinterprets 1 batch dimensions"),
])
def test_a_manifest_naming_a_disallowed_distribution(hierarchical, tmp_path, change, problem):
    path = tmp_path / "h.bnb"
    path.write_bytes(hierarchical[1].read_bytes())
    _edit_spec(path, change)
    refused(path, "prior 'poisson.rate'", problem)


def test_a_distribution_parameter_outside_its_support(hierarchical, tmp_path):
    path = tmp_path / "h.bnb"
    path.write_bytes(hierarchical[1].read_bytes())
    name = manifest_of(path)["priors"]["poisson.rate"]["params"]["scale"]
    with_array(path, name, lambda a: -a)
    refused(path, "prior 'poisson.rate'", "outside its support")


def test_a_huge_distribution_parameter_is_refused(hierarchical, tmp_path):
    path = tmp_path / "h.bnb"
    path.write_bytes(hierarchical[1].read_bytes())
    name = manifest_of(path)["priors"]["poisson.rate"]["params"]["loc"]
    with_array(path, name, lambda a: np.zeros(10_000))
    refused(path, f"arrays/{name}.npy", "more than this model can use")


def test_an_unnamed_member_with_a_line_break_in_its_name_is_refused_on_one_line(saved_bytes,
                                                                               tmp_path):
    """A corrupted member name (here holding a newline, as a flipped byte can make it) is
    quoted in the one-line message, not printed raw."""
    path = tmp_path / "m.bnb"
    path.write_bytes(saved_bytes)
    with zipfile.ZipFile(path, "a") as zf:
        zf.writestr("arrays/\nunnamed.npy", b"")
    refused(path, "'arrays/\\nunnamed.npy'", "not named by the manifest")


@pytest.mark.parametrize("site, change, support", [
    ("class_probs", lambda a: a * np.array([3.0, 1.0]), "Simplex"),  # no longer sums to 1
    ("gaussian.precision", lambda a: -a, "Positive"),
    ("poisson.rate", lambda a: np.where(np.arange(a.size).reshape(a.shape) == 0, -1.0, a),
     "Positive"),
])
def test_draws_outside_their_parameters_support(hierarchical, tmp_path, site, change, support):
    """Draws each finite but outside what their parameter can be (class probabilities
    that do not sum to 1, a negative precision or rate) loaded and predicted silently, or
    failed later with a misleading message; the support is the posterior distribution's."""
    path = tmp_path / "h.bnb"
    path.write_bytes(hierarchical[1].read_bytes())
    with_array(path, f"draws/{site}", change)
    refused(path, f"draws/{site}", "outside their parameter's support", support)


def test_levels_equal_in_python_are_refused(saved):
    """Levels 'red' and 'green' rewritten as 1 and 1.0 (one level to pandas' index): predict
    failed with pandas' "Reindexing only valid with uniquely valued Index objects"."""
    i = block_of(saved, "categorical")

    def edit(m):
        m["blocks"][i]["levels"] = [[1, 1.0, 3]]
        return m

    rewrite(saved, manifest=edit)
    refused(saved, "levels of column", "equal in Python")


def test_a_repeated_manifest_key_is_refused(saved):
    """JSON keeps a repeated key's last value: a second "method" silently changed the
    method the file states."""
    text = members(saved)["manifest.json"].decode()
    rewrite(saved, replace={"manifest.json": text.replace('"method": "mean"',
                                                          '"method": "mean", "method": "ml"', 1)})
    refused(saved, "the key 'method' appears twice")


def test_declared_categories_contradicting_the_levels(tmp_path):
    """Categorical(categories=...) names the levels; a file whose levels are others loaded,
    and a clone of it refused its own training data."""
    X = pd.DataFrame({"k": ["x", "y", "z", "x"]})
    path = bnb.save(bnb.NaiveBayes(bnb.Categorical(categories=["x", "y", "z"])).fit(
        X, ["a", "b", "a", "b"]), tmp_path / "c.bnb")

    def edit(m):
        m["blocks"][0]["hyper"]["categories"] = ["q", "r", "s"]
        return m

    rewrite(path, manifest=edit)
    refused(path, "declared categories", "contradict the block's levels")


def stated_model():
    """One block of every family that states tables, as ``from_tables`` builds them."""
    return bnb.from_tables(
        {"a": 0.4, "b": 0.6},
        categorical={"k": {"a": {"x": 0.2, "y": 0.8}, "b": {"x": 0.5, "y": 0.5}}},
        bernoulli={"f": {"a": 0.1, "b": 0.7}},
        gaussian={"g": {"a": (0.0, 1.0), "b": (2.0, 0.5)}},
        poisson={"p": {"a": 1.5, "b": 4.0}},
        exponential={"e": {"a": 0.5, "b": 2.0}})


def test_every_stated_family_survives_its_round_trip(tmp_path):
    """A file of stated tables is checked by ``from_tables`` of its own ``describe``: every
    family that states tables passes, and predicts what the stated numbers give by hand."""
    from scipy import stats

    path = bnb.save(stated_model(), tmp_path / "s.bnb")
    assert {b["family"] for b in manifest_of(path)["blocks"]} == {
        name for name, cls in bnb.families.REGISTRY.items() if cls.stated_tables}
    row = pd.DataFrame({"k": ["y"], "f": [1], "g": [1.0], "p": [3], "e": [0.7]})
    joint = np.array([0.4 * 0.8 * 0.1 * stats.norm.pdf(1.0, 0.0, 1.0) * stats.poisson.pmf(3, 1.5)
                      * stats.expon.pdf(0.7, scale=2.0),
                      0.6 * 0.5 * 0.7 * stats.norm.pdf(1.0, 2.0, 0.5) * stats.poisson.pmf(3, 4.0)
                      * stats.expon.pdf(0.7, scale=0.5)])
    np.testing.assert_allclose(bnb.load(path).predict_proba(row)[0], joint / joint.sum(),
                               rtol=1e-5)


@pytest.mark.parametrize("family, field, change, problem", [
    # class a's probabilities of k sum to 0.5 (0.2 and 0.3): they loaded and predicted
    ("categorical", "log_prob", lambda a: np.where(np.isclose(a, np.log(0.8)), np.log(0.3), a),
     "not distributions"),
    # P(f = 0 | a) stated 0.5 beside P(f = 1 | a) = 0.1
    ("bernoulli", "log1m_p", lambda a: np.where(np.isclose(a, np.log(0.9)), np.log(0.5), a),
     "disagrees with the probabilities"),
    ("bernoulli", "log_p", lambda a: a + 1.0, "not distributions"),
    ("poisson", "log_rate", lambda a: a + 1.0, "disagrees with the probabilities"),
    ("exponential", "log_rate", lambda a: a - 0.5, "disagrees with the probabilities"),
])
def test_stated_tables_that_are_not_distributions_are_refused(tmp_path, family, field, change,
                                                               problem):
    path = bnb.save(stated_model(), tmp_path / "s.bnb")
    i = block_of(path, family)
    with_array(path, f"block{i}/tables/{field}", change)
    refused(path, f"block {i} ({family})", problem)


def test_stated_tables_are_kept_in_float64_and_round_trip(tmp_path):
    """In JAX's default float32, from_tables held its tables as float32 JAX arrays: rates
    3e-8 apart over 5,000 Exponential columns scored 7.3e-4 off the float64 answer, and
    probabilities near 1 (0.95, 0.999), rounded, then failed the file's round-trip check."""
    from scipy import special, stats

    rng = np.random.default_rng(0)
    r0 = rng.uniform(0.5, 2.0, 5000)
    r1 = r0 * (1 + 3e-8)
    X = np.stack([20.0 / r0, 0.2 / r0])
    joint = np.stack([stats.expon.logpdf(X, scale=1 / r).sum(axis=1) for r in (r0, r1)], 1)
    expected = np.exp(joint - special.logsumexp(joint, axis=1, keepdims=True))
    clf = bnb.from_tables({0: 0.5, 1: 0.5},
                          exponential={j: {0: r0[j], 1: r1[j]} for j in range(5000)})
    np.testing.assert_allclose(clf.predict_proba(X), expected, atol=1e-8)
    np.testing.assert_allclose(bnb.load(bnb.save(clf, tmp_path / "e.bnb")).predict_proba(X),
                               expected, atol=1e-8)
    near_one = bnb.from_tables({"S": 0.5, "E": 0.5}, bernoulli={"a": {"S": 0.999, "E": 0.5}},
                               categorical={"c": {"S": {"u": 0.999, "v": 0.001},
                                                  "E": {"u": 0.5, "v": 0.5}}})
    loaded = bnb.load(bnb.save(near_one, tmp_path / "n.bnb"))
    row = pd.DataFrame({"a": [1], "c": ["u"]})
    np.testing.assert_array_equal(loaded.predict_proba(row), near_one.predict_proba(row))
    assert loaded.conditional_tables()["a"].loc["S", 1] == 0.999


def test_stated_tables_written_in_float32_still_load(tmp_path):
    """Earlier releases wrote a float32 model's stated tables as float32: such a file (p near
    1 included) loads, its tables read as float64."""
    path = bnb.save(bnb.from_tables({"S": 0.5, "E": 0.5},
                                    bernoulli={"a": {"S": 0.95, "E": 0.5}},
                                    categorical={"c": {"S": {"u": 0.999, "v": 0.001},
                                                       "E": {"u": 0.5, "v": 0.5}}}),
                    tmp_path / "old.bnb")
    replace = {}
    for name, data in members(path).items():
        if name.startswith("arrays/") and "/tables/" in name:
            a = np.load(io.BytesIO(data))
            replace[name] = npy(a.astype(np.float32) if a.dtype.kind == "f" else a)

    rewrite(path, replace=replace)
    loaded = bnb.load(path)
    p = loaded.predict_proba(pd.DataFrame({"a": [1], "c": ["u"]}))[0]
    joint = np.array([0.5 * 0.5 * 0.5, 0.5 * 0.95 * 0.999])  # E, S
    np.testing.assert_allclose(p, joint / joint.sum(), rtol=1e-6)


@pytest.mark.parametrize("family, site", [
    (lambda: bnb.Categorical(alpha=dist.Gamma(1.0, 1.0)), "categorical.alpha"),
    (lambda: bnb.Categorical(pooling="partial"), "categorical.c.concentration"),
    (lambda: bnb.Bernoulli(pooling="partial"), "bernoulli.shared_mean")])
def test_hyperprior_and_pooled_draws_outside_their_support_are_refused(tmp_path, family, site):
    """A Gamma hyperprior's or a pooled concentration's draws made negative, or a pooled
    shared mean's pushed past 1, loaded (mcmc_summary reported a negative concentration);
    the conjugate sites' draws were checked already. The untouched file loads."""
    rng = np.random.default_rng(0)
    y = np.array(["a", "b"])[rng.integers(0, 2, 40)]
    X = (pd.DataFrame({"c": np.array(["x", "y", "z"])[rng.integers(0, 3, 40)]})
         if "categorical" in site else pd.DataFrame({"c": rng.integers(0, 2, 40) == 1}))
    clf = bnb.NaiveBayes({"c": family()}, method="mcmc", num_warmup=30, num_samples=30,
                         num_chains=1, progress_bar=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        path = bnb.save(clf.fit(X, y), tmp_path / "m.bnb")
    bnb.load(path)
    name = f"arrays/draws/{site}.npy"
    with zipfile.ZipFile(path) as zf:
        draws = np.load(io.BytesIO(zf.read(name)))
    buffer = io.BytesIO()
    np.save(buffer, draws + 1.0 if site.endswith("shared_mean") else -draws)
    rewrite(path, replace={name: buffer.getvalue()})
    with pytest.raises(bnb.ModelFileError, match="draws outside their (hyperprior|parameter)'s "
                                                 "support"):
        bnb.load(path)


def test_negative_binomial_counts_beyond_the_class_rows_are_refused(tmp_path):
    """A NegativeBinomial block declared no observed count, so successes (r per observed
    count) ten times the class's rows loaded and moved the evidence by 265 nats; now the
    rule of the other families holds: no more observed values than rows."""
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"nb": rng.poisson(3.0, 40)})
    path = bnb.save(bnb.NaiveBayes({"nb": bnb.NegativeBinomial(r=2.0)}).fit(
        X, np.repeat(["a", "b"], 20)), tmp_path / "nb.bnb")
    bnb.load(path)
    name = "arrays/block0/stats/successes.npy"
    with zipfile.ZipFile(path) as zf:
        successes = np.load(io.BytesIO(zf.read(name)))
    buffer = io.BytesIO()
    np.save(buffer, successes * 10)
    rewrite(path, replace={name: buffer.getvalue()})
    with pytest.raises(bnb.ModelFileError, match="column 'nb' holds 200 observed values in "
                                                 "class 0, more than its 20 rows"):
        bnb.load(path)


@pytest.mark.parametrize(("family", "field"), [
    (bnb.Gaussian(), "m2"), (bnb.Gaussian(), "mean"), (bnb.Exponential(), "total"),
    (bnb.Poisson(), "total"), (bnb.LogNormal(), "m2"), (bnb.NegativeBinomial(r=2.0), "failures"),
    (bnb.Bernoulli(), "ones"),
])
def test_statistics_where_a_class_observed_nothing_are_refused(tmp_path, family, field):
    """A class and column with no observed value (all missing) has the statistics of no
    rows, 0. A file giving it a sum of squares (or a total) loaded and moved the posterior:
    a Gaussian's b' = b + M2 / 2 took the made-up M2, and method='bayes' predicted from it."""
    ones = isinstance(family, bnb.Bernoulli)
    x = np.array([1.0, 1.0, 0.0, 1.0] if ones else [1.0, 2.0, 3.0, 4.0])
    X = pd.DataFrame({"x": np.concatenate([x, [np.nan] * 4])})
    path = bnb.save(bnb.NaiveBayes({"x": family}).fit(X, np.repeat(["a", "b"], 4)),
                    tmp_path / "m.bnb")
    bnb.load(path)  # as written: class b observed nothing, its statistics are 0
    name = f"arrays/block0/stats/{field}.npy"
    with zipfile.ZipFile(path) as zf:
        value = np.load(io.BytesIO(zf.read(name)))
    assert value[1, 0] == 0.0
    value[1, 0] = 1.0
    buffer = io.BytesIO()
    np.save(buffer, value)
    rewrite(path, replace={name: buffer.getvalue()})
    with pytest.raises(bnb.ModelFileError, match=f"column 'x' holds {field} = 1 in class 1, "
                                                 "which observed no value there"):
        bnb.load(path)
