"""The label, defined once: what a position decided after the close of day t can earn.

`with_labels(frame, horizon, label)` adds to a price frame (every instrument of the
market) the product's label, `forward_return`: the return from the close of t+1 (the
first price an order decided after t's close can get) to the close of t+1+H, minus the
equal-weighted liquid universe's over the same span (the ordinary shares that passed the
entry gates on day t, market/liquidity.py), t+1 and t+1+H being the market's sessions and
each close the name's last as of the session (`held_return`); `label_end`, the date it is
known (t+1+H);
`held_return`, the raw return; and `next_return`, close t to t+1. `label="next_day"` is the
reference label, close[t+1] / close[t] - 1 (mostly the bid-ask bounce of the close it
reads). It lives in market/, beside the gates and the spread it reads, so the model's
panel (models/dataset.py), the live record, the monitor and the simulator's stylised facts
(ingest/simulator/facts.py) read the same definition.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from market.liquidity import passes_entry_gates, with_spread_estimates
from market.windows import Runs

LABELS = ("excess", "next_day")


def with_labels(frame: pd.DataFrame, horizon: int, label: str = "excess") -> pd.DataFrame:
    """`frame` (symbol, date, close, volume and the spread inputs, every instrument of the
    market; `adv_20` and the spread estimate are added where missing) with the label
    columns of the module docstring: `forward_return`, `label_end`, `held_return`,
    `next_return`."""
    if label not in LABELS:
        raise ValueError(f"label must be one of {LABELS}, not {label!r}")
    frame = frame.sort_values(["symbol", "date"]).reset_index(drop=True)
    if "spread_estimate" not in frame and len(frame):
        frame = with_spread_estimates(frame)
    by = frame.groupby("symbol", sort=False)
    if "adv_20" not in frame:
        frame["adv_20"] = Runs.of(frame).rolling(frame["volume"], 20).mean()  # each name's own 20 sessions
    close = frame["close"].astype(float)
    frame["next_return"] = by["close"].shift(-1) / close - 1
    if label == "excess":
        frame["held_return"], frame["label_end"] = held_return(frame, horizon)
        frame["forward_return"] = frame["held_return"] - universe_held_return(frame)
    else:
        frame["held_return"] = np.nan
        frame["forward_return"] = by["close"].shift(-horizon) / close - 1
        frame["label_end"] = by["date"].shift(-horizon)
    return frame


def held_return(frame: pd.DataFrame, horizon: int) -> tuple[pd.Series, pd.Series]:
    """The excess label's raw held return of each row and the date it is known, on the
    market's sessions (every date of `frame`): from the instrument's close as of session
    t+1 to its close as of session t+1+`horizon`, known on that session (`label_end`, the
    same for every row of a day, so a day's universe mean reads no close after it); NaN
    where the frame ends before it. "As of" is the instrument's last close on or before
    the session: a file that leaves out a name's untraded days (the NSE's before 2009)
    carries its last trade, as the store's untraded bars do, instead of reaching past the
    session to the name's next row; a name whose rows stop (delisted, suspended) is held
    at its last close, so it stays in the label and its day's universe instead of
    dropping out of both. `frame` sorted by symbol, then date (as `with_labels` sorts it)."""
    session, sessions = pd.factorize(frame["date"], sort=True)
    code = Runs.of(frame).codes
    keys = code * (len(sessions) + 1) + session  # ascending: the frame is sorted by symbol, then date
    close = frame["close"].to_numpy(dtype=float)

    def close_as_of(target: np.ndarray) -> np.ndarray:
        return close[np.searchsorted(keys, code * (len(sessions) + 1) + target, side="right") - 1]

    end = session + 1 + horizon
    known = end < len(sessions)
    end = np.minimum(end, len(sessions) - 1)
    held = np.where(known, close_as_of(end) / close_as_of(np.minimum(session + 1, end)) - 1, np.nan)
    label_end = pd.Series(np.asarray(sessions)[end], index=frame.index).where(known)
    return pd.Series(held, index=frame.index), label_end


def universe_held_return(panel: pd.DataFrame, gates: np.ndarray | None = None) -> pd.Series:
    """Per row, the equal-weighted mean `held_return` of the day's liquid universe: the
    ordinary shares (the `ordinary` column, where the panel has one) that passed the entry
    gates on the row's date and whose held return is known. A day on which no name can
    pass them yet (a store younger than ADV_20's 20 sessions) uses every ordinary share
    with a known held return; NaN on a day with none. `gates`: `passes_entry_gates` of
    the panel's rows where the caller has it already (it reads no held return)."""
    known = panel["held_return"].notna().to_numpy().copy()
    if "ordinary" in panel:
        known &= panel["ordinary"].fillna(True).astype(bool).to_numpy()
    liquid = known & (passes_entry_gates(panel).to_numpy(bool) if gates is None else gates)
    by_day = panel["date"]
    liquid_means = panel["held_return"].where(liquid).groupby(by_day).mean()
    all_means = panel["held_return"].where(known).groupby(by_day).mean()
    means = liquid_means.where(liquid_means.notna(), all_means)
    return by_day.map(means).astype(float)
