"""Progress reporting for long runs (a tqdm bar on stderr, counted in sources)."""

from __future__ import annotations

from tqdm.auto import tqdm

__all__ = ["source_progress"]


def source_progress(total: int, enabled: bool, engine: str) -> tqdm:
    """A progress bar over ``total`` sources; silent (but still usable) when not ``enabled``.

    The bar shows sources done, rate and the estimated time left.
    """
    return tqdm(total=total, disable=not enabled, unit="src", desc=f"turbobc[{engine}]",
                dynamic_ncols=True, leave=True)
