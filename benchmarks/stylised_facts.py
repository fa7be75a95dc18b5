"""Stylised facts: the simulated market beside the real NSE Kenya daily files.

Prints each fact (ingest/simulator/facts.py defines them) measured on the simulator (the
default market, seed 7 and 60 instruments, over its 260 trading days to 2026-11-20) beside
the NSE figure, the tolerance and pass/fail, then the spread estimates by liquidity tier
(ADV_20 band) side by side: median Abdi-Ranaldo over 20 and 60 traded sessions,
Corwin-Schultz, the day's range, the share of zero AR readings, and the simulator's quoted
spread (the NSE files have no quotes); then the multi-week cross-sectional predictability
(the mean daily rank IC of past returns, size and volatility with the product's H = 10
label, liquid names) on the NSE files beside the simulator's (the default market over its
whole span on six seeds, averaged); the last line is one JSON object.

The NSE figures come from the committed table ingest/simulator/stylised_facts.json, so the
comparison runs on a clone without ../shared. With --write the NSE files are measured
again and the table rewritten (source, period, sample sizes, definitions, tolerances).

    python benchmarks/stylised_facts.py [--write] [--nse DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
SHARED_DATA = Path(os.environ.get("MARKETINTEL_SHARED_DATA", ROOT.parent / "shared" / "data"))
TABLE = ROOT / "ingest" / "simulator" / "stylised_facts.json"
SOURCE = (
    "NSE Kenya daily files (../shared/data/nse-kenya/daily; kwoshvick/NSE-Stock-Price-Crawler "
    "at 1b03878ab3c5addf9ee1fe54d7c60216b03d51b7, MIT)"
)


def measure_nse(folder: Path) -> dict:
    """The table written to stylised_facts.json: the facts of the NSE files under `folder`
    with where they come from, the period, the sample sizes, definitions and tolerances."""
    from ingest.importers.formats import nse_daily_frame
    from ingest.simulator.facts import (
        DEFINITIONS,
        PREDICTABILITY_DEFINITIONS,
        PREDICTABILITY_HORIZON,
        PREDICTABILITY_TOLERANCE,
        SPREAD_TIER_DEFINITION,
        TOLERANCES,
        predictability_facts,
        spread_tiers,
        stylised_facts,
    )
    from market.liquidity import MIN_ADV

    prices = nse_daily_frame(folder, ordinary=True)  # the label's universe: ordinary shares
    measured = stylised_facts(prices, adv_gate=MIN_ADV)
    predictability = predictability_facts(prices, adv_gate=MIN_ADV)
    return {
        "source": SOURCE,
        "period": [str(prices["date"].min()), str(prices["date"].max())],
        "adv_gate_shares": MIN_ADV,
        "facts": {name: round(measured[name], 6) for name in TOLERANCES},
        "n": {k: measured[k] for k in ("instrument_days", "instruments", "moved_pairs", "close_location_days")},
        "tolerances": TOLERANCES,
        "definitions": DEFINITIONS,
        "spread_tiers": spread_tiers(prices),
        "spread_tier_definition": SPREAD_TIER_DEFINITION,
        "predictability": {name: round(predictability[name], 6) for name in PREDICTABILITY_DEFINITIONS},
        "predictability_n": {"days": predictability["days"], "rows": predictability["rows"]},
        "predictability_horizon": PREDICTABILITY_HORIZON,
        "predictability_tolerance": PREDICTABILITY_TOLERANCE,
        "predictability_definitions": PREDICTABILITY_DEFINITIONS,
        "produced_by": "python benchmarks/stylised_facts.py --write",
    }


def main() -> None:
    from ingest.simulator.facts import (
        PREDICTABILITY_SEEDS,
        SIM_DAYS,
        SIM_END,
        SPREAD_TIER_TOLERANCE,
        compare,
        simulated_facts,
        simulated_predictability,
        simulated_prices,
        spread_tiers,
    )
    from market.liquidity import MIN_ADV

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="measure the NSE files and rewrite the table")
    parser.add_argument("--nse", default=str(SHARED_DATA / "nse-kenya" / "daily"))
    args = parser.parse_args()
    if args.write:
        if not Path(args.nse).is_dir():
            raise SystemExit(f"error: no NSE daily files at {args.nse} (set --nse or MARKETINTEL_SHARED_DATA)")
        TABLE.write_text(json.dumps(measure_nse(Path(args.nse)), indent=2) + "\n")
        print(f"wrote {TABLE.relative_to(ROOT)}")
    table = json.loads(TABLE.read_text())
    started = time.perf_counter()
    simulated = simulated_facts(adv_gate=MIN_ADV)
    seconds = time.perf_counter() - started
    sim_tiers = spread_tiers(simulated_prices())
    rows = compare(simulated, table["facts"], table["tolerances"])
    print(
        f"NSE {table['period'][0]}..{table['period'][1]}, {table['n']['instruments']} instruments, "
        f"{table['n']['instrument_days']} instrument-days | simulated: seed 7, 60 instruments, {SIM_DAYS} days "
        f"to {SIM_END}, {simulated['instrument_days']} instrument-days ({seconds:.1f}s)"
    )
    print(f"{'fact':<32}{'NSE':>10}{'simulated':>11}{'diff':>9}{'tolerance':>11}  result")
    for r in rows:
        print(
            f"{r['fact']:<32}{r['nse']:>10.4f}{r['simulated']:>11.4f}{r['diff']:>+9.4f}{r['tolerance']:>11.3f}  "
            f"{'pass' if r['passes'] else 'FAIL'}"
        )
    print(
        f"\nspread estimates by ADV_20 band, medians in % (NSE | simulated; AR60 tolerance "
        f"{SPREAD_TIER_TOLERANCE:.1%}): {table['spread_tier_definition']}"
    )
    print(
        f"{'tier':<8}{'days':>8}{'AR20':>7}{'AR60':>7}{'CS60':>7}{'range':>7}{'AR0':>6} |"
        f"{'days':>7}{'AR20':>7}{'AR60':>7}{'CS60':>7}{'range':>7}{'AR0':>6}{'quoted':>8}  AR60"
    )
    tier_rows = []
    for tier, nse in table["spread_tiers"].items():
        sim = sim_tiers[tier]
        passes = abs(sim["ar60"] - nse["ar60"]) <= SPREAD_TIER_TOLERANCE
        tier_rows.append({"tier": tier, "nse": nse, "simulated": sim, "ar60_passes": passes})
        print(
            f"{tier:<8}{nse['days']:>8}{_pct(nse['ar20'])}{_pct(nse['ar60'])}{_pct(nse['cs60'])}{_pct(nse['range'])}"
            f"{_pct(nse['ar60_zero_share'], 6, 0)} |{sim['days']:>7}{_pct(sim['ar20'])}{_pct(sim['ar60'])}"
            f"{_pct(sim['cs60'])}{_pct(sim['range'])}{_pct(sim['ar60_zero_share'], 6, 0)}{_pct(sim['quoted'], 8)}  "
            f"{'pass' if passes else 'FAIL'}"
        )
    started = time.perf_counter()
    predictability = simulated_predictability(adv_gate=MIN_ADV)
    predictability_seconds = time.perf_counter() - started
    tolerance = table["predictability_tolerance"]
    print(
        f"\nmulti-week predictability: mean daily rank IC with the H = {table['predictability_horizon']} excess "
        f"label, names with ADV_20 >= {MIN_ADV:,} (NSE: {table['predictability_n']['days']} days | simulated: "
        f"seeds {', '.join(map(str, PREDICTABILITY_SEEDS))}, 60 instruments, whole span, averaged; "
        f"{predictability_seconds:.1f}s)"
    )
    print(f"{'signal':<26}{'NSE':>9}{'simulated':>11}{'diff':>9}{'tolerance':>11}  result  per seed")
    ic_rows = []
    for name, nse in table["predictability"].items():
        sim = predictability[name]
        passes = abs(sim - nse) <= tolerance
        seeds = " ".join(f"{f[name]:+.3f}" for f in predictability["seeds"].values())
        ic_rows.append({"signal": name, "nse": nse, "simulated": sim, "diff": sim - nse, "passes": passes})
        print(
            f"{name:<26}{nse:>+9.4f}{sim:>+11.4f}{sim - nse:>+9.4f}{tolerance:>11.3f}  "
            f"{'pass' if passes else 'FAIL'}    {seeds}"
        )
    print(
        json.dumps(
            {
                "predictability": ic_rows,
                "spread_tiers": tier_rows,
                "benchmark": "stylised_facts",
                "nse_period": table["period"],
                "simulated_days": SIM_DAYS,
                "simulated_end": str(SIM_END),
                "facts": rows,
                "passed": sum(r["passes"] for r in rows),
                "total": len(rows),
                "simulate_seconds": round(seconds, 2),
            }
        )
    )


def _pct(value: float | None, width: int = 7, decimals: int = 2) -> str:
    return f"{'-':>{width}}" if value is None else f"{value * 100:>{width}.{decimals}f}"


if __name__ == "__main__":
    main()
