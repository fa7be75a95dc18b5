from datetime import date

import pytest

from ingest.exchange.parsers import CellError, integer, number
from ingest.exchange.validation import Known, Published, split_factor, validate_day

DAY = date(2026, 11, 20)


@pytest.mark.parametrize(
    "text, value",
    [
        ("1,234.50", 1234.5),
        ("12", 12.0),
        ("-0.44", -0.44),
        ("+0.44", 0.44),
        ("-", None),
        ("", None),
        ("1,234,567", 1234567.0),
        ("(0.44)", -0.44),  # a negative as accountants print it, the rule a statement is read by too
        ("\u22120.44", -0.44),  # the minus sign U+2212
        ("(1,234.50)", -1234.5),
    ],
)
def test_numbers_as_exchanges_print_them(text: str, value: float | None) -> None:
    assert number(text) == value


@pytest.mark.parametrize(
    "text", ["12,3O", "1.234,50", "12.3.4", "1,23", "abc", "1 000", "(0.44", "0.44)", "-(0.44)", "(-0.44)", "()"]
)
def test_malformed_numbers_are_never_guessed(text: str) -> None:
    with pytest.raises(CellError):
        number(text)


def test_share_counts_must_be_whole() -> None:
    assert integer("97,730") == 97730
    with pytest.raises(CellError, match="whole number"):
        integer("10.5")


def _row(symbol: str = "KCB", **values) -> dict:
    row = {
        "symbol": symbol,
        "board": "MAIN",
        "volume": 100,
        "trades": 2,
        "open": 10.0,
        "high": 10.5,
        "low": 9.5,
        "close": 10.0,
        "prev_close": 10.0,
        "bid": 9.9,
        "ask": 10.1,
        "status": "",
    }
    return {**row, **values}


def _security(symbol: str = "KCB", **values) -> dict:
    return {
        "symbol": symbol,
        "board": "MAIN",
        "listed_on": date(2000, 1, 1),
        "delisted_on": None,
        "status": "ACTIVE",
        **values,
    }


def _validate(
    quotes: list,
    securities: list | None = None,
    notices: list | None = None,
    previous: dict | None = None,
    page_date: date = DAY,
):
    securities = [_security(q["symbol"]) for q in quotes] if securities is None else securities
    return validate_day(DAY, Published(page_date, quotes, notices or [], securities), Known(set(), previous or {}, 0.5))


def test_a_clean_day_has_no_errors() -> None:
    assert _validate([_row(), _row("ISB")]).errors == []


@pytest.mark.parametrize(
    "row, message",
    [
        (_row(bid=10.2, ask=10.1), "closing bid 10.2 is above closing ask 10.1"),
        (_row(volume=-1), "volume -1"),
        (_row(close=0.0), "close 0.0 is not a positive price"),
        (_row(low=11.0, high=10.5), "low 11.0 is above high 10.5"),
        (_row(trades=-2), "negative trades count"),
        # an adversarial run: 10^19 shares reached the store and stopped T0 with a database error
        (_row(volume=10**19), "volume 10,000,000,000,000,000,000 is over the limit of 1,000,000,000,000 shares"),
        (_row(trades=10**13), "trades count 10,000,000,000,000 is over the limit"),
        (_row(close=1e15), "close 1,000,000,000,000,000.0 is over the limit of 1,000,000,000,000"),
    ],
)
def test_row_errors(row: dict, message: str) -> None:
    assert any(message in e for e in _validate([row]).errors)


def test_bid_equal_to_ask_is_accepted() -> None:
    assert _validate([_row(bid=10.0, ask=10.0)]).errors == []


def test_price_band_edges() -> None:
    assert _validate([_row(close=15.0)], previous={"KCB": 10.0}).errors == []  # exactly +50%
    assert "from the previous close" in _validate([_row(close=15.01)], previous={"KCB": 10.0}).errors[0]
    split = [{"symbol": "KCB", "kind": "SPLIT", "amount": None, "detail": "2 for 1"}]
    assert _validate([_row(close=5.0 - 0.01)], previous={"KCB": 10.0}, notices=split).errors == []
    confirmed = _validate(
        [_row(close=1.0, status="CONFIRMED MOVE"), _row("ISB", close=1.0)], previous={"KCB": 10.0, "ISB": 10.0}
    )
    assert confirmed.errors == [
        "ISB: close 1.0 is 90% from the previous close 10.0 (band 50% up or 33% down, no split notice)"
    ]
    assert (
        "KCB: close 1.0 is 90% from the previous close 10.0, beyond the band (50% up or 33% down): accepted"
        in confirmed.warnings[0]
    )


def test_the_band_is_as_wide_down_as_up() -> None:
    """The band is a factor either way (in log terms): a 2-for-1 split without a notice
    (10.2 -> 5.1) passed while a doubling was refused, as a fall never reached 50% more
    than the band allowed. A fall to 2/3 of the previous close, the mirror of a 50% rise,
    is the edge and passes as that rise does: so does a 1-for-2 bonus issue without its
    notice (docs/pipeline.md, T0 validation)."""
    halved = _validate([_row(close=5.1)], previous={"KCB": 10.2})
    assert halved.errors == [
        "KCB: close 5.1 is 50% from the previous close 10.2 (band 50% up or 33% down, no split notice)"
    ]
    assert _validate([_row(close=20.4)], previous={"KCB": 10.2}).errors != []
    assert _validate([_row(close=6.8)], previous={"KCB": 10.2}).errors == []  # exactly 2/3: the edge
    assert _validate([_row(close=6.6)], previous={"KCB": 10.0}).errors != []  # -34%


def test_unknown_symbols_need_the_new_listing_path() -> None:
    verdict = _validate([_row("NEW")], securities=[])
    assert verdict.errors == ["NEW: unknown symbol (not in the store and not on the securities list)"]
    listed = _validate(
        [_row("NEW", status="NEW LISTING")],
        securities=[_security("NEW", listed_on=DAY)],
        notices=[{"symbol": "NEW", "kind": "LISTING", "amount": None, "detail": ""}],
    )
    assert listed.errors == [] and listed.warnings == []


def test_an_active_security_missing_from_the_page_is_an_error() -> None:
    verdict = _validate(
        [_row()],
        securities=[
            _security(),
            _security("GONE"),
            _security("OLD", status="DELISTED", delisted_on=DAY),
            _security("LATER", listed_on=date(2026, 12, 1)),
        ],
    )
    assert verdict.errors == ["GONE: active security missing from the trade-quotes page"]


def test_duplicates_and_wrong_page_date() -> None:
    assert "appears twice" in _validate([_row(), _row()]).errors[0]
    assert "is for 2026-11-19" in _validate([_row()], page_date=date(2026, 11, 19)).errors[0]


def test_warnings_do_not_block() -> None:
    verdict = _validate([_row(volume=0, trades=0, close=10.5)], previous={"KCB": 10.0})
    assert verdict.errors == []
    assert verdict.warnings == ["KCB: no volume but the close moved from 10.0 to 10.5"]


@pytest.mark.parametrize(
    "notice, factor",
    [
        ({"amount": 2.0, "detail": "anything"}, 2.0),  # the Amount column: shares after per share before
        ({"amount": None, "detail": "2 for 1 stock split"}, 2.0),
        ({"amount": None, "detail": "1-for-10 consolidation"}, 0.1),
        ({"amount": None, "detail": "3:2"}, 1.5),
        ({"amount": None, "detail": "Bonus issue 1 for 5"}, 1.2),  # one more share for every five held
        ({"amount": 0.0, "detail": "split"}, None),
        ({"amount": float("nan"), "detail": ""}, None),
        ({"amount": None, "detail": "0 for 1"}, None),
        ({"amount": None, "detail": "Effective 09:30, split 2 for 1"}, 2.0),  # a time of day is not a ratio
        ({"amount": None, "detail": "1 new share for every 5 held"}, 0.2),
        ({"amount": None, "detail": "consolidation: 10 shares into 1"}, 0.1),
        ({"amount": None, "detail": "split one-for-ten"}, None),  # words are not read: the day is refused, not guessed
    ],
)
def test_split_factor(notice: dict, factor: float | None) -> None:
    assert split_factor({"symbol": "KCB", "kind": "SPLIT", **notice}) == (pytest.approx(factor) if factor else None)


def test_a_split_notice_must_say_its_ratio_and_explain_the_close() -> None:
    vague = [{"symbol": "KCB", "kind": "SPLIT", "amount": None, "detail": "share split approved"}]
    assert _validate([_row(close=5.0)], previous={"KCB": 10.0}, notices=vague).errors == [
        "KCB: SPLIT notice without a ratio (Amount: shares after per share before, or 'N for M' in the detail)"
    ]
    ten = [{"symbol": "KCB", "kind": "SPLIT", "amount": None, "detail": "10 for 1"}]
    assert _validate([_row(close=1.02)], previous={"KCB": 10.0}, notices=ten).errors == []
    (error,) = _validate([_row(close=5.0)], previous={"KCB": 10.0}, notices=ten).errors  # a 2-for-1 move
    assert error == (
        "KCB: the SPLIT notice's ratio 10 does not explain the close 5.0 after 10.0 (on the new count "
        "it must be within the band, 50% up or 33% down, of the previous close and nearer to it than without the "
        "split)"
    )
    (stale,) = _validate([_row(close=10.0, volume=0, trades=0)], previous={"KCB": 10.0}, notices=ten).errors
    assert "does not explain the close 10.0" in stale  # untraded, the close must still be restated on the new count


def test_a_split_that_creates_shares_is_refused() -> None:
    """A made-up ratio must not pass because the band is wide: 3-for-2 on a close that did
    not move lands on the band's edge, and would turn 10,000 shares into 15,000."""

    def split(detail: str) -> list[dict]:
        return [{"symbol": "KCB", "kind": "SPLIT", "amount": None, "detail": detail}]

    (made_up,) = _validate([_row(close=10.0)], previous={"KCB": 10.0}, notices=split("3 for 2")).errors
    assert "does not explain the close 10.0" in made_up
    assert _validate([_row(close=6.8)], previous={"KCB": 10.0}, notices=split("3 for 2")).errors == []  # a real one
    (huge,) = _validate([_row(close=10.0)], previous={"KCB": 10.0}, notices=split("1000000 for 1")).errors
    assert huge.startswith("KCB: SPLIT ratio 1e+06 is not a split")
    (one,) = _validate([_row(close=10.0)], previous={"KCB": 10.0}, notices=split("1 for 1")).errors
    assert "is not a split" in one
    # no row on the quotes page (a suspended name) or no previous close: nothing to check the ratio against
    (unquoted,) = _validate(
        [_row("EQTY")], securities=[_security("EQTY")], notices=split("2 for 1"), previous={"KCB": 10.0, "EQTY": 10.0}
    ).errors
    assert unquoted.startswith(
        "KCB: SPLIT notice for a symbol with no row on the trade-quotes page or no previous close"
    )
    assert any(
        "no previous close" in e for e in _validate([_row(close=5.0, prev_close=None)], notices=split("2 for 1")).errors
    )


@pytest.mark.parametrize(
    "amount, error",
    [
        (0.5, None),
        (None, None),  # a nil dividend or a withdrawn notice
        (0.0, None),
        (-0.5, "KCB: DIVIDEND amount -0.5 is not a finite amount per share of zero or more"),
        (float("inf"), "KCB: DIVIDEND amount inf is not a finite amount per share of zero or more"),
        (float("nan"), "KCB: DIVIDEND amount nan is not a finite amount per share of zero or more"),
        (
            1_000_000.0,
            "KCB: DIVIDEND of 1e+06 per share is not below the share's price 10 (an amount per share, not a total?)",
        ),
        (10.0, "KCB: DIVIDEND of 10 per share is not below the share's price 10 (an amount per share, not a total?)"),
    ],
)
def test_a_dividend_must_be_an_amount_a_share_can_pay(amount: float | None, error: str | None) -> None:
    notices = [{"symbol": "KCB", "kind": "DIVIDEND", "amount": amount, "detail": "final dividend"}]
    errors = _validate([_row()], notices=notices, previous={"KCB": 10.0}).errors
    assert errors == ([error] if error else [])


def test_a_dividend_for_an_unknown_symbol_and_two_notices_of_a_kind_are_refused() -> None:
    unknown = [{"symbol": "NOPE", "kind": "DIVIDEND", "amount": 0.5, "detail": ""}]
    assert _validate([_row()], notices=unknown, previous={"KCB": 10.0}).errors == [
        "NOPE: DIVIDEND notice for an unknown symbol (not in the store and not on the securities list)"
    ]
    twice = [
        {"symbol": "KCB", "kind": "DIVIDEND", "amount": 0.5, "detail": "final"},
        {"symbol": "KCB", "kind": "DIVIDEND", "amount": 0.2, "detail": "special"},
    ]
    assert _validate([_row()], notices=twice, previous={"KCB": 10.0}).errors == [
        "KCB: 2 DIVIDEND notices on one day (one per symbol, day and kind is kept: send one notice with the total)"
    ]


def test_a_small_bonus_issue_on_a_rising_day_passes_when_the_page_confirms_the_close() -> None:
    bonus = [{"symbol": "KCB", "kind": "SPLIT", "amount": None, "detail": "bonus 1 for 10"}]
    rising = _row(close=9.636)  # 10 / 1.1 = 9.09 on the new count, then up 6%
    (error,) = _validate([rising], previous={"KCB": 10.0}, notices=bonus).errors
    assert "does not explain the close 9.636" in error
    confirmed = _validate([{**rising, "status": "CONFIRMED MOVE"}], previous={"KCB": 10.0}, notices=bonus)
    assert confirmed.errors == [] and any("accepted, the page confirms the close" in w for w in confirmed.warnings)
    huge = [{"symbol": "KCB", "kind": "SPLIT", "amount": None, "detail": "10 for 1"}]  # beyond the band: still refused
    assert _validate([{**_row(close=5.0), "status": "CONFIRMED MOVE"}], previous={"KCB": 10.0}, notices=huge).errors


def test_only_dividends_and_splits_shown_again_within_days_are_repeats() -> None:
    from ingest.exchange.validation import repeated_notices

    def stored(
        kind: str, day: date, amount: float | None = 0.5, text: str = "final dividend, payment 2026-12-01"
    ) -> dict:
        return {"symbol": "KCB", "kind": kind, "amount": amount, "detail": {"text": text}, "action_date": day}

    dividend = {"symbol": "KCB", "kind": "DIVIDEND", "amount": 0.5, "detail": "final  dividend, payment 2026-12-01"}
    halt = {"symbol": "KCB", "kind": "HALT", "amount": None, "detail": "trading halted pending announcement"}
    earlier = [stored("DIVIDEND", date(2026, 11, 19)), stored("HALT", date(2026, 11, 19), None, halt["detail"])]
    assert repeated_notices([dividend, halt], earlier) == [(dividend, date(2026, 11, 19))]
    assert repeated_notices([{**dividend, "amount": 0.6}], earlier) == []  # another amount: a new notice
    assert repeated_notices([{**dividend, "detail": ""}], [stored("DIVIDEND", date(2026, 11, 19), text="")]) == []


@pytest.mark.parametrize(
    ("detail", "paid"),
    [
        ("ex-date 2026-11-10, payment 2026-12-01", date(2026, 12, 1)),  # the simulator's notice text
        ({"text": "ex-date 2026-11-10, payment 2026-12-01"}, date(2026, 12, 1)),  # as T0 stores it
        ("final dividend, payment date: 2026-12-03", date(2026, 12, 3)),
        ("interim dividend, payable on 2026-12-04", date(2026, 12, 4)),
        ("interim dividend", None),  # none stated: paid at the ex-date
        ({"text": "payment 2026-02-30"}, None),  # no such day
        (None, None),
        ("paid on: 2026-12-14", date(2026, 12, 14)),
        ("payment date 2026/12/14", date(2026, 12, 14)),
        ("payment on 14 December 2026", date(2026, 12, 14)),
        ("payable December 14, 2026", date(2026, 12, 14)),
    ],
)
def test_a_dividend_notice_states_its_payment_date(detail: object, paid: date | None) -> None:
    from ingest.exchange.validation import payment_date

    assert payment_date(detail) == paid


def test_a_payment_date_that_cannot_be_read_or_trusted_is_warned_of_at_t0() -> None:
    """A notice that speaks of its payment and whose date cannot be read, or falls before
    the ex-date (the day T0 stores it for), is stored with a warning: the service holds the
    dividend back until the notice is corrected (it was paid at once: withdrawable before
    the exchange paid it). Read as T0 reads the day (`validate_day`): the page's notices
    carry no date of their own, and a payment date before the day was not warned of."""
    said = {}
    for text in ("payment 2026-12-32", "payment 2026-11-19", "payment 2027-11-22", "payment 2026-12-14", "interim"):
        notices = [{"symbol": "KCB", "kind": "DIVIDEND", "amount": 0.5, "detail": text}]
        said[text] = _validate([_row()], notices=notices, previous={"KCB": 10.0}).warnings
    assert "no date can be read" in said["payment 2026-12-32"][0]
    assert "2026-11-19 is not within a year after its ex-date 2026-11-20" in said["payment 2026-11-19"][0]
    assert "2027-11-22 is not within a year after its ex-date 2026-11-20" in said["payment 2027-11-22"][0]
    assert said["payment 2026-12-14"] == said["interim"] == []


def _page(amount_header: str, kind: str = "DIVIDEND", amount: str = "0.05") -> str:
    """A trade-quotes page in JMD with one notice for AAA under `amount_header`."""
    money = "".join(
        f"<th>{c} (JMD)</th>" for c in ("Open", "High", "Low", "Close", "Prev Close", "Change", "Closing Bid")
    )
    head = f"<thead><tr><th>Symbol</th><th>Security</th><th>Volume</th><th>Trades</th>{money}"
    head += "<th>Closing Ask (JMD)</th><th>Value (JMD)</th><th>Status</th></tr></thead>"
    aaa = "".join(f"<td>{v}</td>" for v in ("AAA", "AAA Ltd", "100", "3", *["50.00"] * 5, "0", "49.90", "50.10"))
    return (
        '<html><body><p class="trading-date" data-date="2026-11-20">x</p>'
        f'<table class="quotes" data-board="MAIN" data-rows="1">{head}<tbody><tr>{aaa}<td>5,000.00</td><td>-</td>'
        f'</tr></tbody></table><table class="quotes" data-board="JUNIOR" data-rows="0">{head}<tbody></tbody></table>'
        '<table class="notices" data-rows="1"><thead><tr><th>Symbol</th><th>Notice</th>'
        f"<th>{amount_header}</th><th>Detail</th></tr></thead><tbody><tr><td>AAA</td><td>{kind}</td>"
        f"<td>{amount}</td><td>final dividend, payment 2026-12-10</td></tr></tbody></table>"
        '<p class="report-end" data-boards="MAIN,JUNIOR">End</p></body></html>'
    )


@pytest.mark.parametrize(
    "header, kind, amount, refused",
    [
        ("Amount (USD)", "DIVIDEND", "0.05", True),  # US$0.05 would be paid as 0.05 JMD a share
        ("Amount (USD)", "DELISTING", "0.50", True),  # a cash offer values a delisted holding per share
        ("Amount (USD)", "DIVIDEND", "0", False),  # a nil dividend pays nothing in any currency
        ("Amount (JMD)", "DIVIDEND", "0.05", False),
        ("Amount", "DIVIDEND", "0.05", False),  # a column naming none is in the trading currency
    ],
)
def test_a_notice_paying_in_another_currency_than_the_trading_one_refuses_the_day(
    header: str, kind: str, amount: str, refused: bool
) -> None:
    from ingest.exchange.parsers import parse_trade_quotes

    quotes, notices, _ = parse_trade_quotes(_page(header, kind, amount))
    (notice,) = notices.rows
    assert notice["currency"] == (header[-4:-1] if "(" in header else None)
    published = Published(quotes.page_date, quotes.rows, notices.rows, [_security("AAA")], currency=quotes.currency)
    verdict = validate_day(DAY, published, Known({"AAA"}, {"AAA": 50.0}, 0.5))
    said = (
        f"AAA: {kind} notice of {float(amount):g} per share is in USD (its Amount column), not the trading "
        "currency JMD: refused until the exchange restates it in JMD"
    )
    assert verdict.errors == ([said] if refused else [])
