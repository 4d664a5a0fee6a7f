"""Every example runs as a script (with small settings) and prints what it promises."""

import subprocess
import sys
from pathlib import Path

import pytest
from test_readme import example_outputs, mismatches

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"

CASES = {
    "coursework.py": ([], ["0.0053", "0.0206", "0.8076", "0.676965", "0.585965"]),
    "ml_map_bayes.py": (["--train-sizes", "8", "64", "--repeats", "3", "--plots", "{tmp}"],
                        ["bayes", "inf", "learning_curves.png"]),
    "mixed_missing.py": (["--rows", "600"], ["held-out accuracy", "model without income"]),
    "text_classification.py": ([], ["scikit-learn MultinomialNB", "Dirichlet-multinomial",
                                    "mutual information"]),
    "semi_supervised.py": (["--samples", "300", "--unlabeled", "150"],
                           ["labeled + unlabeled", "posterior sd"]),
    "learned_smoothing.py": (["--samples", "200"], ["learned alpha (MCMC)", "empirical Bayes"]),
    "mcmc_arviz.py": (["--samples", "200", "--out", "{tmp}"], ["r_hat", "class_probs.png"]),
    "dependence.py": ([], ["joint Dirichlet", "joined groups"]),  # numbers: test_dependence.py
    "dask_and_chunks.py": ([], ["chunked CSV (400 rows a chunk) == in memory: True",
                                "dask (4 partitions) == in memory: True",
                                "dask predict_proba == in memory: True"]),
}


#: examples run (and their output checked against the README) by another test file
ELSEWHERE = {"explain_and_loo.py": "tests/test_explain_loo.py"}


def test_every_example_is_covered():
    assert sorted(p.name for p in EXAMPLES.glob("*.py")) == sorted({**CASES, **ELSEWHERE})


@pytest.mark.parametrize("name", sorted(CASES))
def test_example_runs(name, tmp_path):
    args, expected = CASES[name]
    args = [a.format(tmp=tmp_path) for a in args]
    out = subprocess.run([sys.executable, str(EXAMPLES / name), *args], capture_output=True,
                         text=True, timeout=120, check=False)
    assert out.returncode == 0, out.stderr
    for text in expected:
        assert text in out.stdout, (text, out.stdout)
    quoted = example_outputs().get((name, tuple(args)))
    if quoted is not None:  # the README quotes this very run: its numbers must be these
        assert mismatches(out.stdout, quoted) is None, (mismatches(out.stdout, quoted),
                                                        out.stdout)
    for png in tmp_path.glob("*.png"):  # plots render to real images
        assert png.stat().st_size > 5000
