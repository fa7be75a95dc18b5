"""The model monitor's input checks replayed over simulated years and over a real market's
history (docs/monitoring.md): how often a stable market raises a false ALERT, how many
trading days after a change the monitor reaches ALERT, and which periods of a real market
it flags.

Simulated (the default): per seed, four replays of the same 60-name market, each a
250-day reference (standing in for the validation record) followed by a monitored year of
250 trading days, every day the checks of `models/monitor.input_checks` (the 14 inputs
and the share of names that traded) and the persistence rule of `models/monitor.persist`,
exactly as `t1_monitor` runs them, with the settings' default thresholds:

- `stable`: the calibrated market (regime `nse`) throughout;
- `bear` and `liquid`: the same market until mid-year, then that regime (`bear`: the
  market factor drifts down 0.5% a day; `liquid`: every name trades every day, no flat
  closes), its prices rescaled to join the old ones;
- `broken`: the stable market with the layer-1 input broken to 0.5 for every name from
  mid-year (a feed that gives a constant).

Real history (`--nse [FOLDER]` or `--ohlcv FILE`): each calendar year with 250 trading
days before it is monitored against those 250 days (the validation record a yearly
retrain would leave), and the runs of days with any check in the ALERT state are printed
with the checks that were. The prices are read as model_quality.py and backtest.py read
them (`load_market`): adjusted for the corporate-actions file beside them (or `--actions`)
and, with `--price-limit` and `--adjust-implied`, for moves the market's limit forbids,
so a split or a rename is not read as a drift of the inputs; the report is printed.

It replays the inputs only (layer 1 = the empirical fallback, no text, so the two
sentiment inputs are constant): the Score and the live-record checks need the risk model
retrained along the year, which `tests/pipeline/test_monitor.py` drives through T1 instead.
`--cost N` times the `t1_monitor` stage itself on an N-name simulated store (backfilled,
validation record built, one live T1 day), the figure of the issue's cost target.

    python benchmarks/model_monitor.py [--seeds 7 11 13] [--nse [FOLDER] | --ohlcv FILE] [--cost 100]
        [--actions FILE] [--price-limit F] [--adjust-implied]

The last line is one JSON object: per seed the false ALERTs (breaches that reached the
ALERT state) per year on the stable run and the delay in trading days from each change
to the first ALERT state (null: never); per real year the flagged periods; the stage's
seconds; the wall time.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from datetime import date
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

# The reference begins once every input has a value: the longest input window is
# volatility_60's 60 returns (61 closes), so from the 61st day (index 60). With fewer days
# the reference's first days lack that input for every name: a shorter reference for it,
# and its missing-feed rule off (the reference's largest missing share 100%).
WARMUP, REFERENCE, MONITORED = 60, 250, 250
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


def monitor(frame: pd.DataFrame, reference_days: list, monitored: list, dates: list) -> list[tuple]:
    """(day, {check: state}) for each monitored day, the checks and persistence as
    t1_monitor runs them (`frame`: symbol, date, traded and the 14 inputs)."""
    from market.settings import get_settings
    from models.monitor import Thresholds, input_checks, persist

    t = Thresholds.of(get_settings())
    reference = frame[frame["date"].isin(reference_days)]
    by_date = {d: i for i, d in enumerate(dates)}
    cache: dict = {}
    history: dict[str, list] = {}
    out = []
    for day in monitored:
        j = by_date[day]
        current = frame[frame["date"].isin(dates[max(0, j - max(t.windows) + 1) : j + 1])]
        checks = persist(input_checks(reference, current, day, t, cache), history, t, day)
        for c in checks:
            history[c.check_name] = [(day, c.level, c.since)] + history.get(c.check_name, [])[:60]
        out.append((day, {c.check_name: c.state for c in checks}))
    return out


def input_frame(prices: pd.DataFrame) -> tuple[pd.DataFrame, list]:
    from models.dataset import build_panel
    from models.features import FEATURE_NAMES

    panel = build_panel(prices, 1, label="next_day")  # the inputs only: no label is read
    panel["traded"] = panel["volume"].fillna(0) > 0
    return panel[["symbol", "date", "traded", *FEATURE_NAMES]], sorted(panel["date"].unique())


def replay(prices: pd.DataFrame, change_at: int | None, broken_input: str | None = None) -> dict:
    from models.monitor import ALERT

    frame, dates = input_frame(prices)
    reference_days = dates[WARMUP : WARMUP + REFERENCE]
    monitored = dates[WARMUP + REFERENCE : WARMUP + REFERENCE + MONITORED]
    if broken_input:
        frame = frame.copy()
        frame.loc[frame["date"] >= monitored[change_at], broken_input] = 0.5
    previous: dict[str, str] = {}
    breaches, first_alert, alert_days, first_checks = 0, None, 0, []
    for i, (_, states) in enumerate(monitor(frame, reference_days, monitored, dates)):
        for name, state in states.items():
            if state == ALERT and previous.get(name) != ALERT:
                breaches += 1  # a check entering the ALERT state: one alert sent
            previous[name] = state
        alerting = sorted(n for n, s in states.items() if s == ALERT)
        if alerting:
            alert_days += 1
            if first_alert is None and (change_at is None or i >= change_at):
                first_alert, first_checks = i, alerting
    return {
        "alert_breaches": breaches,
        "alert_days": alert_days,
        "first_checks": first_checks,
        "delay_days": None if change_at is None or first_alert is None else first_alert - change_at,
    }


def simulated(seed: int) -> dict:
    days = WARMUP + REFERENCE + MONITORED
    stable = market_prices("nse", seed, days)
    dates = sorted(stable["date"].unique())
    middle = MONITORED // 2
    switch_day = dates[WARMUP + REFERENCE + middle]
    results = {
        "stable": replay(stable, None),
        "bear": replay(spliced(stable, market_prices("bear", seed, days), switch_day), middle),
        "liquid": replay(spliced(stable, market_prices("liquid", seed, days), switch_day), middle),
        "broken": replay(stable, middle, broken_input="layer1_p_up"),
    }
    print(f"seed {seed}, change on {switch_day}")
    print(f"{'run':<8} {'ALERT breaches':>15} {'ALERT days':>11} {'delay (trading days)':>21}  first ALERT")
    for name, r in results.items():
        print(
            f"{name:<8} {r['alert_breaches']:>15} {r['alert_days']:>11} {str(r['delay_days']):>21}  "
            f"{', '.join(r['first_checks'])}"
        )
    return {
        "seed": seed,
        "switch_day": switch_day.isoformat(),
        "stable_false_alerts_per_year": round(results["stable"]["alert_breaches"] * 250 / MONITORED, 2),
        "stable_alert_days": results["stable"]["alert_days"],
        "bear_delay_days": results["bear"]["delay_days"],
        "liquid_delay_days": results["liquid"]["delay_days"],
        "broken_feed_delay_days": results["broken"]["delay_days"],
    }


def real_market(prices: pd.DataFrame) -> dict:
    """Each calendar year against the 250 trading days before it: the runs of days with a
    check in the ALERT state."""
    from models.monitor import ALERT

    frame, dates = input_frame(prices)
    years: dict[str, dict] = {}
    for year in sorted({d.year for d in dates}):
        inside = [d for d in dates if d.year == year]
        before = [d for d in dates if d.year < year][-REFERENCE:]
        if len(before) < REFERENCE or not inside:
            continue
        periods: list[dict] = []
        for day, states in monitor(frame, before, inside, dates):
            alerting = {n for n, s in states.items() if s == ALERT}
            if not alerting:
                continue
            last = periods[-1] if periods else None
            if last and dates.index(day) - dates.index(date.fromisoformat(last["to"])) == 1:
                last["to"], last["days"] = day.isoformat(), last["days"] + 1
                last["checks"] = sorted(set(last["checks"]) | alerting)
            else:
                periods.append({"from": day.isoformat(), "to": day.isoformat(), "days": 1, "checks": sorted(alerting)})
        years[str(year)] = {
            "trading_days": len(inside),
            "alert_days": sum(p["days"] for p in periods),
            "periods": periods,
        }
        print(
            f"{year}: {years[str(year)]['alert_days']:>3} ALERT days of {len(inside)}"
            + "".join(
                f"\n    {p['from']}..{p['to']} ({p['days']} d): {', '.join(c.split(':')[-1] for c in p['checks'])}"
                for p in periods
            )
        )
    return years


def stage_cost(instruments: int) -> dict:
    """Seconds of the t1_monitor stage on one live day of an `instruments`-name simulated
    SQLite store (250 days backfilled, a 100-day validation record, T1's features and
    predictions of the day run first): the first run, which also builds the reference
    from the validation record (once per record), and the best of three more, an
    ordinary day's cost (a re-run writes nothing new)."""
    import os
    import tempfile

    from market.clock import default_calendar
    from market.settings import get_settings
    from pipeline.backfill import backfill
    from pipeline.runner import run_stage
    from pipeline.validation import build_validation_record
    from store.engine import build_engine, service_engine
    from store.migrations import upgrade

    cal = default_calendar()
    day = date(2026, 11, 20)
    with tempfile.TemporaryDirectory() as folder:
        url = f"sqlite:///{Path(folder) / 'cost.db'}"
        os.environ.update(
            {
                "MARKETINTEL_DATABASE_URL": url,
                "MARKETINTEL_SIMULATOR_INSTRUMENTS": str(instruments),
                **{
                    f"MARKETINTEL_{k}_DIR": str(Path(folder) / k.lower()) for k in ("RUNS", "DATA", "MODELS", "SECRETS")
                },
            }
        )
        get_settings.cache_clear()
        settings = get_settings()
        upgrade(build_engine(url))
        engine = service_engine(settings)
        backfill(engine, settings, 250, day, with_text=False)
        with engine.begin() as conn:
            build_validation_record(conn, end=cal.previous_trading_day(day), days=100, min_train_days=100)
        for stage in ("t1_features", "t1_predict"):
            run_stage(stage, day, settings=settings)
        times = []
        for _ in range(4):
            started = time.perf_counter()
            run_stage("t1_monitor", day, settings=settings)
            times.append(time.perf_counter() - started)
    print(
        f"t1_monitor on {instruments} names: {min(times[1:]):.2f} s a day (best of {len(times) - 1}: "
        f"{', '.join(f'{x:.2f}' for x in times[1:])}); {times[0]:.2f} s the first day of a validation record"
    )
    return {
        "instruments": instruments,
        "t1_monitor_seconds": round(min(times[1:]), 2),
        "first_day_seconds": round(times[0], 2),
        "runs_seconds": [round(x, 2) for x in times],
    }


def main() -> None:
    from model_quality import SHARED_DATA, capital_arguments, capital_figures, capital_options, load_market

    from market.settings import get_settings
    from models.monitor import Thresholds

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, nargs="*", default=[7])
    parser.add_argument("--nse", nargs="?", const=str(SHARED_DATA / "nse-kenya" / "daily"), default=None)
    parser.add_argument("--ohlcv", default=None)
    parser.add_argument("--cost", type=int, default=None, metavar="N")
    capital_options(parser)  # market files' capital changes, as model_quality.py and backtest.py read them
    args = parser.parse_args()
    started = time.perf_counter()
    t = Thresholds.of(get_settings())  # the settings' thresholds (MARKETINTEL_MONITOR_* override them)
    summary: dict = {
        "windows_days": list(t.windows),
        "alert_margin": t.alert_margin,
        "persistence_days": t.persistence,
        "reference_days": REFERENCE,
    }
    if args.cost:
        summary["cost"] = stage_cost(args.cost)
    elif args.nse or args.ohlcv:
        source = Path(args.ohlcv or args.nse)
        if not source.exists():
            raise SystemExit(f"error: no market files at {source} (set --nse, --ohlcv or MARKETINTEL_SHARED_DATA)")
        summary["market"] = str(source)
        prices, capital = load_market(source, not args.ohlcv, *capital_arguments(args))
        for line in capital.lines():
            print(line, flush=True)
        summary["capital_changes"] = capital_figures(capital)
        summary["years"] = real_market(prices)
    else:
        summary["instruments"], summary["monitored_days"] = 60, MONITORED
        summary["seeds"] = [simulated(seed) for seed in args.seeds]
    summary["seconds"] = round(time.perf_counter() - started, 1)
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
