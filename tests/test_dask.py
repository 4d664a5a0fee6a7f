"""Dask input: fitting is a Dask reduction of sufficient statistics and equals the in-memory fit,
on a real ``dask.distributed.LocalCluster`` with worker processes and on the local threaded
scheduler; prediction maps over partitions and returns Dask collections."""

import numpy as np
import pandas as pd
import pytest

dask = pytest.importorskip("dask")
da = pytest.importorskip("dask.array")
dd = pytest.importorskip("dask.dataframe")
distributed = pytest.importorskip("distributed")

from test_outofcore import assert_same_fit, mixed_frame, sorted_titanic  # noqa: E402

import bayesnb as bnb  # noqa: E402
from bayesnb.dask import is_dask  # noqa: E402
from bayesnb.datasets import load_titanic  # noqa: E402
from bayesnb.outofcore import chunk_stats, start, summarise  # noqa: E402
from bayesnb.outofcore import layout as block_layout  # noqa: E402


@pytest.fixture(scope="module")
def client():
    """Two worker processes, one thread each; closed after the module."""
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None, silence_logs=50) as cluster, \
            distributed.Client(cluster) as c:
        yield c


def titanic_dask(npartitions=6):
    X, y = sorted_titanic()  # sorted: partitions miss classes of passengers and outcomes
    frame = dd.from_pandas(X.assign(Survived=y), npartitions=npartitions, sort=False)
    return X, y, frame[list(X.columns)], frame["Survived"]


def test_titanic_on_a_local_cluster_equals_the_in_memory_fit(client, x64):
    assert len(client.scheduler_info()["workers"]) == 2
    X, y, dX, dy = titanic_dask()
    batch = bnb.NaiveBayes(method="bayes").fit(X, y)
    model = bnb.NaiveBayes(method="bayes").fit(dX, dy)
    assert_same_fit(model, batch)
    assert model.blocks_[0].schema.levels == (("1st", "2nd", "3rd", "Crew"), ("Female", "Male"),
                                              ("Adult", "Child"))
    assert model.log_evidence() == pytest.approx(batch.log_evidence(), rel=1e-14)
    proba = model.predict_proba(dX)
    assert is_dask(proba)
    got = proba.compute()
    assert list(got.columns) == list(batch.classes_)
    np.testing.assert_array_equal(got.to_numpy(), batch.predict_proba(X))
    np.testing.assert_array_equal(model.predict_log_proba(dX).compute().to_numpy(),
                                  batch.predict_log_proba(X))
    labels = model.predict(dX).compute()
    assert labels.name == "prediction"
    np.testing.assert_array_equal(labels.to_numpy(dtype=object), batch.predict(X))
    ml, ml_batch = model.set_params(method="ml"), batch.set_params(method="ml")
    for col, table in ml_batch.conditional_tables().items():  # e1071's tables
        pd.testing.assert_frame_equal(ml.conditional_tables()[col], table)


def test_mixed_columns_weights_and_missing_values_on_the_cluster(client, x64):
    X, y, w = mixed_frame(n=1000, seed=5)
    features = {"visits": bnb.Poisson()}
    batch = bnb.NaiveBayes(features, method="bayes").fit(X, y, sample_weight=w)
    with dask.config.set({"dataframe.convert-string": False}):  # keep the object column
        frame = dd.from_pandas(X.assign(y=y, w=w), npartitions=5, sort=False)
    model = bnb.NaiveBayes(features, method="bayes").fit(frame[list(X.columns)], frame["y"],
                                                         sample_weight=frame["w"])
    assert_same_fit(model, batch, rtol=1e-12)
    owner = next(b for b in model.blocks_ if "owner" in b.schema.columns)
    assert list(owner.schema.levels[owner.schema.columns.index("owner")]) == \
        list(pd.unique(X["owner"][w > 0]))  # unorderable: first seen (in rows of weight)
    np.testing.assert_allclose(model.predict_proba(frame[list(X.columns)]).compute().to_numpy(),
                               batch.predict_proba(X), rtol=1e-12)


def test_dask_arrays_and_in_memory_labels(client, x64):
    rng = np.random.default_rng(2)
    counts = rng.poisson(2.0, (1500, 40))
    y = rng.choice(["ham", "spam", "eggs"], 1500)
    batch = bnb.NaiveBayes(bnb.Multinomial(), method="bayes").fit(counts, y)
    dX = da.from_array(counts, chunks=(500, 20))  # column chunks are joined
    model = bnb.NaiveBayes(bnb.Multinomial(), method="bayes").fit(dX, y)
    assert_same_fit(model, batch, rtol=1e-14)
    proba = model.predict_proba(dX)
    assert isinstance(proba, da.Array) and proba.chunks[0] == (500, 500, 500)
    np.testing.assert_allclose(proba.compute(), batch.predict_proba(counts), rtol=1e-13)
    labels = model.predict(dX)
    assert isinstance(labels, da.Array) and labels.shape == (1500,)
    np.testing.assert_array_equal(labels.compute(), batch.predict(counts))
    dy = da.from_array(y, chunks=600)  # other chunks than X: rechunked to X's rows
    assert_same_fit(bnb.NaiveBayes(bnb.Multinomial()).fit(dX, dy), batch, rtol=1e-14)


def test_errors_from_the_workers_name_partition_column_and_value(client):
    X, y, dX, dy = titanic_dask(npartitions=4)
    declared = bnb.Categorical(categories=[["1st", "2nd", "3rd"], ["Female", "Male"],
                                           ["Adult", "Child"]])
    # partitions 2 and 3 hold Crew passengers: the first to fail is reported
    with pytest.raises(ValueError, match=r"partition [23]: column 'Class': value 'Crew' is not "
                                         r"one of its categories"):
        bnb.NaiveBayes(declared).fit(dX, dy)
    with pytest.raises(ValueError, match="y has 3 partitions and X has 4"):
        bnb.NaiveBayes().fit(dX, dy.repartition(npartitions=3))
    with pytest.raises(ValueError, match="X has 2201 rows but y has 5"):
        bnb.NaiveBayes().fit(dX, y[:5])


def test_threaded_scheduler_without_a_cluster(x64):
    """The same code on a laptop: Dask's threaded scheduler, no cluster (and JAX's x64 mode,
    thread-local, is carried into every task)."""
    X, y, dX, dy = titanic_dask(npartitions=3)
    with dask.config.set(scheduler="threads"):
        model = bnb.NaiveBayes(method="mean").fit(dX, dy)
        proba = model.predict_proba(dX).compute()
    batch = bnb.NaiveBayes(method="mean").fit(X, y)
    assert_same_fit(model, batch)
    np.testing.assert_array_equal(proba.to_numpy(), batch.predict_proba(X))


def test_partition_statistics_are_plain_numpy(x64):
    """What travels back from a worker: NumPy arrays of statistics, not a model."""
    X, y = load_titanic()
    model = bnb.NaiveBayes()
    lay = block_layout(model.features, X)
    template = start(model.features, lay, summarise(lay, X, y))
    count, blocks = chunk_stats(template, X.iloc[:500], y.iloc[:500])
    assert isinstance(count, np.ndarray)
    assert all(isinstance(a, np.ndarray) for block in blocks for a in block)
    assert count.sum() == 500 and all(np.asarray(a).sum() == 0 for a in template.blocks[0].stats)


@pytest.fixture(scope="module")
def titanic_parquet(tmp_path_factory):
    """Sorted Titanic with a named index, written as four Parquet files (as a data set on disk
    or object storage is)."""
    X, y = sorted_titanic()
    X.index = y.index = pd.Index(np.arange(1, len(X) + 1), name="passenger")
    rng = np.random.default_rng(0)
    w = pd.Series(rng.integers(1, 4, len(X)).astype(float), index=X.index, name="w")
    folder = tmp_path_factory.mktemp("titanic_parquet")
    frame = X.assign(Survived=y, w=w)
    for i, rows in enumerate(np.array_split(np.arange(len(frame)), 4)):
        frame.iloc[rows].to_parquet(folder / f"part{i}.parquet")
    return X, y, w, folder


# Dask 2026.8 reading a Parquet index calls pandas 3.1's deprecated (re)set_index(inplace=True)
@pytest.mark.filterwarnings(r"ignore:(?s).*The inplace keyword in DataFrame\.(re)?set_index")
def test_columns_of_one_parquet_frame_fit_as_they_are(client, titanic_parquet, tmp_path, x64):
    """Issue 15: ``fit(df[cols], df[target])`` on a multi-file Parquet read works without
    ``persist`` (Dask plans the single column with fewer partitions than the three columns),
    with weights from the same frame too; predictions keep the index and its name."""
    X, y, w, folder = titanic_parquet
    cols = ["Class", "Sex", "Age"]
    df = dd.read_parquet(str(folder / "*.parquet"))
    batch = bnb.NaiveBayes(method="bayes").fit(X, y)
    model = bnb.NaiveBayes(method="bayes").fit(df[cols], df["Survived"])
    assert_same_fit(model, batch)
    proba = model.predict_proba(df[cols])
    assert proba._meta.index.name == "passenger"
    got = proba.compute()
    assert got.index.name == "passenger"
    np.testing.assert_array_equal(got.index, X.index)
    np.testing.assert_array_equal(got.to_numpy(), batch.predict_proba(X))
    labels = model.predict(df[cols]).compute()
    assert labels.index.name == "passenger" and labels.name == "prediction"
    proba.to_parquet(str(tmp_path / "scores"))  # as the out-of-core page writes them
    assert pd.read_parquet(tmp_path / "scores").index.name == "passenger"
    with dask.config.set(scheduler="sync"):  # the same graphs in this process: faster
        weighted = bnb.NaiveBayes().fit(df[cols], df["Survived"], sample_weight=df["w"])
        assert_same_fit(weighted, bnb.NaiveBayes().fit(X, y, sample_weight=w))
        # one column: its predictions have that column's partitions, whatever they are
        one = bnb.NaiveBayes().fit(df[["Class"]], df["Survived"])
        np.testing.assert_array_equal(one.predict_proba(df[["Class"]]).compute().to_numpy(),
                                      bnb.NaiveBayes().fit(X[["Class"]], y).predict_proba(
                                          X[["Class"]]))


def test_unnamed_index_stays_unnamed(x64):
    X, y, dX, dy = titanic_dask(npartitions=3)
    with dask.config.set(scheduler="sync"):
        model = bnb.NaiveBayes().fit(dX, dy)
        proba = model.predict_proba(dX)
        assert proba._meta.index.name is None and proba.compute().index.name is None


def test_missing_label_drop_leaves_the_rows_out_as_fit_does(x64):
    """missing_label='drop' leaves the rows without a label out of both passes, with one
    warning counting them, as the in-memory fit does (the in-memory fit of the labelled rows
    is the reference); the other settings refuse them, naming 'drop'."""
    X, y = sorted_titanic()
    y = y.astype(object).copy()
    y.iloc[[0, 5, 700, 701, 2200]] = None  # in the first, a middle and the last partition
    frame = dd.from_pandas(X.assign(Survived=y), npartitions=4, sort=False)
    dX, dy = frame[list(X.columns)], frame["Survived"]
    kept = y.notna().to_numpy()
    batch = bnb.NaiveBayes(method="mean").fit(X[kept], y[kept].astype(str))
    with dask.config.set(scheduler="threads"):
        with pytest.warns(bnb.MissingLabelWarning, match="5 missing labels.*these 5 rows out"):
            model = bnb.NaiveBayes(method="mean", missing_label="drop").fit(dX, dy)
        assert_same_fit(model, batch)
        with pytest.raises(ValueError, match=r"missing labels.*missing_label='drop'"):
            bnb.NaiveBayes(method="mean").fit(dX, dy)
        empty = dd.from_pandas(pd.Series([None] * len(y), dtype=object, index=X.index),
                               npartitions=4, sort=False)
        with pytest.raises(ValueError, match="every label is missing"):
            bnb.NaiveBayes(missing_label="drop").fit(dX, empty)


def test_an_object_column_of_numbers_and_text_keeps_its_values_without_string_conversion():
    """outofcore.md: Dask's default string conversion turns an object column into text (the
    level '1' where pandas has 1); with it off the Dask fit learns the pandas fit's levels
    and probabilities (by hand for the value 1, seen once per class: 0.5 each)."""
    import dask

    X = pd.DataFrame({"o": pd.Series([1, "x", 2, 1, "x", 2], dtype=object)})
    y = ["a", "a", "a", "b", "b", "b"]

    def model():
        return bnb.NaiveBayes({"o": bnb.Categorical()}, method="mean", class_alpha=0)

    in_memory = model().fit(X, y)
    with dask.config.set({"dataframe.convert-string": False}):
        ddf = dd.from_pandas(X, npartitions=2)
        assert ddf["o"].dtype == object
        clf = model().fit(ddf, pd.Series(y))
    assert clf.blocks_[0].schema.levels == in_memory.blocks_[0].schema.levels
    assert 1 in clf.blocks_[0].schema.levels[0] and "1" not in clf.blocks_[0].schema.levels[0]
    row = pd.DataFrame({"o": pd.Series([1], dtype=object)})
    np.testing.assert_allclose(clf.predict_proba(row), [[0.5, 0.5]])
    np.testing.assert_array_equal(clf.predict_proba(X), in_memory.predict_proba(X))
