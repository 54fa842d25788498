"""What each GPU family would take for a run, predicted from the graph's facts: how ``"auto"``
chooses between the lanes and the frontiers families (turbobc/engines/gpu/engine.py,
``choose_family``), and what the run's facts show beside the choice (``family_costs``).

For a run of S sources over a graph of n vertices and m stored edges whose depth estimate is D
(``Graph.depth_estimate``, the eccentricity of the vertex of largest degree):

- **frontiers** (a source per block, its frontier a queue): each source costs a level's latency
  per level and its reads per vertex and edge it reaches, the device running a few hundred at
  once: ``λ S D + μ_n S n + μ_m S m``;
- **lanes** (32 sources a warp): every level of a batch passes over the edges for every unit of
  32 sources, and each batch pays its levels' launches: ``β S D m + γ S m + φ ⌈S / 16,384⌉ D``.

The rates (:data:`RATES`) were fitted to the seconds of the device loops (``sweep_seconds``) in
a ``bench/results/family_choice-*.json`` record, least squares on the logarithm of the predicted
over the measured seconds, each family alone (``bench/family_rates.py`` now fits both at once
with the error of their ratio weighed in; docs/deep-graphs.md, "Choosing the family", says why
the first fit is kept). On the H200 record
``family_choice-20261129T090626Z`` (22 graphs: meshes, roads, social, Kronecker-like)
the predictions are within 2.3x (frontiers) and 3.6x (lanes) of the measured loops and the
cheaper prediction is the faster family on every graph but those whose two families are
within 6% of each other.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

__all__ = ["FamilyRates", "RATES", "predicted_seconds", "LANES_BATCH"]

LANES_BATCH = 16384
"""The lanes family's usual batch on a large device (``Tuning.max_batch``'s default): the
batches a run's levels are launched for."""


@dataclass(frozen=True)
class FamilyRates:
    """Seconds per unit of work of the two families on one device (module docstring).

    Attributes
    ----------
    frontier_level, frontier_vertex, frontier_edge : float
        λ, μ_n, μ_m: seconds per (source, level), per (source, vertex) and per (source,
        stored edge) of a frontiers run, the device's blocks in flight included.
    lanes_level_edge, lanes_edge, lanes_batch_level : float
        β, γ, φ: seconds per (source, level, stored edge), per (source, stored edge) and per
        level of a batch of a lanes run.
    record : str
        The record the rates were fitted to.
    """

    frontier_level: float
    frontier_vertex: float
    frontier_edge: float
    lanes_level_edge: float
    lanes_edge: float
    lanes_batch_level: float
    record: str


RATES = FamilyRates(frontier_level=5.36e-9, frontier_vertex=2.31e-10, frontier_edge=8.85e-12,
                    lanes_level_edge=7.84e-13, lanes_edge=1.01e-13, lanes_batch_level=4.14e-4,
                    record="family_choice-20261129T090626Z (one H200)")


def predicted_seconds(sources: int, n: int, m: int, depth: int,
                      rates: FamilyRates = RATES) -> dict[str, float]:
    """The predicted seconds of the device loop of a run of ``sources`` sources, by family
    (``"lanes"``, ``"frontiers"``), for a graph of ``n`` vertices, ``m`` stored edges and
    depth estimate ``depth`` (module docstring)."""
    s, d = float(sources), float(max(depth, 1))
    frontiers = s * (rates.frontier_level * d + rates.frontier_vertex * n
                     + rates.frontier_edge * m)
    lanes = (s * m * (rates.lanes_level_edge * d + rates.lanes_edge)
             + rates.lanes_batch_level * math.ceil(s / LANES_BATCH) * d)
    return {"lanes": lanes, "frontiers": frontiers}
