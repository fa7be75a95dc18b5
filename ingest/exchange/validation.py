"""Validation of one day's end-of-day data before any of it is stored.

Errors refuse the whole day (nothing is stored, the delivery is recorded as FAILED with
the reasons); warnings are kept in the manifest and do not block.

Errors:
- the page is for another date than the one asked for;
- a cell that could not be read (a malformed number is never guessed);
- a symbol twice on the quotes page;
- a symbol on the quotes page that is neither in the store's instruments nor on the day's
  securities list (a new listing must appear on the securities list: that is the
  explicit new-listing path);
- an active security on the securities list with no row on the quotes page;
- a fundamentals row without a report date (one that cannot be read is a cell that could
  not be read), dated after the trading day (the latest report would be one from the
  future, hiding every real one until then), for a symbol neither in the store nor on
  the securities list (as for a quotes row), with a share count that is not a whole
  number from 0 to `MAX_SHARES` or a negative market cap, or twice on the page for one
  symbol and report date (the store keeps one per symbol and report date);
- negative volume or trades, a close that is not positive, bid above ask, low above high;
  a volume or trades count over `market.money.MAX_SHARES` or a close over `MAX_PRICE`;
- a stale page: every traded row (five or more) repeats the previous stored session's row
  (low, high, close and volume, its previous close the row's or its close), the rule the historical
  importer applies to a copied day (`ingest.importers.formats.repeated_days`): the
  exchange served the previous session's page again under the new date, which the NSE
  crawler's files show happens (56 such days);
- a SPLIT notice whose ratio cannot be read (`split_factor`: the Amount column, shares
  after per share before, or "N for M" in the detail), lies outside 1/1,000 to 1,000 or
  is 1, or does not explain the day's close: the close times the factor must lie within
  the price band of the previous close and nearer to it than the close itself (the ratio
  explains the move better than no split), also on a day without trades, when the
  exchange restates the close on the new count; a SPLIT for a symbol with no row on the
  quotes page or no previous close cannot be checked and is refused too (holdings and
  the model's price history are adjusted by that factor, so a guessed one, or a close
  left on the old count, would misstate every position; a made-up 3-for-2 on a day the
  close did not move would create shares). A known limit of the rule: a small bonus
  issue on a day the price rose by more than half the bonus reads as no split, and the
  day is refused until the page is corrected or the row's status is CONFIRMED MOVE (the
  publisher confirms the close; a warning then);
- a DIVIDEND notice whose amount per share is negative or not finite, is not below the
  symbol's previous close (or the day's close, for a name without one), or is for a
  symbol neither in the store nor on the securities list (an empty or zero amount is a
  nil dividend or a withdrawn notice: it pays nothing, and reverses what was credited);
- a DIVIDEND or DELISTING notice with an amount whose Amount column names another currency
  than the trading one (the quotes page's, `Published.currency`, else the home currency):
  "Amount (USD)" on a JMD share would be paid, or value a delisted holding, as that many
  JMD a share; the day is refused, naming the notice, until the exchange restates it in
  the trading currency (a column naming no currency is read in the trading one);
- two notices of one kind for one symbol on one day (the store keeps one per symbol, day
  and kind: the exchange's special dividend beside a regular one is sent as one notice
  with the total);
- a close beyond the price band around the previous close (`ingest.exchange.band`:
  `price_band`, default 50%, is a factor either way, so 50% up or a third down), unless the
  day's notices carry a SPLIT for that symbol, or its row's status is CONFIRMED MOVE: the
  publisher states that the close is what traded (kept as a warning). Only the
  real-history replay marks rows so (`ingest/replay.py`: its files are the record, and
  the splits they do not record show up as jumps); a live exchange's jump still needs a
  split notice.
Repeats: a DIVIDEND or SPLIT notice whose symbol, kind, amount (a split's ratio) and
non-empty detail text are those of a notice stored for an earlier session of the last
`REPEAT_WINDOW_DAYS` (10) calendar days (`repeated_notices`) is the same announcement
shown again (a page that lists the recent notices): it is left out (a warning), neither
checked against the day's close as a new split nor stored under the new date, where it
would be paid or applied a second time. The window is short so that a monthly
distribution with the same amount and wording is a new notice; a notice without detail
text is never taken for a repeat; other kinds (HALT, RESUME, ...) pay nothing and are
stored as sent.
Warnings: a zero-volume row whose close differs from the previous close, a traded row
without trades count, a NEW LISTING status without a LISTING notice, a board that differs
from the securities list.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta

from ingest.exchange.band import band_text, beyond_band, split_explains
from ingest.importers.formats import repeated_days
from market.money import MAX_PRICE, MAX_SHARES
from market.settings import HOME_CURRENCY

MIN_SPLIT, MAX_SPLIT = 1 / 1000, 1000.0  # shares after per share before: beyond, a misread ratio
CONFIRMED_MOVE = "CONFIRMED MOVE"  # a row status: the publisher confirms a close outside the band
_NUMBER = r"(\d+(?:\.\d+)?)"
_FOR = re.compile(
    rf"{_NUMBER}\s*(?:new\s+)?(?:shares?\s+)?(?:-\s*)?for\s*(?:-\s*)?(?:every\s+)?{_NUMBER}", re.IGNORECASE
)
_INTO = re.compile(rf"{_NUMBER}\s+(?:shares?\s+)?into\s+{_NUMBER}", re.IGNORECASE)
_COLON = re.compile(rf"(?<![\d:.]){_NUMBER}\s*:\s*{_NUMBER}(?![\d:])(?!\s*(?:am|pm|a\.m|p\.m)\b)", re.IGNORECASE)
_TIME = re.compile(r"\b(?:at|effective|from)\s+\d{1,2}:\d{2}\b", re.IGNORECASE)


def split_factor(notice: dict) -> float | None:
    """Shares after per share before, from a SPLIT notice: its amount when that is a
    positive number, else the detail: "N for M" ("2 for 1", "1-for-10", "1 new for every
    5") is N new shares for every M held, N / M, and for a bonus issue ("bonus 1 for 5":
    one more share for every five) (M + N) / M; "N into M" (a consolidation, "10 into 1")
    is M / N; "N:M" (not a time of day) is read as "N for M". None when the detail says
    none of these, and T0 then refuses the day rather than guess."""
    amount = notice.get("amount")
    if isinstance(amount, (int, float)) and not isinstance(amount, bool) and math.isfinite(amount) and amount > 0:
        return float(amount)
    detail = _TIME.sub(" ", str(notice.get("detail") or ""))
    for pattern, into in ((_FOR, False), (_INTO, True), (_COLON, False)):
        match = pattern.search(detail)
        if match:
            first, second = float(match.group(1)), float(match.group(2))
            if first <= 0 or second <= 0:
                return None
            if into:
                return second / first
            return (second + first) / second if "bonus" in detail.lower() else first / second
    return None


_PAYMENT_WORD = re.compile(r"\b(?:payment|paid|payable)\b", re.IGNORECASE)
_PAYMENT = re.compile(
    r"\b(?:payment|paid|payable)(?:\s+date)?\s*(?:on\b\s*:?|:)?\s*"
    r"(\d{4}[-/]\d{1,2}[-/]\d{1,2}|\d{1,2}\s+[A-Za-z]{3,9}\.?,?\s+\d{4}|[A-Za-z]{3,9}\.?\s+\d{1,2},?\s+\d{4})",
    re.IGNORECASE,
)
_WRITTEN_DATES = ("%d %B %Y", "%d %b %Y", "%B %d %Y", "%b %d %Y")


def states_payment(detail: object) -> bool:
    """Whether a notice's text speaks of its payment at all ("payment", "paid", "payable"):
    one that does and whose date `payment_date` cannot read is not paid at its ex-date
    (portfolio/dividends.py holds it back) and T0 warns of it (`_check_dividend`)."""
    return _PAYMENT_WORD.search(_notice_text(detail)) is not None


def payment_date(detail: object) -> date | None:
    """The payment date a DIVIDEND notice states, read off its detail: the exchange's text
    ("ex-date 2026-11-10, payment 2026-12-01", as ingest/simulator/market.py writes it;
    also "paid on", "payable:", "payment date", a date as 2026/12/01, "1 December 2026" or
    "December 1, 2026") or a stored row's detail ({"text": ...}). None when the text
    states none or one that is no date (2026-12-32). A notice that says nothing of its
    payment is paid at its ex-date; one that does and cannot be read is held back
    (portfolio/dividends.py). The historical importers store no DIVIDEND notices
    (ingest/importers/files.py keeps splits and delistings), so this is the one reader."""
    match = _PAYMENT.search(_notice_text(detail))
    if match is None:
        return None
    said = " ".join(match.group(1).replace(",", " ").replace(".", " ").split())
    try:
        if said[:4].isdigit():
            year, month, day = (int(x) for x in re.split(r"[-/]", said))
            return date(year, month, day)
        for form in _WRITTEN_DATES:
            try:
                return datetime.strptime(said, form).date()
            except ValueError:
                continue
    except ValueError:
        return None
    return None


def _notice_text(detail: object) -> str:
    text = detail.get("text") if isinstance(detail, dict) else detail
    return str(text or "")


REPEAT_WINDOW_DAYS = 10
REPEATABLE = ("DIVIDEND", "SPLIT")  # the kinds a second copy would pay or apply again


def _notice_key(kind: object, symbol: object, amount: object, detail: object) -> tuple | None:
    text = " ".join(str(detail or "").split())
    if not text or kind not in REPEATABLE:
        return None
    number = float(amount) if isinstance(amount, (int, float)) and not isinstance(amount, bool) else None
    return (symbol, kind, None if number is None or not math.isfinite(number) else round(number, 9), text)


def repeated_notices(notices: list[dict], earlier: list[dict]) -> list[tuple[dict, date]]:
    """The day's notices that repeat one stored for an earlier session (`earlier`: stored
    corporate_actions rows, amount as stored, i.e. a split's ratio, and detail {"text"}),
    each with the date it was first stored."""
    seen = {}
    for row in sorted(earlier, key=lambda r: r["action_date"], reverse=True):
        key = _notice_key(row["kind"], row["symbol"], row["amount"], (row.get("detail") or {}).get("text"))
        if key is not None:
            seen[key] = row["action_date"]
    found = []
    for notice in notices:
        amount = split_factor(notice) if notice.get("kind") == "SPLIT" else notice.get("amount")
        key = _notice_key(notice.get("kind"), notice.get("symbol"), amount, notice.get("detail"))
        if key in seen:
            found.append((notice, seen[key]))
    return found


@dataclass
class Verdict:
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Published:
    """What the exchange's pages say of a day: the trade-quotes page's date and rows, its
    notices, the active securities, the market's index levels (symbol, level; each
    once, a level a positive number) and the fundamentals page's rows."""

    page_date: date | None
    quotes: list[dict]
    notices: list[dict]
    securities: list[dict]
    indices: list[dict] = field(default_factory=list)
    fundamentals: list[dict] = field(default_factory=list)
    currency: str | None = None  # the trading currency the quotes page names; None: the home currency


@dataclass(frozen=True)
class Known:
    """What the store knows before the day: its symbols, each one's previous close, the
    price band a close may move within, and the latest stored session before the day with
    its rows by symbol, for the stale-page rule (None: the rule is not applied)."""

    symbols: set[str]
    previous_close: dict[str, float]
    price_band: float
    previous_day: tuple[date, dict[str, dict]] | None = None


def validate_day(day: date, published: Published, known: Known) -> Verdict:
    """The day's verdict on what its pages say, against what the store knows.

    The errors come in this order: the index levels, the page's date, a stale page, two
    notices of a kind, the money notices' currency, the SPLIT notices, the DIVIDEND
    notices, the quotes' rows (each
    with its warnings), the active securities missing from the quotes page."""
    page_date, quotes, notices = published.page_date, published.quotes, published.notices
    securities, indices = published.securities, published.indices
    known_symbols, previous_close, price_band = known.symbols, known.previous_close, known.price_band
    previous_day = known.previous_day
    verdict = Verdict()
    _check_indices(indices, verdict)
    if page_date != day:
        verdict.errors.append(f"the trade-quotes page is for {page_date}, not {day.isoformat()}")
    if previous_day is not None:
        _check_stale(day, quotes, previous_day, verdict)
    names = _Names(
        known=known_symbols,
        listed={s["symbol"]: s for s in securities},
        listings={n["symbol"] for n in notices if n.get("kind") == "LISTING"},
    )
    _check_notice_counts(notices, verdict)
    _check_notice_currency(notices, published.currency or HOME_CURRENCY, verdict)
    quoted = {row["symbol"]: row for row in quotes}
    splits = _check_splits(notices, quoted, previous_close, verdict)
    for notice in notices:
        if notice.get("kind") == "DIVIDEND":
            _check_dividend(
                {**notice, "action_date": day},  # the ex-date: the day T0 stores it for
                quoted.get(notice.get("symbol")),
                previous_close,
                known_symbols | set(names.listed),
                verdict,
            )
    seen = _check_quotes(quotes, names, splits, previous_close, price_band, verdict)
    _check_missing(day, names.listed, seen, verdict)
    _check_fundamentals(day, published.fundamentals, names, verdict)
    return verdict


@dataclass(frozen=True)
class _Names:
    """The symbols a day's quotes are checked against."""

    known: set[str]  # the store's instruments
    listed: dict[str, dict]  # the day's securities list, by symbol
    listings: set[str]  # the symbols with a LISTING notice on the day


def _check_indices(indices: list[dict], verdict: Verdict) -> None:
    """Each index once on the page, its level a positive number."""
    for symbol, count in Counter(x.get("symbol") for x in indices).items():
        if count > 1:
            verdict.errors.append(f"index {symbol}: {count} levels on one page (one per index and day)")
    for x in indices:
        level = x.get("level")
        if not x.get("symbol") or level is None or not math.isfinite(level) or level <= 0:
            verdict.errors.append(f"index {x.get('symbol') or '(no name)'}: level {level} is not a positive number")


def _check_stale(day: date, quotes: list[dict], previous_day: tuple[date, dict[str, dict]], verdict: Verdict) -> None:
    """A stale page: the previous session's served again under `day` (`repeated_days`)."""
    before, rows = previous_day
    both = [{**row, "symbol": symbol, "trading_date": before} for symbol, row in rows.items()]
    both += [{**row, "trading_date": day} for row in quotes]
    if day in repeated_days(both, untraded=False):  # the calendar has no holiday sessions
        verdict.errors.append(
            f"every traded row repeats {before.isoformat()}'s verbatim (low, high, close, previous "
            f"close, volume): the previous session's page served again, not {day.isoformat()}'s"
        )


def _check_notice_counts(notices: list[dict], verdict: Verdict) -> None:
    """One notice per symbol, day and kind (the store keeps one)."""
    for (symbol, kind), count in Counter((n.get("symbol"), n.get("kind")) for n in notices).items():
        if count > 1:
            verdict.errors.append(
                f"{symbol}: {count} {kind} notices on one day (one per symbol, day and kind is kept: "
                "send one notice with the total)"
            )


MONEY_NOTICES = ("DIVIDEND", "DELISTING")  # an amount of money per share: paid, or a delisted holding's value


def _check_notice_currency(notices: list[dict], trading: str, verdict: Verdict) -> None:
    """A money notice with an amount in another currency than `trading` (its `currency`,
    the one the Amount column names) is refused: it would be stored, and paid, as that many
    of the trading currency. Nothing is converted: no rate is guessed."""
    for n in notices:
        currency, amount = n.get("currency"), n.get("amount")
        if n.get("kind") in MONEY_NOTICES and amount and currency and currency != trading:
            verdict.errors.append(
                f"{n.get('symbol')}: {n['kind']} notice of {amount:g} per share is in {currency} (its Amount "
                f"column), not the trading currency {trading}: refused until the exchange restates it in {trading}"
            )


def _check_splits(
    notices: list[dict], quoted: dict[str, dict], previous_close: dict[str, float], verdict: Verdict
) -> dict[str, float | None]:
    """The day's SPLIT notices' factors by symbol (None: no ratio could be read). A
    factor that cannot be read, is out of range or is 1 is refused, and so is a split
    that cannot be checked against a close (no quotes row or no previous close); the
    close itself is checked with the row (`_check_row`)."""
    splits = {n["symbol"]: split_factor(n) for n in notices if n.get("kind") == "SPLIT"}
    for symbol, factor in splits.items():
        previous = previous_close.get(symbol, (quoted.get(symbol) or {}).get("prev_close"))
        if factor is None:
            verdict.errors.append(
                f"{symbol}: SPLIT notice without a ratio (Amount: shares after per share before, "
                "or 'N for M' in the detail)"
            )
        elif not MIN_SPLIT <= factor <= MAX_SPLIT or factor == 1:
            verdict.errors.append(
                f"{symbol}: SPLIT ratio {factor:g} is not a split (shares after per share before "
                f"must be from 1/{MAX_SPLIT:g} to {MAX_SPLIT:g}, and not 1)"
            )
        elif symbol not in quoted or not previous:
            verdict.errors.append(
                f"{symbol}: SPLIT notice for a symbol with no row on the trade-quotes page or no "
                "previous close: its ratio cannot be checked against a close"
            )
    return splits


def _check_quotes(
    quotes: list[dict],
    names: _Names,
    splits: dict[str, float | None],
    previous_close: dict[str, float],
    price_band: float,
    verdict: Verdict,
) -> set[str]:
    """Each quotes row: once on the page, for a known or listed symbol, its figures
    (`_check_row`, with the day's split factor where it is readable: an unreadable one
    was refused in `_check_splits`), its status and board. Returns the symbols quoted."""
    seen: set[str] = set()
    for row in quotes:
        symbol = row["symbol"]
        if symbol in seen:
            verdict.errors.append(f"{symbol}: appears twice on the trade-quotes page")
            continue
        seen.add(symbol)
        if symbol not in names.known and symbol not in names.listed:
            verdict.errors.append(f"{symbol}: unknown symbol (not in the store and not on the securities list)")
        factor = splits.get(symbol)
        readable = factor is not None and MIN_SPLIT <= factor <= MAX_SPLIT and factor != 1
        previous = previous_close.get(symbol, row.get("prev_close"))
        _check_row(row, previous, factor if readable else None, symbol in splits, price_band, verdict)
        if row.get("status") == "NEW LISTING" and symbol not in names.listings:
            verdict.warnings.append(f"{symbol}: marked NEW LISTING without a LISTING notice")
        if symbol in names.listed and names.listed[symbol]["board"] != row["board"]:
            verdict.warnings.append(
                f"{symbol}: on the {row['board']} board page but listed on {names.listed[symbol]['board']}"
            )
    return seen


def _check_missing(day: date, listed: dict[str, dict], seen: set[str], verdict: Verdict) -> None:
    """Every security active on `day` (listed by then, not delisted) has a quotes row."""
    for symbol, security in listed.items():
        active = security["status"] == "ACTIVE" and (security["delisted_on"] is None or security["delisted_on"] > day)
        if active and security["listed_on"] <= day and symbol not in seen:
            verdict.errors.append(f"{symbol}: active security missing from the trade-quotes page")


def _check_fundamentals(day: date, rows: list[dict], names: _Names, verdict: Verdict) -> None:
    """Each fundamentals row, named by its symbol and report date: the date given and not
    after `day`, once on the page, a known or listed symbol (as a quotes row's), a share
    count from 0 to MAX_SHARES and a market cap that is not negative."""
    seen: set[tuple] = set()
    for row in rows:
        symbol, reported = row["symbol"], row.get("report_date")
        name = f"fundamentals {symbol} " + (f"reported {reported.isoformat()}" if reported else "(no report date)")
        if (symbol, reported) in seen:
            verdict.errors.append(f"{name}: twice on the page (one row per symbol and report date is kept)")
            continue
        seen.add((symbol, reported))
        if reported is None:
            verdict.errors.append(f"{name}: the report date is required")
        elif reported > day:
            verdict.errors.append(f"{name}: report date is after the trading day {day.isoformat()}")
        if symbol not in names.known and symbol not in names.listed:
            verdict.errors.append(f"{name}: unknown symbol (not in the store and not on the securities list)")
        shares, cap = row.get("shares_outstanding"), row.get("market_cap")
        if shares is not None and not 0 <= shares <= MAX_SHARES:
            verdict.errors.append(
                f"{name}: shares outstanding {shares:,} is not a whole number from 0 to {MAX_SHARES:,}"
            )
        if cap is not None and cap < 0:
            verdict.errors.append(f"{name}: market cap {cap:,g} is negative")


def _check_dividend(
    notice: dict, row: dict | None, previous_close: dict[str, float], symbols: set[str], verdict: Verdict
) -> None:
    """A DIVIDEND notice pays its amount on every share held: it must be a number a share
    can pay (finite, not negative, below the share's price) for a symbol the store knows."""
    symbol, amount = notice.get("symbol"), notice.get("amount")
    if symbol not in symbols:
        verdict.errors.append(
            f"{symbol}: DIVIDEND notice for an unknown symbol (not in the store and not on the securities list)"
        )
        return
    if amount is None or amount == 0:
        return  # a nil dividend, or a notice withdrawn: pays nothing (and reverses what was credited)
    if isinstance(amount, bool) or not isinstance(amount, (int, float)) or not math.isfinite(amount) or amount < 0:
        verdict.errors.append(f"{symbol}: DIVIDEND amount {amount!r} is not a finite amount per share of zero or more")
        return
    _check_payment(notice, verdict)
    price = previous_close.get(symbol) or (row or {}).get("prev_close") or (row or {}).get("close")
    if not price:
        verdict.errors.append(
            f"{symbol}: DIVIDEND of {amount:g} per share for a name with no price to check it against"
        )
    elif amount >= price:
        verdict.errors.append(
            f"{symbol}: DIVIDEND of {amount:g} per share is not below the share's price {price:g} "
            "(an amount per share, not a total?)"
        )


def _check_payment(notice: dict, verdict: Verdict) -> None:
    """A warning where a DIVIDEND notice speaks of its payment and its date cannot be read,
    or falls before the ex-date (its `action_date`: `validate_day` gives the day) or more
    than a year after it: the service holds such a dividend back from withdrawals until the
    notice is corrected (portfolio/dividends.py)."""
    symbol, detail, ex_date = notice.get("symbol"), notice.get("detail"), notice.get("action_date")
    if not states_payment(detail):
        return
    paid = payment_date(detail)
    if paid is None:
        verdict.warnings.append(
            f"{symbol}: DIVIDEND notice speaks of its payment but no date can be read from "
            f"'{_notice_text(detail)[:120]}'; clients cannot withdraw it until the notice is corrected"
        )
    elif isinstance(ex_date, date) and not ex_date <= paid <= ex_date + timedelta(days=366):
        verdict.warnings.append(
            f"{symbol}: DIVIDEND payment date {paid.isoformat()} is not within a year after its ex-date "
            f"{ex_date.isoformat()}; clients cannot withdraw it until the notice is corrected"
        )


def _check_counts(row: dict, verdict: Verdict) -> None:
    """A row's volume and trades count: whole numbers from 0 to MAX_SHARES."""
    symbol, volume, trades = row["symbol"], row.get("volume"), row.get("trades")
    if volume is None or volume < 0:
        verdict.errors.append(f"{symbol}: volume {volume} is not a non-negative whole number")
    elif volume > MAX_SHARES:
        verdict.errors.append(f"{symbol}: volume {volume:,} is over the limit of {MAX_SHARES:,} shares")
    if trades is not None and trades < 0:
        verdict.errors.append(f"{symbol}: negative trades count {trades}")
    elif trades is not None and trades > MAX_SHARES:
        verdict.errors.append(f"{symbol}: trades count {trades:,} is over the limit of {MAX_SHARES:,}")


def _check_row(
    row: dict, previous: float | None, factor: float | None, split: bool, band: float, verdict: Verdict
) -> None:
    symbol = row["symbol"]
    volume, close = row.get("volume"), row.get("close")
    _check_counts(row, verdict)
    if close is None or close <= 0:
        verdict.errors.append(f"{symbol}: close {close} is not a positive price")
        return
    if close > MAX_PRICE:
        verdict.errors.append(f"{symbol}: close {close:,} is over the limit of {MAX_PRICE:,}")
        return
    bid, ask = row.get("bid"), row.get("ask")
    if bid is not None and ask is not None and bid > ask:
        verdict.errors.append(f"{symbol}: closing bid {bid} is above closing ask {ask}")
    if row.get("low") is not None and row.get("high") is not None and row["low"] > row["high"]:
        verdict.errors.append(f"{symbol}: low {row['low']} is above high {row['high']}")
    if previous and factor and not split_explains(previous, close, factor, band):  # untraded too: restated
        unexplained = (
            f"{symbol}: the SPLIT notice's ratio {factor:g} does not explain the close {close} after "
            f"{previous} (on the new count it must be within the band, {band_text(band)}, of the previous close "
            "and nearer to it than without the split)"
        )
        if row.get("status") == CONFIRMED_MOVE and not beyond_band(previous, close * factor, band):
            # a small bonus issue on a day the price rose by more than half of it: the publisher confirms the close
            verdict.warnings.append(f"{unexplained}: accepted, the page confirms the close ({CONFIRMED_MOVE})")
        else:
            verdict.errors.append(unexplained)
    if previous and not split and beyond_band(previous, close, band):
        move = f"{symbol}: close {close} is {abs(close / previous - 1):.0%} from the previous close {previous}"
        if row.get("status") == CONFIRMED_MOVE:
            verdict.warnings.append(
                f"{move}, beyond the band ({band_text(band)}): accepted, the page confirms it ({CONFIRMED_MOVE})"
            )
        else:
            verdict.errors.append(f"{move} (band {band_text(band)}, no split notice)")
    if volume == 0 and previous and close != previous:
        verdict.warnings.append(f"{symbol}: no volume but the close moved from {previous} to {close}")
    if volume and not row.get("trades"):
        verdict.warnings.append(f"{symbol}: volume {volume} without a trades count")
