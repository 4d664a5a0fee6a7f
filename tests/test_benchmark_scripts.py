"""The benchmark scripts still run against the library as it is (small shapes).

Speed is never asserted here (it is measured in ``benchmarks/``, not in tests). What is checked
is that each script completes, prints a row for every case, and that every row's answer agrees
with its reference: the scripts reach into the library's internals (``--profile``), and a
stage that no longer matches them used to print "n/a" without failing anything.

The scripts run as subprocesses: the harness forks children to measure memory, and a fork of a
process whose JAX threads are running can deadlock (run in this process, ``run.py --quick``
hung the suite)."""

import re
import subprocess
import sys
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


def run_script(*args, timeout=900):  # generous: the 2-core machine is shared
    out = subprocess.run([sys.executable, str(BENCHMARKS / args[0]), *args[1:]],
                         capture_output=True, text=True, timeout=timeout, check=False)
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
                  "of which kernel, one device-resident chunk"):
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


def test_weighted_fit_prints_both_cases_with_float64_evidence():
    text = run_script("weighted_fit.py", "--rows", "2000", "--repeats", "1")
    rows = re.findall(r"weighted / unweighted [0-9.]+x; weighted log_evidence (\S+), x64 (\S+),"
                      r" \|difference\| (\S+)", text)
    assert len(rows) == 2, text  # Multinomial and Gaussian
    assert all(float(d) <= 1e-9 * abs(float(ref)) for _, ref, d in rows), rows


def test_float64_fit_probe_prints_every_variant_with_exact_counts():
    text = run_script("float64_fit_probe.py", "--rows", "6000", "--repeats", "1")
    ratios = re.findall(r"^\s+[0-9]+ ms\s+([0-9.]+)x  ", text, flags=re.MULTILINE)
    assert len(ratios) == 8, text  # sklearn, ours, staged, windows, copies, NumPy, check(+NumPy)
    assert float(re.search(r"feature_count_\| = (\S+)", text).group(1)) == 0.0, text


def test_gpu_exact_steps_times_both_rules_with_exact_answers():
    # on the CPU here: both rules for S, each against float64 SciPy (the plug-in against NumPy)
    text = run_script("gpu_exact_steps.py", "--rows", "3000", "--cols", "100", "--repeats", "1")
    rows = re.findall(r"^\| (plug-in|exact, accelerator rule|exact, CPU rule)[^|]*\| .* \| "
                      r"([0-9.]+)x \| ([0-9.]+)% \| (\S+) \|$", text, flags=re.MULTILINE)
    assert [r[0] for r in rows] == ["plug-in", "exact, accelerator rule", "exact, CPU rule"], text
    for _, ratio, agree, dp in rows:
        assert float(ratio) > 0 and float(agree) == 100.0 and float(dp) < 1e-4, text


def test_chunk_kernel_parts_prints_every_part_with_checked_answers():
    # the script exits non-zero when a variant's answer is wrong (bounds against NumPy, log x!
    # sums against SciPy, class sums against NumPy's product); both dtype policies
    for policy in ((), ("--x64",)):
        text = run_script("chunk_kernel_parts.py", "--repeats", "2", *policy)
        rows = re.findall(r"^\s+[0-9.]+ ms\s+([0-9.]+)x  (.+)$", text, flags=re.MULTILINE)
        names = [name for _, name in rows]
        for part in ("three reductions", "one variadic reduction (chunk_bounds)",
                     "3 steps", "8 selects", "16 selects", "table gather",
                     "marked gather (small_count_log_factorials)",
                     "whole kernel (_kernels.suff_stats)",
                     "its class sums alone, one-hot product",
                     "its class sums alone, scatter-add",
                     "staging copy of a chunk (np.copyto)"):
            assert part in names, (part, text)
        assert len(rows) == 3 + 6 + 5 + 4 + 5, text  # each section has its one-read base


def test_exact_host_parts_prints_every_part_with_checked_answers():
    # the script exits non-zero when a part's answer is wrong (the tails against SciPy's
    # log-Gamma differences, the normalisations against softmax, the two predict_proba
    # against each other); both dtype policies
    for policy in ((), ("--x32",)):
        text = run_script("exact_host_parts.py", "--repeats", "2", *policy)
        rows = re.findall(r"^\s+[0-9.]+ ms\s+([0-9.]+)x  (.+)$", text, flags=re.MULTILINE)
        names = [name for _, name in rows]
        for part in ("found in the chunk (_listed_tail, stop 32)",
                     "from the kernel's positions (_positioned_tail)",
                     "(rows, K) chunks (stop 32)", "plug-in (method='mean')", "exact, now"):
            assert part in names, (part, text)
        assert len(rows) == 3 + 2 + 3, text
