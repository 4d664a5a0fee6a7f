"""Memory that does not grow with rows x classes (issue 11, section 5).

``NaiveBayes().fit(rng.normal(size=(40000, 3)), np.arange(40000) % 10000)`` took +2.2 GB for a
1 MB input: chunks were sized by the input row while the kernel materialised a ``(rows,
classes)`` one-hot per chunk. Measured in a subprocess as the peak resident set during the call
(``VmHWM``, reset through ``/proc/self/clear_refs``) less the resident set before it; XLA's
allocations are invisible to tracemalloc. The bounds are generous (a few chunks are a few
tens of MB); the unbounded one-hot took gigabytes at these shapes.
"""

import json
import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.skipif(not os.path.exists("/proc/self/clear_refs"),
                                reason="peak RSS reset needs Linux /proc")

CHILD = r"""
import json, sys
import numpy as np
import bayesnb as bnb

def status(key):
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith(key)) / 1024

def measured(call):
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")
    before = status("VmRSS")
    call()
    return status("VmHWM") - before

rows, classes = int(sys.argv[1]), int(sys.argv[2])
rng = np.random.default_rng(0)
X, y = rng.normal(size=(rows, 3)), np.arange(rows) % classes
model = bnb.NaiveBayes().fit(X[:4 * classes], y[:4 * classes])  # compile, page libraries in
model.predict_proba(X[:500])
fit_mb = measured(lambda: bnb.NaiveBayes().fit(X, y))
model = bnb.NaiveBayes().fit(X, y)
predict_mb = measured(lambda: model.predict_proba(X[:500]))
print(json.dumps({"fit": fit_mb, "predict": predict_mb}))
"""


def test_fit_and_predict_memory_do_not_scale_with_rows_times_classes():
    rows, classes = 20_000, 5_000  # the unbounded one-hot: 20,480 x 5,000 floats per chunk
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [os.path.dirname(os.path.dirname(os.path.abspath(__file__)))]
        + os.environ.get("PYTHONPATH", "").split(os.pathsep)))
    out = subprocess.run([sys.executable, "-c", CHILD, str(rows), str(classes)], env=env,
                         capture_output=True, text=True, check=True, timeout=600)
    extra = json.loads(out.stdout.strip().splitlines()[-1])
    # input 0.5 MB; before the fix the fit took well over a gigabyte here
    assert extra["fit"] < 250, extra
    # the (500, 5000) float64 output is 19 MB; a few score chunks on top of it
    assert extra["predict"] < 250, extra
