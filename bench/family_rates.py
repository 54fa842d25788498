"""Fit the GPU families' rates (turbobc/engines/gpu/family_costs.py, ``FamilyRates``) to
``family_choice`` records (bench/family_choice.py): each row's device-loop seconds
(``sweep_seconds``) of the lanes and the frontiers forced, against the inputs the ``"auto"``
call predicted from (its facts' ``family_costs``: sources, n, m, depth). Least squares on the
logarithm of predicted over measured seconds, positive rates. Prints the rates as Python, and
per graph the measured and predicted seconds, the family the prediction picks and what that
pick costs over the best forced family.

Usage: python bench/family_rates.py bench/results/family_choice-*.json
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from turbobc.engines.gpu.family_costs import LANES_BATCH  # noqa: E402

FAMILIES = ("frontiers", "lanes")


def features(family: str, inputs: dict) -> np.ndarray:
    """The work terms of ``family`` (family_costs.py's formulas, each rate's factor)."""
    s, n, m, d = inputs["sources"], inputs["n"], inputs["m"], max(inputs["depth"], 1)
    if family == "frontiers":
        return np.array([s * d, s * n, s * m], dtype=np.float64)
    return np.array([s * d * m, s * m, np.ceil(s / LANES_BATCH) * d], dtype=np.float64)


def fit(rows: list[tuple[np.ndarray, float]]) -> tuple[np.ndarray, float]:
    """Positive rates minimising the squared log ratio of predicted to measured seconds, and
    the worst ratio either way."""
    from scipy.optimize import least_squares

    terms = np.array([f for f, _ in rows])
    seconds = np.array([s for _, s in rows])
    scale = terms.mean(axis=0)

    def residuals(log_rates):
        return np.log(terms @ (np.exp(log_rates) / scale)) - np.log(seconds)

    found = least_squares(residuals, np.zeros(terms.shape[1]))
    return np.exp(found.x) / scale, float(np.exp(np.abs(found.fun)).max())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("records", nargs="+", type=Path)
    args = parser.parse_args()
    rows = []
    for path in args.records:
        rows += [row for row in json.loads(path.read_text())["rows"]
                 if "family_costs" in row["facts_by_family"].get("auto", {})]
    if not rows:
        raise SystemExit("no row has the auto call's family_costs (a record of bench/"
                         "family_choice.py from issue 47 on)")
    rates, worst = {}, {}
    for family in FAMILIES:
        samples = [(features(family, row["facts_by_family"]["auto"]["family_costs"]),
                    row["facts_by_family"][family]["sweep_seconds"]) for row in rows]
        rates[family], worst[family] = fit(samples)
    f, l_ = rates["frontiers"], rates["lanes"]
    print(f"FamilyRates(frontier_level={f[0]:.3g}, frontier_vertex={f[1]:.3g}, "
          f"frontier_edge={f[2]:.3g}, lanes_level_edge={l_[0]:.3g}, lanes_edge={l_[1]:.3g}, "
          f"lanes_batch_level={l_[2]:.3g})")
    print(f"worst predicted/measured ratio: frontiers {worst['frontiers']:.2f}, "
          f"lanes {worst['lanes']:.2f}")
    for row in rows:
        inputs = row["facts_by_family"]["auto"]["family_costs"]
        predicted = {fam: float(features(fam, inputs) @ rates[fam]) for fam in FAMILIES}
        pick = min(predicted, key=predicted.get)
        total = row["seconds_by_family"]
        print(f"{row['graph']:28s} " + "  ".join(
            f"{fam} {row['facts_by_family'][fam]['sweep_seconds']:8.4f}/{predicted[fam]:8.4f}"
            for fam in FAMILIES)
            + f"  pick {pick:9s} best {row['best_family']:9s} "
            f"pick/best {total[pick] / total[row['best_family']]:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
