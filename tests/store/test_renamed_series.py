"""A ticker change on a running store, as the model, the market's sessions and the
benchmarks read it (store/splits.py `joined`; docs/portfolio.md, "A name whose ticker
changed"): AAA trades as ZZZ from the ex-date. ZZZ's series takes in AAA's rows before the
ex-date (its momentum, its 20-day volume for the liquidity gates, its 60-day volatility
are there from its first day), AAA does not stop as a delisting in the equal-weighted
universe, and a read of a day before the ex-date sees AAA alone (point in time)."""

from __future__ import annotations

from datetime import date

import pytest
from sqlalchemy import Engine

from market.settings import Settings
from models.features import log_value_adv20, momentum_20, volatility_60
from portfolio.market import market_days
from store import tables
from store.engine import service_engine
from store.history import append_history
from store.panels import price_panel
from tests.portfolio.seed import CALENDAR, price_row
from views.track_record import null_benchmark

FIRST = date(2026, 7, 1)
SESSIONS = [CALENDAR.add_trading_days(FIRST, i) for i in range(90)]
EX = SESSIONS[80]  # ZZZ's first session: 80 of AAA's before it, 10 of ZZZ's from it


def _close(i: int) -> float:
    return round(100.0 + (i % 7) - 3 + 0.1 * i, 2)


@pytest.fixture
def renamed(settings: Settings) -> Engine:
    """AAA to EX, ZZZ from it (its first close 10% above AAA's last), BBB flat all along,
    and the RENAME action as the importer stores it on a running store."""
    engine = service_engine(settings)
    rows = []
    for i, day in enumerate(SESSIONS):
        close = _close(i) * (1.1 if i >= 80 else 1.0)
        rows.append(price_row("AAA" if i < 80 else "ZZZ", day, close, 30_000, close - 0.05, close + 0.05))
        rows.append(price_row("BBB", day, 10.0, 50_000, 9.99, 10.01))
    action = {"symbol": "AAA", "action_date": EX, "kind": "RENAME", "amount": None, "source": "import:ohlcv"}
    with engine.begin() as conn:
        append_history(conn, tables.eod_prices, rows)
        append_history(conn, tables.corporate_actions, [{**action, "detail": {"new_symbol": "ZZZ", "text": "test"}}])
    return engine


def test_the_models_panel_reads_one_series_under_the_new_symbol(renamed: Engine) -> None:
    with renamed.connect() as conn:
        after, before = price_panel(conn, SESSIONS[-1]), price_panel(conn, SESSIONS[79])
    assert set(after["symbol"]) == {"BBB", "ZZZ"}  # AAA's rows are ZZZ's history, not a name that stops
    assert len(after[after["symbol"] == "ZZZ"]) == 90
    assert set(before["symbol"]) == {"AAA", "BBB"}  # the day before the ex-date: ZZZ did not exist
    zzz = after[after["symbol"] == "ZZZ"].sort_values("date").reset_index(drop=True)
    last = zzz.index[-1]
    for feature in (momentum_20, log_value_adv20, volatility_60):
        assert pd_notna(feature(zzz).iloc[last]), feature.__name__
    assert momentum_20(zzz).iloc[last] == pytest.approx(zzz["close"].iloc[-1] / zzz["close"].iloc[-21] - 1)


def test_the_new_symbols_liquidity_gates_read_the_old_symbols_volume(renamed: Engine) -> None:
    with renamed.connect() as conn:
        asked = market_days(conn, SESSIONS[83], ["ZZZ"])["ZZZ"]
        everyone = market_days(conn, SESSIONS[83])
    assert asked.adv_20 == pytest.approx(30_000)  # 4 sessions under ZZZ: its ADV_20 is 20 sessions'
    assert "AAA" not in everyone and everyone["ZZZ"].adv_20 == pytest.approx(30_000)


def test_the_equal_weighted_universe_carries_the_company_through_its_rename(renamed: Engine) -> None:
    """On the ex-date ZZZ's first close is 10% above AAA's last, BBB is flat: the universe
    of the two returns about half of it (a month's members are held from its start, so
    their weights drift). Read as two series AAA stopped (a 0 carried) and ZZZ was
    no member (no ADV_20 for 20 sessions): 0."""
    with renamed.connect() as conn:
        universe = null_benchmark(conn, SESSIONS[70:])
    moved = _close(80) * 1.1 / _close(79) - 1
    assert universe[EX] == pytest.approx(moved / 2, rel=0.05)


def test_the_universes_total_return_pays_the_old_symbols_dividend(renamed: Engine) -> None:
    """A dividend AAA paid before the ex-date is the company's: the equal-weighted universe
    on total return (the track records' benchmark) reinvests it, as it would under one
    ticker. Read by the new symbol alone, it was never paid."""
    from tests.portfolio.clients import announce_action
    from views.track_record import benchmark_returns

    announce_action(renamed, "AAA", "DIVIDEND", 5.0, SESSIONS[75], "test")
    with renamed.connect() as conn:
        total, _ = benchmark_returns(conn, SESSIONS[70:])
        closes = null_benchmark(conn, SESSIONS[70:])
    paid = total["equal_weight_liquid"][SESSIONS[75]] - closes[SESSIONS[75]]
    assert paid == pytest.approx(5.0 / _close(74) / 2, rel=0.1)


def test_the_cap_weighted_index_weighs_the_company_by_the_shares_reported_under_its_old_symbol(renamed: Engine) -> None:
    """The service's capitalisation-weighted index (no published levels stored) weighs the
    company on ZZZ's first day by the shares AAA reported: ZZZ's first close is 10% above
    AAA's last, BBB flat, equal capitalisations, so about half of it. Without them ZZZ had
    no shares and left the index."""
    from views.track_record import benchmark_returns

    report = {"period_end": None, "eps": None, "book_value_per_share": None, "dividend_yield": None}
    rows = [
        {**report, "symbol": s, "report_date": SESSIONS[60], "shares_outstanding": n, "market_cap": None}
        for s, n in (("AAA", 1_000_000), ("BBB", 10_000_000))
    ]
    with renamed.begin() as conn:
        append_history(conn, tables.fundamentals, [{**r, "source": "test"} for r in rows])
    with renamed.connect() as conn:
        total, source = benchmark_returns(conn, SESSIONS[70:])
    moved = _close(80) * 1.1 / _close(79) - 1
    assert source == "cap_weighted" and total["index"][EX] == pytest.approx(moved / 2, rel=0.1)


def test_the_days_breadth_index_weighs_the_new_symbol_by_the_old_symbols_shares(renamed: Engine) -> None:
    """GET /api/market/breadth's capitalisation-weighted index: ZZZ is weighed by the shares
    AAA reported (it was left out, `index_excluded`, until ZZZ reported its own)."""
    from views.breadth import market_breadth

    report = {"period_end": None, "eps": None, "book_value_per_share": None, "dividend_yield": None}
    rows = [
        {**report, "symbol": s, "report_date": SESSIONS[60], "shares_outstanding": n, "market_cap": None}
        for s, n in (("AAA", 1_000_000), ("BBB", 10_000_000))
    ]
    listed = [("AAA", FIRST, EX), ("BBB", FIRST, None), ("ZZZ", EX, None)]
    instruments = [
        {"symbol": s, "name": s, "board": "MAIN", "listed_on": on, "delisted_on": off, "source": "test"}
        for s, on, off in listed
    ]
    with renamed.begin() as conn:
        append_history(conn, tables.fundamentals, [{**r, "source": "test"} for r in rows])
        append_history(conn, tables.instruments, instruments)
    with renamed.connect() as conn:
        breadth = market_breadth(conn, CALENDAR, SESSIONS[-1], SESSIONS[-1])
    assert breadth["index_constituents"] == 2 and breadth["index_excluded"] == [], breadth


def test_the_old_symbols_predictions_and_sentiment_meet_the_new_symbols_bars(renamed: Engine) -> None:
    """What T1 stored under AAA before the ex-date (a prediction, a sentiment composite) is
    read under ZZZ once the series is ZZZ's, so the live record, the calibration and the
    monitor find its label, and the sentiment feature its row (read apart, AAA's rows
    matched no bar of the panel)."""
    from pipeline.scoring import stored_scores
    from store.panels import rows_on_series, sentiment_composites
    from tests.portfolio.test_track_record_nulls import _predict_split_names

    with renamed.begin() as conn:
        composite = {"symbol": "AAA", "trading_date": SESSIONS[78], "method": "m", "score": 0.4, "item_count": 1}
        append_history(conn, tables.sentiment_composites, [{**composite, "inputs": []}])
    _predict_split_names(renamed, SESSIONS[78])  # N0..N5: not renamed, read as they are
    with renamed.begin() as conn:
        aaa = {**conn.execute(tables.predictions.select().limit(1)).mappings().one(), "symbol": "AAA"}
        append_history(conn, tables.predictions, [{k: v for k, v in aaa.items() if k not in ("id", "recorded_at")}])
    with renamed.connect() as conn:
        scores = stored_scores(conn, SESSIONS[0], SESSIONS[-1], 5)
        live = rows_on_series(conn, [aaa], SESSIONS[-1])  # the live record's and the monitor's read
        sentiment = sentiment_composites(conn, SESSIONS[-1], "m")
        before = sentiment_composites(conn, SESSIONS[79], "m")
    assert "ZZZ" in set(scores["symbol"]) and "AAA" not in set(scores["symbol"])
    assert [r["symbol"] for r in live] == ["ZZZ"]
    assert list(sentiment["symbol"]) == ["ZZZ"] and list(before["symbol"]) == ["AAA"]


def pd_notna(value: float) -> bool:
    return value == value
