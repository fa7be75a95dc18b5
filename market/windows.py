"""Per-instrument windows over a panel of many instruments in one pass.

A panel holds the rows of many instruments, sorted by instrument and then date (each
instrument's rows one run, oldest first). `Runs.of(panel)` finds where each instrument's run
starts; its methods shift, difference, accumulate and roll a column within each run, as the
same operation on one instrument's rows alone would, without a Python loop over the
instruments. The rolling windows are pandas' own (a window indexer that stops each window at
its run's first row), so every figure is the one pandas gives on one instrument's rows: the
same additions and removals in the same order, bit for bit. A frame without a `symbol`
column is one instrument.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from pandas.api.indexers import BaseIndexer


class _RunWindow(BaseIndexer):
    """The last `window_size` rows up to each row, none before its run's first row."""

    def __init__(self, run_start: np.ndarray, window_size: int) -> None:
        super().__init__(window_size=window_size)
        self.run_start = run_start

    def get_window_bounds(
        self,
        num_values: int = 0,
        min_periods: int | None = None,
        center: bool | None = None,
        closed: str | None = None,
        step: int | None = None,
    ) -> tuple[np.ndarray, np.ndarray]:
        end = np.arange(1, num_values + 1, dtype=np.int64)
        return np.maximum(end - self.window_size, self.run_start[:num_values]).astype(np.int64), end


@dataclass(frozen=True)
class Runs:
    """Where each instrument's run of rows starts in a panel sorted by instrument, then date."""

    run_start: np.ndarray  # per row: the position of the first row of its instrument
    codes: np.ndarray  # per row: its instrument's number (runs in order: 0, 1, ...)

    @classmethod
    def of(cls, panel: pd.DataFrame) -> Runs:
        """The runs of `panel` (one instrument when it has no `symbol` column). Raises
        ValueError when an instrument's rows are not one run."""
        n = len(panel)
        if "symbol" not in panel or n == 0:
            return cls(np.zeros(n, dtype=np.int64), np.zeros(n, dtype=np.int64))
        symbols = panel["symbol"].to_numpy()
        first = np.r_[True, symbols[1:] != symbols[:-1]]
        codes = np.cumsum(first) - 1
        if len(pd.unique(symbols)) != codes[-1] + 1:
            raise ValueError("the panel's rows are not sorted by instrument")
        return cls(np.maximum.accumulate(np.where(first, np.arange(n), 0)).astype(np.int64), codes)

    def _by(self, values: pd.Series) -> pd.core.groupby.SeriesGroupBy:
        return values.groupby(self.codes, sort=False)

    def shift(self, values: pd.Series, periods: int) -> pd.Series:
        """`values.shift(periods)` within each instrument's rows."""
        return self._by(values).shift(periods)

    def diff(self, values: pd.Series) -> pd.Series:
        """`values.diff()` within each instrument's rows."""
        return values - self.shift(values, 1)

    def cumsum(self, values: pd.Series) -> pd.Series:
        """`values.cumsum()` within each instrument's rows."""
        return self._by(values).cumsum()

    def rolling(self, values: pd.Series, window: int, min_periods: int | None = None) -> pd.core.window.Rolling:
        """`values.rolling(window, min_periods)` within each instrument's rows (by default
        a full window, as `rolling(window)`)."""
        needed = window if min_periods is None else min_periods
        return values.rolling(_RunWindow(self.run_start, window), min_periods=needed)

    def ewm_mean(self, values: pd.Series, alpha: float, min_periods: int) -> pd.Series:
        """`values.ewm(alpha=alpha, adjust=False, min_periods=min_periods).mean()` within
        each instrument's rows."""
        if self.codes.size == 0 or self.codes[-1] == 0:
            return values.ewm(alpha=alpha, adjust=False, min_periods=min_periods).mean()
        grouped = self._by(values).ewm(alpha=alpha, adjust=False, min_periods=min_periods).mean()
        return pd.Series(grouped.to_numpy(), index=values.index, name=values.name)
