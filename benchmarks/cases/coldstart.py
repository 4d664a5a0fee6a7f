"""Cold start: ``python -c`` that imports bayesnb, fits PlayTennis and predicts one day.

Timed as the wall clock of a fresh subprocess (target < 3 s); the answer must be "No" (seed 003).
The reference is the same job with scikit-learn (``OrdinalEncoder`` + ``CategoricalNB``); under
``--quick`` only ours runs.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time

from harness import COLDSTART_TARGET_S, Case, Context, Row

RUNS = {"full": 3, "quick": 1}

COLD_OURS = """
import json, time
t0 = time.perf_counter()
import pandas as pd
import bayesnb as bnb
from bayesnb.datasets import load_playtennis
t1 = time.perf_counter()
X, y = load_playtennis()
t2 = time.perf_counter()
clf = bnb.NaiveBayes(method="ml").fit(X, y)
t3 = time.perf_counter()
q = pd.DataFrame([["Sunny", "Cool", "High", "Strong"]], columns=X.columns)
label = clf.predict(q)[0]
joint = clf.predict_joint_log_proba(q)
t4 = time.perf_counter()
print(json.dumps({"label": str(label), "import": t1 - t0, "load": t2 - t1, "fit": t3 - t2,
                  "predict": t4 - t3}))
"""

COLD_SKLEARN = """
import json, time
t0 = time.perf_counter()
import pandas as pd
from sklearn.naive_bayes import CategoricalNB
from sklearn.preprocessing import OrdinalEncoder
from bayesnb.datasets import load_playtennis
t1 = time.perf_counter()
X, y = load_playtennis()
t2 = time.perf_counter()
enc = OrdinalEncoder().fit(X)
clf = CategoricalNB(alpha=1e-10, force_alpha=True).fit(enc.transform(X), y)
t3 = time.perf_counter()
q = pd.DataFrame([["Sunny", "Cool", "High", "Strong"]], columns=X.columns)
label = clf.predict(enc.transform(q))[0]
t4 = time.perf_counter()
print(json.dumps({"label": str(label), "import": t1 - t0, "load": t2 - t1, "fit": t3 - t2,
                  "predict": t4 - t3}))
"""


def cold(code: str) -> tuple[float, dict]:
    env = dict(os.environ)
    env.pop("JAX_ENABLE_X64", None)
    t0 = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         check=False)
    wall = time.perf_counter() - t0
    if out.returncode != 0:
        raise RuntimeError(f"cold-start subprocess failed:\n{out.stderr[-2000:]}")
    return wall, json.loads(out.stdout.strip().splitlines()[-1])


def run(ctx: Context):
    ctx.progress("cold start")
    runs = ctx.pick(RUNS["full"], RUNS["quick"])
    ours, refs, phases = [], [], []
    for _ in range(runs):
        w, ph = cold(COLD_OURS)
        ours.append(w)
        phases.append(ph)
        refs.append(float("nan") if ctx.quick else cold(COLD_SKLEARN)[0])
    right = {p["label"] for p in phases} == {"No"}  # x' = (Sunny, Cool, High, Strong): "No"
    ctx.extra["coldstart_phases_s"] = {
        k: statistics.median(p[k] for p in phases) for k in ("import", "load", "fit", "predict")}
    return [Row("coldstart", "float32", "python -c: import+fit+predict PlayTennis",
                statistics.median(ours), statistics.median(refs), "sklearn", None,
                1.0 if right else 0.0, None, ours[0], float("nan"), float("nan"), float("nan"),
                float("nan"), note=f"target < {COLDSTART_TARGET_S:g} s wall")]


def profile(ctx: Context):
    """Import times of the pieces, the PlayTennis script's phases, ``-X importtime``."""
    runs = ctx.pick(RUNS["full"], RUNS["quick"])
    res = []
    for label, code in [("python -c pass", "pass"), ("import numpy", "import numpy"),
                        ("import pandas", "import pandas"), ("import jax", "import jax"),
                        ("import jax, numpyro", "import jax, numpyro, numpyro.distributions"),
                        ("import sklearn.base", "import sklearn.base"),
                        ("import bayesnb", "import bayesnb")]:
        ts = []
        for _ in range(runs):
            t0 = time.perf_counter()
            subprocess.run([sys.executable, "-c", code], check=True)
            ts.append(time.perf_counter() - t0)
        res.append((f"subprocess: {label}", statistics.median(ts)))
    phases = [cold(COLD_OURS)[1] for _ in range(runs)]
    for k in ("import", "load", "fit", "predict"):
        res.append((f"PlayTennis script phase: {k}", statistics.median(p[k] for p in phases)))
    out = subprocess.run([sys.executable, "-X", "importtime", "-c", "import bayesnb"],
                         capture_output=True, text=True, check=True).stderr
    cum: dict[str, int] = {}
    for line in out.splitlines():
        parts = line.split("|")
        if len(parts) == 3 and parts[1].strip().isdigit():
            cum.setdefault(parts[2].strip(), int(parts[1]))
    for mod in ("bayesnb", "bayesnb.estimator", "bayesnb.families", "bayesnb.coursework",
                "bayesnb.persistence", "jax", "numpyro", "numpyro.distributions", "pandas",
                "scipy.stats", "sklearn.base", "arviz"):
        if mod in cum:
            res.append((f"-X importtime cumulative (first import): {mod}", cum[mod] / 1e6))
    yield "cold start", res


CASE = Case("coldstart", run, profile=profile)
