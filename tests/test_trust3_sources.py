"""Issue 38, section 3: a CSV pipe or FIFO is read once (it used to hang: the file was opened
a second time for the fit's second pass)."""

import os
import threading

import numpy as np
import pandas as pd
import pytest

import bayesnb as bnb
from bayesnb.outofcore import fit_chunks, read_csv_chunks

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs os.mkfifo")


def frame(seed=0, n=300):
    rng = np.random.default_rng(seed)
    y = rng.choice(["no", "yes"], n)
    return pd.DataFrame({"size": rng.normal(size=n) + (y == "yes"),
                         "shade": rng.choice(["dark", "light", "pale"], n),
                         "label": y})


def fit_from_fifo(tmp_path, text, **kwargs):
    """Fit from a FIFO fed by a writer thread; None when the fit did not end in 60 s."""
    fifo = tmp_path / "data.csv"
    os.mkfifo(fifo)
    result = {}

    def write():
        with open(fifo, "w") as f:
            f.write(text)

    def fit():
        try:
            result["model"] = fit_chunks(bnb.NaiveBayes(**kwargs.pop("params", {})),
                                         read_csv_chunks(fifo, "label", chunksize=70),
                                         progress=False, **kwargs)
        except Exception as err:  # noqa: BLE001 - handed to the test
            result["error"] = err

    writer = threading.Thread(target=write, daemon=True)
    fitter = threading.Thread(target=fit, daemon=True)
    writer.start()
    fitter.start()
    fitter.join(60)
    if fitter.is_alive():  # release a reader waiting for a second writer
        with open(fifo, "w"):
            pass
        fitter.join(10)
        return None
    writer.join(10)
    if "error" in result:
        raise result["error"]
    return result["model"]


def test_a_fifo_is_read_once_and_fits_like_the_file(tmp_path):
    df = frame(1)
    model = fit_from_fifo(tmp_path, df.to_csv(index=False))
    assert model is not None, "fit_chunks hung on a FIFO"
    batch = bnb.NaiveBayes().fit(df.drop(columns="label"), df["label"])
    X = df.drop(columns="label")
    np.testing.assert_allclose(model.predict_proba(X), batch.predict_proba(X), rtol=1e-5,
                               atol=1e-6)
    np.testing.assert_array_equal(model.class_count_, batch.class_count_)


def test_a_fifo_with_declared_classes_and_levels_is_read_once(tmp_path):
    df = frame(2)
    df.loc[df.index[-3:], "shade"] = "ochre"  # a level only the last chunk holds
    features = {"shade": bnb.Categorical(categories=["dark", "light", "pale", "ochre"])}
    model = fit_from_fifo(tmp_path, df.to_csv(index=False), classes=["no", "yes"],
                          params={"features": features})
    assert model is not None, "fit_chunks hung on a FIFO"
    shade = next(b for b in model.blocks_ if "shade" in b.schema.columns)
    assert list(shade.schema.levels[0]) == ["dark", "light", "pale", "ochre"]
    np.testing.assert_array_equal(model.class_count_,
                                  [(df["label"] == c).sum() for c in ["no", "yes"]])


def test_a_fifo_with_a_level_after_the_first_chunk_names_it(tmp_path):
    df = frame(3)
    df.loc[df.index[-2:], "shade"] = "ochre"
    with pytest.raises(ValueError, match="ochre"):
        fit_from_fifo(tmp_path, df.to_csv(index=False))


def test_iterating_a_fifo_source_twice_is_refused(tmp_path):
    fifo = tmp_path / "p.csv"
    os.mkfifo(fifo)
    source = read_csv_chunks(fifo, "label", chunksize=50)
    assert not source.rereadable
    writer = threading.Thread(target=lambda: fifo.write_text(frame(4).to_csv(index=False)),
                              daemon=True)
    writer.start()
    assert sum(len(X) for X, _ in source) == 300
    writer.join(10)
    with pytest.raises(ValueError, match="read only once.*classes="):
        iter(source).__next__()
    assert read_csv_chunks(tmp_path, "label").rereadable  # a folder: read_csv reports it
