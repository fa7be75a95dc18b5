import random
from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

import pytest

from market.clock import (
    DatedCalendar,
    TradingCalendar,
    exchange_date,
    exchange_iso,
    latest_closed_trading_day,
    parse_trading_date,
    session_close_utc,
)
from market.errors import InvalidInputError

cal = TradingCalendar()


@pytest.mark.parametrize(
    "day, name",
    [
        (date(2026, 1, 1), "New Year's Day"),
        (date(2026, 2, 18), "Ash Wednesday"),
        (date(2026, 4, 3), "Good Friday"),
        (date(2026, 4, 6), "Easter Monday"),
        (date(2026, 8, 6), "Independence Day"),
        (date(2026, 10, 19), "National Heroes Day"),
        (date(2026, 12, 25), "Christmas Day"),
    ],
)
def test_public_holidays_close_the_exchange(day: date, name: str) -> None:
    assert not cal.is_trading_day(day)
    assert name in cal.closed_reason(day)


def test_labour_day_on_a_saturday_closes_the_following_monday() -> None:
    assert date(2026, 5, 23).weekday() == 5
    assert not cal.is_trading_day(date(2026, 5, 25))
    assert "observed" in cal.closed_reason(date(2026, 5, 25))
    assert cal.is_trading_day(date(2026, 5, 22)) and cal.is_trading_day(date(2026, 5, 26))


def test_labour_day_on_a_sunday_closes_monday() -> None:
    assert not cal.is_trading_day(date(2021, 5, 24))


def test_weekends_are_closed_and_named() -> None:
    assert cal.closed_reason(date(2026, 11, 21)) == "2026-11-21 is a Saturday"
    assert cal.closed_reason(date(2026, 11, 20)) is None


def test_previous_and_next_trading_day_skip_the_easter_weekend() -> None:
    assert cal.previous_trading_day(date(2026, 4, 7)) == date(2026, 4, 2)
    assert cal.next_trading_day(date(2026, 4, 2)) == date(2026, 4, 7)
    assert cal.next_trading_day(date(2026, 11, 20)) == date(2026, 11, 23)


def test_trading_days_between_counts_trading_days_after_start_up_to_end() -> None:
    assert cal.trading_days_between(date(2026, 11, 20), date(2026, 11, 23)) == 1  # Fri -> Mon
    assert cal.trading_days_between(date(2026, 4, 2), date(2026, 4, 7)) == 1  # over Easter
    assert cal.trading_days_between(date(2026, 11, 16), date(2026, 11, 20)) == 4
    assert cal.trading_days_between(date(2026, 11, 20), date(2026, 11, 16)) == -4
    assert cal.trading_days_between(date(2026, 11, 20), date(2026, 11, 20)) == 0


def test_add_trading_days_round_trips() -> None:
    start = date(2026, 3, 31)
    later = cal.add_trading_days(start, 5)
    assert later == date(2026, 4, 9)  # skips Good Friday and Easter Monday
    assert cal.add_trading_days(later, -5) == start
    assert cal.trading_days_between(start, later) == 5


def test_trading_days_lists_both_ends() -> None:
    assert cal.trading_days(date(2026, 4, 2), date(2026, 4, 7)) == [date(2026, 4, 2), date(2026, 4, 7)]


def test_extra_closures_are_honoured() -> None:
    special = TradingCalendar(extra_closures=[date(2026, 11, 18)])
    assert not special.is_trading_day(date(2026, 11, 18))
    assert (
        special.closed_reason(date(2026, 11, 18)) == "2026-11-18 is an exchange closure (MARKETINTEL_EXCHANGE_CLOSURES)"
    )


def test_exchange_time_is_utc_minus_five_all_year() -> None:
    assert session_close_utc(date(2026, 1, 15)) == datetime(2026, 1, 15, 21, 0, tzinfo=UTC)
    assert session_close_utc(date(2026, 7, 15)) == datetime(2026, 7, 15, 21, 0, tzinfo=UTC)


def test_exchange_date_near_midnight_utc() -> None:
    assert exchange_date(datetime(2026, 11, 21, 3, 0, tzinfo=UTC)) == date(2026, 11, 20)
    with pytest.raises(InvalidInputError):
        exchange_date(datetime(2026, 11, 21, 3, 0))


def test_exchange_iso_has_no_offset() -> None:
    assert exchange_iso(datetime(2026, 11, 20, 21, 5, tzinfo=UTC)) == "2026-11-20T16:05:00"


def test_latest_closed_trading_day() -> None:
    before_close = datetime(2026, 11, 20, 20, 59, tzinfo=UTC)  # 15:59 in Kingston
    after_close = datetime(2026, 11, 20, 21, 0, tzinfo=UTC)
    sunday = datetime(2026, 11, 22, 15, 0, tzinfo=UTC)
    assert latest_closed_trading_day(before_close) == date(2026, 11, 19)
    assert latest_closed_trading_day(after_close) == date(2026, 11, 20)
    assert latest_closed_trading_day(sunday) == date(2026, 11, 20)


def _exchange() -> TradingCalendar:
    return TradingCalendar(extra_closures=[date(2026, 12, 28)])


def _replayed() -> TradingCalendar:  # a replay's sessions: Dec 28 and Jan 4 had no file
    first = date(2026, 12, 1)
    days = (first + timedelta(days=n) for n in range(60))
    return DatedCalendar(d for d in days if d.weekday() < 5 and d not in (date(2026, 12, 28), date(2027, 1, 4)))


@pytest.mark.parametrize("calendar", [_exchange, _replayed])
def test_the_kept_closed_day_is_the_definition_at_every_moment(calendar) -> None:
    """One calendar asked at moments that walk forward and jump back across closes,
    weekends, holidays and time zones (a server's clock, a replay's) answers exactly what
    the definition gives: the day's own close once passed on a trading day, else the
    trading day before. The exchange's calendar and a replay's dated one."""
    kept = calendar()
    definitions = calendar()  # never asked `closed_day_at`
    rng = random.Random(7)
    moment = datetime(2026, 12, 17, 12, 0, tzinfo=UTC)
    zones = [UTC, ZoneInfo("America/Jamaica"), ZoneInfo("Asia/Tokyo")]
    seen = set()
    for _ in range(3000):
        moment += timedelta(minutes=rng.choice([1, 7, 59, 60, 61, 240]) * rng.choice([1, 1, -1]))
        asked = moment.astimezone(rng.choice(zones))
        local = asked.astimezone(ZoneInfo("America/Jamaica"))
        day = local.date()
        definition = (
            day
            if definitions.is_trading_day(day) and local.time() >= time(16, 0)
            else definitions.previous_trading_day(day)
        )
        assert kept.closed_day_at(asked) == definition, asked
        seen.add(definition)
    assert {date(2026, 12, 24), date(2026, 12, 29)} <= seen  # across Christmas, Boxing Day and the closure


@pytest.mark.parametrize("text", ["2026-13-01", "20261120", "2026-11-20T00:00", "", "yesterday"])
def test_parse_trading_date_rejects_anything_but_yyyy_mm_dd(text: str) -> None:
    with pytest.raises(InvalidInputError, match="YYYY-MM-DD"):
        parse_trading_date(text)
