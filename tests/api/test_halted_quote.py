"""A halted name's latest quote says so: the exchange's HALT notice left MID's quote on
GET /api/market/latest (and GraphQL's `latestQuote`) reading as any traded name's, its last
close and its prediction, while a manual trade of it was refused as halted; a client could
not tell from the quote that the name cannot be traded until it resumes. The quote's
`halted_since` is the HALT notice's date (portfolio.market's one rule, the trade's refusal's),
null while the name trades, and null again once the exchange's RESUME notice applies."""

from __future__ import annotations

from sqlalchemy import event

from analysis.day_facts import day_facts
from analysis.writers import TemplateWriter
from tests.api.conftest import Api
from tests.api.graph import data
from tests.api.world import MONDAY
from tests.portfolio.clients import announce_action
from tests.portfolio.seed import CALENDAR, DAY
from views.market import latest_market

HALTED = CALENDAR.previous_trading_day(DAY)  # the notice's day: MID is halted through the market day, DAY
QUOTES = "{ instruments { nodes { symbol latestQuote { tradingDate haltedSince } } } }"


def _halted(api: Api) -> tuple[dict[str, str | None], dict[str, str | None]]:
    """symbol -> `halted_since` of each latest quote, over REST and over GraphQL."""
    rest = {s: q["halted_since"] for s, q in api.acme("GET", "/api/market/latest").json().items()}
    nodes = data(api, QUOTES, api.world.acme_key)["instruments"]["nodes"]
    graph = {n["symbol"]: n["latestQuote"]["haltedSince"] for n in nodes if n["latestQuote"]}
    return rest, graph


def test_a_halted_names_quote_says_since_when_until_it_resumes(api: Api) -> None:
    assert _halted(api) == ({s: None for s in ("DRY", "LIQ", "MID", "SLOW")},) * 2
    announce_action(api.world.engine, "MID", "HALT", None, HALTED, "trading halted pending announcement")
    halted = {"DRY": None, "LIQ": None, "MID": HALTED.isoformat(), "SLOW": None}
    assert _halted(api) == (halted, halted)
    # the quote still shows the last close and its prediction, as traded on the market day
    mid = api.acme("GET", "/api/market/latest").json()["MID"]
    assert mid["trading_date"] == DAY.isoformat() and mid["score"] == 55.0
    # a RESUME is dated the session trading resumes: from the market day on, MID trades
    announce_action(api.world.engine, "MID", "RESUME", None, DAY, "trading resumed")
    assert _halted(api) == ({s: None for s in halted},) * 2
    # a RESUME for a later session leaves the market day's quote halted
    announce_action(api.world.engine, "LIQ", "HALT", None, DAY, "trading halted")
    announce_action(api.world.engine, "LIQ", "RESUME", None, MONDAY, "trading resumed")
    assert _halted(api)[0]["LIQ"] == DAY.isoformat()


def test_every_names_halt_is_read_in_one_query(api: Api) -> None:
    """The latest market lists every name: its halts are one read of the notices whatever
    the number of names (with the split notices' two: store/splits.py `stored_splits`, three
    statements on corporate_actions), not a query per name."""
    engine = api.world.engine
    for symbol in ("LIQ", "MID", "SLOW"):
        announce_action(engine, symbol, "HALT", None, HALTED, "trading halted")
    statements: list[str] = []
    listen = lambda *args: statements.append(args[2])  # noqa: E731
    event.listen(engine, "before_cursor_execute", listen)
    try:
        with engine.connect() as conn:
            quotes = latest_market(conn, CALENDAR, DAY)
    finally:
        event.remove(engine, "before_cursor_execute", listen)
    assert {s for s, q in quotes.items() if q["halted_since"] == HALTED} == {"LIQ", "MID", "SLOW"}
    assert sum("corporate_actions" in s for s in statements) == 3, statements


def test_the_days_written_analysis_marks_a_halted_signal(api: Api) -> None:
    """The day's facts (T1 step 5) carry each top signal's `halted_since`, and the written
    analysis says a halted name is halted beside its Score: a reader of the note could not
    tell that a top signal cannot be traded."""
    engine = api.world.engine
    announce_action(engine, "LIQ", "HALT", None, HALTED, "trading halted pending announcement")
    with engine.connect() as conn:
        facts = day_facts(conn, CALENDAR, DAY)
    signals = {s["symbol"]: s for s in facts["top_signals"] + facts["avoid"]}
    assert signals["LIQ"]["halted_since"] == HALTED.isoformat()
    assert all(s["halted_since"] is None for symbol, s in signals.items() if symbol != "LIQ")
    text = TemplateWriter().write(facts)
    assert f"LIQ (halted since {HALTED.isoformat()}; Score" in text
    assert "MID (Score" in text and text.count("halted") == 1
