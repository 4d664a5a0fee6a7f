"""Every example runs as a script (with small settings) and prints what it promises: the data it
uses (a ``data:`` line), class names beside its probabilities, and, for those that draw, the
folder its plots go to (``--out``; by default a new temporary folder, printed). The scripts run
in the test's process, as ``__main__`` with their arguments (``example_runner``), so they reuse
the kernels the suite has compiled.

The MCMC examples run with a handful of draws here (``--samples``): the test is that the script
runs end to end and prints its parts; NUTS against the closed forms is tested in
``test_mcmc.py``."""

import re
from pathlib import Path

import pytest
from example_runner import EXAMPLES, run_example
from test_readme import example_outputs, mismatches

#: name -> (arguments, texts stdout must contain); "{tmp}" is the test's temporary folder
CASES = {
    "coursework.py": ([], ["0.0053", "0.0206", "0.8076", "0.676965", "0.585965",
                           "PlayTennis=No"]),
    # no --out: the plots go to a new temporary folder (under TMPDIR, set to {tmp} below)
    "ml_map_bayes.py": (["--train-sizes", "8", "64", "--repeats", "3"],
                        ["bayes", "inf", "learning_curves.png", "P(no)", "P(yes)"]),
    "mixed_missing.py": (["--rows", "600"], ["held-out accuracy", "model without income",
                                             "P(high)", "P(low)", "P(mid)"]),
    "text_classification.py": ([], ["scikit-learn MultinomialNB", "Dirichlet-multinomial",
                                    "mutual information", "sport"]),
    "semi_supervised.py": (["--samples", "60", "--unlabeled", "100"],
                           ["labeled + unlabeled", "posterior sd", "P(minus)", "P(plus)"]),
    # the MCMC page quotes this run's output (test_readme checks that it is a run made here)
    "learned_smoothing.py": (["--samples", "200"],
                             ["learned alpha (MCMC)", "empirical Bayes", "P(ham)", "P(spam)"]),
    # the MCMC page quotes this run's output too
    "pooling.py": (["--samples", "200"], ["pooled", "shared mean", "P(kiosk)"]),
    # 4 chains of 40: the run the MCMC page's block makes in test_readme (SHORT_MCMC), so the
    # two share one compiled sampler
    "mcmc_arviz.py": (["--samples", "40", "--chains", "4", "--out", "{tmp}"],
                      ["r_hat", "class_probs.png", "P(Survived=No) NUTS",
                       "P(Survived=Yes) exact"]),
    "decisions.py": ([], ["loss (rows: true class, columns: decision)", "P(benign)",
                          "P(malignant)", "referred"]),
    "credal.py": (["--sizes", "10", "300", "2201", "--repeats", "2"],
                  ["indeterminate", "P(Survived=No)", "P(Survived=Yes)", "credal set"]),
    "dask_and_chunks.py": ([], ["chunked CSV (400 rows a chunk) == in memory: True",
                                "dask (4 partitions) == in memory: True",
                                "dask predict_proba == in memory: True",
                                "P(Survived=No)", "P(Survived=Yes)"]),
    "tree_augmented.py": (["--rows", "800"], ["fever        - chills", "averaged over trees",
                                             "P(cold)", "P(flu)"]),
}
PLOTS = {"ml_map_bayes.py": ("reliability.png", "learning_curves.png"),
         "mixed_missing.py": ("columns.png",),
         "mcmc_arviz.py": ("class_probs.png", "class_given_survival_forest.png",
                           "sex_trace.png")}


#: examples run (and their output checked against the docs) by another test file
ELSEWHERE = {"explain_and_loo.py": "tests/test_explain_loo.py",
             "dependence.py": "tests/test_dependence.py",
             "feature_relevance.py": "tests/test_feature_averaging.py"}


def test_every_example_is_covered():
    assert sorted(p.name for p in EXAMPLES.glob("*.py")) == sorted({**CASES, **ELSEWHERE})


@pytest.mark.parametrize("name", sorted(CASES))
def test_example_runs(name, tmp_path):
    args, expected = CASES[name]
    args = [a.format(tmp=tmp_path) for a in args]
    stdout = run_example(name, args, tmp_path)  # TMPDIR: where a default plot folder is made
    for text in expected:
        assert text in stdout, (text, stdout)
    quoted = example_outputs().get((name, tuple(args)))
    if quoted is not None:  # a docs page quotes this very run: its numbers must be these
        assert mismatches(stdout, quoted) is None, (mismatches(stdout, quoted), stdout)
    assert re.search(r"^data: \S", stdout, re.MULTILINE), stdout  # says what data
    if name in PLOTS:  # the folder is printed, and the plots are there as real images
        folder = Path(re.search(r"^plots go to (.+?)/?$", stdout, re.MULTILINE)[1])
        assert folder.is_relative_to(tmp_path), folder
        if "--out" not in args:
            assert folder.name.startswith(f"bayesnb-{name[:-3]}-"), folder
        for png in PLOTS[name]:
            assert (folder / png).stat().st_size > 5000, png
