"""Fit the GPU families' rates (turbobc/engines/gpu/family_costs.py, ``FamilyRates``) to
``family_choice`` records (bench/family_choice.py): each row's device-loop seconds
(``sweep_seconds``) of the lanes and the frontiers forced, against the inputs the ``"auto"``
call predicted from (its facts' ``family_costs``: sources, n, m, depth). Least squares on the
logarithm of predicted over measured seconds, positive rates, both families at once with the
error of the predicted lanes / frontiers ratio weighed in (``--rank-weight``). Prints the
rates as Python, and per graph the measured and predicted seconds, the family the prediction
picks and what that pick costs over the best forced family.

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


def fit(rows: list[dict], rank_weight: float) -> tuple[dict, dict]:
    """Positive rates of both families at once: least squares over each row's log ratio of
    predicted to measured seconds of each family, plus ``rank_weight`` times the error of the
    predicted log ratio lanes / frontiers against the measured one (what ``"auto"`` decides
    from: a fit of each family alone ranked two meshes wrong, docs/deep-graphs.md). Returns
    the rates and the worst predicted / measured ratio, by family."""
    from scipy.optimize import least_squares

    terms = {family: np.array([features(family, row["inputs"]) for row in rows])
             for family in FAMILIES}
    seconds = {family: np.array([row["seconds"][family] for row in rows]) for family in FAMILIES}
    scale = {family: terms[family].mean(axis=0) for family in FAMILIES}
    split = terms[FAMILIES[0]].shape[1]

    def predicted(log_rates):
        parts = {FAMILIES[0]: log_rates[:split], FAMILIES[1]: log_rates[split:]}
        return {family: terms[family] @ (np.exp(parts[family]) / scale[family])
                for family in FAMILIES}

    def residuals(log_rates):
        p = predicted(log_rates)
        own = [np.log(p[f]) - np.log(seconds[f]) for f in FAMILIES]
        rank = (np.log(p["lanes"] / p["frontiers"])
                - np.log(seconds["lanes"] / seconds["frontiers"]))
        return np.concatenate(own + [rank_weight * rank])

    found = least_squares(residuals, np.zeros(2 * split))
    p = predicted(found.x)
    rates = {FAMILIES[0]: np.exp(found.x[:split]) / scale[FAMILIES[0]],
             FAMILIES[1]: np.exp(found.x[split:]) / scale[FAMILIES[1]]}
    worst = {f: float(np.exp(np.abs(np.log(p[f] / seconds[f]))).max()) for f in FAMILIES}
    return rates, worst


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("records", nargs="+", type=Path)
    parser.add_argument("--rank-weight", type=float, default=3.0,
                        help="weight of the lanes / frontiers ratio's error in the fit")
    args = parser.parse_args()
    rows = []
    for path in args.records:
        for row in json.loads(path.read_text())["rows"]:
            facts = row["facts_by_family"]
            if "family_costs" in facts.get("auto", {}):
                rows.append({"graph": row["graph"], "inputs": facts["auto"]["family_costs"],
                             "seconds": {f: facts[f]["sweep_seconds"] for f in FAMILIES},
                             "total": row["seconds_by_family"], "best": row["best_family"]})
    if not rows:
        raise SystemExit("no row has the auto call's family_costs (a record of bench/"
                         "family_choice.py from issue 47 on)")
    rates, worst = fit(rows, args.rank_weight)
    f, l_ = rates["frontiers"], rates["lanes"]
    print(f"FamilyRates(frontier_level={f[0]:.3g}, frontier_vertex={f[1]:.3g}, "
          f"frontier_edge={f[2]:.3g}, lanes_level_edge={l_[0]:.3g}, lanes_edge={l_[1]:.3g}, "
          f"lanes_batch_level={l_[2]:.3g})")
    print(f"worst predicted/measured ratio: frontiers {worst['frontiers']:.2f}, "
          f"lanes {worst['lanes']:.2f}")
    for row in rows:
        predicted = {fam: float(features(fam, row["inputs"]) @ rates[fam]) for fam in FAMILIES}
        pick = min(predicted, key=predicted.get)
        total = row["total"]
        print(f"{row['graph']:28s} " + "  ".join(
            f"{fam} {row['seconds'][fam]:8.4f}/{predicted[fam]:8.4f}" for fam in FAMILIES)
            + f"  pick {pick:9s} best {row['best']:9s} "
            f"pick/best {total[pick] / total[row['best']]:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
