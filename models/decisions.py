"""From model outputs to what a user acts on: Score, Action, Position Weight, Tercile.

- Score = 100 x calibrated P(up | the close moves), rounded to 0.1 (50 is a coin toss);
  the thresholds below apply to the rounded Score, the number users see. The Score is the
  model's conviction and nothing else.
- The decisions read what a position is expected to earn over the horizon the portfolio
  actually holds, net of what it costs to get in and out:
  - **held edge**: the mean return, on the closes, from the session after the decision
    (the first an order decided after the close can fill in) to HORIZON sessions later,
    of the earlier out-of-sample predictions with a Score in the same band (EDGE_BANDS)
    whose exit close was already known, over the last EDGE_WINDOW trading days, among
    names that passed the entry gates (`edge_tables`, point in time: the backtest, the
    validation record and the live stage fit it the same way). A band with fewer than
    MIN_BAND_ROWS such rows has no edge, and a name in it is not bought.
  - **round-trip cost**: the name's spread (quotes, else the range proxy; half in, half
    out) and two brokerage fees (market/costs.py, the one cost model the fills use; the
    executor adds the square-root impact of the size it trades and sizes so the edge
    still clears it).
- Action: LONG when Score >= LONG_SCORE and the held edge exceeds the round-trip cost;
  AVOID when the Score is at or below AVOID_SCORE and the held edge is negative, or when
  the held edge is below minus the cost of leaving (half the spread and one fee: holding
  is expected to lose more than selling costs); HOLD otherwise. Without a held edge (too
  little history) nothing is LONG and AVOID is Score <= AVOID_SCORE. The gap between the
  two rules is the hysteresis: a held name whose Score drifts between 45 and the LONG
  line, or whose edge no longer clears a new round trip, is kept (the executor sells on
  AVOID only), so a small change neither sells nor re-buys it.
- `reason` says in words why each row has its Action, e.g. "edge +0.40% over 10 sessions
  below round-trip cost 1.90% (spread 0.90%, fees 1.00%)" for a Score above the LONG line
  that is not LONG.
- Position Weight (LONG only, else 0): a quarter of the Kelly fraction of the net edge,
  net / (volatility_20^2 x HORIZON) / 4, capped at 15%, then scaled down if needed so the
  weights sum to at most 1.
- Tercile: instruments that pass the entry liquidity gates are ranked by Score (ties by
  predicted return) into TOP, MIDDLE and BOTTOM thirds; the rest are ILLIQUID.

HORIZON, the bands and the window were fixed on the NSE early span (2008-2011) alone and
confirmed on 2012-2021 (docs/portfolio.md, "From signal to money").

The entry gates used here are the liquidity rail's per-instrument gates, defined once in
market/liquidity.py with the spread and its no-quotes proxy: ADV_20 >= 5,000 shares,
volume today > 0 and a spread <= 5%.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

import numpy as np
import pandas as pd

from market.costs import FALLBACK_SPREAD, round_trip_costs
from market.liquidity import SPREAD_DECIMALS, passes_entry_gates, spread_series

LONG_SCORE, AVOID_SCORE = 55.0, 45.0
MAX_WEIGHT = 0.15
KELLY_FRACTION = 0.25
HORIZON = 1  # sessions the held edge is measured over (chosen on NSE 2008-2011, docs/portfolio.md)
EDGE_WINDOW = 500  # trading days of exits the held edge is measured over
EDGE_BANDS = (0.0, 40.0, 45.0, 50.0, 55.0, 60.0, 65.0, 70.0, 75.0, 100.1)
MIN_BAND_ROWS = 50
DEFAULT_FEE_RATE = 0.005


@dataclass(frozen=True)
class EdgeTable:
    """The held edge by Score band, as of one day (what `decide` reads)."""

    horizon: int
    means: tuple[float, ...]  # one per band, NaN where the band has too few rows
    rows: tuple[int, ...]

    def lookup(self, scores: pd.Series | np.ndarray) -> np.ndarray:
        band = np.clip(np.searchsorted(EDGE_BANDS, np.asarray(scores, float), side="right") - 1, 0, len(self.means) - 1)
        return np.asarray(self.means, float)[band]

    def as_dict(self) -> dict:
        return {
            "horizon": self.horizon,
            "bands": [
                {
                    "from": EDGE_BANDS[i],
                    "to": min(EDGE_BANDS[i + 1], 100.0),
                    "edge": None if np.isnan(m) else round(m, 6),
                    "rows": n,
                }
                for i, (m, n) in enumerate(zip(self.means, self.rows))
            ],
        }


def held_returns(frame: pd.DataFrame, horizon: int = HORIZON) -> pd.DataFrame:
    """Per row of a price frame (symbol, date, close): the return from the next row's
    close to the close `horizon` rows after that, and the date that exit close is known
    (`known_on`); NaN where the history does not reach it."""
    ordered = frame[["symbol", "date", "close"]].sort_values(["symbol", "date"], kind="stable")
    by = ordered.groupby("symbol", sort=False)
    entry = by["close"].shift(-1)
    exit_ = by["close"].shift(-(horizon + 1))
    out = ordered[["symbol", "date"]].copy()
    out["held_return"] = exit_ / entry - 1
    out["known_on"] = by["date"].shift(-(horizon + 1))
    return out


def edge_tables(
    rows: pd.DataFrame, days: list, horizon: int = HORIZON, window: int = EDGE_WINDOW
) -> dict[date, EdgeTable]:
    """The held edge as each of `days` could know it. `rows`: scored rows with score,
    held_return, known_on and liquid (passed the entry gates on the day scored). A row
    counts for day d once its exit close is known before d, and for the `window` trading
    days (of `days` and the rows' own dates) after that."""
    usable = rows[rows["liquid"].astype(bool) & rows["held_return"].notna() & rows["known_on"].notna()]
    calendar = sorted(set(days) | set(usable["known_on"]))
    position = {d: i for i, d in enumerate(calendar)}
    nbands = len(EDGE_BANDS) - 1
    sums, counts = np.zeros((len(calendar) + 1, nbands)), np.zeros((len(calendar) + 1, nbands))
    if not usable.empty:
        band = np.clip(np.searchsorted(EDGE_BANDS, usable["score"].to_numpy(float), side="right") - 1, 0, nbands - 1)
        at = usable["known_on"].map(position).to_numpy(int)
        np.add.at(sums, (at + 1, band), usable["held_return"].to_numpy(float))
        np.add.at(counts, (at + 1, band), 1)
    sums, counts = sums.cumsum(axis=0), counts.cumsum(axis=0)
    out = {}
    for d in days:
        end = position[d]  # rows known strictly before d: calendar positions < end
        start = max(0, end - window)
        n = counts[end] - counts[start]
        total = sums[end] - sums[start]
        means = np.where(n >= MIN_BAND_ROWS, total / np.maximum(n, 1), np.nan)
        out[d] = EdgeTable(horizon, tuple(float(m) for m in means), tuple(int(x) for x in n))
    return out


def edge_rows(frame: pd.DataFrame, horizon: int = HORIZON) -> pd.DataFrame:
    """The rows `edge_tables` reads, from a frame of rows with the price and gate columns
    and a score (or p_up): the walk-forward's predictions, or a price panel with the
    stored records' Scores beside it (rows without one only lend their closes)."""
    held = held_returns(frame, horizon)
    out = frame[["symbol", "date"]].copy()
    out["score"] = frame["score"].to_numpy() if "score" in frame else (100 * frame["p_up"]).round(1).to_numpy()
    out["liquid"] = passes_entry_gates(frame).to_numpy()
    out = out.merge(held, on=["symbol", "date"], how="left")
    return out[out["score"].notna()]


def decide(
    day: pd.DataFrame, edge: EdgeTable | None = None, fee_rate: float = DEFAULT_FEE_RATE, liquidity_gates: bool = True
) -> pd.DataFrame:
    """One trading day's rows (p_up, predicted_return, volatility_20 and the gate and
    spread inputs) in, with score, held_edge, round_trip_cost, action, reason, weight and
    tercile added. `edge`: the held-edge table as of the day (None: no LONG).
    `liquidity_gates=False` ranks every instrument into terciles (the backtest's no-rails
    comparison); nothing is ILLIQUID."""
    out = day.copy()
    out["score"] = (100 * out["p_up"]).round(1)
    horizon = edge.horizon if edge is not None else HORIZON
    held = edge.lookup(out["score"]) if edge is not None else np.full(len(out), np.nan)
    spread = spread_series(out).fillna(FALLBACK_SPREAD).round(SPREAD_DECIMALS).to_numpy(float)
    cost = round_trip_costs(out, fee_rate).to_numpy(float)
    leave = spread / 2 + fee_rate
    net = np.round(held - cost, SPREAD_DECIMALS)  # compared at 0.01 basis point, as the gates compare spreads
    has_edge = ~np.isnan(held)
    long_ = (out["score"].to_numpy() >= LONG_SCORE) & has_edge & (net > 0)
    low = out["score"].to_numpy() <= AVOID_SCORE
    avoid = np.where(has_edge, (low & (held < 0)) | (np.round(held + leave, SPREAD_DECIMALS) < 0), low)
    out["held_edge"] = held
    out["round_trip_cost"] = cost
    out["action"] = np.where(long_, "LONG", np.where(avoid, "AVOID", "HOLD"))
    out["reason"] = [
        _reason(a, s, h, c, sp, fee_rate, horizon)
        for a, s, h, c, sp in zip(out["action"], out["score"], held, cost, spread)
    ]
    vol = out["volatility_20"].fillna(out["volatility_20"].median()).fillna(0.02).clip(lower=0.005).to_numpy(float)
    kelly = np.where(long_, KELLY_FRACTION * np.maximum(net, 0) / (vol**2 * horizon), 0.0)
    weight = np.minimum(np.nan_to_num(kelly), MAX_WEIGHT)
    if weight.sum() > 1:
        weight = weight / weight.sum()
    out["weight"] = np.round(weight, 4)
    liquid = passes_entry_gates(out) if liquidity_gates else pd.Series(True, index=out.index)
    out["tercile"] = "ILLIQUID"
    if liquid.any():
        # Rank by Score, ties broken by the predicted return: a model with little
        # discrimination calibrates many names to the same Score.
        ordered = out.loc[liquid].sort_values(["score", "predicted_return"], kind="stable").index
        share = pd.Series(np.arange(1, len(ordered) + 1) / len(ordered), index=ordered)
        out.loc[ordered, "tercile"] = np.where(share > 2 / 3, "TOP", np.where(share > 1 / 3, "MIDDLE", "BOTTOM"))
    return out


def _reason(action: str, score: float, held: float, cost: float, spread: float, fee_rate: float, horizon: int) -> str:
    parts = f"spread {spread:.2%}, fees {2 * fee_rate:.2%}"
    if np.isnan(held):
        if action == "AVOID":
            return f"Score {score:.1f} at or below {AVOID_SCORE:.0f}; no held-return record yet to weigh an edge"
        return "no held-return record yet for this Score band: not bought on conviction alone"
    edge = f"edge {held:+.2%} over {horizon} sessions"
    if action == "LONG":
        return f"{edge} clears round-trip cost {cost:.2%} ({parts})"
    if action == "AVOID":
        return f"{edge} loses more than leaving costs ({spread / 2 + fee_rate:.2%})"
    if score >= LONG_SCORE:
        return f"{edge} below round-trip cost {cost:.2%} ({parts})"
    if score < LONG_SCORE and held - cost > 0:
        return f"{edge} clears its cost but the Score is under {LONG_SCORE:.0f}"
    return f"{edge}: neither clears round-trip cost {cost:.2%} nor loses more than leaving costs"


def decision_columns(row) -> dict:  # noqa: ANN001 - a namedtuple row of `decide`'s output
    """The stored columns of what a decision weighed (0014)."""
    held = float(row.held_edge)
    return {
        "held_edge": None if np.isnan(held) else held,
        "round_trip_cost": float(row.round_trip_cost),
        "decision_reason": row.reason,
    }
