"""Run an example script in the test's own process, as ``python examples/NAME.py ARGS`` would.

A fresh interpreter spends about 4.5 s importing JAX, NumPyro, ArviZ and scikit-learn before
the script's first line, and then compiles kernels the suite has already compiled; in this
process neither happens. What a command line gives a script is given here too: ``sys.argv``,
``__name__ == "__main__"``, the script's folder first on ``sys.path``, ``TMPDIR`` for its
temporary folders, and its warnings written to stderr (which pytest shows with a failure)
rather than raised (the suite turns warnings into errors; a script run by a user prints them).
A script that fails raises here, which fails the test with the script's own traceback.
"""

from __future__ import annotations

import contextlib
import io
import runpy
import sys
import tempfile
import warnings
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def run_example(name: str, args=(), tmp_path: Path | None = None) -> str:
    """What ``python examples/{name} {args}`` prints to stdout; ``TMPDIR`` is ``tmp_path``."""
    import matplotlib.pyplot as plt

    script = EXAMPLES / name
    printed = io.StringIO()
    with pytest.MonkeyPatch.context() as patch, warnings.catch_warnings(record=True) as shown, \
            contextlib.redirect_stdout(printed):
        warnings.simplefilter("default")
        patch.setattr(sys, "argv", [str(script), *map(str, args)])
        patch.syspath_prepend(str(EXAMPLES))
        if tmp_path is not None:  # where tempfile puts a script's default plot folder
            patch.setenv("TMPDIR", str(tmp_path))
            patch.setattr(tempfile, "tempdir", str(tmp_path))
        try:
            runpy.run_path(str(script), run_name="__main__")
        finally:
            plt.close("all")
            for w in shown:
                print(warnings.formatwarning(w.message, w.category, w.filename, w.lineno),
                      end="", file=sys.stderr)
    return printed.getvalue()
