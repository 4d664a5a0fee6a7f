"""``benchmarks/gpu.py`` (issue 12 section 5) runs, and the library never pins JAX to the CPU.

The script is meant for a GPU; the tests run it on the CPU (``--quick``) so that it is known to
work before a device is lent: every workload prints, with its exactness check agreeing with the
float64 NumPy/SciPy references, and the bandwidth and ratio lines are there. Speed is not
asserted (benchmarks print it; tests never time anything). It runs as a subprocess, as the
other benchmark scripts do (``test_benchmark_scripts.py``): a JAX process must not be forked.

The tests force the CPU (``tests/conftest.py`` sets ``jax_platforms``), so a library that pinned
itself to the CPU would pass every other test and still never use a GPU. The second test reads
the library's source for anything that chooses a platform or device.
"""

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

WORKLOADS = (
    "counting: fit",
    "counting: fit (per-class sufficient statistics), device-resident jax.Array X",
    "plug-in predict_proba, host NumPy X streamed",
    "plug-in predict_proba, device-resident jax.Array X",
    "diagnostic: the library's score kernel alone on device-resident chunks",
    "exact predict_proba (method='bayes')",
)


def test_gpu_script_quick_prints_every_workload_with_agreeing_answers(tmp_path):
    out_json = tmp_path / "gpu.json"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("JAX_PLATFORMS", None)  # the script picks jax.devices()[0] itself (the CPU here)
    # a stated peak, so the bandwidth goal reads met/missed rather than "no peak"; shapes
    # smaller than --quick's (each workload still runs, compiles and is checked): 500 rows, as
    # many as are checked, so the check and the workloads share one kernel shape
    run = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "gpu.py"), "--quick",
                          "--rows", "500", "--cols", "50", "--draws", "20",
                          "--repeats", "1", "--peak-gbps", "20", "--json", str(out_json)],
                         capture_output=True, text=True, timeout=600, env=env, check=False)
    assert run.returncode == 0, run.stderr[-3000:]
    text = run.stdout
    result = json.loads(out_json.read_text())

    if result["platform"] == "cpu":  # said up front, so a CPU figure is never read as a GPU's
        assert text.splitlines()[1].startswith("NO GPU:"), text[:500]
    assert "peak memory bandwidth: 20 GB/s (--peak-gbps)" in text
    # whether a jax.Array stays on the device is found out, and said
    assert isinstance(result["jax_array_converted_to_numpy"], bool)
    assert "device-resident input: a jax.Array input is" in text

    # measured references: on-device sum, copy and product, host-to-device copy
    refs = [r["reference"] for r in result["references"]]
    assert [r.split(":")[0] for r in refs] == ["on-device reduction", "on-device copy",
                                               "on-device product", "host-to-device"]
    assert all(r["seconds"] > 0 for r in result["references"])

    rows = result["workloads"]
    for name in WORKLOADS:
        hits = [r for r in rows if r["workload"].startswith(name)]
        assert hits, (name, [r["workload"] for r in rows])
        for r in hits:
            assert r["agree"] == 1.0, r  # every checked row picks the reference's class
            assert r["max_abs_dp"] < 1e-4, r  # float32 kernels within 1e-4 of float64
            assert r["gbps"] > 0 and r["of_reference"] > 0, r
            assert r["workload"] in text  # printed in the table, not only in the JSON
    assert len([r for r in rows if r["workload"].startswith(WORKLOADS[4])]) == 2  # two sizes
    for r in rows:  # the two goals of section 5, against the stated peak
        if r["workload"].startswith(("counting", "plug-in predict_proba")):
            assert r["goal"] == 0.5 and r["status"] in ("met", "missed"), r
            assert abs(r["of_peak"] - r["gbps"] / 20) < 1e-9, r
    counting = next(r for r in rows if r["workload"].startswith("counting"))
    assert "max |diff| 0;" in counting["note"]  # integer class counts exact
    device_row = next(r for r in rows if r["workload"].startswith(WORKLOADS[3]))
    # a jax.Array in, a float32 jax.Array out, normalised on the device: the host's float64
    # answer to float32's precision
    assert "returns a ArrayImpl (float32, normalised on the device)" in device_row["note"]
    assert float(device_row["note"].split("host-NumPy call: ")[1]) < 1e-6

    names = [r["ratio"].split(" on ")[0].split(" over ")[0] for r in result["ratios"]]
    # the draws from host NumPy X and from a device-resident jax.Array X
    assert sorted(names) == ["exact / plug-in predict_proba"] + ["posterior predictive"] * 2
    draws = [r for r in result["ratios"] if r["ratio"].startswith("posterior predictive")]
    assert ["host NumPy X" in draws[0]["ratio"], "jax.Array X" in draws[1]["ratio"]] == [True] * 2
    for r in result["ratios"]:
        assert r["agree"] == 1.0 and r["max_abs_dp"] < 1e-3, r
        assert r["status"] in ("met", "missed") and r["value"] > 0, r
    assert all(r["goal"] == 1.5 for r in draws)
    assert "/ one matmul of the same FLOPs:" in text
    assert text.count("argmax agree 100.000%") == 3


#: calls that choose a platform or a device for the whole process
_PINNING_CALLS = {"jax.default_device", "numpyro.set_platform", "numpyro.set_host_device_count",
                  "jax.config.update", "config.update", "jax.devices", "jax.local_devices"}
#: configuration names and environment variables that do the same
_PINNING_NAMES = ("jax_platform", "jax_default_device", "xla_flags",
                  "xla_force_host_platform", "cuda_visible_devices")


def _dotted(node) -> str:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
    return ".".join(reversed(parts))


def pinning(source: str) -> list[str]:
    """Where ``source`` chooses a platform or device: calls in :data:`_PINNING_CALLS` (for
    ``config.update``, only with a platform or device option; ``jax.devices`` only with a
    backend named), ``backend=``/``device=``/
    ``platform=`` keywords given a constant, and strings naming a platform setting."""
    found = []
    tree = ast.parse(source)
    # reading the backend to size work for it (``jax.default_backend() == "cpu"``) chooses
    # nothing: those strings are not pins
    read = {id(c) for node in ast.walk(tree) if isinstance(node, ast.Compare)
            and isinstance(node.left, ast.Call)
            and _dotted(node.left.func).endswith("default_backend")
            for c in node.comparators}
    for node in ast.walk(tree):
        if id(node) in read:
            continue
        if isinstance(node, ast.Call):
            name = _dotted(node.func)
            first = node.args[0].value if node.args and isinstance(node.args[0], ast.Constant) \
                else None
            if name.endswith("config.update"):  # only a platform or device option
                pins = isinstance(first, str) and first.lower().startswith(_PINNING_NAMES)
            elif name.endswith("devices"):  # jax.devices() is the default backend's
                pins = bool(node.args or node.keywords)
            else:
                pins = name in _PINNING_CALLS
            if pins:
                found.append(f"line {node.lineno}: {name}(...)")
            found += [f"line {node.lineno}: {kw.arg}={kw.value.value!r}" for kw in node.keywords
                      if kw.arg in ("backend", "device", "platform")
                      and isinstance(kw.value, ast.Constant) and kw.value.value is not None]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            text = node.value.lower()
            if text.strip() in ("cpu", "gpu", "cuda", "tpu") or any(
                    n in text for n in _PINNING_NAMES):
                found.append(f"line {node.lineno}: string {node.value[:40]!r}")
    return found


def test_the_library_does_not_pin_a_platform():
    # the tests pin the CPU (conftest.py); the library must leave the choice to the user
    problems = {}
    for path in sorted((ROOT / "bayesnb").rglob("*.py")):
        hits = pinning(path.read_text())
        if hits:
            problems[str(path.relative_to(ROOT))] = hits
    assert not problems, problems


def test_the_pinning_check_finds_what_it_looks_for():
    # the check is only worth something if it sees each way of pinning
    pinned = [
        'import jax\njax.config.update("jax_platforms", "cpu")',
        'import jax\njax.config.update("jax_platform_name", "cpu")',
        "import jax\nwith jax.default_device(jax.devices('cpu')[0]):\n    pass",
        "import jax\nf = jax.jit(lambda x: x, backend='cpu')",
        "import os\nos.environ['JAX_PLATFORMS'] = 'cpu'",
        "import os\nos.environ['XLA_FLAGS'] = '--xla_force_host_platform_device_count=4'",
        "import numpyro\nnumpyro.set_platform('cpu')",
        "import jax\nx = jax.device_put(1.0, device='cpu')",
        "import jax\nx = jax.device_put(1.0, jax.devices('cpu')[0])",
    ]
    for source in pinned:
        assert pinning(source), source
    harmless = ('import jax\njax.config.update("jax_enable_x64", True)\n'
                '"""A docstring that mentions the CPU and XLA:CPU."""\n'
                "# a comment about jax_platforms\nx = jax.device_put(0.0, jax.devices()[0])\n"
                'accelerator = jax.default_backend() != "cpu"')
    assert pinning(harmless) == []


# ------------------------------------------------------------------ float32 matmuls on a GPU
def _jitted_without_full_float32(source: str) -> list[str]:
    """Functions decorated with ``jax.jit`` (or ``partial(jax.jit, ...)``) but not with
    ``full_float32``."""
    missing = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.FunctionDef):
            continue
        names = [_dotted(d.func if isinstance(d, ast.Call) else d) for d in node.decorator_list]
        jitted = any(n in ("jax.jit", "jit") for n in names) or any(
            isinstance(d, ast.Call) and _dotted(d.func) == "partial" and d.args
            and _dotted(d.args[0]) in ("jax.jit", "jit") for d in node.decorator_list)
        if jitted and "full_float32" not in names:
            missing.append(f"line {node.lineno}: {node.name}")
    return missing


def test_every_jitted_kernel_asks_for_full_float32_matmuls():
    # JAX's default float32 matmul is TF32 on Ampere+ GPUs (bfloat16 on TPU), exact only on
    # the CPU the tests run on: every kernel must ask for float32 (``_kernels.full_float32``)
    problems = {}
    for path in sorted((ROOT / "bayesnb").rglob("*.py")):
        missing = _jitted_without_full_float32(path.read_text())
        if missing:
            problems[str(path.relative_to(ROOT))] = missing
    assert not problems, problems
    assert _jitted_without_full_float32(
        "import jax\nfrom functools import partial\n@partial(jax.jit, static_argnums=0)\n"
        "def f(a, b):\n    return a @ b\n") == ["line 4: f"]


def test_compiled_float32_kernels_carry_highest_precision(tmp_path, monkeypatch):
    # the precision is written into every dot the kernels lower to (read back from JAX's IR
    # dump: CPU ignores the setting, so the numbers cannot show it): fit, plug-in and exact
    # scores, draws and model averaging (leave-one-out's kernels are left to the check
    # above: 5 s more). The scores are taken by the kernels, as on an accelerator (on the CPU
    # a call this small takes the host's float64 products, ``_host.scored_on_host``)
    import jax
    import numpy as np

    import bayesnb as bnb
    from bayesnb.fast import _host
    from bayesnb.scoring import DrawsScorer

    monkeypatch.setattr(_host, "scored_on_host", lambda *args: False)

    # the shapes of the gpu.py run above (500 x 50 float32 counts, 20 classes, 20 draws): the
    # kernels it compiled are read from the suite's compilation cache, not compiled again (their
    # IR is dumped all the same, when they are lowered)
    rng = np.random.default_rng(0)
    n = 500
    y = rng.integers(0, 20, n)
    X = rng.poisson(2.0, (n, 50)).astype(np.float32)
    jax.clear_caches()  # kernels compiled by earlier tests in this process would not dump
    jax.config.update("jax_dump_ir_to", str(tmp_path))
    try:
        for method in ("mean", "bayes"):
            clf = bnb.NaiveBayes(bnb.Multinomial(), method=method).fit(X, y)
            clf.predict_proba(X)
        DrawsScorer(clf.fitted_, clf._class_setup()[1],
                    clf.sample_posterior(20, seed=0)).scores(X, "proba")
        bnb.NaiveBayes(bnb.Multinomial(), feature_prior=0.5).fit(X, y).predict_proba(X)
    finally:
        jax.config.update("jax_dump_ir_to", "")
    dots = [line for f in tmp_path.glob("*.mlir") for line in f.read_text().splitlines()
            if "dot_general" in line and "xf32>" in line]
    kernels = {f.name.split("_jit_")[-1] for f in tmp_path.glob("*.mlir")
               if "dot_general" in f.read_text()}
    assert {"suff_stats_compile.mlir", "scores_compile.mlir", "_draw_sums_compile.mlir",
            "_mixture_compile.mlir"} <= kernels, kernels
    assert dots and all("precision = [HIGHEST, HIGHEST]" in line for line in dots), [
        line for line in dots if "HIGHEST, HIGHEST" not in line][:3]
