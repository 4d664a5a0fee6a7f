"""Every ```python block of README.md and of the documentation's pages (``docs/*.md``,
``docs/user_guide/*.md``) runs as written and prints the numbers its page quotes.

The pages are README.md and every Markdown page under ``docs/`` (not a build's ``_build`` or the
generated gallery). Each block is a test case of its own, named by page and line
(``README.md:41``, ``docs/user_guide/mcmc.md:12``). How the blocks are run (the rules a page's
block may rely on):

- **In order, in one namespace per page**, as a reader typing one page's blocks into one
  Python session: a block may use the names earlier blocks *of the same page* define
  (``bnb``, ``X``, ``y``, ``clf``, ...), so each page starts with what it needs; pages run
  independently of each other. The working directory is a fresh temporary folder per page
  (files a block writes land there) and JAX runs in its default dtype mode (float32), as a
  reader's does. A page that *includes* README text (MyST ``{include}``) does not run it again:
  the README's own test cases do.
- **Placeholders become small local data**, by these substitutions and nothing else:
  ``"s3://bucket/titanic/*.parquet"`` reads Titanic (target ``Survived``) written as four
  Parquet files in a temporary folder; ``"s3://bucket/scores/"`` is a temporary folder;
  ``Client("tcp://scheduler:8786")`` connects to an in-process ``LocalCluster``
  (``processes=False``, one worker, closed after the run); ``"big.csv"`` is created in the
  working directory (Titanic with its target named ``y``).
- **Short MCMC where no number depends on it**: in a block that quotes no number, the test runs
  ``num_warmup=`` and ``num_samples=`` at 40 (the pages' settings take minutes on a busy
  machine; 40 with the default 4 chains on Titanic is the run ``tests/test_examples.py``
  makes of ``examples/mcmc_arviz.py``, so the two share one compiled sampler) and ignores the
  ``ConvergenceWarning`` such a short run may give. Whether the
  pages' own settings converge is for the MCMC tests; a block that quotes a number runs
  exactly as written.
- **A block that cannot run in a test** is marked by an HTML comment on the line(s) just before
  it, ``<!-- readme-test: skip (reason) -->``; the reason is required and the skipped blocks
  are reported by ``test_skipped_blocks_say_why``.

Which numbers are checked (every number a page quotes as an output):

- ``# prints <text>`` ending the last line of a top-level statement: the numbers in ``<text>``
  are, in order, the numbers of what that statement prints, or, for an expression statement
  that prints nothing, of ``print(value)``;
- a ```text block right after a python block (only blank lines between): the numbers of
  everything that block prints, in order.

A quoted number is the printed one at the quoted digits: ``0.111`` accepts 0.1105 to 0.1115,
``2201`` 2200.5 to 2201.5, ``1.2e-05`` 1.15e-05 to 1.25e-05; the counts must match. Numbers are
decimal literals standing alone (the ``1`` of ``1st`` or the ``32`` of ``float32`` are not
numbers). Blocks may not warn: warnings are errors here as in the rest of the suite, except
Dask's own ``Pandas4Warning`` (Dask 2026.8 calls pandas 3.1's deprecated ``set_index(...,
inplace=True)`` when it reads or writes a Parquet index: not bayesnb's, nor the pages').
"""

from __future__ import annotations

import ast
import contextlib
import io
import re
import shlex
import textwrap
import tokenize
import traceback
from decimal import Decimal
from pathlib import Path

import numpy as np
import pytest

from bayesnb.inference import ConvergenceWarning

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = ROOT / "docs"

_FENCE = re.compile(r"^\s*```\s*(\S*)\s*$")  # indented too (inside a list item)
_SKIP = re.compile(r"<!--\s*readme-test:\s*skip\s*(?:\((?P<reason>[^)]*)\))?\s*-->")
_NUMBER = re.compile(r"(?<![\w.])[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?(?!\w)(?!\.\d)")


def page_paths() -> list[Path]:
    """README.md, then every Markdown page of ``docs/`` (not a build's or the gallery's)."""
    pages = sorted(p for p in DOCS.rglob("*.md")
                   if not {"_build", "auto_examples"} & set(p.relative_to(DOCS).parts))
    return [README, *pages]


class Block:
    """One fenced code block of a page: the page (its path from the repository root), its
    language, first line number and source, the skip reason (``None`` when it runs) and, for
    python, the ```text output block after it."""

    def __init__(self, lang: str, line: int, source: str, skip: str | None,
                 page: str = "README.md"):
        self.lang, self.line, self.source, self.skip = lang, line, source, skip
        self.page = page
        self.output: str | None = None

    @property
    def id(self) -> str:
        return f"{self.page}:{self.line}"


def parse_page(text: str, page: str = "README.md") -> list[Block]:
    """Every fenced block of ``text`` (the page ``page``), python blocks with their output
    blocks."""
    lines = text.splitlines()
    blocks: list[Block] = []
    i = 0
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        lang, start = m.group(1).lower(), i
        j = i + 1
        while j < len(lines) and not lines[j].lstrip().startswith("```"):
            j += 1
        before = start - 1
        while before >= 0 and not lines[before].strip():
            before -= 1
        skip = None
        if before >= 0:
            s = _SKIP.search(lines[before])
            if s:
                skip = (s.group("reason") or "").strip()
        source = textwrap.dedent("\n".join(lines[start + 1:j]) + "\n")
        blocks.append(Block(lang, start + 2, source, skip, page))
        i = j + 1
    # an output block follows its python block with only blank lines between
    for a, b in zip(blocks, blocks[1:], strict=False):
        if a.lang in ("python", "bash") and b.lang == "text":
            end = a.line + a.source.count("\n")  # the closing fence's line
            if not "".join(text.splitlines()[end:b.line - 2]).strip():
                a.output = b.source
    return blocks


def numbers(text: str) -> list[str]:
    """The decimal numbers standing alone in ``text``, as written."""
    return _NUMBER.findall(text)


def agrees(printed: str, quoted: str) -> bool:
    """Whether the printed number is the quoted one at the quoted digits."""
    q = Decimal(quoted)
    half = Decimal(5).scaleb(q.as_tuple().exponent - 1)
    return abs(Decimal(printed) - q) <= half


def mismatches(printed: str, quoted: str) -> str | None:
    """Why the numbers of ``printed`` are not those of ``quoted`` (``None`` when they are)."""
    got, want = numbers(printed), numbers(quoted)
    if len(got) != len(want):
        return f"quoted {len(want)} numbers {want}, printed {len(got)}: {got}"
    bad = [(w, g) for w, g in zip(want, got, strict=True) if not agrees(g, w)]
    if bad:
        return "quoted vs printed: " + ", ".join(f"{w} vs {g}" for w, g in bad)
    return None


def _prints_comments(source: str) -> dict[int, str]:
    """Line number -> the text after ``# prints`` in that line's comment."""
    out = {}
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.COMMENT:
            m = re.match(r"#\s*prints\b:?\s*(.*)", tok.string)
            if m:
                out[tok.start[0]] = m.group(1)
    return out


def run_block(block: Block, namespace: dict) -> list[str]:
    """Run ``block`` statement by statement in ``namespace``; the problems found (a failed
    ``# prints`` check, a failed output block), empty when the block agrees with its page."""
    tree = ast.parse(block.source)
    quoted = _prints_comments(block.source)
    last_on_line = {}
    for k, stmt in enumerate(tree.body):
        last_on_line[stmt.end_lineno] = k
    problems, everything = [], io.StringIO()
    for k, stmt in enumerate(tree.body):
        captured = io.StringIO()
        with contextlib.redirect_stdout(captured):
            if isinstance(stmt, ast.Expr):
                code = compile(ast.Expression(stmt.value), block.id, "eval")
                value = eval(code, namespace)  # noqa: S307 - the page's own code
            else:
                code = compile(ast.Module([stmt], type_ignores=[]), block.id, "exec")
                exec(code, namespace)  # noqa: S102 - the page's own code
                value = None
        printed = captured.getvalue()
        everything.write(printed)
        line = stmt.end_lineno
        if line in quoted and last_on_line[line] == k:
            shown = printed if printed or value is None else f"{value}\n"
            why = mismatches(shown, quoted[line])
            if why:
                code = ast.get_source_segment(block.source, stmt)[:60]
                problems.append(f"line {block.line + line - 1} ({code!r}): {why}")
    if block.output is not None:
        why = mismatches(everything.getvalue(), block.output)
        if why:
            problems.append(f"its output block: {why}")
    return problems


#: page (its path from the repository root) -> its fenced blocks
BLOCKS = {str(path.relative_to(ROOT)): parse_page(path.read_text(encoding="utf-8"),
                                                  str(path.relative_to(ROOT)))
          for path in page_paths()}
PYTHON = [b for blocks in BLOCKS.values() for b in blocks if b.lang == "python"]


def example_outputs() -> dict[tuple[str, tuple[str, ...]], str]:
    """The pages' quoted outputs of example scripts: a ```bash block holding one command
    ``python examples/NAME.py ARGS`` followed by a ```text block, as ``(NAME.py, ARGS) ->
    text``. ``tests/test_examples.py`` runs the examples (with these ARGS) and compares."""
    out = {}
    for block in (b for blocks in BLOCKS.values() for b in blocks):
        if block.lang != "bash" or block.output is None:
            continue
        words = shlex.split(block.source)
        if len(words) >= 2 and words[0] == "python" and words[1].startswith("examples/"):
            out[(words[1].removeprefix("examples/"), tuple(words[2:]))] = block.output
    return out


# ---------------------------------------------------------------------- placeholders
def _titanic_frame():
    from bayesnb.datasets import load_titanic

    X, y = load_titanic()
    return X.assign(Survived=y)


#: ``num_warmup`` and ``num_samples`` of a block's MCMC when no quoted number depends on it
SHORT_MCMC = 40


def _substitute(block: Block, paths: dict[str, str]) -> tuple[str, bool]:
    """The block's source as the test runs it, and whether its MCMC was shortened."""
    source = block.source
    for placeholder, local in paths.items():
        source = source.replace(placeholder, local)
    source = source.replace('Client("tcp://scheduler:8786")', "_readme_test_client()")
    quotes = block.output is not None or bool(_prints_comments(source))
    short = not quotes and re.search(r"num_(warmup|samples)=", source) is not None
    if short:
        source = re.sub(r"\bnum_(warmup|samples)=[\d_]+", r"num_\1=" + str(SHORT_MCMC), source)
    return source, short


@pytest.fixture(scope="module")
def page_run(tmp_path_factory):
    """A page's python blocks run once, in order, in one namespace of their own, when the first
    of them is tested: ``page_run(page)`` is block id -> the problems found (an exception's
    traceback, or failed number checks)."""
    done = {}

    def run(page: str) -> dict:
        if page not in done:
            done[page] = run_page(page, tmp_path_factory.mktemp("page"))[0]
        return done[page]

    return run


def run_page(page: str, work: Path) -> tuple[dict, dict]:
    """Run every python block of ``page`` (a key of ``BLOCKS``) in ``work``, in one namespace:
    (problems, (wall, CPU) seconds) by block id."""
    import os
    import time
    import warnings

    frame = _titanic_frame()
    parquet = work / "titanic_parquet"
    parquet.mkdir()
    for i, rows in enumerate(np.array_split(np.arange(len(frame)), 4)):
        frame.iloc[rows].reset_index(drop=True).to_parquet(parquet / f"part{i}.parquet")
    frame.rename(columns={"Survived": "y"}).to_csv(work / "big.csv", index=False)
    paths = {"s3://bucket/titanic/*.parquet": str(parquet / "*.parquet"),
             "s3://bucket/scores/": str(work / "scores")}
    clients = []

    def client():
        from dask.distributed import Client, LocalCluster

        cluster = LocalCluster(n_workers=1, threads_per_worker=2, processes=False,
                               dashboard_address=":0", silence_logs=50)  # any free port
        clients.append(cluster)
        clients.append(Client(cluster))
        return clients[-1]

    namespace = {"__name__": "__page__", "_readme_test_client": client}
    results, seconds = {}, {}
    old = os.getcwd()
    os.chdir(work)
    try:
        with warnings.catch_warnings():  # the suite's filters (warnings are errors), and:
            warnings.filterwarnings("ignore", r"(?s).*The inplace keyword in "
                                    r"DataFrame\.(re)?set_index")
            for block in BLOCKS[page]:
                if block.lang != "python" or block.skip is not None:
                    continue
                source, short = _substitute(block, paths)
                run = Block(block.lang, block.line, source, None, block.page)
                run.output = block.output
                start = time.perf_counter(), time.process_time()
                try:
                    with warnings.catch_warnings():
                        if short:
                            warnings.simplefilter("ignore", ConvergenceWarning)
                        results[block.id] = run_block(run, namespace)
                except Exception:  # noqa: BLE001 - reported by the block's test
                    results[block.id] = [traceback.format_exc(limit=-6)]
                seconds[block.id] = (time.perf_counter() - start[0],
                                     time.process_time() - start[1])
    finally:
        os.chdir(old)
        for resource in reversed(clients):
            resource.close()
    return results, seconds


@pytest.mark.parametrize("block", PYTHON, ids=[b.id for b in PYTHON])
def test_block_runs_and_prints_what_it_quotes(block, page_run):
    if block.skip is not None:
        pytest.skip(f"marked in {block.page}: {block.skip}")
    problems = page_run(block.page)[block.id]
    assert not problems, f"{block.id}:\n" + "\n".join(problems)


def test_quoted_example_runs_are_the_runs_the_example_tests_make():
    """Example scripts take too long to run here; tests/test_examples.py runs each with the
    arguments in its CASES and checks the numbers of a page's output block quoting that run."""
    from test_examples import CASES

    for (name, args), _ in example_outputs().items():
        assert name in CASES and tuple(CASES[name][0]) == args, (
            f"the docs quote `python examples/{name} {' '.join(args)}`, a run "
            f"tests/test_examples.py does not make (it runs {CASES.get(name, ('none',))[0]})")


def test_ci_runs_the_readme_test_command():
    """The README's two commands: one installs and runs the main job, one installs the test
    extras and runs the whole suite, and ``.ci/run`` ends with that second command verbatim."""
    bash = [b.source.strip() for b in BLOCKS["README.md"] if b.lang == "bash"]
    assert bash[:2] == ["pip install . && bayesnb compare titanic",
                        'pip install ".[test]" && python -m pytest -q -n auto --maxprocesses 2 '
                        "--dist loadfile"], bash
    ci = [line for line in (ROOT / ".ci" / "run").read_text().splitlines() if line.strip()]
    assert ci[-1] == bash[1], ci[-1]


def test_skipped_blocks_say_why():
    skipped = [b for b in PYTHON if b.skip is not None]
    assert all(b.skip for b in skipped), [b.id for b in skipped if not b.skip]


# ---------------------------------------------------------------------- the checker itself
def test_numbers_are_compared_at_the_quoted_digits():
    assert numbers("[[0.5859649 0.4140351]] 1st float32 -5492.5 1.2e-05 x2 (3 rows).") == \
        ["0.5859649", "0.4140351", "-5492.5", "1.2e-05", "3"]
    assert agrees("0.1114", "0.111") and not agrees("0.1116", "0.111")
    assert agrees("0.0296", "0.0296") and not agrees("0.0296", "0.029")
    assert agrees("1.23e-05", "1.2e-05") and agrees("2201.4", "2201")
    assert not agrees("2201.6", "2201")
    assert mismatches("learned alpha 0.1114", "0.111") is None
    assert "quoted 2 numbers" in mismatches("0.5", "0.5 0.6")


def test_parser_finds_prints_comments_output_blocks_and_skips():
    text = ("```python\nx = 1 + 1\nprint(x)  # prints 2\nx / 3  # prints 0.667\n```\n\n"
            "```text\n2\n```\n\n<!-- readme-test: skip (needs a GPU) -->\n```python\nboom\n```\n")
    first, output, skipped = parse_page(text, "docs/page.md")
    assert first.id == "docs/page.md:2"
    assert (first.lang, output.lang, skipped.skip) == ("python", "text", "needs a GPU")
    assert first.output == "2\n" and skipped.output is None
    assert run_block(first, {}) == []
    wrong = Block("python", 1, "print(0.5)  # prints 0.6\n", None)
    assert "0.6 vs 0.5" in run_block(wrong, {})[0]
