"""What a broker statement may say about a name, checked against what the store knows of it.

A statement whose figures add up can still describe holdings no account could have. A
reconciler compares each line with the security master and the name's trading record, as
of the statement's date, and either refuses the statement (a break the client must take
up with the broker) or books it and flags the line. One rule, here; `portfolio/statements.py`
applies it to every statement, in a preview and a sync alike.

Refused (StatementRejected, 422, the attempt kept as REJECTED), each naming the line:

- **More shares than the company has.** A holding larger than the shares outstanding the
  company last reported on or before the statement's date (`fundamentals`), on the
  statement date's share count (a split after the report multiplies it). No account can
  hold more than every share issued. Where no report gives the count, nothing is checked.
- **A name that had not traded.** A listed symbol with no traded session (a bar with
  volume) on or before the statement's date: nothing could have been bought at a price
  anyone traded at, and the book would have no price to value it or to sell it at. (An
  unlisted symbol is refused before this, `statements._acceptable`.)

Booked with a warning (the answer's `warnings`, in a preview too, and kept in the
attempt's `reason`), because the broker's figure may be right and the store's record short:

- **A price far from any the name traded at.** A sync trade's price (the statement's
  average cost for a buy, its market price or last trade price for a sale) more than
  `PRICE_BAND` times above the highest high, or below the lowest low divided by it, of
  the name's stored bars up to the statement's date (on the statement date's share count).
  An average cost can lie outside the traded range honestly (a position transferred in, a
  rights or bonus issue, trades before the stored history began); refusing it would leave
  the book out of step with the account. The price only sets the cost basis and the gains
  shown: no cash moves on a sync trade, and what the client can sell is the quantity,
  which is checked. The warning tells the client which figure to check with the broker.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass, replace
from datetime import date
from decimal import Decimal

from sqlalchemy import Connection

from portfolio.delisting import DelistingRule, stored_notices, stored_sessions, stored_settlements
from store import tables
from store.history import current_rows
from store.splits import Split, stored_splits

PRICE_BAND = Decimal(2)  # a sync price more than this factor outside the traded range is flagged
PRICE_PLACES = Decimal("0.000001")  # a price the service sets itself keeps six decimals (portfolio.ledger)


@dataclass(frozen=True)
class NameRecord:
    """What the store knows of one name up to a day, on that day's share count."""

    symbol: str
    lowest: Decimal | None  # the lowest low (or close) of its traded sessions
    highest: Decimal | None  # the highest high (or close) of its traded sessions
    last_close: Decimal | None  # its latest close of any bar, traded or not
    outstanding: int | None  # shares outstanding last reported, split-adjusted to the day
    reported: date | None  # the report that gave `outstanding`
    # the value per share the exchange pays holders of a name that stopped (the latest
    # DELISTING action with a positive amount dated after its last bar, up to the day:
    # portfolio/delisting.py `stored_settlements`), None where none does
    settlement: Decimal | None = None
    # the date of the exchange's DELISTING notice dated after its last bar, up to the day,
    # with or without an amount (`DelistingRule.notice`): with no `settlement`, holders were
    # paid nothing for the name (statements._drop_price); None where it has none
    delisted: date | None = None


def name_records(conn: Connection, symbols: set[str], day: date) -> dict[str, NameRecord]:
    """Each of `symbols`' record up to `day`: the range it traded in, its last close and the
    shares outstanding last reported, all on `day`'s share count (store.splits), and the
    value per share the exchange pays holders where it delisted the name (`_settled`)."""
    if not symbols:
        return {}
    wanted = sorted(symbols)
    p, f = tables.eod_prices.c, tables.fundamentals.c
    bars = current_rows(
        conn,
        tables.eod_prices,
        where=[p.symbol.in_(wanted), p.trading_date <= day],
        columns=["symbol", "trading_date", "low", "high", "close", "volume"],
    )
    reports = current_rows(
        conn,
        tables.fundamentals,
        where=[f.symbol.in_(wanted), f.report_date <= day],
        columns=["symbol", "report_date", "shares_outstanding"],
    )
    splits = stored_splits(conn, through=day, symbols=wanted)
    bars_of: dict[str, list[dict]] = {}
    for bar in bars:
        bars_of.setdefault(bar["symbol"], []).append(bar)
    records = {
        symbol: _record(
            symbol,
            bars_of.get(symbol, []),
            [r for r in reports if r["symbol"] == symbol],
            [s for s in splits if s.symbol == symbol],
        )
        for symbol in wanted
    }
    rule = DelistingRule(
        settlements=tuple(stored_settlements(conn, day, wanted)), notices=tuple(stored_notices(conn, day, wanted))
    )
    last_bars = [max(b["trading_date"] for b in bars) for bars in bars_of.values()]
    sessions = stored_sessions(conn, min(last_bars), day) if last_bars else []
    return {
        symbol: _settled(record, bars_of.get(symbol, []), rule, day, sessions) for symbol, record in records.items()
    }


def _settled(record: NameRecord, bars: list[dict], rule: DelistingRule, day: date, sessions: list[date]) -> NameRecord:
    """The record with the exchange's DELISTING notice of the name dated after its last bar,
    or on it with no bar since (`DelistingRule.notice`, the notice of its last trading day:
    one before it is not of this listing, a name that trades again is not delisted), and
    the value per share it pays holders: the latest settlement dated after that bar, or on
    it where that notice delists the name. `sessions`: the store's, in date order, to `day`."""
    last_bar = max((b["trading_date"] for b in bars), default=None)
    since = last_bar or date.min
    at = bisect_right(sessions, since)
    first_without = sessions[at] if at < len(sessions) else None
    delisted = rule.notice(record.symbol, last_bar, day, first_without)
    on_last_bar = delisted is not None and delisted == first_without
    after = [
        s for s in rule.settlements if s.symbol == record.symbol and (s.on > since or (on_last_bar and s.on == since))
    ]
    if not after:
        return replace(record, delisted=delisted)
    value = Decimal(str(max(after, key=lambda s: s.on).value)).quantize(PRICE_PLACES)
    return replace(record, settlement=value, delisted=delisted)


def _record(symbol: str, bars: list[dict], reports: list[dict], splits: list[Split]) -> NameRecord:
    """One name's record from its bars, reports and splits up to the day they were read to."""

    def split_since(since: date) -> Decimal:
        """Shares on the day per share on `since`: the product of the splits after it."""
        factor = Decimal(1)
        for split in splits:
            if since < split.ex_date:
                factor *= Decimal(str(split.factor))
        return factor

    def on_the_day(value: float, since: date) -> Decimal:
        return Decimal(str(value)) / split_since(since)

    traded = [b for b in bars if (b["volume"] or 0) > 0]
    lows = [on_the_day(b["close"] if b["low"] is None else b["low"], b["trading_date"]) for b in traded]
    highs = [on_the_day(b["close"] if b["high"] is None else b["high"], b["trading_date"]) for b in traded]
    last = max(bars, key=lambda b: b["trading_date"]) if bars else None
    counted = [r for r in reports if (r["shares_outstanding"] or 0) > 0]
    report = max(counted, key=lambda r: r["report_date"]) if counted else None
    outstanding = int(report["shares_outstanding"] * split_since(report["report_date"])) if report else None
    return NameRecord(
        symbol,
        min(lows) if lows else None,
        max(highs) if highs else None,
        on_the_day(last["close"], last["trading_date"]).quantize(PRICE_PLACES) if last else None,
        outstanding,
        report["report_date"] if report else None,
    )


def holding_refusal(symbol: str, quantity: int, record: NameRecord, day: date) -> str | None:
    """Why a statement cannot hold `quantity` of `symbol` on `day`, or None when it may."""
    if record.highest is None:
        return (
            f"the statement holds {quantity:,} {symbol}, which has no traded session on record on or before "
            f"{day.isoformat()}: nothing could have been bought at a price anyone traded at, and the book "
            "could not value or sell it"
        )
    if record.outstanding is not None and quantity > record.outstanding:
        return (
            f"the statement holds {quantity:,} {symbol}, more than the {record.outstanding:,} shares {symbol} "
            f"has outstanding (reported {record.reported.isoformat() if record.reported else 'before'}, on "
            f"{day.isoformat()}'s share count)"
        )
    return None


def price_warning(symbol: str, side: str, price: Decimal, record: NameRecord, day: date) -> str | None:
    """A warning when a sync trade's price lies far outside the range `symbol` traded in."""
    if record.lowest is None or record.highest is None:
        return None
    if record.lowest / PRICE_BAND <= price <= record.highest * PRICE_BAND:
        return None
    what = "average cost" if side == "BUY" else "sale price"
    return (
        f"{symbol}: the statement's {what} {price:,.2f} is far from any price {symbol} traded at up to "
        f"{day.isoformat()} ({record.lowest:,.2f} to {record.highest:,.2f}); it was booked as the broker "
        "states it and sets the cost basis and gains shown: check it with your broker"
    )
