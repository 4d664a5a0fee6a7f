"""Chunked fitting (bayesnb.outofcore): every way of feeding chunks gives the in-memory fit, the
schema (classes, levels and their order) included; a one-shot iterator that meets an undeclared
label or level names it; a file larger than the memory the process may still allocate is fitted
in bounded memory."""

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import sparse

import bayesnb as bnb
from bayesnb._data import InferredCategoricalWarning
from bayesnb.datasets import load_titanic
from bayesnb.outofcore import CSVChunks, fit_chunks, read_csv_chunks


def assert_same_fit(chunked, batch, rtol=0.0):
    """Same classes, columns, levels (in order) and statistics; ``rtol`` for float moments."""
    np.testing.assert_array_equal(chunked.classes_, batch.classes_)
    assert chunked.classes_.dtype == batch.classes_.dtype
    np.testing.assert_array_equal(chunked.class_count_, batch.class_count_)
    assert tuple(chunked.fitted_.columns) == tuple(batch.fitted_.columns)
    assert len(chunked.blocks_) == len(batch.blocks_)
    for a, b in zip(chunked.blocks_, batch.blocks_, strict=True):
        assert type(a.family) is type(b.family)
        assert a.schema == b.schema
        assert [list(lv) for lv in a.schema.levels] == [list(lv) for lv in b.schema.levels]
        assert a.positions == b.positions
        for name, u, v in zip(a.stats._fields, a.stats, b.stats, strict=True):
            u, v = np.asarray(u), np.asarray(v)
            assert u.dtype == v.dtype, name
            if rtol == 0.0 or name in ("count", "counts", "ones"):  # weighted counts: exact
                np.testing.assert_array_equal(u, v, err_msg=name)
            else:
                np.testing.assert_allclose(u, v, rtol=rtol, atol=1e-9, err_msg=name)


def sorted_titanic():
    """Titanic sorted by class: each early chunk misses classes of passengers and outcomes."""
    X, y = load_titanic()
    order = np.lexsort((y.to_numpy(), X["Class"].to_numpy()))
    return X.iloc[order].reset_index(drop=True), y.iloc[order].reset_index(drop=True)


def pieces(X, y, size, w=None):
    out = []
    for i in range(0, len(X), size):
        part = (X.iloc[i:i + size], y.iloc[i:i + size])
        out.append(part if w is None else (*part, w[i:i + size]))
    return out


def mixed_frame(n=900, seed=0):
    rng = np.random.default_rng(seed)
    y = pd.Series(rng.choice([3, 1, 2], n), name="y")
    frame = pd.DataFrame({
        "height": rng.normal(170, 10, n) + 5 * y.to_numpy(),
        "colour": rng.choice(["red", "green", "blue", "teal"], n).astype(object),
        "owner": rng.choice(np.array([1, "b", 2.5, "a"], dtype=object), n),  # unorderable
        "smoker": rng.random(n) < 0.3,
        "visits": rng.poisson(2, n),
    })
    frame.loc[rng.random(n) < 0.1, "height"] = np.nan
    frame.loc[rng.random(n) < 0.1, "colour"] = None
    order = np.argsort(y.to_numpy(), kind="stable")  # the first chunks hold one class
    frame, y = frame.iloc[order].reset_index(drop=True), y.iloc[order].reset_index(drop=True)
    return frame, y, rng.integers(0, 4, n).astype(float)


def test_list_of_chunks_is_the_batch_fit(x64):
    X, y = sorted_titanic()
    batch = bnb.NaiveBayes(method="bayes").fit(X, y)
    chunked = fit_chunks(bnb.NaiveBayes(method="bayes"), pieces(X, y, 300), progress=False)
    assert_same_fit(chunked, batch)
    assert chunked.blocks_[0].schema.levels[0] == ("1st", "2nd", "3rd", "Crew")
    np.testing.assert_array_equal(chunked.predict_proba(X), batch.predict_proba(X))
    np.testing.assert_array_equal(chunked.predict(X), batch.predict(X))
    assert chunked.log_evidence() == pytest.approx(batch.log_evidence(), rel=1e-14)
    ml = chunked.set_params(method="ml").conditional_tables()
    for col, table in batch.set_params(method="ml").conditional_tables().items():
        pd.testing.assert_frame_equal(ml[col], table)


def test_callable_source_mixed_columns_weights_and_unorderable_levels(x64):
    X, y, w = mixed_frame()
    features = {"visits": bnb.Poisson()}
    batch = bnb.NaiveBayes(features).fit(X, y, sample_weight=w)
    calls = []

    def source():
        calls.append(1)
        return iter(pieces(X, y, 128, w))

    chunked = fit_chunks(bnb.NaiveBayes(features), source, progress=False)
    assert len(calls) == 2  # a scan, then the fit
    assert_same_fit(chunked, batch, rtol=1e-12)
    owner = next(b for b in chunked.blocks_ if "owner" in b.schema.columns)
    j = owner.schema.columns.index("owner")
    # first-seen order, among the rows of weight (a row of weight 0 is no row)
    assert list(owner.schema.levels[j]) == list(pd.unique(X["owner"][w > 0]))
    np.testing.assert_allclose(chunked.predict_proba(X), batch.predict_proba(X), rtol=1e-12)


def test_arrays_sparse_chunks_and_empty_chunks(x64):
    rng = np.random.default_rng(1)
    counts = rng.poisson(1.0, (400, 30))
    y = rng.choice(["a", "b", "c"], 400)
    batch = bnb.NaiveBayes(bnb.Multinomial()).fit(sparse.csr_matrix(counts), y)
    chunks = [(sparse.csr_matrix(counts[i:i + 64]), y[i:i + 64]) for i in range(0, 400, 64)]
    chunks.insert(2, (sparse.csr_matrix((0, 30)), y[:0]))  # an empty chunk is skipped
    chunked = fit_chunks(bnb.NaiveBayes(bnb.Multinomial()), chunks, progress=False)
    assert_same_fit(chunked, batch, rtol=1e-14)  # word counts exactly, log coefficients summed
    objects = np.array([rng.choice(["x", "y", "z"], 200), rng.normal(size=200)], dtype=object).T
    labels = np.where(objects[:, 1].astype(float) > 0, "hi", "lo")
    # numbers held as objects are modelled as categories, each fit says so
    with pytest.warns(InferredCategoricalWarning, match="column 1 holds only numbers"):
        batch = bnb.NaiveBayes().fit(objects, labels)
    with pytest.warns(InferredCategoricalWarning, match="column 1 holds only numbers"):
        chunked = fit_chunks(bnb.NaiveBayes(), [(objects[i:i + 50], labels[i:i + 50])
                                                for i in range(0, 200, 50)], progress=False)
    assert_same_fit(chunked, batch, rtol=1e-12)


def test_chunk_whose_weights_are_all_zero_is_the_batch_fit(x64):
    """A batch fit takes rows of zero weight; a chunk made only of them was refused ("chunk
    0: sample_weight is zero for every row"). Zero weight everywhere is still refused."""
    X, y, w = mixed_frame()
    w[:128] = 0.0  # the whole first chunk
    features = {"visits": bnb.Poisson()}
    batch = bnb.NaiveBayes(features).fit(X, y, sample_weight=w)
    chunked = fit_chunks(bnb.NaiveBayes(features), pieces(X, y, 128, w), progress=False)
    assert_same_fit(chunked, batch, rtol=1e-12)
    np.testing.assert_allclose(chunked.predict_proba(X), batch.predict_proba(X), rtol=1e-12)
    with pytest.raises(ValueError, match="zero for every row"):
        fit_chunks(bnb.NaiveBayes(features), pieces(X, y, 128, 0 * w), progress=False)


def test_a_zero_weight_row_is_no_row_in_chunks(x64):
    """As in a batch fit, its level (held by no other row) is no level, in two passes and in
    one-shot reading alike, and its value is not refused as an unseen level."""
    X = pd.DataFrame({"a": ["x", "y", "x", "y", "x", "z"]})  # chunks of 3: z in the second
    y, w = pd.Series([0, 1, 0, 1, 0, 1]), np.array([1.0, 1, 1, 1, 1, 0])
    batch = bnb.NaiveBayes().fit(X, y, sample_weight=w)
    assert batch.blocks_[0].schema.levels == (("x", "y"),)
    for source, classes in ((pieces(X, y, 3, w), None), (iter(pieces(X, y, 3, w)), [0, 1])):
        chunked = fit_chunks(bnb.NaiveBayes(), source, classes=classes, progress=False)
        assert chunked.blocks_[0].schema.levels == (("x", "y"),)
        np.testing.assert_allclose(chunked.predict_proba(X[:5]), batch.predict_proba(X[:5]),
                                   rtol=1e-13)


def test_one_shot_iterator_names_an_undeclared_level_or_label():
    X, y = sorted_titanic()
    with pytest.raises(ValueError, match=r"chunk 1: column 'Class': value '2nd' is not one of "
                                         r"its levels \['1st'\].*one-shot"):
        fit_chunks(bnb.NaiveBayes(), iter(pieces(X, y, 300)), progress=False)
    Z, labels = mixed_frame()[:2]
    with pytest.raises(ValueError, match=r"chunk 2: label 2 is not one of the classes \[1\]"):
        fit_chunks(bnb.NaiveBayes(), (c for c in pieces(Z, labels, 128)), progress=False)


def test_one_shot_iterator_with_declarations_is_one_pass_and_exact(x64):
    X, y = sorted_titanic()
    levels = {c: sorted(X[c].unique()) for c in X.columns}
    declared = bnb.Categorical(categories=[levels[c] for c in X.columns])
    batch = bnb.NaiveBayes(declared).fit(X, y)
    generator = (chunk for chunk in pieces(X, y, 250))
    chunked = fit_chunks(bnb.NaiveBayes(declared), generator,
                         classes=np.array(["Yes", "No"], dtype=object), progress=False)
    assert_same_fit(chunked, batch)
    with pytest.raises(ValueError, match="label 'Maybe' is not one of the classes"):
        fit_chunks(bnb.NaiveBayes(declared), iter([(X, y.replace("Yes", "Maybe"))]),
                   classes=["No", "Yes"], progress=False)


def test_declared_classes_and_levels_skip_the_scan(x64):
    X, y = sorted_titanic()
    declared = bnb.Categorical(categories=[sorted(X[c].unique()) for c in X.columns])
    calls = []

    def source():
        calls.append(1)
        return iter(pieces(X, y, 500))

    chunked = fit_chunks(bnb.NaiveBayes(declared), source,
                         classes=np.array(["No", "Yes"], dtype=object), progress=False)
    assert len(calls) == 1
    assert_same_fit(chunked, bnb.NaiveBayes(declared).fit(X, y))


def test_errors_name_the_chunk(x64):
    X, y = sorted_titanic()
    with pytest.raises(ValueError, match="chunks is empty"):
        fit_chunks(bnb.NaiveBayes(), [], progress=False)
    with pytest.raises(ValueError, match="every chunk is empty"):
        fit_chunks(bnb.NaiveBayes(), [(X.iloc[:0], y.iloc[:0])], progress=False)
    with pytest.raises(TypeError, match=r"chunk 1: expected a tuple \(X, y\)"):
        fit_chunks(bnb.NaiveBayes(), [(X, y), X], progress=False)
    bad = y.copy().astype(object)
    bad.iloc[-1] = None
    with pytest.raises(ValueError, match="chunk 4: y has 1 missing labels"):
        fit_chunks(bnb.NaiveBayes(), pieces(X, bad, 500), progress=False)


def test_progress_bar(capsys):
    X, y = sorted_titanic()
    fit_chunks(bnb.NaiveBayes(), pieces(X, y, 1000), progress=True)
    err = capsys.readouterr().err
    assert "scan" in err and "fit" in err


def test_csv_chunks_equal_read_csv(tmp_path, x64):
    X, y, _ = mixed_frame(seed=3)
    X = X.assign(label=y.map({1: "one", 2: "two", 3: "three"}))
    path = tmp_path / "data.csv"
    X.to_csv(path, index=False)
    whole = pd.read_csv(path)
    batch = bnb.NaiveBayes().fit(whole.drop(columns="label"), whole["label"])
    source = read_csv_chunks(path, "label", chunksize=100)
    assert isinstance(source, CSVChunks) and "chunksize=100" in repr(source)
    assert_same_fit(fit_chunks(bnb.NaiveBayes(), source, progress=False), batch, rtol=1e-12)
    with pytest.raises(ValueError, match="no column 'nope'"):
        fit_chunks(bnb.NaiveBayes(), read_csv_chunks(path, "nope"), progress=False)


def test_csv_column_that_reads_differently_per_chunk(tmp_path, x64):
    frame = pd.DataFrame({"code": ["1", "2"] * 50 + ["x", "1"] * 50,
                          "label": ["a", "b", "b", "a"] * 50})
    path = tmp_path / "codes.csv"
    frame.to_csv(path, index=False)
    with pytest.raises(ValueError, match="chunk 1: column 'code' has dtype .* would be modelled "
                                         "as Categorical.* made it Gaussian"):
        fit_chunks(bnb.NaiveBayes(), read_csv_chunks(path, "label", chunksize=100),
                   progress=False)
    whole = pd.read_csv(path, dtype={"code": str})
    # numbers with one text value, inferred Categorical: said once per fit, not per chunk
    with pytest.warns(InferredCategoricalWarning, match="column 'code'"):
        batch = bnb.NaiveBayes().fit(whole.drop(columns="label"), whole["label"])
    with pytest.warns(InferredCategoricalWarning, match="column 'code'") as caught:
        chunked = fit_chunks(bnb.NaiveBayes(), read_csv_chunks(
            path, "label", chunksize=100, dtype={"code": str}), progress=False)
    assert len(caught) == 1
    assert_same_fit(chunked, batch)


# ---------------------------------------------------------------------- bounded memory
CHILD = textwrap.dedent('''
    """Fit a CSV file by chunks under an address-space cap set after start-up."""
    import json, resource, sys
    import jax
    jax.config.update("jax_platforms", "cpu")
    jax.config.update("jax_enable_x64", True)
    import numpy as np, pandas as pd
    import bayesnb as bnb
    from bayesnb.outofcore import fit_chunks, read_csv_chunks

    big, small, chunksize, headroom = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])

    def vm_size():
        with open("/proc/self/status") as f:
            return next(int(s.split()[1]) * 1024 for s in f if s.startswith("VmSize:"))

    def dump(m):
        return {"classes": [str(c) for c in m.classes_], "class_count": m.class_count_.tolist(),
                "levels": [[[str(v) for v in lv] for lv in b.schema.levels] for b in m.blocks_],
                "stats": [{f: np.asarray(v).tolist() for f, v in zip(b.stats._fields, b.stats)}
                          for b in m.blocks_]}

    # subsample check, and warm-up (imports, compilation for the chunk shape): the first
    # chunk fitted in memory and by chunks
    frame = pd.read_csv(small)
    memory = bnb.NaiveBayes().fit(frame.drop(columns="y"), frame["y"])
    sub = fit_chunks(bnb.NaiveBayes(), read_csv_chunks(small, "y", chunksize=chunksize),
                     progress=False)
    del frame
    baseline = vm_size()
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    cap = baseline + headroom
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    full = fit_chunks(bnb.NaiveBayes(), read_csv_chunks(big, "y", chunksize=chunksize),
                      progress=False)
    rss_peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    try:  # the whole file does not fit under the cap
        pd.read_csv(big)
        whole = "loaded"
    except (MemoryError, OSError) as err:
        whole = f"{type(err).__name__}: {err}"
    print(json.dumps({"baseline_vm": baseline, "cap": cap, "rss_before": rss_before,
                      "rss_peak": rss_peak, "whole_file": whole, "memory": dump(memory),
                      "sub": dump(sub), "full": dump(full)}))
''')


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc, sets RLIMIT_AS")
def test_file_larger_than_the_memory_cap(tmp_path):
    """A 40 MB CSV (1.6 million rows: the same 25,000-row block 64 times) is fitted in chunks
    by a process that may allocate 24 MB beyond its footprint after start-up; reading the file
    whole fails there. Statistics: exactly 64 times the block's (counts), its means,
    64 times its centred sums of squares."""
    rng = np.random.default_rng(0)
    n, reps, headroom = 25_000, 64, 24 << 20
    frame = pd.DataFrame({"Class": rng.choice(["1st", "2nd", "3rd", "Crew"], n),
                          "Sex": np.where(rng.random(n) < 0.5, "Female", "Male"),
                          "age": np.round(rng.normal(30, 10, n), 2),
                          "fare": np.round(rng.gamma(2.0, 20.0, n), 2),
                          "y": rng.choice(["No", "Yes"], n, p=[0.6, 0.4])})
    frame.loc[rng.random(n) < 0.05, "Class"] = np.nan
    small, big = tmp_path / "block.csv", tmp_path / "big.csv"
    frame.to_csv(small, index=False)
    header, body = small.read_text().split("\n", 1)
    with open(big, "w") as out:
        out.write(header + "\n" + body * reps)
    size = big.stat().st_size
    assert size > 1.5 * headroom
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    out = subprocess.run([sys.executable, str(script), str(big), str(small), str(n),
                          str(headroom)], capture_output=True, text=True, timeout=240,
                         check=False)
    assert out.returncode == 0, out.stderr[-3000:]
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["whole_file"] != "loaded"  # the cap binds: the file does not fit whole
    assert result["rss_peak"] - result["rss_before"] < headroom
    memory, sub, full = result["memory"], result["sub"], result["full"]
    assert sub == memory  # the first chunk: chunked = in memory, exactly
    assert full["classes"] == memory["classes"] and full["levels"] == memory["levels"]
    np.testing.assert_array_equal(full["class_count"], np.multiply(memory["class_count"], reps))
    for got, ref in zip(full["stats"], memory["stats"], strict=True):
        for name, value in ref.items():
            expected = {"mean": 1, "m2": reps}.get(name, reps) * np.asarray(value)
            if name in ("counts", "count"):
                np.testing.assert_array_equal(got[name], expected, err_msg=name)
            else:
                np.testing.assert_allclose(got[name], expected, rtol=1e-10, err_msg=name)


def test_partial_fit_on_titanic_in_order_with_one_column_declared(x64):
    """Issue 15: Titanic's rows come sorted by class, so its first chunk lacks levels; declaring
    the one column's levels as a flat list (no list of lists) makes chunked partial_fit equal
    the batch fit. A flat list for a Categorical of several columns is refused, saying how."""
    X, y = load_titanic()
    levels = ["1st", "2nd", "3rd", "Crew"]
    online = bnb.NaiveBayes({"Class": bnb.Categorical(categories=levels)})
    for rows in np.array_split(np.arange(len(y)), 4):
        online.partial_fit(X.iloc[rows], y.iloc[rows], classes=["No", "Yes"])
    batch = bnb.NaiveBayes({"Class": bnb.Categorical(categories=[levels])}).fit(X, y)
    np.testing.assert_array_equal(online.classes_, batch.classes_)  # (classes= gives str dtype)
    np.testing.assert_array_equal(online.class_count_, batch.class_count_)
    for a, b in zip(online.blocks_, batch.blocks_, strict=True):
        assert a.schema == b.schema and a.schema.levels[0] == tuple(b.schema.levels[0])
        for u, v in zip(a.stats, b.stats, strict=True):
            np.testing.assert_array_equal(u, v)
    assert_same_fit(bnb.NaiveBayes({"Class": bnb.Categorical(categories=pd.Index(levels))})
                    .fit(X, y), batch)
    with pytest.raises(ValueError, match=r"one list of levels, but this Categorical has 3 "
                                         r"columns \['Class', 'Sex', 'Age'\]; give one list per "
                                         r"column .*\[levels\] \* 3"):
        bnb.NaiveBayes(bnb.Categorical(categories=levels)).fit(X, y)
    with pytest.raises(ValueError, match="mixes lists of levels and single values"):
        bnb.NaiveBayes({"Class": bnb.Categorical(categories=["1st", ["2nd"]])}).fit(X, y)


def test_a_column_empty_in_a_whole_chunk_keeps_its_family(tmp_path, x64):
    """A text (or boolean) column with no value in one CSV chunk is read there as float64
    NaN: it has no type in that chunk, so it keeps the first chunk's family, as a batch fit
    of the file and partial_fit take it (the chunk was refused as 'would be Gaussian')."""
    y = np.array(list("abababab"))
    for column in (["p", "q", "p", None, None, None, "q", "p"],
                   [True, False, True, None, None, None, False, True]):
        X = pd.DataFrame({"s": column, "g": [1.0, 2, 3, 4, 5, 6, 7, 8]})
        path = tmp_path / "f.csv"
        X.assign(t=y).to_csv(path, index=False)
        whole = pd.read_csv(path).drop(columns="t")
        batch = bnb.NaiveBayes().fit(whole, y)
        chunked = fit_chunks(bnb.NaiveBayes(), read_csv_chunks(path, "t", chunksize=3),
                             progress=False)
        if column[0] == "p":  # (pandas reads the booleans with gaps in the file as objects)
            assert [type(b.family) for b in chunked.blocks_] == \
                [type(b.family) for b in batch.blocks_]
        np.testing.assert_allclose(chunked.predict_proba(whole), batch.predict_proba(whole),
                                   rtol=1e-12)
        in_memory = [(whole.iloc[:3], y[:3]), (whole.iloc[3:6].assign(s=np.nan), y[3:6]),
                     (whole.iloc[6:], y[6:])]
        listed = fit_chunks(bnb.NaiveBayes(), in_memory, progress=False)
        np.testing.assert_allclose(listed.predict_proba(whole), batch.predict_proba(whole),
                                   rtol=1e-12)


def test_the_guide_s_rounding_of_streamed_gaussian_moments(x64):
    """docs/user_guide/outofcore.md: merged moments are exact to rounding, about 1e-15
    relative for centred data and about 1e-9 for 1e6 + N(0, 0.01) merged row by row (the
    spread is 1e-8 of the values: Chan's merge rounds each step at the values' scale)."""
    from fractions import Fraction

    rng = np.random.default_rng(0)
    y = np.zeros(200, dtype=int)
    for offset, bound in ((0.0, 1e-13), (1e6, 1e-8)):
        x = offset + rng.normal(0.0, 0.01, 200)
        exact = [Fraction(v) for v in x]
        mean = sum(exact) / len(exact)
        m2 = float(sum((v - mean) ** 2 for v in exact))
        online = bnb.NaiveBayes(bnb.Gaussian())
        for i in range(len(x)):
            online.partial_fit(x[i:i + 1, None], y[i:i + 1], classes=[0, 1])
        got = float(online.blocks_[0].stats.m2[0, 0])
        assert abs(got - m2) / m2 < bound, (offset, abs(got - m2) / m2)
    page = (Path(__file__).resolve().parents[1] / "docs" / "user_guide" / "outofcore.md")
    assert "e.g. 1e-9\\nfor the sums of squares".replace("\\n", "\n") in page.read_text()


def test_chunks_read_with_their_own_categories_learn_all_of_them(tmp_path, x64):
    """``read_csv_chunks(dtype={"c": "category"})`` gives each chunk the categories it holds:
    a scanned source takes them all, sorted as one read of the file sorts them (a later
    chunk's category was refused as not one of the first chunk's)."""
    X = pd.DataFrame({"c": ["x", "y", "x", "z", "y", "w", "x", "z"]})
    y = np.array(["a", "b"] * 4)
    path = tmp_path / "c.csv"
    X.assign(t=y).to_csv(path, index=False)
    whole = pd.read_csv(path, dtype={"c": "category"}).drop(columns="t")
    batch = bnb.NaiveBayes().fit(whole, y)
    for source in (read_csv_chunks(path, "t", chunksize=3, dtype={"c": "category"}),
                   [(X.iloc[:4].astype("category"), y[:4]),
                    (X.iloc[4:].astype("category"), y[4:])]):
        chunked = fit_chunks(bnb.NaiveBayes(), source, progress=False)
        assert chunked.blocks_[0].schema.levels == (("w", "x", "y", "z"),)
        np.testing.assert_allclose(chunked.predict_proba(whole), batch.predict_proba(whole),
                                   rtol=1e-12)


def test_chunks_of_different_categories_keep_every_chunks_categories():
    """outofcore.md: the levels of chunks of pandas categories are all their categories (as
    read_csv(dtype="category") gives them), unused ones included; the fit of their pd.concat
    (an object column, the categories differing) learns the observed values only."""
    c1 = pd.DataFrame({"k": pd.Categorical(["a", "b", "a", "b"], categories=["b", "a", "z"])})
    c2 = pd.DataFrame({"k": pd.Categorical(["c", "a", "c", "b"], categories=["c", "b", "a"])})
    y1, y2 = pd.Series(["p", "q", "p", "q"]), pd.Series(["p", "q", "q", "q"])
    chunked = fit_chunks(bnb.NaiveBayes(), [(c1, y1), (c2, y2)], progress=False)
    assert chunked.blocks_[0].schema.levels == (("a", "b", "c", "z"),)
    batch = bnb.NaiveBayes().fit(pd.concat([c1, c2], ignore_index=True),
                                 pd.concat([y1, y2], ignore_index=True))
    assert batch.blocks_[0].schema.levels == (("a", "b", "c"),)
