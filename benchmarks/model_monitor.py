"""The model monitor's input-drift checks replayed over simulated years (docs/monitoring.md):
how often a stable market raises a false ALERT, and how many trading days after a change
the monitor reaches ALERT.

Three replays of the same seeded 60-name market, each a 250-day reference (standing in for
the validation record) followed by a monitored year of 250 trading days, every day the
checks of `models/monitor.input_checks` over the pooled window and the persistence rule
of `models/monitor.persist`, exactly as `t1_monitor` runs them:

- `stable`: the calibrated market (regime `nse`) throughout;
- `switch`: the same market until mid-year, then the `--switch-to` regime (default `bear`:
  the market factor drifts down 0.5% a day), its prices rescaled to join the old ones;
- `broken`: the stable market with the layer-1 input broken to 0.5 for every name from
  mid-year (a feed that gives a constant).

It replays the 14 inputs only (layer 1 = the empirical fallback, no text, so the two
sentiment inputs are constant): the Score and the live-record checks need the risk model
retrained along the year, which `tests/pipeline/test_monitor.py` drives through T1 instead.

    python benchmarks/model_monitor.py [--seed 7] [--switch-to bear|liquid|limit]

The last line is one JSON object: false ALERTs (breaches that reached the ALERT state) per
year on the stable run, the delay in trading days from the switch and from the broken feed
to the first ALERT state (null: never), and the wall time.
"""
from __future__ import annotations

import argparse
import json
import time
from datetime import date

import pandas as pd

WARMUP, REFERENCE, MONITORED = 30, 250, 250
PRICE_COLUMNS = ["close", "bid", "ask", "high", "low"]


def market_prices(regime: str, seed: int, days: int) -> pd.DataFrame:
    from ingest.simulator.market import SIM_END, SimulatedMarket, price_history

    market = SimulatedMarket(seed=seed, size=60, regime=regime, end=SIM_END)
    return price_history(market, market.days[days - 1], days)


def spliced(before: pd.DataFrame, after: pd.DataFrame, switch: date) -> pd.DataFrame:
    """`before` up to the day before `switch`, then `after`, each name's prices rescaled so
    that its first close after the switch continues from its last close before it."""
    head = before[before["date"] < switch]
    tail = after[after["date"] >= switch].copy()
    last = head.sort_values("date").groupby("symbol")["close"].last()
    anchor = after[after["date"] < switch].sort_values("date").groupby("symbol")["close"].last()
    ratio = tail["symbol"].map(last / anchor).fillna(1.0)
    for column in PRICE_COLUMNS:
        tail[column] = tail[column] * ratio
    return pd.concat([head, tail], ignore_index=True)


def replay(prices: pd.DataFrame, change_at: int | None, broken_input: str | None = None) -> dict:
    from models.dataset import build_panel
    from models.features import FEATURE_NAMES
    from models.monitor import ALERT, Thresholds, input_checks, persist

    t = Thresholds()
    panel = build_panel(prices, 1)
    dates = sorted(panel["date"].unique())
    reference_days = dates[WARMUP:WARMUP + REFERENCE]
    monitored = dates[WARMUP + REFERENCE:WARMUP + REFERENCE + MONITORED]
    panel["traded"] = panel["volume"].fillna(0) > 0
    if broken_input:
        panel.loc[panel["date"] >= monitored[change_at], broken_input] = 0.5
    frame = panel[["symbol", "date", "traded", *FEATURE_NAMES]]
    reference = frame[frame["date"].isin(reference_days)]
    cache: dict = {}
    history: dict[str, list] = {}
    previous: dict[str, str] = {}
    breaches, first_alert, alert_days = 0, None, 0
    for i, day in enumerate(monitored):
        window = dates[dates.index(day) - t.window_days + 1:dates.index(day) + 1]
        checks = persist(input_checks(reference, frame[frame["date"].isin(window)], day, t, cache), history, t, day)
        for c in checks:
            if c.state == ALERT and previous.get(c.check_name) != ALERT:
                breaches += 1  # a check entering the ALERT state: one alert sent
            previous[c.check_name] = c.state
            history[c.check_name] = [(day, c.level, c.since)] + history.get(c.check_name, [])[:60]
        if any(c.state == ALERT for c in checks):
            alert_days += 1
            if first_alert is None and (change_at is None or i >= change_at):
                first_alert = i
    return {"alert_breaches": breaches, "alert_days": alert_days,
            "delay_days": None if change_at is None or first_alert is None else first_alert - change_at}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--switch-to", choices=["bear", "liquid", "limit"], default="bear")
    args = parser.parse_args()
    started = time.perf_counter()
    days = WARMUP + REFERENCE + MONITORED
    stable = market_prices("nse", args.seed, days)
    dates = sorted(stable["date"].unique())
    middle = MONITORED // 2
    switch_day = dates[WARMUP + REFERENCE + middle]
    results = {"stable": replay(stable, None),
               "switch": replay(spliced(stable, market_prices(args.switch_to, args.seed, days), switch_day), middle),
               "broken": replay(stable, middle, broken_input="layer1_p_up")}
    print(f"{'run':<8} {'ALERT breaches':>15} {'ALERT days':>11} {'delay (trading days)':>21}")
    for name, r in results.items():
        print(f"{name:<8} {r['alert_breaches']:>15} {r['alert_days']:>11} {str(r['delay_days']):>21}")
    summary = {"seed": args.seed, "instruments": 60, "reference_days": REFERENCE, "monitored_days": MONITORED,
               "switch_to": args.switch_to, "switch_day": switch_day.isoformat(),
               "stable_false_alerts_per_year": round(results["stable"]["alert_breaches"] * 250 / MONITORED, 2),
               "stable_alert_days": results["stable"]["alert_days"],
               "switch_delay_days": results["switch"]["delay_days"], "broken_feed_delay_days": results["broken"]["delay_days"],
               "persistence_days": 3, "window_days": 20, "seconds": round(time.perf_counter() - started, 1)}
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
