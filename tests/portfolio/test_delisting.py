"""A name that stops (issue 66, item 1): after the stated number of sessions without a row
a held position is delisted, the record says so with the date, it is valued by the rule
(nothing, conservatively, with its last close beside it) and out of the book's names, and
the statistics count the delisted positions, their position-days and their value under
each reading (portfolio/delisting.py, run by portfolio/backtest.py)."""

from __future__ import annotations

from datetime import date, timedelta

import pandas as pd
import pytest

from market.costs import FeeSchedule
from portfolio.backtest import run_backtest
from portfolio.book import Mandate
from portfolio.delisting import LAST_CLOSE, NOTHING, DelistingRule, Notice, Settlement

FEES = FeeSchedule()
BOOK = Mandate(names=2, rebalance_every=3)
START = 1_000_000
FIRST = date(2026, 1, 5)
STOPS_AFTER = 12  # LIQ's rows end after its 12th day


def panel(days: int = 40, back_on: int | None = None) -> pd.DataFrame:
    """LIQ and ALT are the LONG names, THD the next best (bought only when a slot frees),
    MID is AVOID. LIQ has no rows from day STOPS_AFTER on (until `back_on`, where given)."""
    rows = []
    for i in range(days):
        for symbol, p_up, edge in (("LIQ", 0.72, 0.06), ("ALT", 0.68, 0.05), ("THD", 0.6, 0.03), ("MID", 0.4, -0.04)):
            if symbol == "LIQ" and i >= STOPS_AFTER and (back_on is None or i < back_on):
                continue
            close = 10.0 + 0.05 * i
            rows.append(
                {
                    "symbol": symbol,
                    "date": FIRST + timedelta(days=i),
                    "close": close,
                    "volume": 400_000,
                    "adv_20": 400_000.0,
                    "bid": close * 0.995,
                    "ask": close * 1.005,
                    "high": close * 1.01,
                    "low": close * 0.99,
                    "p_up": p_up,
                    "expected_return": edge,
                    "predicted_return": edge,
                    "volatility_20": 0.02,
                }
            )
    return pd.DataFrame(rows)


def day(i: int) -> date:
    return FIRST + timedelta(days=i)


def test_a_name_whose_rows_end_is_delisted_after_the_stated_gap_and_the_record_says_so() -> None:
    rule = DelistingRule(after_sessions=5)
    result = run_backtest(panel(), START, FEES, "costed", BOOK, delisting=rule)
    bought = result.trades[(result.trades["symbol"] == "LIQ") & (result.trades["side"] == "BUY")]
    held = int(bought["quantity"].sum())
    assert held > 0 and "LIQ" not in set(result.trades.query("side == 'SELL'")["symbol"])
    last_row, delisted_on = day(STOPS_AFTER - 1), day(STOPS_AFTER - 1 + 5)  # the 5th session without a row
    [episode] = result.delistings
    assert (episode["symbol"], episode["quantity"], episode["last_row"], episode["delisted_on"]) == (
        "LIQ",
        held,
        last_row,
        delisted_on,
    )
    last_close = 10.0 + 0.05 * (STOPS_AFTER - 1)
    assert episode["last_close"] == pytest.approx(last_close) and episode["returned_on"] is None
    curve = result.curve.set_index("date")
    # before the gap reaches 5 sessions LIQ is carried at its last close (TRAPPED: out of
    # liquid equity); from the delisting on it is worth nothing and is no longer one of the names
    carried = curve.loc[day(STOPS_AFTER + 3)]
    assert carried["delisted"] == 0 and carried["equity"] - carried["liquid_equity"] >= held * last_close - 0.01
    gone = curve.loc[delisted_on]
    assert gone["delisted"] == 1 and gone["delisted_nothing"] == 0
    assert gone["delisted_last_close"] == pytest.approx(held * last_close)
    assert gone["equity"] == pytest.approx(gone["cash"] + gone["market_value"])
    # the freed slot is filled: THD, never bought while LIQ held its slot, is bought after
    thd = result.trades[(result.trades["symbol"] == "THD") & (result.trades["side"] == "BUY")]
    assert not thd.empty and thd["date"].min() > delisted_on
    kept = run_backtest(panel(), START, FEES, "costed", BOOK, delisting=DelistingRule(after_sessions=1000))
    assert "THD" not in set(kept.trades["symbol"]) and kept.delistings == []
    figures = result.figures["delisting"]
    days_delisted = (curve.index >= delisted_on).sum()
    assert (figures["positions"], figures["position_days"], figures["held_at_end"]) == (1, days_delisted, 1)
    assert figures["value_at_end"] == {NOTHING: 0.0, LAST_CLOSE: pytest.approx(held * last_close, abs=0.01)}
    final = curve["equity"].iloc[-1]
    assert figures["final_equity"][NOTHING] == pytest.approx(final, abs=0.01)
    assert figures["final_equity"][LAST_CLOSE] == pytest.approx(final + held * last_close, abs=0.01)
    assert figures["total_return"][NOTHING] == pytest.approx(final / START - 1, abs=1e-4)


def test_the_last_close_reading_keeps_the_value_out_of_liquid_equity_and_prints_nothing_beside_it() -> None:
    result = run_backtest(panel(), START, FEES, "costed", BOOK, delisting=DelistingRule(5, LAST_CLOSE))
    curve = result.curve.set_index("date")
    gone = curve.loc[day(STOPS_AFTER + 4)]
    assert gone["delisted"] == 1 and gone["market_value"] >= gone["delisted_last_close"] > 0
    assert gone["equity"] - gone["liquid_equity"] == pytest.approx(gone["delisted_last_close"], abs=0.01)
    figures = result.figures["delisting"]
    assert figures["final_equity"][LAST_CLOSE] == pytest.approx(curve["equity"].iloc[-1], abs=0.01)
    assert figures["final_equity"][NOTHING] < figures["final_equity"][LAST_CLOSE]


def test_a_corporate_action_value_is_what_a_delisted_position_is_worth_from_its_date() -> None:
    paid = Settlement("LIQ", day(STOPS_AFTER + 10), 7.5)
    result = run_backtest(panel(), START, FEES, "costed", BOOK, delisting=DelistingRule(5, NOTHING, (paid,)))
    curve = result.curve.set_index("date")
    held = result.delistings[0]["quantity"]
    assert curve.loc[day(STOPS_AFTER + 9), "delisted_nothing"] == 0
    assert curve.loc[day(STOPS_AFTER + 10), "delisted_nothing"] == pytest.approx(held * 7.5)
    assert result.figures["delisting"]["value_at_end"][NOTHING] == pytest.approx(held * 7.5)


def test_a_name_that_has_rows_again_is_the_books_again_and_the_record_says_when() -> None:
    result = run_backtest(panel(40, back_on=25), START, FEES, "costed", BOOK, delisting=DelistingRule(5))
    [episode] = result.delistings
    assert (episode["delisted_on"], episode["returned_on"]) == (day(STOPS_AFTER - 1 + 5), day(25))
    assert episode["days"] == 25 - (STOPS_AFTER - 1 + 5)
    back = result.curve.set_index("date").loc[day(26)]
    assert back["delisted"] == 0 and result.figures["delisting"]["held_at_end"] == 0


def test_the_rule_refuses_what_it_cannot_mean() -> None:
    with pytest.raises(ValueError, match="1 session"):
        DelistingRule(after_sessions=0)
    with pytest.raises(ValueError, match="nothing or last_close"):
        DelistingRule(reading="half")


# ---- the live AI book and the positions it shows, on a store --------------------------------
def test_the_live_book_delists_a_held_name_whose_rows_end_and_its_day_and_positions_say_so(
    settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    from market.settings import get_settings
    from portfolio import ledger
    from portfolio.ai import execute_day
    from store.engine import service_engine
    from tests.portfolio.seed import CALENDAR, DAY, seed_market, seed_predictions
    from tests.portfolio.test_ai_portfolio import next_session
    from views.valuation import portfolio_view

    monkeypatch.setenv("MARKETINTEL_DELIST_AFTER_SESSIONS", "3")
    get_settings.cache_clear()
    settings = get_settings()
    engine = service_engine(settings)
    liquid = {"close": 50.0, "volume": 40_000, "bid": 49.9, "ask": 50.1}
    seed_market(engine, {"LIQ": liquid, "OTH": {**liquid, "close": 20.0, "bid": 19.9, "ask": 20.1}})
    seed_predictions(engine, DAY, {"LIQ": {"score": 71.0, "action": "LONG", "tercile": "TOP", "weight": 0.15}})
    execute_day(engine, settings, DAY)
    sessions = [CALENDAR.add_trading_days(DAY, i) for i in range(1, 5)]
    next_session(engine, sessions[0], {"LIQ": liquid, "OTH": {"close": 20.0, "volume": 40_000}})
    seed_predictions(engine, sessions[0], {"LIQ": {"score": 60.0, "action": "HOLD", "tercile": "TOP"}})
    bought = execute_day(engine, settings, sessions[0])
    (fill,) = bought.orders
    held = fill.quantity
    days = {}
    for day in sessions[1:]:  # LIQ's rows end: only OTH trades
        next_session(engine, day, {"OTH": {"close": 20.0, "volume": 40_000}})
        seed_predictions(engine, day, {"OTH": {"score": 50.0, "action": "HOLD", "tercile": "MIDDLE"}})
        days[day] = execute_day(engine, settings, day)
    carried, delisted = days[sessions[2]], days[sessions[3]]
    # two sessions without a row: carried at its last close, out of liquid equity (TRAPPED)
    assert carried.delisted == [] and carried.market_value == pytest.approx(held * 50.0)
    assert carried.illiquid_discounts == {"LIQ": pytest.approx(held * 50.0)}
    # the third: delisted on that session, worth nothing, its last close beside it
    (record,) = delisted.delisted
    assert (record.symbol, record.quantity, record.delisted_on) == ("LIQ", held, sessions[3])
    assert (record.last_row, record.sessions_without_row) == (sessions[0], 3)
    assert (record.value, record.value_nothing, record.value_last_close) == (0.0, 0.0, held * 50.0)
    (stored,) = delisted.summary()["delisted"]  # the day's record: dates as ISO text
    assert (stored["delisted_on"], stored["last_row"], stored["valued_at"]) == (
        sessions[3].isoformat(),
        sessions[0].isoformat(),
        "nothing",
    )
    assert delisted.market_value == 0 and delisted.equity == pytest.approx(float(delisted.cash))
    with engine.connect() as conn:
        (position,) = portfolio_view(conn, ledger.AI_PORTFOLIO, sessions[3]).positions
        (before,) = portfolio_view(conn, ledger.AI_PORTFOLIO, sessions[2]).positions
    assert (position.symbol, position.quantity, position.flags, position.market_value) == (
        "LIQ",
        held,
        ("DELISTED",),
        0,
    )
    assert before.flags == ("TRAPPED",) and before.market_value == held * 50
    # the day's analysis says the same: TRAPPED while carried, and not once delisted (the market
    # days still show a name without a row for 60 calendar days, volume 0)
    from analysis.day_facts import _ai_portfolio

    with engine.connect() as conn:
        carried_facts, delisted_facts = (_ai_portfolio(conn, CALENDAR, d) for d in sessions[2:4])
    assert (carried_facts["trapped"], delisted_facts["trapped"], delisted_facts["newly_trapped"]) == (["LIQ"], [], [])


def test_the_exchanges_notice_delists_a_name_in_a_replay_as_in_the_live_book() -> None:
    """The track record's null books replay the store's days under the live book's rule
    (`stored_rule`): a DELISTING notice dated the session after LIQ's last row delists it
    there, as the live book's positions are, not 5 sessions on; a notice before the last row
    (a ticker reused) is none."""
    notice = Notice("LIQ", day(STOPS_AFTER))
    result = run_backtest(panel(), START, FEES, "costed", BOOK, delisting=DelistingRule(5, notices=(notice,)))
    [episode] = result.delistings
    assert (episode["last_row"], episode["delisted_on"]) == (day(STOPS_AFTER - 1), day(STOPS_AFTER))
    earlier = DelistingRule(5, notices=(Notice("LIQ", day(STOPS_AFTER - 2)),))
    [episode] = run_backtest(panel(), START, FEES, "costed", BOOK, delisting=earlier).delistings
    assert episode["delisted_on"] == day(STOPS_AFTER - 1 + 5)


def test_the_exchanges_notice_on_a_names_last_trading_day_delists_it_from_the_next_session(settings) -> None:
    """T0 stores a notice under the session it was delivered with: the exchange's DELISTING
    notice of LIQ came with LIQ's last session (its last trading day), and LIQ has had no
    row since. The rule read only a notice dated after the last row, so LIQ was carried at
    its last close (TRAPPED, one of the book's slots) for 60 sessions and a client could
    still record a trade in it, while the importer reads such a row as delisting the name
    from the day after its last. It is delisted from the next session, in the live book's
    day, its positions and a trade's refusal; on its last trading day itself it trades."""
    from portfolio import ledger
    from portfolio.ai import execute_day
    from portfolio.delisting import delisted_since
    from store.engine import service_engine
    from tests.portfolio.clients import announce_action
    from tests.portfolio.seed import CALENDAR, DAY, seed_market, seed_predictions
    from tests.portfolio.test_ai_portfolio import next_session
    from views.valuation import portfolio_view

    engine = service_engine(settings)
    liquid = {"close": 50.0, "volume": 40_000, "bid": 49.9, "ask": 50.1}
    seed_market(engine, {"LIQ": liquid, "OTH": {**liquid, "close": 20.0, "bid": 19.9, "ask": 20.1}})
    seed_predictions(engine, DAY, {"LIQ": {"score": 71.0, "action": "LONG", "tercile": "TOP", "weight": 0.15}})
    execute_day(engine, settings, DAY)
    last, after = CALENDAR.add_trading_days(DAY, 1), CALENDAR.add_trading_days(DAY, 2)
    next_session(engine, last, {"LIQ": liquid, "OTH": {"close": 20.0, "volume": 40_000}})
    announce_action(engine, "LIQ", "DELISTING", 12.5, last, "LIQ is delisted: today is its last trading day")
    seed_predictions(engine, last, {"LIQ": {"score": 60.0, "action": "HOLD", "tercile": "TOP"}})
    (fill,) = execute_day(engine, settings, last).orders
    next_session(engine, after, {"OTH": {"close": 20.0, "volume": 40_000}})
    seed_predictions(engine, after, {"OTH": {"score": 50.0, "action": "HOLD", "tercile": "MIDDLE"}})
    (record,) = execute_day(engine, settings, after).delisted
    assert (record.symbol, record.quantity, record.last_row, record.delisted_on) == ("LIQ", fill.quantity, last, after)
    assert (record.valued_at, record.value) == ("corporate action", fill.quantity * 12.5)
    with engine.connect() as conn:
        (position,) = portfolio_view(conn, ledger.AI_PORTFOLIO, after).positions
        assert position.flags == ("DELISTED",) and position.market_value == fill.quantity * 12.5
        assert delisted_since(conn, settings, "LIQ", last) is None
        assert delisted_since(conn, settings, "LIQ", after) == (
            f"LIQ was delisted on {after} (the exchange's delisting notice; its last close was 50.00 on {last})"
        )


def test_a_value_paid_before_the_names_last_row_is_another_listings_and_gives_it_none() -> None:
    """The exchange paid 7.50 a share for LIQ on day 2 (a takeover of the company that had
    the ticker before: the rows since are another listing's, as a notice before the last row
    is none). LIQ's rows end after day 11 and it is delisted 5 sessions on with no notice: it
    was worth the earlier company's 7.50 a share; it is worth nothing, its last close beside
    it. A value paid on or after its last row is still what it is worth."""
    earlier = Settlement("LIQ", day(2), 7.5)
    result = run_backtest(panel(), START, FEES, "costed", BOOK, delisting=DelistingRule(5, NOTHING, (earlier,)))
    [episode] = result.delistings
    assert episode["value_nothing"] == 0 and episode["value_last_close"] > 0
    assert result.figures["delisting"]["value_at_end"][NOTHING] == 0
    paid = Settlement("LIQ", day(STOPS_AFTER - 1), 7.5)  # dated on its last row: the last trading day's notice
    rule = DelistingRule(5, NOTHING, (earlier, paid), (Notice("LIQ", day(STOPS_AFTER - 1)),))
    [episode] = run_backtest(panel(), START, FEES, "costed", BOOK, delisting=rule).delistings
    assert episode["delisted_on"] == day(STOPS_AFTER)
    assert episode["value_nothing"] == pytest.approx(episode["quantity"] * 7.5)
