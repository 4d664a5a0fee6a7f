"""The one progress bar helper (tqdm comes with NumPyro)."""

from __future__ import annotations


def progress_bar(total: int | None, enabled: bool, desc: str):
    """A tqdm bar over ``total`` steps, silent when ``enabled`` is false."""
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=desc, disable=not enabled, leave=False)
