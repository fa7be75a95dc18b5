"""The service's clock on a replayed market (MARKETINTEL_REPLAY_PATH): the replay's own
time, not the wall clock, so what lives on the market's clock (suggestions open until
their session's close, the latest closed day) reads as it would have then. The desk of a
serving process runs on it (`Desk.serving`), so every use case sees the same moment."""

from __future__ import annotations

from datetime import datetime
from datetime import time as dt_time
from typing import Any

from sqlalchemy import Engine, func, select

from market.clock import EXCHANGE_TZ, TradingCalendar, utc_now
from store import tables

REPLAY_MORNING = dt_time(7, 30)  # a replay's clock starts here on the session after its newest priced day


class ReplayClock:
    """It starts at 07:30 exchange time on the session after the store's newest priced day
    (T2's suggestions for that session are open, its close is ahead) and advances with the
    wall clock from the first time it is read; on a store without prices it is the wall
    clock."""

    def __init__(self, engine: Engine, calendar: TradingCalendar) -> None:
        self.engine, self.calendar = engine, calendar
        self._offset: Any = None

    def __call__(self) -> datetime:
        wall = utc_now()
        if self._offset is None:
            with self.engine.connect() as conn:
                newest = conn.execute(select(func.max(tables.eod_prices.c.trading_date))).scalar_one_or_none()
            if newest is None:
                return wall
            session = self.calendar.next_trading_day(newest)
            start = datetime.combine(session, REPLAY_MORNING, tzinfo=EXCHANGE_TZ).astimezone(wall.tzinfo)
            self._offset = start - wall
        return wall + self._offset
