"""Out of core and Dask
====================

The same Titanic model fitted in memory, from a CSV file read in chunks, and from a Dask
DataFrame; the three agree exactly.

Data: the built-in Titanic table (``bayesnb.datasets.load_titanic``: 2,201 passengers, Class,
Sex and Age, label Survived), written to a CSV file in a temporary folder for the chunked fit.

The CSV is read twice in chunks of ``--chunksize`` rows (a scan for the classes and levels, then
the statistics), holding one chunk at a time. The Dask fit runs on whatever scheduler is active:
Dask's threads by default, a local cluster of worker processes with ``--workers N``, or a real
cluster with ``--scheduler tcp://scheduler:8786``.

Run it as a script, for instance::

    python examples/dask_and_chunks.py
    python examples/dask_and_chunks.py --workers 2
    python examples/dask_and_chunks.py --scheduler tcp://scheduler:8786
"""

import argparse
import tempfile
from pathlib import Path

import dask.dataframe as dd
import numpy as np
import pandas as pd

import bayesnb as bnb
from bayesnb.datasets import load_titanic
from bayesnb.outofcore import fit_chunks, read_csv_chunks


def same(a, b) -> bool:
    return (np.array_equal(a.classes_, b.classes_) and
            np.array_equal(a.class_count_, b.class_count_) and
            all(x.schema == y.schema and all(np.array_equal(u, v) for u, v in
                                             zip(x.stats, y.stats, strict=True))
                for x, y in zip(a.blocks_, b.blocks_, strict=True)))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.partition("\n")[0])
    parser.add_argument("--chunksize", type=int, default=400)
    parser.add_argument("--partitions", type=int, default=4)
    parser.add_argument("--workers", type=int, default=0,
                        help="start a LocalCluster with this many worker processes")
    parser.add_argument("--scheduler", help="address of a running scheduler")
    args = parser.parse_args(argv)

    X, y = load_titanic()
    print(f"data: Titanic (bayesnb.datasets.load_titanic), {len(X)} passengers, columns "
          f"{', '.join(X.columns)}; label Survived ({', '.join(sorted(set(y)))})")
    memory = bnb.NaiveBayes(method="bayes").fit(X, y)

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "titanic.csv"
        X.assign(Survived=y).to_csv(path, index=False)
        chunked = fit_chunks(bnb.NaiveBayes(method="bayes"),
                             read_csv_chunks(path, "Survived", chunksize=args.chunksize),
                             progress=False)
    print(f"chunked CSV ({args.chunksize} rows a chunk) == in memory: {same(chunked, memory)}")

    client = cluster = None
    if args.scheduler or args.workers:
        from dask.distributed import Client, LocalCluster

        if not args.scheduler:
            cluster = LocalCluster(n_workers=args.workers, threads_per_worker=1,
                                   dashboard_address=None)
        client = Client(args.scheduler or cluster)
        print(f"dask scheduler: {client.scheduler.address}")
    try:
        frame = dd.from_pandas(X.assign(Survived=y), npartitions=args.partitions)
        features, label = frame[list(X.columns)], frame["Survived"]
        distributed = bnb.NaiveBayes(method="bayes").fit(features, label)
        proba = distributed.predict_proba(features).compute()
    finally:
        for resource in (client, cluster):
            if resource is not None:
                resource.close()
    print(f"dask ({args.partitions} partitions) == in memory: {same(distributed, memory)}")
    print("dask predict_proba == in memory: "
          f"{np.allclose(proba.to_numpy(), memory.predict_proba(X), rtol=1e-6, atol=0)}")
    print(memory.conditional_tables()["Class"].round(4).to_string())
    rows = X.drop_duplicates().head(3).reset_index(drop=True)
    proba = memory.predict_proba(rows)
    print(rows.join(pd.DataFrame(proba, columns=[f"P(Survived={c})" for c in memory.classes_]))
          .round(4).to_string())


# %%
# Run as a script, this prints the following (the documentation's gallery runs it with the
# quick settings listed on its index page).

if __name__ == "__main__":
    main()
