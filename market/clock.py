"""Exchange time and the trading calendar.

The exchange keeps America/Jamaica time (UTC-5 all year, no daylight saving). A trading
day is a weekday that is not a Jamaican public holiday, as published by the `holidays`
package for country `JM` (observed dates included: Labour Day on a Saturday closes the
following Monday). Extra closures (a special market holiday) can be added per calendar.

Stored timestamps are UTC; `exchange_iso()` renders one as ISO 8601 without offset in
exchange time, the format the API uses where the spec asks for it.

Dates a caller gives (query parameters, GraphQL arguments, cursors; the CLI's and the
stages' trading dates) must lie within `SUPPORTED_DATES`: the service computes warm-up
windows and next days around them, and Python's dates end at 0001-01-01 and 9999-12-31, so
`supported_date` (the API's) and `parse_trading_date` (the CLI's and the pipeline's) refuse
anything outside with a clear InvalidInputError instead of an overflow deep in a read.
"""

from __future__ import annotations

import bisect
import hashlib
import re
from collections.abc import Iterable, Iterator
from datetime import UTC, date, datetime, time, timedelta
from functools import lru_cache
from pathlib import Path
from zoneinfo import ZoneInfo

from holidays.countries.jamaica import Jamaica

from market.errors import ConfigurationError, InvalidInputError
from market.settings import get_settings

SUPPORTED_DATES = (date(1900, 1, 1), date(2199, 12, 31))
# A date as callers give it, and nothing else (`supported_date`, `parse_trading_date`).
ISO_DAY = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
EXCHANGE_TZ = ZoneInfo("America/Jamaica")
MARKET_CLOSE = time(16, 0)  # end-of-day data is final from here on (T0)
# The sessions a year every annualised figure counts (volatility, returns, turnover, ratios):
# about what the JSE and NSE calendars hold (weekends and about ten public holidays out)
TRADING_DAYS_PER_YEAR = 250


def supported_date(value: object, name: str) -> date:
    """`value` (a date or its text YYYY-MM-DD) as a date within SUPPORTED_DATES, or
    InvalidInputError naming `name`, the range and what was given. Text is YYYY-MM-DD and
    nothing else: a time or an offset is refused, not dropped (2026-11-20T00:00+14:00 is the
    19th at the exchange), and so are a number and the ISO basic and week forms."""
    if isinstance(value, str):
        try:
            if not ISO_DAY.fullmatch(value):
                raise ValueError
            value = date.fromisoformat(value)
        except ValueError:
            raise InvalidInputError(f"{name} must be a date YYYY-MM-DD, not '{value[:40]}'") from None
    if isinstance(value, datetime) or not isinstance(value, date):
        raise InvalidInputError(f"{name} must be a date YYYY-MM-DD, not {type(value).__name__}")
    return _within_supported(value, f"{name} ")


def _within_supported(value: date, named: str) -> date:
    """`value` when it lies within SUPPORTED_DATES, else InvalidInputError naming the range."""
    first, last = SUPPORTED_DATES
    if not first <= value <= last:
        raise InvalidInputError(
            f"{named}{value.isoformat()} is outside the supported dates {first.isoformat()} to {last.isoformat()}"
        )
    return value


WEEKDAY_NAMES = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")  # date.weekday()'s order
MONDAY_TO_FRIDAY = frozenset(range(5))  # the weekdays this exchange's calendar trades


def session_weekdays(text: str) -> frozenset[int]:
    """The weekdays a market trades (`date.weekday()` numbers), from a range of three-letter
    names, `Mon-Fri` or `Sun-Thu` (wrapping past Sunday), or a list, `Mon,Wed,Fri` (any
    case, spaces ignored); InvalidInputError for anything else."""
    names = {n.lower(): i for i, n in enumerate(WEEKDAY_NAMES)}
    parts = text.replace(" ", "").lower()
    try:
        if "-" in parts:
            first, last = (names[p] for p in parts.split("-"))
            return frozenset((first + k) % 7 for k in range((last - first) % 7 + 1))
        return frozenset(names[p] for p in parts.split(","))
    except (KeyError, ValueError):
        raise InvalidInputError(
            f"weekdays {text!r}: expected a range such as Mon-Fri or Sun-Thu, or a list such as Mon,Tue,Wed,Thu "
            f"(three-letter names: {', '.join(WEEKDAY_NAMES)})"
        ) from None


def weekdays_text(weekdays: frozenset[int]) -> str:
    """`weekdays` as three-letter names in the week's order from Monday: 'Mon, Tue, Wed, Thu, Fri'."""
    return ", ".join(WEEKDAY_NAMES[d] for d in sorted(weekdays))


class TradingCalendar:
    """Weekdays minus Jamaican public holidays, minus any extra closures given."""

    # `closed_day_at`'s last answer and its span; a class default, so a subclass with its own
    # constructor (DatedCalendar) has it too
    _closed: tuple[date, datetime, datetime] | None = None

    def __init__(self, extra_closures: Iterable[date] = ()) -> None:
        self._extra = frozenset(extra_closures)
        # Jamaica's calendar by its class: `holidays.country_holidays("JM")` gives the same
        # days but first imports every country's module (about 0.1 s of each process's start).
        self._holidays = Jamaica()  # fills years lazily on lookup

    def closed_day_at(self, moment: datetime) -> date:
        """The most recent trading day whose 16:00 close has passed at `moment`. That day
        stays the answer from its close to the next trading day's close, so the last answer
        is kept with that span: a server asks on every request (which day a kept market
        read is for), and working it out converts the moment to exchange time and may walk
        back over a weekend and holidays."""
        kept = self._closed
        if kept is not None and moment.tzinfo is not None and kept[1] <= moment < kept[2]:
            return kept[0]
        local = moment.astimezone(EXCHANGE_TZ)
        day = local.date()
        if not (self.is_trading_day(day) and local.time() >= MARKET_CLOSE):
            day = self.previous_trading_day(day)
        self._closed = (day, session_close_utc(day), session_close_utc(self.next_trading_day(day)))
        return day

    def holiday_name(self, day: date) -> str | None:
        if day in self._extra:
            return "Exchange closure"
        return self._holidays.get(day)

    def is_trading_day(self, day: date) -> bool:
        return day.weekday() in MONDAY_TO_FRIDAY and self.holiday_name(day) is None

    def closed_reason(self, day: date) -> str | None:
        """Why the exchange is closed on `day`, or None when it trades."""
        if day.weekday() not in MONDAY_TO_FRIDAY:
            return f"{day.isoformat()} is a {day.strftime('%A')}"
        if day in self._extra:
            return f"{day.isoformat()} is an exchange closure (MARKETINTEL_EXCHANGE_CLOSURES)"
        name = self.holiday_name(day)
        return f"{day.isoformat()} is a public holiday ({name})" if name else None

    def next_trading_day(self, day: date) -> date:
        """The first trading day strictly after `day`."""
        candidate = day + timedelta(days=1)
        while not self.is_trading_day(candidate):
            candidate += timedelta(days=1)
        return candidate

    def previous_trading_day(self, day: date) -> date:
        """The last trading day strictly before `day`."""
        candidate = day - timedelta(days=1)
        while not self.is_trading_day(candidate):
            candidate -= timedelta(days=1)
        return candidate

    def trading_days(self, start: date, end: date) -> list[date]:
        """Trading days from `start` to `end`, both included."""
        return list(self._iter_trading_days(start, end))

    def trading_days_between(self, start: date, end: date) -> int:
        """How many trading days lie after `start` up to and including `end`.

        Consecutive trading days are 1 apart, a Friday and the next Monday too; the
        result is negative when `end` is before `start`, so it reads as a signed distance.
        """
        if end < start:
            return -self.trading_days_between(end, start)
        return sum(1 for _ in self._iter_trading_days(start + timedelta(days=1), end))

    def add_trading_days(self, day: date, count: int) -> date:
        """The trading day `count` trading days after (or before, if negative) `day`."""
        step = self.next_trading_day if count >= 0 else self.previous_trading_day
        for _ in range(abs(count)):
            day = step(day)
        return day

    def latest_trading_day(self, day: date) -> date:
        """`day` itself if the exchange trades then, else the trading day before it."""
        return day if self.is_trading_day(day) else self.previous_trading_day(day)

    def session_of(self, moment: datetime) -> date:
        """The session a client's trade made at `moment` belongs to, and the day a client's
        holdings are counted at then: the exchange date's session, or the last one before it
        on a weekend or holiday. One rule (docs/portfolio.md, "When a trade counts"): a
        manual trade is dated by it, a sell may sell what the trades dated on or before it
        hold, and a position shows the shares of trades dated after it (a suggestion
        confirmed ahead of its session) as pending until their session."""
        return self.latest_trading_day(exchange_date(moment))

    def _iter_trading_days(self, start: date, end: date) -> Iterator[date]:
        day = start
        while day <= end:
            if self.is_trading_day(day):
                yield day
            day += timedelta(days=1)


class DatedCalendar(TradingCalendar):
    """A calendar defined by an explicit set of trading dates: the sessions a replay's
    files record (see `ingest/replay.py`).

    From the first to the last date given, a day trades exactly when it is in the set (a
    weekday with no file was a closure: a Kenyan holiday, say). Outside that span the
    dates say nothing, so every weekday counts as a trading day there: the day after the
    last replayed session still has a next trading day (T2 suggests for it) and no
    search for one runs forever.
    """

    def __init__(self, dates: Iterable[date]) -> None:
        self.dates: list[date] = sorted(set(dates))
        if not self.dates:
            raise InvalidInputError("a dated calendar needs at least one trading date")
        self._set = frozenset(self.dates)
        self.first, self.last = self.dates[0], self.dates[-1]

    def holiday_name(self, day: date) -> str | None:
        if self.first <= day <= self.last and day.weekday() in MONDAY_TO_FRIDAY and day not in self._set:
            return "No session in the replayed files"
        return None

    def is_trading_day(self, day: date) -> bool:
        if self.first <= day <= self.last:
            return day in self._set
        return day.weekday() in MONDAY_TO_FRIDAY

    def closed_reason(self, day: date) -> str | None:
        if self.is_trading_day(day):
            return None
        if day.weekday() not in MONDAY_TO_FRIDAY:
            return f"{day.isoformat()} is a {day.strftime('%A')}"
        return f"{day.isoformat()} has no session in the replayed files ({self.first} to {self.last})"

    def _iter_trading_days(self, start: date, end: date) -> Iterator[date]:
        if start < self.first:
            yield from _weekdays(start, min(end, self.first - timedelta(days=1)))
        low, high = bisect.bisect_left(self.dates, start), bisect.bisect_right(self.dates, end)
        yield from self.dates[low:high]
        if end > self.last:
            yield from _weekdays(max(start, self.last + timedelta(days=1)), end)


def _weekdays(start: date, end: date) -> Iterator[date]:
    day = start
    while day <= end:
        if day.weekday() in MONDAY_TO_FRIDAY:
            yield day
        day += timedelta(days=1)


def default_calendar() -> TradingCalendar:
    """The calendar every process uses: weekdays minus Jamaican holidays; under
    `MARKETINTEL_REPLAY_PATH`, the dates of the replayed files (read from the index that
    building the replay writes, see `replay_dates_file`)."""
    settings = get_settings()
    if settings.replay_path is None:
        return _jamaica_calendar(frozenset(settings.exchange_closures))
    return _replay_calendar(replay_dates_file(settings.data_dir, settings.replay_path), Path(settings.replay_path))


@lru_cache(maxsize=4)
def _jamaica_calendar(closures: frozenset[date]) -> TradingCalendar:
    """The Jamaican calendar with the operator's unscheduled closures
    (`MARKETINTEL_EXCHANGE_CLOSURES`), one per set of closures (settings are re-read in tests)."""
    return TradingCalendar(closures)


# ---- the replay's dates, shared by every process ----------------------------------------
# The dates of a replay live in its files, and only ingest can read those formats (market
# must not import ingest). So building a replay (`ingest.replay.ReplayMarket`) writes its
# dates to an index file under the data folder, keyed by the files' path, and any process
# started with MARKETINTEL_REPLAY_PATH reads them from there. The index records a
# signature of the files (names, sizes, modification times): when the files change the
# index is stale and refused until the replay is built again.

# The version of the rules that turn files into trading dates; an index written under other
# rules is stale like one written from other files. 2: the days that copy the session
# before are not sessions (ingest.importers.formats.repeated_days); 3: nor is a day of
# untraded rows all at the day before's closes (a holiday's file).
REPLAY_CALENDAR_RULES = 3


def replay_signature(path: Path) -> str:
    """A cheap fingerprint of the .csv files under `path` (or of `path` itself) and of the
    calendar rules' version."""
    path = Path(path)
    files = [path] if path.is_file() else sorted(path.rglob("*.csv"))
    digest = hashlib.sha256(f"{path.resolve()}\nrules {REPLAY_CALENDAR_RULES}".encode())
    for file in files:
        stat = file.stat()
        digest.update(
            f"\n{file.relative_to(path) if file != path else file.name}:{stat.st_size}:{stat.st_mtime_ns}".encode()
        )
    return digest.hexdigest()


def replay_dates_file(data_dir: Path, path: Path) -> Path:
    key = hashlib.sha256(str(Path(path).resolve()).encode()).hexdigest()[:16]
    return Path(data_dir) / "replay" / f"calendar-{key}.txt"


def write_replay_dates(data_dir: Path, path: Path, dates: Iterable[date]) -> Path:
    """Record the trading dates of the replay built from `path` for every other process."""
    target = replay_dates_file(data_dir, path)
    target.parent.mkdir(parents=True, exist_ok=True)
    lines = [f"# trading dates of the replay of {Path(path).resolve()}", f"signature {replay_signature(path)}"]
    temporary = target.with_suffix(".tmp")
    temporary.write_text("\n".join(lines + [d.isoformat() for d in sorted(set(dates))]) + "\n")
    temporary.replace(target)
    _replay_calendar.cache_clear()
    return target


@lru_cache(maxsize=4)
def _replay_calendar(index: Path, path: Path) -> DatedCalendar:
    """Read (and check) once per process; building the replay again clears this."""
    if not index.is_file():
        raise ConfigurationError(
            f"MARKETINTEL_REPLAY_PATH is set but its calendar has not been built yet ({index} is missing); "
            "build the replay once, e.g. `marketintel exchange serve --replay PATH`"
        )
    lines = index.read_text().splitlines()
    if f"signature {replay_signature(path)}" not in lines[:2]:
        raise ConfigurationError(
            f"the replay calendar {index} is stale: the files (or the calendar rules) changed since it was built; "
            "build the replay again"
        )
    return DatedCalendar(date.fromisoformat(line) for line in lines[2:] if line)


def latest_closed_trading_day(moment: datetime, calendar: TradingCalendar | None = None) -> date:
    """The most recent trading day whose 16:00 close has passed at `moment`
    (`TradingCalendar.closed_day_at`)."""
    return (calendar or default_calendar()).closed_day_at(moment)


def exchange_now() -> datetime:
    return datetime.now(EXCHANGE_TZ)


def utc_now() -> datetime:
    return datetime.now(UTC)


def exchange_date(moment: datetime) -> date:
    """The calendar date on the exchange's wall clock at `moment` (aware datetimes only)."""
    if moment.tzinfo is None:
        raise InvalidInputError("a naive datetime has no place on the exchange clock; give a timezone")
    return moment.astimezone(EXCHANGE_TZ).date()


def session_close_utc(day: date) -> datetime:
    """The 16:00 exchange-time close of `day`, as a UTC instant."""
    return datetime.combine(day, MARKET_CLOSE, tzinfo=EXCHANGE_TZ).astimezone(UTC)


def exchange_day_end_utc(day: date) -> datetime:
    """The last instant (microsecond) of `day` at the exchange, as a UTC instant: what was
    recorded by then is what was known by the end of that day."""
    return datetime.combine(day + timedelta(days=1), time(0), tzinfo=EXCHANGE_TZ).astimezone(UTC) - timedelta(
        microseconds=1
    )


def exchange_iso(moment: datetime) -> str:
    """ISO 8601 in exchange time without offset, e.g. '2026-11-20T16:05:00'."""
    return exchange_date_time(moment).isoformat(timespec="seconds")


def exchange_date_time(moment: datetime) -> datetime:
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)  # stored timestamps are UTC
    return moment.astimezone(EXCHANGE_TZ).replace(tzinfo=None)


def parse_trading_date(value: str | date) -> date:
    """The trading date an operator or a pipeline gives (the CLI's dates, a stage's, an
    Airflow run's): YYYY-MM-DD parsed strictly, anything else an InvalidInputError naming the
    value (an ISO week date, "2026-W47-5", is ten characters too, and `date.fromisoformat`
    reads it); a date already parsed is taken as it is. Either is held to SUPPORTED_DATES,
    the one range `supported_date` holds the API's dates to: a stage for 0001-01-01 ran and
    failed on an overflow (a year-1 STARTED and FAILED recorded), where now it is refused
    before anything runs."""
    if isinstance(value, date) and not isinstance(value, datetime):
        return _within_supported(value, "")
    try:
        if not isinstance(value, str) or not ISO_DAY.fullmatch(value):
            raise ValueError
        day = date.fromisoformat(value)
    except (TypeError, ValueError):
        raise InvalidInputError(f"'{value}' is not a date in YYYY-MM-DD form") from None
    return _within_supported(day, "")
