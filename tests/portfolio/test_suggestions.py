"""T2 suggestions: generated once per portfolio and day, confirmed with re-checks,
rejected, expired, and hidden from other clients (SQLite and Postgres)."""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, time, timedelta
from decimal import Decimal

import pytest
from sqlalchemy import select

from market.clock import EXCHANGE_TZ
from market.errors import ConflictError, NotFoundError, NotReadyError
from market.money import to_cents
from market.settings import Settings
from models.decisions import BOOK_NAMES
from pipeline.runner import run_stage
from portfolio import ledger, suggestions
from portfolio.ledger import TradeRejected
from portfolio.trading import move_cash, open_client_portfolio
from store import tables
from store.engine import service_engine
from store.history import append_history
from tests.portfolio.clients import announce_action
from tests.portfolio.seed import CALENDAR, DAY, price_row, seed_long_and_avoid, seed_market, seed_predictions

MONDAY = CALENDAR.next_trading_day(DAY)
MORNING = datetime(2026, 11, 23, 12, 30, tzinfo=UTC)  # 07:30 exchange time
AFTER_CLOSE = datetime(2026, 11, 23, 21, 1, tzinfo=UTC)


@pytest.fixture
def store(settings: Settings):
    engine = service_engine(settings)
    seed_long_and_avoid(engine)
    acme = open_client_portfolio(engine, "acme")
    move_cash(engine, acme, "100000", now=MORNING)
    other = open_client_portfolio(engine, "other")
    return engine, settings, acme, other


def _events(engine, sid):
    with engine.connect() as conn:
        return [
            r.state
            for r in conn.execute(
                select(tables.suggestion_events.c.state)
                .where(tables.suggestion_events.c.suggestion_id == sid)
                .order_by(tables.suggestion_events.c.id)
            )
        ]


def test_generate_once_confirm_executes_and_a_retried_confirm_answers_the_same_trade(store) -> None:
    engine, settings, acme, other = store
    # The stage judges expiry on its own clock, Monday 07:00 (whenever it really runs); the
    # suggestions expire at Monday's close on the reader's clock (test_reject_unknown_foreign_and_expired).
    result = run_stage("t2_suggestions", MONDAY, settings=settings)
    assert result.summary["signals_from"] == "2026-11-20" and result.summary["suggestions"] == 1
    (pending,) = suggestions.list_pending(engine, acme, now=MORNING)
    # The book's slot, 95% of 100,000 over its names, in shares at the close of 50 (380 for
    # five names), well under 15% of ADV_20 (6,000); the limit is the cost model's price,
    # not the stale close of 50
    slot = int(0.95 * 100_000 / BOOK_NAMES / 50)
    assert (pending.symbol, pending.side, pending.quantity) == ("LIQ", "BUY", slot)
    limit = Decimal(str(pending.limit_price))
    assert Decimal("50.1") < limit < Decimal("50.2")
    assert pending.reason["gates"]["passed"] is True and pending.reason["signals_from"] == "2026-11-20"
    assert suggestions.list_pending(engine, other, now=MORNING) == []  # no cash, nothing to suggest

    assert run_stage("t2_suggestions", MONDAY, settings=settings).summary["suggestions"] == 0

    done = suggestions.confirm(engine, settings, CALENDAR, acme, pending.suggestion_id, now=MORNING)
    assert done.state == "CONFIRMED"
    with engine.connect() as conn:
        (trade,) = ledger.trade_rows(conn, acme)
        gross = to_cents(limit * slot)  # money moved is stored in cents
        # the default schedule (jse): JSE cess 0.32% and JCSD 0.03% plus 0.5% brokerage, each line in cents
        fee = sum(to_cents(gross * Decimal(rate)) for rate in ("0.0032", "0.0003", "0.005"))
        assert ledger.cash_balance(conn, acme) == 100_000 - gross - fee
    assert trade["origin"] == "SUGGESTION" and trade["trade_id"] == done.trade_id
    # a client whose answer was lost retries: the first confirmation's answer, nothing booked
    # again (after the close too: the trade was made before it)
    for moment in (MORNING, AFTER_CLOSE):
        assert suggestions.confirm(engine, settings, CALENDAR, acme, pending.suggestion_id, now=moment) == done
    with pytest.raises(NotFoundError):  # another portfolio retrying it is still not found
        suggestions.confirm(engine, settings, CALENDAR, other, pending.suggestion_id, now=MORNING)
    with pytest.raises(ConflictError, match="is CONFIRMED"):
        suggestions.reject(engine, acme, pending.suggestion_id, now=MORNING)
    assert _events(engine, pending.suggestion_id) == ["PENDING", "CONFIRMED"]
    with engine.connect() as conn:
        assert [t["trade_id"] for t in ledger.trade_rows(conn, acme)] == [done.trade_id]
        assert ledger.cash_balance(conn, acme) == 100_000 - gross - fee


def test_reject_unknown_foreign_and_expired(store) -> None:
    engine, settings, acme, other = store
    suggestions.generate(engine, settings, MONDAY, now=MORNING)
    (pending,) = suggestions.list_pending(engine, acme, now=MORNING)
    sid = pending.suggestion_id
    with pytest.raises(NotFoundError):
        suggestions.confirm(engine, settings, CALENDAR, acme, "S-nope", now=MORNING)
    with pytest.raises(NotFoundError):  # another client's suggestion is not found, not forbidden
        suggestions.reject(engine, other, sid, now=MORNING)
    assert suggestions.list_pending(engine, acme, now=AFTER_CLOSE) == []
    with pytest.raises(ConflictError, match="is EXPIRED"):
        suggestions.confirm(engine, settings, CALENDAR, acme, sid, now=AFTER_CLOSE)
    assert _events(engine, sid) == ["PENDING"]  # a refused confirmation writes nothing (T2 records EXPIRED)
    with engine.connect() as conn:
        assert ledger.trade_rows(conn, acme) == []


def test_a_confirmation_charges_the_limit_times_the_quantity_plus_the_fees_it_showed(store) -> None:
    """The limit is a price at the instrument's tick (50.00-99.95: 0.05) and the fees are
    the plan's: a fee schedule changed between the morning and the confirmation does not
    change what the client pays."""
    engine, settings, acme, _ = store
    suggestions.generate(engine, settings, MONDAY, now=MORNING)
    (pending,) = suggestions.list_pending(engine, acme, now=MORNING)
    assert pending.limit_price % Decimal("0.05") == 0 and pending.fees > 0
    dearer = settings.model_copy(update={"brokerage_fee_rate": 0.02})
    suggestions.confirm(engine, dearer, CALENDAR, acme, pending.suggestion_id, now=MORNING)
    with engine.connect() as conn:
        (trade,) = ledger.trade_rows(conn, acme)
        assert (trade["price"], trade["fees"]) == (pending.limit_price, pending.fees)
        charged = pending.limit_price * pending.quantity + pending.fees
        assert ledger.cash_balance(conn, acme) == Decimal("100000") - charged


def test_reject_records_and_the_next_morning_expires_the_rest(store) -> None:
    engine, settings, acme, _ = store
    house = open_client_portfolio(engine, "admin", kind="HOUSE")
    move_cash(engine, house, "50000", now=MORNING)
    suggestions.generate(engine, settings, MONDAY, now=MORNING)
    (mine,) = suggestions.list_pending(engine, acme, now=MORNING)
    assert suggestions.reject(engine, acme, mine.suggestion_id, now=MORNING).state == "REJECTED"
    with pytest.raises(ConflictError, match="is REJECTED, not PENDING"):  # a confirmation of a rejected one
        suggestions.confirm(engine, settings, CALENDAR, acme, mine.suggestion_id, now=MORNING)
    # a rejection retried (its answer lost) is answered as the first was (it was a 409) and writes nothing
    assert suggestions.reject(engine, acme, mine.suggestion_id, now=MORNING).state == "REJECTED"
    (theirs,) = suggestions.list_pending(engine, house, now=MORNING)
    tuesday = CALENDAR.next_trading_day(MONDAY)
    assert suggestions.generate(engine, settings, tuesday, now=AFTER_CLOSE + timedelta(hours=12)).expired == 1
    assert _events(engine, theirs.suggestion_id) == ["PENDING", "EXPIRED"]
    assert _events(engine, mine.suggestion_id) == ["PENDING", "REJECTED"]


def test_confirm_rechecks_cash_and_holdings(store) -> None:
    engine, settings, acme, _ = store
    suggestions.generate(engine, settings, MONDAY, now=MORNING)
    (pending,) = suggestions.list_pending(engine, acme, now=MORNING)
    move_cash(engine, acme, "-95000", now=MORNING)  # the client spent the cash elsewhere
    with pytest.raises(TradeRejected, match="cash is 5,000.00"):
        suggestions.confirm(engine, settings, CALENDAR, acme, pending.suggestion_id, now=MORNING)
    assert _events(engine, pending.suggestion_id) == ["PENDING"]


def test_sell_suggestions_for_holdings_that_turned_avoid(store) -> None:
    engine, settings, acme, _ = store
    from portfolio.trading import ManualTrade, place_manual_trade

    place_manual_trade(
        engine, settings, CALENDAR, acme, ManualTrade("buy", "OUT", 100, 20, 0), now=MORNING - timedelta(days=3)
    )
    suggestions.generate(engine, settings, MONDAY, now=MORNING)
    sides = {(p.symbol, p.side, p.quantity) for p in suggestions.list_pending(engine, acme, now=MORNING)}
    assert ("OUT", "SELL", 100) in sides
    sell = next(p for p in suggestions.list_pending(engine, acme, now=MORNING) if p.side == "SELL")
    assert suggestions.confirm(engine, settings, CALENDAR, acme, sell.suggestion_id, now=MORNING).state == "CONFIRMED"
    with engine.connect() as conn:
        assert "OUT" not in ledger.holdings(conn, acme)


def test_no_scores_yet_is_not_ready(settings: Settings) -> None:
    with pytest.raises(NotReadyError, match="no predictions of a day before 2026-11-23 in the validation record"):
        suggestions.generate(service_engine(settings), settings, MONDAY, now=MORNING)


def test_the_first_live_mornings_plan_follows_the_validation_records_last_day(settings: Settings) -> None:
    """A review's run: T2 for the first live day (live predictions on that day alone, the
    days before it in the validation record) failed "no predictions before ...: T1 has not
    scored a day yet", false, where bootstrapping had planned the same morning from the
    validation record. T2 plans from the live predictions where they have a day before its
    own, else from the validation record."""
    engine = service_engine(settings)
    seed_market(engine, {"LIQ": {"close": 50.0, "volume": 40_000, "bid": 49.9, "ask": 50.1}})
    long = {"LIQ": {"score": 70.0, "action": "LONG", "tercile": "TOP", "weight": 0.1}}
    seed_predictions(engine, DAY, long, table=tables.validation_predictions)
    seed_predictions(engine, MONDAY, long)  # the first live day's own predictions: T2 of the next morning reads them
    move_cash(engine, open_client_portfolio(engine, "acme"), "100000", now=MORNING)
    planned = suggestions.generate(engine, settings, MONDAY, now=MORNING)
    assert planned.signals_from == DAY.isoformat()
    assert {(s.symbol, s.side) for s in planned.suggestions} == {("LIQ", "BUY")}
    with engine.connect() as conn:
        assert suggestions.record_before(conn, CALENDAR.next_trading_day(MONDAY)) is tables.predictions


# ---- expiry on the clock the caller runs on (issue 42) ------------------------------------
REPLAYED = date(2019, 6, 3)  # a replayed market's last session, years before the wall clock
REPLAYED_NEXT = CALENDAR.next_trading_day(REPLAYED)


def _exchange_time(day: date, hour: int, minute: int = 0) -> datetime:
    return datetime.combine(day, time(hour, minute), tzinfo=EXCHANGE_TZ).astimezone(UTC)


@pytest.fixture
def replayed_store(settings: Settings):
    engine = service_engine(settings)
    seed_market(engine, {"LIQ": {"close": 50.0, "volume": 40_000, "bid": 49.9, "ask": 50.1}}, day=REPLAYED)
    seed_predictions(engine, REPLAYED, {"LIQ": {"score": 70.0, "action": "LONG", "tercile": "TOP", "weight": 0.1}})
    acme = open_client_portfolio(engine, "acme")
    move_cash(engine, acme, "100000", now=_exchange_time(REPLAYED, 17))
    return engine, settings, acme


def test_t2_judges_expiry_on_its_own_trading_morning_not_the_wall_clock(replayed_store) -> None:
    """T2 for a replayed day, re-run (an Airflow retry, the demo again on its store), keeps
    that day's suggestions pending: it judges expiry at 07:00 of its own trading date. The
    wall clock, years past the day's close, expired them on the re-run before the fix.
    The next day's T2 records them EXPIRED."""
    engine, settings, acme = replayed_store
    assert run_stage("t2_suggestions", REPLAYED_NEXT, settings=settings).summary["suggestions"] == 1
    again = run_stage("t2_suggestions", REPLAYED_NEXT, settings=settings).summary
    assert (again["suggestions"], again["expired"]) == (0, 0)
    (pending,) = suggestions.list_pending(engine, acme, now=_exchange_time(REPLAYED_NEXT, 7, 30))
    assert _events(engine, pending.suggestion_id) == ["PENDING"]
    assert pending.expires_at == suggestions.expires_at(REPLAYED_NEXT) == _exchange_time(REPLAYED_NEXT, 16)
    later = CALENDAR.next_trading_day(REPLAYED_NEXT)
    # T1 scores REPLAYED_NEXT: the next day's T2 waits for its signals
    seed_predictions(engine, REPLAYED_NEXT, {"LIQ": {"score": 70.0, "action": "LONG", "tercile": "TOP"}})
    assert run_stage("t2_suggestions", later, settings=settings).summary["expired"] == 1
    assert _events(engine, pending.suggestion_id) == ["PENDING", "EXPIRED"]


def test_one_expiry_rule_at_the_close_for_listing_confirming_and_rejecting(replayed_store) -> None:
    engine, settings, acme = replayed_store
    suggestions.generate(engine, settings, REPLAYED_NEXT)
    close = _exchange_time(REPLAYED_NEXT, 16)
    (pending,) = suggestions.list_pending(engine, acme, now=close - timedelta(microseconds=1))
    sid = pending.suggestion_id
    assert not suggestions.is_expired(pending, close - timedelta(microseconds=1))
    assert suggestions.is_expired(pending, close)
    assert suggestions.list_pending(engine, acme, now=close) == []
    with pytest.raises(ConflictError, match="is EXPIRED"):
        suggestions.reject(engine, acme, sid, now=close)
    with pytest.raises(ConflictError, match="is EXPIRED"):
        suggestions.confirm(engine, settings, CALENDAR, acme, sid, now=close)
    assert _events(engine, sid) == ["PENDING"]  # refusals write nothing; T2's expire_stale records it
    with pytest.raises(ValueError, match="naive"):  # a clock without a zone is no exchange clock
        suggestions.is_expired(pending, close.replace(tzinfo=None))


def test_confirm_just_before_the_close_on_a_replayed_clock(replayed_store) -> None:
    engine, settings, acme = replayed_store
    suggestions.generate(engine, settings, REPLAYED_NEXT)
    moment = _exchange_time(REPLAYED_NEXT, 15, 59)
    (pending,) = suggestions.list_pending(engine, acme, now=moment)
    done = suggestions.confirm(engine, settings, CALENDAR, acme, pending.suggestion_id, now=moment)
    assert done.state == "CONFIRMED"
    with engine.connect() as conn:
        (trade,) = ledger.trade_rows(conn, acme)
    assert trade["trading_date"] == REPLAYED_NEXT and trade["executed_at"] == moment


def test_a_limit_a_move_left_behind_is_refused_not_booked(settings: Settings) -> None:
    """T1 did not score Friday, so Monday's plan is priced on Thursday's close of 50; Friday
    closed at 25 (a fall, no split: nothing puts Thursday on a new count). Confirming would
    buy 126 shares at 50.55 that were worth 25 (a manual trade at that price is refused by
    the band): the limit is checked against the latest close by the same band. A plan made
    once Friday's close is stored leaves the buy out with that refusal (every suggestion T2
    makes confirms on an unchanged market); one made before it arrived is refused when
    confirmed."""
    engine = service_engine(settings)
    seed_market(engine, {"LIQ": {"close": 50.0, "volume": 40_000, "bid": 49.9, "ask": 50.1}})
    seed_predictions(
        engine,
        CALENDAR.previous_trading_day(DAY),
        {"LIQ": {"score": 70.0, "action": "LONG", "tercile": "TOP", "weight": 0.1}},
    )
    acme = open_client_portfolio(engine, "acme")
    move_cash(engine, acme, "100000", now=MORNING)
    suggestions.generate(engine, settings, MONDAY, now=MORNING)  # before Friday's close is stored
    with engine.begin() as conn:
        append_history(conn, tables.eod_prices, [price_row("LIQ", DAY, 25.0, 80_000, 24.95, 25.05)])
    (pending,) = suggestions.list_pending(engine, acme, now=MORNING)
    assert pending.limit_price > 50
    band = "the limit price 50.55 is outside the day's band 21.25-28.75"
    with pytest.raises(TradeRejected, match=band):
        suggestions.confirm(engine, settings, CALENDAR, acme, pending.suggestion_id, now=MORNING)
    assert _events(engine, pending.suggestion_id) == ["PENDING"]
    with engine.connect() as conn:
        assert ledger.trade_rows(conn, acme) == [] and ledger.cash_balance(conn, acme) == Decimal("100000")

    other = open_client_portfolio(engine, "other")  # planned with Friday's close known
    move_cash(engine, other, "100000", now=MORNING)
    planned = suggestions.generate(engine, settings, MONDAY, now=MORNING)
    assert planned.suggestions == [] and suggestions.list_pending(engine, other, now=MORNING) == []
    (left,) = planned.left_out
    assert (left.portfolio_id, left.symbol, left.side) == (other, "LIQ", "BUY") and band in left.reason


@pytest.mark.parametrize("ex_date", [MONDAY, DAY], ids=["ex-date-is-the-trading-date", "t1-did-not-score-the-ex-date"])
def test_a_split_after_the_scored_day_is_planned_on_the_new_count(settings: Settings, ex_date: date) -> None:
    """A 2-for-1 split of LIQ with an ex-date after the latest scored day and on or before
    Monday: on Monday itself (T1 scored Friday on the old count) or on Friday, the day T1 did
    not score (Friday closed at 25 on the new count, Thursday is the scored day). The plan
    reads the scored day's market on Monday's count, the count the holdings are on. Before,
    acme's 300 shares (150 bought at 50) were valued at 50, looked 2.2 slots and were
    trimmed by 164 at 49.85, and `other` was offered 126 at 50.15 (Monday ex-date: booked,
    the band's latest close being Friday's 50) or 50.55 (refused by the band)."""
    from portfolio.trading import ManualTrade, place_manual_trade

    engine = service_engine(settings)
    thursday = CALENDAR.previous_trading_day(DAY)
    seed_market(engine, {"LIQ": {"close": 50.0, "volume": 40_000, "bid": 49.9, "ask": 50.1}})
    scored = DAY if ex_date == MONDAY else thursday
    seed_predictions(engine, scored, {"LIQ": {"score": 70.0, "action": "LONG", "tercile": "TOP", "weight": 0.1}})
    if ex_date == DAY:  # Friday's bar as T0 stored it, on the new count
        with engine.begin() as conn:
            append_history(conn, tables.eod_prices, [price_row("LIQ", DAY, 25.0, 80_000, 24.95, 25.05)])
    acme, other = open_client_portfolio(engine, "acme"), open_client_portfolio(engine, "other")
    for portfolio in (acme, other):
        move_cash(engine, portfolio, "100000", now=MORNING)
    bought = ManualTrade("buy", "LIQ", 150, 50, 0)
    place_manual_trade(engine, settings, CALENDAR, acme, bought, now=_exchange_time(thursday, 10))
    announce_action(engine, "LIQ", "SPLIT", 2.0, ex_date, "2 for 1")

    suggestions.generate(engine, settings, MONDAY, now=MORNING)
    assert suggestions.list_pending(engine, acme, now=MORNING) == []  # 300 at 25: about 1.2 slots, no trim
    (buy,) = suggestions.list_pending(engine, other, now=MORNING)
    assert (buy.symbol, buy.side, buy.quantity) == ("LIQ", "BUY", int(0.95 * 100_000 / BOOK_NAMES / 25))
    assert Decimal("25") < buy.limit_price < Decimal("25.5")
    assert "split_adjustment" in buy.reason and buy.reason["close"] == 25.0
    done = suggestions.confirm(engine, settings, CALENDAR, other, buy.suggestion_id, now=MORNING)
    assert done.state == "CONFIRMED"
    with engine.connect() as conn:
        (trade,) = ledger.trade_rows(conn, other)
        assert (trade["quantity"], Decimal(trade["price"])) == (buy.quantity, buy.limit_price)
        assert ledger.holdings(conn, acme, MONDAY)["LIQ"].quantity == 300


def test_a_split_announced_after_the_plan_refuses_the_confirmation_not_books_the_old_count(store) -> None:
    """A review's run: T2 planned a buy of LIQ at 50.x at 07:00; a 1.1 bonus issue with
    Monday's ex-date was stored after (a notice delivered during the session). Confirming
    booked the plan's quantity at the old count's price, 10% over the market on the new count,
    inside the 15% band. The confirmation is refused saying why, and nothing is booked; a
    suggestion planned with the split known confirms (the test above)."""
    engine, settings, acme, _ = store
    suggestions.generate(engine, settings, MONDAY, now=MORNING)
    (pending,) = suggestions.list_pending(engine, acme, now=MORNING)
    announce_action(engine, "LIQ", "SPLIT", 1.1, MONDAY, "1 for 10 bonus")
    moved = "LIQ's share count on 2026-11-23 changed after this suggestion was planned (a split or bonus issue of 1.1"
    with pytest.raises(suggestions.PlanMoved, match=re.escape(moved)):
        suggestions.confirm(engine, settings, CALENDAR, acme, pending.suggestion_id, now=MORNING)
    assert _events(engine, pending.suggestion_id) == ["PENDING"]
    with engine.connect() as conn:
        assert ledger.trade_rows(conn, acme) == [] and ledger.cash_balance(conn, acme) == Decimal("100000")


@pytest.mark.parametrize(
    ("bar", "said"),
    [
        (
            (45.0, 44.9, 45.1),
            "LIQ's 2026-11-20 close was corrected after this suggestion was planned (50.00 then, 45.00 now)",
        ),
        (
            (50.0, 46.9, 47.0),
            "LIQ's 2026-11-20 closing bid was corrected after this suggestion was planned (49.90 then, 46.90 now)",
        ),
    ],
    ids=["close", "quotes-only"],
)
def test_a_close_or_quotes_corrected_after_the_plan_refuse_the_confirmation_not_book_the_old_limit(
    store, bar, said
) -> None:
    """T2 planned a buy of LIQ at 50.1x on Friday's close of 50 and ask of 50.10; T0 then
    corrected that close to 45, or only the quotes to 46.90/47.00 (the close standing),
    inside the 15% band, so the band let the old limit through: confirming booked the buy
    about 11% over the corrected close, or 6.6% over the corrected ask. The confirmation is
    refused as a conflict saying what was corrected and what the client can do; nothing is
    booked and the suggestion stays pending, so the client can still reject it."""
    engine, settings, acme, _ = store
    suggestions.generate(engine, settings, MONDAY, now=MORNING)
    (pending,) = suggestions.list_pending(engine, acme, now=MORNING)
    assert pending.limit_price > 50 and pending.reason["close"] == 50.0 and pending.reason["ask"] == 50.1
    with engine.begin() as conn:  # T0's correction of Friday's bar
        append_history(conn, tables.eod_prices, [price_row("LIQ", DAY, bar[0], 40_000, *bar[1:])])
    with pytest.raises(suggestions.PlanMoved, match=re.escape(said)) as refused:
        suggestions.confirm(engine, settings, CALENDAR, acme, pending.suggestion_id, now=MORNING)
    assert isinstance(refused.value, ConflictError) and "reject it" in refused.value.detail
    assert _events(engine, pending.suggestion_id) == ["PENDING"]
    with engine.connect() as conn:
        assert ledger.trade_rows(conn, acme) == [] and ledger.cash_balance(conn, acme) == Decimal("100000")
    assert suggestions.reject(engine, acme, pending.suggestion_id, now=MORNING).state == "REJECTED"


def test_a_suggestion_stored_before_its_quotes_were_recorded_is_judged_on_its_close(store, monkeypatch) -> None:
    """A suggestion T2 stored before its reason recorded the quotes and range (its `close`
    alone) keeps confirming: a later correction of only the quotes is not held against what
    it never recorded, while its close is still compared."""
    engine, settings, acme, _ = store
    monkeypatch.setattr(suggestions, "PRICED_ON", {"close": "close"})  # what older code recorded
    suggestions.generate(engine, settings, MONDAY, now=MORNING)
    monkeypatch.undo()
    (pending,) = suggestions.list_pending(engine, acme, now=MORNING)
    assert "ask" not in pending.reason and pending.reason["close"] == 50.0
    with engine.begin() as conn:  # T0's correction of Friday's quotes, the close standing
        append_history(conn, tables.eod_prices, [price_row("LIQ", DAY, 50.0, 40_000, 49.85, 50.05)])
    done = suggestions.confirm(engine, settings, CALENDAR, acme, pending.suggestion_id, now=MORNING)
    assert done.state == "CONFIRMED"


def test_a_confirmation_credits_the_dividends_first_so_a_reversal_owed_is_not_spent(store) -> None:
    """Confirm credits the dividends owed up to the suggestion's trading date before its
    cash check, as a manual trade, deposit and withdrawal do: a dividend the exchange
    withdrew after T2 paid it is taken back first, so the buy cannot spend it."""
    engine, settings, acme, _ = store
    from portfolio.trading import ManualTrade, place_manual_trade

    place_manual_trade(
        engine, settings, CALENDAR, acme, ManualTrade("buy", "OUT", 100, 20, 0), now=MORNING - timedelta(days=3)
    )
    announce_action(engine, "OUT", "DIVIDEND", 1.0, MONDAY, "interim")
    suggestions.generate(engine, settings, MONDAY, now=MORNING)  # credits the 100 first
    buy = next(p for p in suggestions.list_pending(engine, acme, now=MORNING) if p.side == "BUY")
    cost = buy.limit_price * buy.quantity + buy.fees
    with engine.connect() as conn:
        spare = ledger.cash_balance(conn, acme) - cost - 50  # the buy and 50 more
    move_cash(engine, acme, -spare, now=MORNING)
    announce_action(engine, "OUT", "DIVIDEND", None, MONDAY, "withdrawn")  # the 100 are owed back
    with pytest.raises(TradeRejected, match=f"cash is {cost - 50:,.2f}"):
        suggestions.confirm(engine, settings, CALENDAR, acme, buy.suggestion_id, now=MORNING)
    assert _events(engine, buy.suggestion_id) == ["PENDING"]
    with engine.connect() as conn:  # refused whole: the trade and what the reversal took
        assert ledger.cash_balance(conn, acme) == cost + 50
    move_cash(engine, acme, "50", now=MORNING)  # the reversal takes its 100 first, so the buy is affordable
    done = suggestions.confirm(engine, settings, CALENDAR, acme, buy.suggestion_id, now=MORNING)
    with engine.connect() as conn:
        assert ledger.cash_balance(conn, acme) == 0 and done.state == "CONFIRMED"


def test_a_buy_suggestion_is_what_one_session_fills_at_the_price_the_preview_shows(settings: Settings) -> None:
    """A thin scored session (2,000 shares against an ADV_20 of 40,000): the plan's estimate
    measured impact against ADV_20 alone and skipped the 25% cap, so T2 suggested 1,266 LIQ
    at 50.50 where the preview of the same order on the same session fills 500 at 51.11.
    A suggestion is booked whole at its limit on confirmation, so it asks for what one
    session can fill, priced as the fill (and the preview of those 500) price it."""
    from market.costs import limit_price
    from portfolio.trading import preview_trade
    from tests.portfolio.seed import days_up_to

    engine = service_engine(settings)
    seed_market(engine, {"LIQ": {"close": 50.0, "volume": 40_000, "today_volume": 2_000, "bid": 49.9, "ask": 50.1}})
    swings = [
        price_row("LIQ", d, 49.0 if i % 2 else 51.0, 40_000, None, None) for i, d in enumerate(days_up_to(DAY, 25))
    ]
    with engine.begin() as conn:
        append_history(conn, tables.eod_prices, swings[:-1])
    seed_predictions(engine, DAY, {"LIQ": {"score": 80.0, "action": "LONG", "tercile": "TOP", "weight": 0.1}})
    acme = open_client_portfolio(engine, "acme")
    move_cash(engine, acme, "1000000", now=MORNING)
    run_stage("t2_suggestions", MONDAY, settings=settings)
    (planned,) = suggestions.list_pending(engine, acme, now=MORNING)
    with engine.connect() as conn:
        preview = preview_trade(conn, settings, CALENDAR, "BUY", "LIQ", 1_266, MORNING)
        suggested = preview_trade(conn, settings, CALENDAR, "BUY", "LIQ", planned.quantity, MORNING)
    assert planned.quantity == preview.fillable_in_one_session == 500
    assert planned.reason["limits"]["bound_by"] == "session_volume"
    assert Decimal(planned.limit_price) == limit_price("BUY", Decimal(suggested.price))


def _thin_sell(settings: Settings) -> tuple:
    """10,000 LIQ held (ADV_20 40,000) and AVOID on a session of 2,000 shares: the engine,
    the portfolio and its one pending sell suggestion."""
    from portfolio.trading import ManualTrade, place_manual_trade

    engine = service_engine(settings)
    seed_market(engine, {"LIQ": {"close": 50.0, "volume": 40_000, "today_volume": 2_000, "bid": 49.9, "ask": 50.1}})
    seed_predictions(engine, DAY, {"LIQ": {"score": 10.0, "action": "AVOID", "tercile": "BOTTOM", "weight": 0.0}})
    acme = open_client_portfolio(engine, "acme")
    move_cash(engine, acme, "600000", now=MORNING - timedelta(days=3))
    place_manual_trade(
        engine, settings, CALENDAR, acme, ManualTrade("buy", "LIQ", 10_000, 50, 0), now=MORNING - timedelta(days=3)
    )
    run_stage("t2_suggestions", MONDAY, settings=settings)
    (sell,) = suggestions.list_pending(engine, acme, now=MORNING)
    return engine, acme, sell


def test_a_sell_suggestion_is_what_one_session_fills_and_the_rest_is_asked_again(settings: Settings) -> None:
    """A client holds 10,000 LIQ (a quarter of its ADV_20 of 40,000: not a slow exit) when it
    turns AVOID on a thin session of 2,000 shares. T2 suggested selling all 10,000, booked
    whole at its limit on confirmation, where the AI book's sell of the same position fills
    at most 25% of the session (500) and the rest lapses. The suggestion asks for what one
    session fills, as a buy suggestion does, and says what bound it; the next morning's plan
    asks again for the rest."""
    from portfolio.trading import preview_trade

    engine, acme, sell = _thin_sell(settings)
    with engine.connect() as conn:
        preview = preview_trade(conn, settings, CALENDAR, "SELL", "LIQ", 10_000, MORNING)
    assert (sell.side, sell.quantity) == ("SELL", preview.fillable_in_one_session) == ("SELL", 500)
    assert sell.reason["limits"]["bound_by"] == "session_volume" and "SLOW_EXIT" not in sell.reason["exit"]["flags"]
    assert suggestions.confirm(engine, settings, CALENDAR, acme, sell.suggestion_id, now=MORNING).state == "CONFIRMED"
    with engine.connect() as conn:
        assert ledger.holdings(conn, acme)["LIQ"].quantity == 9_500


def test_a_sell_confirmed_on_a_thinner_reference_session_is_refused_past_its_fill(settings: Settings) -> None:
    """The confirmation re-checks the cap on the latest priced session: a close of 1,000
    shares stored since T2 planned 500 lets one session fill 250, so the 500 are refused
    with that reason and nothing is booked."""
    engine, acme, sell = _thin_sell(settings)
    with engine.begin() as conn:
        append_history(conn, tables.eod_prices, [price_row("LIQ", MONDAY, 50.0, 1_000, 49.9, 50.1)])
    with pytest.raises(TradeRejected, match="one session fills at most 250 LIQ"):
        suggestions.confirm(engine, settings, CALENDAR, acme, sell.suggestion_id, now=MORNING)
    assert _events(engine, sell.suggestion_id) == ["PENDING"]


def _thin_buy(settings: Settings) -> tuple:
    """A buy of LIQ planned on a thin scored session (2,000 shares against an ADV_20 of
    40,000): the engine, the portfolio and its one pending buy suggestion, of the 500
    shares one session fills."""
    from tests.portfolio.seed import days_up_to

    engine = service_engine(settings)
    seed_market(engine, {"LIQ": {"close": 50.0, "volume": 40_000, "today_volume": 2_000, "bid": 49.9, "ask": 50.1}})
    swings = [
        price_row("LIQ", d, 49.0 if i % 2 else 51.0, 40_000, None, None) for i, d in enumerate(days_up_to(DAY, 25))
    ]
    with engine.begin() as conn:
        append_history(conn, tables.eod_prices, swings[:-1])
    seed_predictions(engine, DAY, {"LIQ": {"score": 80.0, "action": "LONG", "tercile": "TOP", "weight": 0.1}})
    acme = open_client_portfolio(engine, "acme")
    move_cash(engine, acme, "1000000", now=MORNING)
    run_stage("t2_suggestions", MONDAY, settings=settings)
    (buy,) = suggestions.list_pending(engine, acme, now=MORNING)
    assert (buy.side, buy.quantity) == ("BUY", 500)
    return engine, acme, buy


def test_a_buy_confirmed_on_a_thinner_reference_session_is_refused_past_its_fill(settings: Settings) -> None:
    """A buy's confirmation re-checks the one-session cap as a sell's does: a close of 1,000
    shares stored since T2 planned 500 lets one session fill 250, so the client is not
    booked 500 shares at a limit the market was not expected to fill; nothing is booked and
    the cash stays."""
    engine, acme, buy = _thin_buy(settings)
    with engine.begin() as conn:
        append_history(conn, tables.eod_prices, [price_row("LIQ", MONDAY, 50.0, 1_000, 49.9, 50.1)])
    with pytest.raises(TradeRejected, match="one session fills at most 250 LIQ"):
        suggestions.confirm(engine, settings, CALENDAR, acme, buy.suggestion_id, now=MORNING)
    assert _events(engine, buy.suggestion_id) == ["PENDING"]
    with engine.connect() as conn:
        assert ledger.trade_rows(conn, acme) == [] and ledger.cash_balance(conn, acme) == Decimal("1000000")


@pytest.mark.parametrize(
    ("volume", "said"),
    [(40_000, "(2,000 then, 40,000 now)"), (1_000, "(2,000 then, 1,000 now)")],
    ids=["thicker", "thinner"],
)
def test_a_volume_corrected_after_the_plan_refuses_the_confirmation_as_out_of_date(
    settings: Settings, volume: int, said: str
) -> None:
    """T2 planned 500 LIQ at 51.15 on Friday's 2,000 shares (the impact of a quarter of the
    session, the one-session cap); T0 then corrected only Friday's volume. Corrected to 40,000
    the confirmation booked the 500 at 51.15 where the corrected session prices them at 50.33;
    corrected to 1,000 it was refused as a rail (422) where what moved is the plan's input.
    Either is the one conflict a corrected close is: out of date, nothing booked, still pending."""
    engine, acme, buy = _thin_buy(settings)
    assert buy.reason["volume"] == 2_000 and buy.reason["adv_20"] is not None
    with engine.begin() as conn:  # T0's correction of Friday's volume, its prices standing
        append_history(conn, tables.eod_prices, [price_row("LIQ", DAY, 50.0, volume, 49.9, 50.1)])
    moved = f"LIQ's 2026-11-20 volume was corrected after this suggestion was planned {said}"
    with pytest.raises(suggestions.PlanMoved, match=re.escape(moved)):
        suggestions.confirm(engine, settings, CALENDAR, acme, buy.suggestion_id, now=MORNING)
    assert _events(engine, buy.suggestion_id) == ["PENDING"]
    with engine.connect() as conn:
        assert ledger.trade_rows(conn, acme) == [] and ledger.cash_balance(conn, acme) == Decimal("1000000")


def test_a_delisted_holding_is_not_one_of_the_plans_names(store) -> None:
    """A client's holding the exchange delisted (its DELISTING notice after its last row) is
    worth the rule's value and can never be sold: the AI book leaves it out of its names
    (portfolio/delisting.py), but the morning plan counted it as one of the mandate's slots, so
    a book holding one saw a slot fewer to fill ("fills an empty slot (2 of 15)" for its first
    live name) and a full one never replaced it. The plan reads the same rule."""
    engine, settings, acme, _ = store
    last_row = CALENDAR.add_trading_days(DAY, -1)
    with engine.begin() as conn:
        append_history(conn, tables.eod_prices, [price_row("GONE", last_row, 5.0, 40_000, 4.99, 5.01)])
        ledger.record_trade(
            conn,
            ledger.TradeRequest(acme, last_row, MORNING - timedelta(days=5), "GONE", "BUY", 100, Decimal("5.00")),
        )
    announce_action(engine, "GONE", "DELISTING", None, DAY, "GONE is delisted")
    suggestions.generate(engine, settings, MONDAY, now=MORNING)
    (pending,) = suggestions.list_pending(engine, acme, now=MORNING)
    assert (pending.symbol, pending.side) == ("LIQ", "BUY")
    assert pending.reason["reason"].startswith(f"fills an empty slot (1 of {BOOK_NAMES})"), pending.reason["reason"]
