"""The examples in the docstrings run and print what they say they print; every public name
has one, and type annotations.

Every module of the package is searched for doctests (``doctest.DocTestFinder``), and each
docstring's examples run as one test, in the default float32 mode, with matplotlib on its Agg
backend and warnings as errors (as in the rest of the suite). An example starts from nothing:
it imports what it uses, as a reader would.

The coverage tests ask for a NumPy-style ``Examples`` section holding at least one doctest on
every name of ``bayesnb.__all__`` (the constants ``METHODS`` and ``REGISTRY``, which cannot carry
a docstring, in the docstring of the module that defines them), on every public method of
``NaiveBayes`` that bayesnb defines, and on the functions of the modules the user guide sends
users to (:data:`USER_FUNCTIONS`): a new public name without an example fails here. The same
names must annotate every parameter and their return value, and the lazily imported public
names of ``bayesnb`` are re-exported to type checkers (the package is ``py.typed``).
"""

from __future__ import annotations

import doctest
import importlib
import inspect
import pkgutil
import re

import matplotlib
import pytest

import bayesnb

matplotlib.use("Agg")

FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE

#: module -> the functions of it that the README, the user guide and the examples call
USER_FUNCTIONS = {
    "bayesnb.analysis": ["decision_function", "dependence", "empirical_bayes", "encode_linear",
                         "linear_weights", "log_bayes_factor"],
    "bayesnb.compare": ["calibration_table", "classification_metrics", "compare",
                        "expected_calibration_error", "learning_curves"],
    "bayesnb.dask": ["fit", "predict"],
    "bayesnb.datasets": list(importlib.import_module("bayesnb.datasets").__all__),
    "bayesnb.em": ["fit_em", "log_posterior"],
    "bayesnb.model": ["model_and_data", "simulate"],
    "bayesnb.outofcore": ["fit_chunks", "read_csv_chunks"],
    "bayesnb.plots": ["credible_intervals_plot", "density_plot", "learning_curves_plot",
                      "posterior_density_plot", "reliability_diagram"],
}

#: the constants of ``__all__`` and the module whose docstring shows them
CONSTANTS = {"METHODS": "bayesnb.estimator", "REGISTRY": "bayesnb.families"}


def _modules() -> list:
    names = ["bayesnb"] + [m.name for m in pkgutil.walk_packages(bayesnb.__path__, "bayesnb.")]
    return [importlib.import_module(name) for name in sorted(names)]


def _doctests() -> list[doctest.DocTest]:
    finder = doctest.DocTestFinder()
    found = [test for module in _modules()
             for test in finder.find(module, module.__name__, globs={}) if test.examples]
    return sorted(found, key=lambda test: test.name)


DOCTESTS = _doctests()


@pytest.mark.parametrize("test", DOCTESTS, ids=[t.name for t in DOCTESTS])
def test_docstring_examples(test):
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    report: list[str] = []
    try:
        result = runner.run(test, out=report.append)
    finally:
        import matplotlib.pyplot as plt

        plt.close("all")
    assert result.failed == 0, "".join(report)


def _examples(doc: str | None) -> list[doctest.Example]:
    """The doctests of a docstring's NumPy-style ``Examples`` section (none without one)."""
    parts = re.split(r"^\s*Examples\n\s*-{8,}\n", inspect.cleandoc(doc or ""), flags=re.M)
    if len(parts) < 2:
        return []
    section = re.split(r"^\S.*\n-{3,}\n", parts[1], flags=re.M)[0]  # up to the next section
    return doctest.DocTestParser().get_examples(section)


def _public_names() -> list[tuple[str, object]]:
    out = [(name, getattr(bayesnb, name)) for name in bayesnb.__all__ if name not in CONSTANTS]
    for name, value in inspect.getmembers(bayesnb.NaiveBayes, inspect.isfunction):
        if not name.startswith("_") and value.__module__.startswith("bayesnb"):
            out.append((f"NaiveBayes.{name}", value))
    for module, names in USER_FUNCTIONS.items():
        out += [(f"{module}.{name}", getattr(importlib.import_module(module), name))
                for name in names]
    return out


def test_the_coverage_reader_finds_examples_and_their_absence():
    def documented():
        """Summary.

        Examples
        --------
        >>> 1 + 1
        2

        See Also
        --------
        >>> not an example of this section
        """

    def undocumented():
        """Summary.

        >>> 1 + 1
        2
        """

    assert len(_examples(documented.__doc__)) == 1
    assert _examples(undocumented.__doc__) == []
    assert _examples(None) == []


def test_the_public_api_is_covered():
    names = {name for name, _ in _public_names()}
    assert set(bayesnb.__all__) - set(CONSTANTS) <= names
    for method in ("fit", "partial_fit", "predict", "predict_proba", "predict_log_proba",
                   "predict_joint_log_proba", "summary", "explain", "loo", "to_arviz"):
        assert f"NaiveBayes.{method}" in names


@pytest.mark.parametrize("name, value", _public_names(), ids=[n for n, _ in _public_names()])
def test_every_public_name_has_an_example(name, value):
    assert _examples(value.__doc__), f"{name}: no Examples section with a doctest"


@pytest.mark.parametrize("name, module", CONSTANTS.items())
def test_the_constants_have_an_example(name, module):
    examples = _examples(importlib.import_module(module).__doc__)
    assert any(name in example.source for example in examples), (
        f"{name}: the docstring of {module} has no example using it")


def _missing_annotations(value) -> list[str]:
    """The parameters (and ``return``) of a public callable that have no annotation; for a class,
    those of its ``__init__`` when the class defines one."""
    if inspect.isclass(value):
        if "__init__" not in vars(value):
            return []
        value = value.__init__
    signature = inspect.signature(value)
    missing = [name for name, p in signature.parameters.items()
               if name not in ("self", "cls") and p.annotation is inspect.Parameter.empty]
    if signature.return_annotation is inspect.Signature.empty:
        missing.append("return")
    return missing


@pytest.mark.parametrize("name, value", _public_names(), ids=[n for n, _ in _public_names()])
def test_every_public_callable_is_annotated(name, value):
    missing = _missing_annotations(value)
    assert not missing, f"{name}: no annotation on {missing}"


def test_type_checkers_see_every_public_name():
    """``bayesnb`` imports its public names on first use; its ``if TYPE_CHECKING:`` block
    imports each from the module ``_PUBLIC`` names, as an explicit re-export."""
    import ast
    from pathlib import Path

    tree = ast.parse(Path(bayesnb.__file__).read_text())
    block = next(node for node in tree.body if isinstance(node, ast.If)
                 and getattr(node.test, "id", None) == "TYPE_CHECKING")
    seen = {alias.name: node.module for node in block.body for alias in node.names
            if isinstance(node, ast.ImportFrom) and alias.asname == alias.name}
    assert seen == bayesnb._PUBLIC
