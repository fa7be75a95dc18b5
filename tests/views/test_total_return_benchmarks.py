"""The track records' benchmarks are total returns on one share count: a split inside the
span is no loss (the bars on the last day's count, ADV_20 on each bar's own), the shares
outstanding reported before it are put on the same count (the cap-weighted index and
breadth's), and a dividend is reinvested at its ex-date's close."""

from __future__ import annotations

from datetime import date, timedelta

import pytest

from market.settings import Settings
from store import tables
from store.engine import service_engine
from store.history import append_history, current_rows
from views.breadth import _shares_outstanding
from views.track_record import benchmark_returns, null_benchmark

DAYS = [d for d in (date(2026, 9, 1) + timedelta(days=i) for i in range(80)) if d.weekday() < 5]
EX = DAYS[-10]  # inside October, the month the benchmark holds September's liquid names


def _bars(split: bool) -> list[dict]:
    bars = []
    for i, day in enumerate(DAYS):
        for symbol, close in (("AAA", 100.0 + i), ("BBB", 50.0 + (i % 3))):
            factor = 2.0 if split and symbol == "AAA" and day >= EX else 1.0
            price = close / factor
            bars.append(
                {"symbol": symbol, "trading_date": day, "open": price, "high": price, "low": price, "close": price,
                 "bid": price * 0.995, "ask": price * 1.005, "volume": 20_000 * factor, "source": "test"}
            )  # fmt: skip
    return bars


def _store(settings: Settings):
    engine = service_engine(settings)
    shares = [
        {"symbol": s, "report_date": DAYS[0], "shares_outstanding": 1_000_000, "source": "test"} for s in ("AAA", "BBB")
    ]
    with engine.begin() as conn:
        append_history(conn, tables.eod_prices, _bars(split=False))
        append_history(conn, tables.fundamentals, shares)
    return engine


def _split(engine) -> None:
    """AAA splits 2-for-1 from EX: its bars from then on the new count, and the notice."""
    with engine.begin() as conn:
        append_history(
            conn, tables.eod_prices, [b for b in _bars(split=True) if b["symbol"] == "AAA" and b["trading_date"] >= EX]
        )
        append_history(
            conn,
            tables.corporate_actions,
            [{"symbol": "AAA", "action_date": EX, "kind": "SPLIT", "amount": 2.0, "source": "test"}],
        )


def _benchmarks(engine):
    with engine.connect() as conn:
        series, source = benchmark_returns(conn, DAYS[-25:])
    return {name: float((1 + s).prod() - 1) for name, s in series.items()}, source


def test_a_split_inside_the_span_is_no_loss(settings: Settings) -> None:
    engine = _store(settings)
    plain, source = _benchmarks(engine)
    _split(engine)
    split, _ = _benchmarks(engine)
    assert source == "cap_weighted" and plain["equal_weight_liquid"] > 0
    assert split["equal_weight_liquid"] == pytest.approx(plain["equal_weight_liquid"], abs=1e-12)
    assert split["index"] == pytest.approx(plain["index"], abs=1e-12)


def test_shares_reported_before_a_split_are_read_on_the_days_count(settings: Settings) -> None:
    engine = _store(settings)
    _split(engine)
    with engine.connect() as conn:
        before, after = _shares_outstanding(conn, EX - timedelta(days=1)), _shares_outstanding(conn, EX)
    assert before == {"AAA": 1_000_000, "BBB": 1_000_000}
    assert after == {"AAA": 2_000_000, "BBB": 1_000_000}  # the report of 1 September, on the ex-date's count


def test_the_benchmarks_reinvest_dividends(settings: Settings) -> None:
    engine = _store(settings)
    plain, _ = _benchmarks(engine)
    with engine.begin() as conn:
        append_history(
            conn,
            tables.corporate_actions,
            [{"symbol": "BBB", "action_date": EX, "kind": "DIVIDEND", "amount": 5.0, "source": "test"}],
        )
    paid, _ = _benchmarks(engine)
    bbb = 50.0 + (DAYS.index(EX) % 3)
    # BBB is half the equal-weighted book: 5.0 a share reinvested at its close adds about half of 5 / close
    assert paid["equal_weight_liquid"] - plain["equal_weight_liquid"] == pytest.approx(0.5 * 5.0 / bbb, rel=0.2)
    assert paid["index"] > plain["index"] + 0.01
    # the null books' benchmark is on closes alone: the replayed books credit no dividends
    with engine.connect() as conn:
        priced = float((1 + null_benchmark(conn, DAYS[-25:])).prod() - 1)
    assert priced == pytest.approx(plain["equal_weight_liquid"], abs=1e-12)


def test_a_dividend_and_a_split_on_one_ex_date_reinvest_what_a_holder_receives(settings: Settings) -> None:
    """A dividend is paid on the shares held the night before: with a 2-for-1 split on the
    same ex-date, 5.00 a share is 2.50 a new share (what the books are credited). The
    benchmark reinvested 5.00 a new share, twice what a holder receives."""
    engine = _store(settings)
    _split(engine)
    plain, _ = _benchmarks(engine)
    with engine.begin() as conn:
        dividend = {"symbol": "AAA", "action_date": EX, "kind": "DIVIDEND", "amount": 5.0, "source": "test"}
        append_history(conn, tables.corporate_actions, [dividend])
    paid, _ = _benchmarks(engine)
    with engine.connect() as conn:
        bars = current_rows(conn, tables.eod_prices, where=[tables.eod_prices.c.symbol == "AAA"])
    close = next(float(r["close"]) for r in bars if r["trading_date"] == EX)  # on the new count
    # AAA is half the equal-weighted book: 2.50 a new share reinvested adds about half of 2.5 / close
    assert paid["equal_weight_liquid"] - plain["equal_weight_liquid"] == pytest.approx(0.5 * 2.5 / close, rel=0.2)


def test_an_ex_date_a_name_did_not_trade_on_is_no_gain_until_it_trades(settings: Settings) -> None:
    """BBB does not trade on its 5.00 dividend's ex-date nor the day after: its close carried
    over the ex-date is read less the dividend (the exchange's reference price, as a book
    holding it is valued), so the benchmarks return on the ex-date what they return without
    the notice, and the equal-weighted one the day after too (the index weighs BBB at its
    reference capitalisation from the ex-date); they gained about half of 5 / close on the
    ex-date and gave it back when BBB traded again, a dividend counted twice in between."""
    engine = service_engine(settings)
    untraded = (EX, DAYS[DAYS.index(EX) + 1])
    shares = [
        {"symbol": s, "report_date": DAYS[0], "shares_outstanding": 1_000_000, "source": "test"} for s in ("AAA", "BBB")
    ]
    with engine.begin() as conn:
        bars = [b for b in _bars(split=False) if not (b["symbol"] == "BBB" and b["trading_date"] in untraded)]
        append_history(conn, tables.eod_prices, bars)
        append_history(conn, tables.fundamentals, shares)
    with engine.connect() as conn:
        plain, _ = benchmark_returns(conn, DAYS[-25:])
    with engine.begin() as conn:
        dividend = {"symbol": "BBB", "action_date": EX, "kind": "DIVIDEND", "amount": 5.0, "source": "test"}
        append_history(conn, tables.corporate_actions, [dividend])
    with engine.connect() as conn:
        paid, source = benchmark_returns(conn, DAYS[-25:])
    assert source == "cap_weighted"
    for name, days in (("equal_weight_liquid", untraded), ("index", untraded[:1])):
        for day in days:
            assert paid[name][day] == pytest.approx(plain[name][day], abs=1e-12), (name, day)
        assert float((1 + paid[name]).prod()) > float((1 + plain[name]).prod()), name  # reinvested once it trades
