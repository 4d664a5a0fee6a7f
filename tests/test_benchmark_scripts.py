"""The benchmark scripts a user runs still run against the library as it is (small shapes):
``run.py``, ``sparse.py``, ``mcmc.py``, ``tune.py``, ``compile_bound.py``,
``first_answer.py``, ``tan.py`` and ``credal.py`` (``gpu.py``:
``test_gpu_benchmark_script.py``).

Speed is never asserted here (it is measured in ``benchmarks/``, not in tests). What is checked
is that each script completes, prints a row for every case, and that every row's answer agrees
with its reference: the scripts reach into the library's internals (``--profile``), and a
stage that no longer matches them used to print "n/a" without failing anything.

The scripts run as subprocesses: the harness forks children to measure memory, and a fork of a
process whose JAX threads are running can deadlock (run in this process, ``run.py --quick``
hung the suite). They import this checkout's ``bayesnb`` (``PYTHONPATH``), not whichever one
is installed."""

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BENCHMARKS = ROOT / "benchmarks"


def run_script(*args, timeout=900):  # generous: the 2-core machine is shared
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])}
    out = subprocess.run([sys.executable, str(BENCHMARKS / args[0]), *args[1:]],
                         capture_output=True, text=True, timeout=timeout, check=False, env=env)
    assert out.returncode == 0, out.stderr[-3000:]
    return out.stdout


def test_run_quick_prints_every_case_with_agreeing_answers():
    text = run_script("run.py", "--quick")
    rows = [line.split("|") for line in text.splitlines()
            if line.startswith("| ") and not line.startswith("| case")]
    cases = {(r[1].strip(), r[2].strip(), r[3].strip()) for r in rows}
    for family in ("multinomial", "bernoulli", "gaussian", "categorical"):
        for dtype in ("float32", "float64"):
            for op in ("fit", "predict_proba"):
                assert (family, dtype, op) in cases, (family, dtype, op)
    for family in ("multinomial", "poisson", "gaussian"):  # exact predictive vs plug-in
        for dtype in ("float32", "float64"):
            assert any(c[:2] == (f"{family} bayes", dtype) for c in cases), (family, dtype)
    for op in ("first fit + predict_proba", "fit", "predict_proba"):
        assert ("wide categorical", "float32", op) in cases, op
    assert any(r[1].strip() == "coldstart" for r in rows)
    for r in rows:
        agree = float(r[13].strip().rstrip("%"))
        assert agree >= 99.9, r
        assert r[8].strip() in ("met", "missed", "n/a"), r
    # every reference is named with its settings; Bernoulli's skips the binarize copy
    for reference in ("MultinomialNB(alpha=1.0)", "BernoulliNB(alpha=1.0, binarize=None)",
                      "GaussianNB(var_smoothing=0.0)", "CategoricalNB(alpha=1.0)"):
        assert f"reference {reference}" in text, reference


def test_profile_stages_reach_the_current_internals():
    # one dtype: the stages are the same code in both policies
    text = run_script("run.py", "--quick", "--profile", "--dtype", "float32", "--only",
                      "multinomial", "--only", "categorical")
    assert "[n/a" not in text, [line for line in text.splitlines() if "[n/a" in line]
    for stage in ("stream_suff_stats", "stream_scores", "of which staging copies",
                  "of which kernel, one device-resident chunk", "PROTOTYPE NumPy predict_proba"):
        assert stage in text, stage


def test_sparse_quick_agrees_with_scikit_learn():
    text = run_script("sparse.py", "--quick")
    agreements = re.findall(r"labels agree with scikit-learn on ([0-9.]+)% of rows", text)
    assert len(agreements) == 4  # Multinomial and Bernoulli, float32 and float64
    assert all(float(a) >= 99.9 for a in agreements)
    for family in ("Multinomial", "Bernoulli"):
        for op in ("fit", "predict_proba"):
            assert re.search(rf"{family}\s+{op}\s+[0-9.]+x", text), (family, op)
    assert len(re.findall(r"Multinomial\s+bayes / mean\s+[0-9.]+x", text)) == 2  # both dtypes


def test_mcmc_quick_reports_every_sampler():
    # bayesnb (first run, then a second process on its cache folder) and the hand-written
    # NumPyro model (both chain methods), each in its own process
    text = run_script("mcmc.py", "--quick", "--samples", "20", "--chains", "2")
    rows = {}
    for sampler in ("bayesnb", "bayesnb warm", "numpyro sequential", "numpyro vectorized"):
        row = next((line for line in text.splitlines() if line.startswith(sampler + " ")),
                   None)
        assert row is not None, (sampler, text)
        numbers = [float(v) for v in row[len(sampler):].split()]
        # fit s, vs NumPyro sequential, min ESS, ESS/s, divergences, max r-hat, peak RSS
        assert len(numbers) == 7 and all(v == v for v in numbers), row  # no NaN
        assert numbers[0] > 0 and numbers[2] > 0 and numbers[4] >= 0 and numbers[6] > 0, row
        rows[sampler] = numbers
    assert rows["numpyro sequential"][1] == 1.0, text
    assert abs(rows["bayesnb"][1] - rows["bayesnb"][0] / rows["numpyro sequential"][0]) < 0.01


def test_tune_measures_a_constant_against_an_alternative():
    # a constant read when a kernel is traced (a class attribute): each value runs in its own
    # process, so it takes effect; an alternative must not change the answers
    text = run_script("tune.py", "DOT_CLASSES", "--cell", "multinomial-fit", "--values",
                      "shipped", "0", "--quick", "--runs", "1", "--repeats", "1")
    assert "bayesnb.fast._kernels.Labels.DOT_CLASSES, shipped = " in text, text
    rows = re.findall(r"^\| (\S+) \| [0-9.,]+ ms \| [0-9.,]+ ms \| ([0-9.]+)x \| "
                      r"([0-9.]+) \| ([0-9.]+)% \|$", text, flags=re.MULTILINE)
    assert [r[0] for r in rows] == ["shipped", "0"], text
    assert float(rows[0][2]) == 1.0 and float(rows[1][1]) > 0, text
    assert all(float(r[3]) == 100.0 for r in rows), text  # same argmax as the shipped value


def test_tune_times_later_uncertainty_calls_on_both_routes():
    # the host's route (shipped) and the kernels' (-1) give the same most probable classes
    text = run_script("tune.py", "HOST_DRAW_ENTRIES", "--quick", "--runs", "1", "--repeats", "1")
    assert "gaussian-uncertainty (float32, quick): bayesnb._draws_host.HOST_DRAW_ENTRIES" in text, \
        text
    rows = re.findall(r"^\| (\S+) \| [0-9.,]+ ms \| [0-9.,]+ ms \| [0-9.]+x \| "
                      r"[0-9.]+ \| ([0-9.]+)% \|$", text, flags=re.MULTILINE)
    assert rows == [("shipped", "100.000"), ("-1", "100.000")], text


def test_tune_measures_the_text_frame_cells():
    # pandas text columns against scikit-learn's OrdinalEncoder + CategoricalNB; the chunks'
    # size does not change the answers
    text = run_script("tune.py", "FRAME_COLUMN_CELLS", "--cell", "textframe-predict",
                      "--values", "shipped", "0", "--quick", "--runs", "1", "--repeats", "1")
    assert "textframe-predict (float32, quick): bayesnb._blocks.FRAME_COLUMN_CELLS" in text, text
    rows = re.findall(r"^\| (\S+) \| [0-9.,]+ ms \| [0-9.,]+ ms \| [0-9.]+x \| "
                      r"[0-9.]+ \| ([0-9.]+)% \|$", text, flags=re.MULTILINE)
    assert rows == [("shipped", "100.000"), ("0", "100.000")], text


def test_compile_bound_reports_each_model_within_the_bound():
    text = run_script("compile_bound.py", "--classes", "2", "5", "--max-executables", "3",
                      "--blocks", "3", "--nuts-blocks", "3")
    text, nuts = text.split("\nNUTS, ")
    # NUTS on three one-column blocks and on one block: fit, first and second predict seconds
    rows = [line.rsplit(maxsplit=3) for line in nuts.splitlines()[2:] if line.strip()]
    assert [r[0].strip() for r in rows] == ["3 one-column blocks", "one block"], nuts
    assert all(float(v) >= 0 for r in rows for v in r[1:]), nuts
    text, declared = text.split("one-column blocks")
    # the model declared column by column: one row a family, its seconds
    rows = [line.split() for line in declared.splitlines()[2:] if line.strip()]
    assert [r[0] for r in rows] == ["Gaussian", "Poisson"], declared
    assert all(float(v) >= 0 for r in rows for v in r[1:]), declared
    models, batches = text.split("small batches")
    rows = [line.split() for line in models.splitlines() if line.strip()[:1].isdigit()]
    assert [int(r[0]) for r in rows] == [2, 3, 4, 5], text
    # one model adds a few kernels; past the bound of 3 every kernel is dropped first
    assert all(int(r[3]) <= 3 + 3 for r in rows) and min(int(r[3]) for r in rows[1:]) <= 3, text
    assert "models: 4;" in text, text
    # batches of 1..64 rows: one bucket, so only the first call compiles a score kernel
    compiled = [int(r.split()[2]) for r in batches.splitlines() if r.strip()[:1].isdigit()]
    assert compiled == [1, 0, 0, 0, 0], text


def test_first_answer_reports_every_case():
    # (c) with one model, fitted and scored on the host (``fast._host.HOST_MATHS_ENTRIES``)
    text = run_script("first_answer.py", "--quick", "--classes", "2", "2")
    imports = re.findall(r"^\| `import (\S+)` \| [0-9.]+ \| [0-9.]+ \| ([0-9.]+)x \|$", text,
                         flags=re.MULTILINE)
    assert [m for m, _ in imports] == ["jax", "sklearn.naive_bayes", "bayesnb"], text
    first = re.findall(r"^\| (bayesnb, cache \w+|scikit-learn GaussianNB) \|"
                       r"(?: [0-9.]+ \|){4} ([0-9.]+)x \|$", text, flags=re.MULTILINE)
    assert [name for name, _ in first] == ["bayesnb, cache warm", "bayesnb, cache cold",
                                           "bayesnb, cache off", "scikit-learn GaussianNB"], text
    assert first[-1][1] == "1.00", text
    many = re.findall(r"^\| cache (off|cold|warm)[^|]* \| [0-9.]+ \| -?[0-9]+ \|$", text,
                      flags=re.MULTILINE)
    assert many == ["off", "cold", "warm"], text
    columns = re.findall(r"^\| (bayesnb|scikit-learn \w+NB) \| [0-9.]+ \| ([0-9.]+)x \|$",
                         text, flags=re.MULTILINE)
    assert [name for name, _ in columns] == ["bayesnb", "scikit-learn MultinomialNB",
                                             "bayesnb", "scikit-learn GaussianNB"], text
    assert columns[1][1] == columns[3][1] == "1.0", text
    analysis = re.findall(r"^\| ([^|]+) \| (off|warm) \|(?: [0-9.]+ \|){7}$", text,
                          flags=re.MULTILINE)
    assert [cache for _, cache in analysis] == ["off", "warm"] * 4, text


def test_tan_quick_agrees_with_the_log_space_reference():
    text = run_script("tan.py", "--quick")
    for model in ("TAN averaged over all trees", "TAN, most probable tree", "NaiveBayes"):
        assert re.search(rf"\| {re.escape(model)}.* \| [0-9.]+ \| [0-9.]+ \|", text), model
    assert re.search(r"largest \|p - p_reference\| over 50 rows: \S+ \(met\)", text), text


def test_credal_quick_agrees_with_its_reference():
    text = run_script("credal.py", "--quick")
    for call in ("credal_predict", "prior_sensitivity", "predict_proba (bayes)"):
        assert f"| {call} |" in text, call
    assert "reference on 100.000% of rows" in text, text
    assert "Multinomial block" in text and "inside the set on 100.000% of rows" in text, text
