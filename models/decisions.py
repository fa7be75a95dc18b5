"""From model outputs to what a user acts on: Score, Action, Position Weight, Tercile.

Everything here speaks of one thing: what a position decided after today's close can earn
over the holding horizon (HORIZON sessions from the next session's close), in excess of
the equal-weighted liquid universe over the same span (the risk model's label,
models/dataset.py).

- **Score** = 100 x the calibrated probability that the name beats the universe over the
  horizon, rounded to 0.1 (50 is a coin toss); the thresholds apply to the rounded Score.
- **Expected excess** (`held_edge`): the calibrated expected excess return over the
  horizon (models/calibration.py, the conditional mean of the label given the model's raw
  score, monotone in it). Score and expected excess come from the same raw score, so they
  rank names alike.
- **Round-trip cost**: the name's spread (quotes, else the estimate, market/liquidity.py;
  half in, half out) and two fees at the schedule's rate (market/costs.py, the one cost
  model the fills use). The book adds the square-root impact of the size it trades.
- **Action**:
  - LONG: an ordinary share that passes the entry gates and ranks among the day's
    `book_names` (BOOK_NAMES) best by expected excess (ties: the Score, then the raw
    score): what the book would hold if it started from cash today. (Where capacity holds
    those below their slots, the book also buys the next-ranked eligible names, HOLD here.) The mandate is to be
    invested (cash is not a position), so LONG is a rank, not a threshold: where the model
    claims no edge (a calibration window whose scores did not rank the outcomes gives every
    name the same expected excess) the book still holds the names the model ranks best,
    and the reason says how little is expected;
  - AVOID: the expected excess is below minus a round trip (the spread and two fees):
    holding it is expected to lose more than leaving it and entering an average name
    costs, so replacing it pays even before a better name is found;
  - HOLD otherwise. The book (portfolio/book.py) sells on AVOID only and replaces a held
    name only when a candidate's expected excess beats it by more than the pair's round
    trip: a name drifting out of the best BOOK_NAMES is kept (the hysteresis).
- `reason` says in words why each row has its Action.
- **Position Weight** (LONG only, else 0): the book's slot, TARGET_EXPOSURE / BOOK_NAMES.
- **Tercile**: names that pass the entry gates are ranked by expected excess (ties by
  the Score, then the raw score, then the symbol: the book's order) into TOP, MIDDLE and
  BOTTOM thirds; the rest are ILLIQUID.

HORIZON and the book's parameters were chosen on the NSE early span (2008-2011) alone and
run once on 2012-2021 (docs/portfolio.md, "The book"); the entry gates are the liquidity
rail's, defined once in market/liquidity.py.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pandas as pd

from market.costs import FALLBACK_SPREAD, round_trip_costs
from market.liquidity import SPREAD_DECIMALS, passes_entry_gates, spread_series

HORIZON = 5  # sessions a position is measured over (chosen on NSE 2008-2011, docs/portfolio.md)
BOOK_NAMES = 15  # names the AI book holds (chosen on NSE 2008-2011)
TARGET_EXPOSURE = 0.95  # share of equity the book keeps invested
DEFAULT_FEE_RATE = 0.005


class RowFacts(NamedTuple):
    """What `decide` reads of each row that no ranking moves: the spread (the fallback
    where none is known, rounded as the gates compare it), the round trip before impact,
    the entry gates' verdict and whether the name is an ordinary share. The null books
    decide one frame again under each null's ranking (portfolio/nulls.py `reassign`) with
    the facts read once."""

    spread: np.ndarray
    cost: np.ndarray
    liquid: np.ndarray
    ordinary: np.ndarray


def row_facts(day: pd.DataFrame, fee_rate: float = DEFAULT_FEE_RATE, liquidity_gates: bool = True) -> RowFacts:
    """`day`'s RowFacts: its spreads read once (market/liquidity.py `spread_series`) for
    the round trip (market/costs.py) and the gates. `liquidity_gates=False`: every row
    passes."""
    spread = spread_series(day)
    liquid = passes_entry_gates(day, spread) if liquidity_gates else pd.Series(True, index=day.index)
    ordinary = day["ordinary"].fillna(True).astype(bool).to_numpy() if "ordinary" in day else np.ones(len(day), bool)
    return RowFacts(
        spread.fillna(FALLBACK_SPREAD).round(SPREAD_DECIMALS).to_numpy(float),
        round_trip_costs(day, fee_rate, spread).to_numpy(float),
        liquid.to_numpy(bool),
        ordinary,
    )


def decide(
    day: pd.DataFrame,
    fee_rate: float = DEFAULT_FEE_RATE,
    liquidity_gates: bool = True,
    horizon: int = HORIZON,
    book_names: int = BOOK_NAMES,
    facts: RowFacts | None = None,
    explain: bool = True,
) -> pd.DataFrame:
    """Trading days' rows (p_up, expected_return, raw_score and the gate and spread inputs;
    terciles and weights are ranked within each `date` where the frame has one) in, with
    score, held_edge, round_trip_cost, action, reason, weight and tercile added.
    `liquidity_gates=False` ranks every instrument; nothing is ILLIQUID. Rows with an
    `ordinary` column False (preference shares, funds, debt) are never LONG or weighted.
    `facts`: the rows' `row_facts`, where the caller read them already (they must be of
    these rows, in this order, at this fee rate); `explain=False` leaves `reason` empty,
    for books nobody reads the reasons of (the null books)."""
    out = day.copy()
    spread, cost, liquid, ordinary = facts if facts is not None else row_facts(out, fee_rate, liquidity_gates)
    out["score"] = (100 * out["p_up"]).round(1)
    held = out["expected_return"].to_numpy(float) if "expected_return" in out else np.full(len(out), np.nan)
    out["held_edge"] = held
    out["round_trip_cost"] = cost
    out["tercile"] = _terciles(out, liquid)
    has_edge = ~np.isnan(held)
    avoid = has_edge & (np.round(np.nan_to_num(held) + cost, SPREAD_DECIMALS) < 0)
    rank = _book_rank(out, liquid & ordinary & has_edge & ~avoid)
    long_ = rank <= book_names
    out["action"] = np.where(long_, "LONG", np.where(avoid, "AVOID", "HOLD"))
    out["weight"] = np.where(long_, round(TARGET_EXPOSURE / book_names, 4), 0.0) if book_names > 0 else 0.0
    terms = _Terms(fee_rate, horizon, book_names)
    weighed = zip(out["action"], out["score"], held, cost, spread, out["tercile"], ordinary, rank)
    out["reason"] = [_reason(_Weighed._make(row), terms) for row in weighed] if explain else ""
    return out


class _Weighed(NamedTuple):
    """What one name's decision weighed, as its reason says it (a row of `decide`)."""

    action: str
    score: float
    held: float  # the expected excess (NaN: not calibrated yet)
    cost: float  # the round trip
    spread: float
    tercile: str
    ordinary: bool
    rank: int  # among the liquid names with an edge


class _Terms(NamedTuple):
    """The terms every reason of a day is written with: the fee rate, the horizon, the book's names."""

    fee_rate: float
    horizon: int
    book_names: int


def _terciles(out: pd.DataFrame, liquid: np.ndarray) -> np.ndarray:
    """TOP, MIDDLE or BOTTOM third of each day's liquid names in the book's order
    (`_best_first`); ILLIQUID for the rest."""
    tercile = np.full(len(out), "ILLIQUID", dtype=object)
    ranked, days = _best_first(out, np.flatnonzero(liquid))
    if not len(ranked):
        return tercile
    position, size = _places(days)
    share = (size - position) / size  # the best name's share is 1
    tercile[ranked] = np.where(share > 2 / 3, "TOP", np.where(share > 1 / 3, "MIDDLE", "BOTTOM"))
    return tercile


def _book_rank(out: pd.DataFrame, eligible: np.ndarray) -> np.ndarray:
    """Each eligible row's rank (1 = best) within its day (`_best_first`); a large number
    for the rest."""
    rank = np.full(len(out), np.iinfo(np.int64).max, dtype=np.int64)
    ranked, days = _best_first(out, np.flatnonzero(eligible))
    if len(ranked):
        rank[ranked] = _places(days)[0] + 1
    return rank


def _best_first(out: pd.DataFrame, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """`rows` in the one order the terciles and the book's rank share: by day, then best
    first by expected excess (none last), Score, raw score, and on an exact tie by symbol
    (the row's place without a `symbol` column), so a tie never ranks names one way for
    the book and the other for the terciles. Returns the rows and their sorted day codes."""
    day = pd.factorize(out["date"], sort=True)[0] if "date" in out else np.zeros(len(out), np.int64)
    raw = out["raw_score"].to_numpy(float) if "raw_score" in out else np.zeros(len(out))
    name = pd.factorize(out["symbol"], sort=True)[0] if "symbol" in out else np.arange(len(out))
    edge, score = out["held_edge"].to_numpy(float), out["score"].to_numpy(float)
    keys = (name[rows], -raw[rows], -score[rows], -edge[rows], day[rows])  # last is first; NaN sorts last
    ranked = rows[np.lexsort(keys)]
    return ranked, day[ranked]


def _places(days: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For sorted day codes: each row's place within its day (0 first) and its day's size."""
    starts = np.flatnonzero(np.r_[True, days[1:] != days[:-1]])
    sizes = np.diff(np.r_[starts, len(days)])
    return np.arange(len(days)) - np.repeat(starts, sizes), np.repeat(sizes, sizes)


def _reason(weighed: _Weighed, terms: _Terms) -> str:
    action, score, held, cost, spread, tercile, ordinary, rank = weighed
    fee_rate, horizon, book_names = terms
    if np.isnan(held):
        return "no calibrated expected excess yet (too little out-of-sample history): not bought on conviction alone"
    edge = f"expected excess {held:+.2%} over {horizon} sessions (Score {score:.1f})"
    if action == "LONG":
        return (
            f"{edge}, rank {rank} of the liquid names: among the {book_names} the book holds; a round trip costs "
            f"{cost:.2%} (spread {spread:.2%}, fees {2 * fee_rate:.2%})"
        )
    if action == "AVOID":
        return f"{edge} loses more than a round trip costs ({cost:.2%}): replacing it pays"
    if not ordinary:
        return f"{edge}; not an ordinary share: never bought"
    if tercile == "ILLIQUID":
        return f"{edge}; fails the entry liquidity gates"
    return f"{edge}, rank {rank} of the liquid names: the book holds the {book_names} best"


def decision_columns(row) -> dict:  # noqa: ANN001 - a namedtuple row of `decide`'s output
    """The stored columns of what a decision weighed (0014)."""
    held = float(row.held_edge)
    return {
        "held_edge": None if np.isnan(held) else held,
        "round_trip_cost": float(row.round_trip_cost),
        "decision_reason": row.reason,
    }


def prediction_columns(row) -> dict:  # noqa: ANN001 - a namedtuple row of `decide`'s output
    """The stored columns a scored row's prediction and decision share in `predictions` and
    `validation_predictions`: the score, its action and weight, and what the decision weighed."""
    return {
        "predicted_return": float(row.predicted_return),
        "p_up": float(row.p_up),
        "score": float(row.score),
        "action": row.action,
        "weight": float(row.weight),
        "tercile": row.tercile,
        "raw_score": float(row.raw_score),
        "expected_return": None if pd.isna(row.expected_return) else float(row.expected_return),
        **decision_columns(row),
    }
