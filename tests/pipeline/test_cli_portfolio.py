"""`marketintel portfolio ...` as a user runs it: open with cash, trade, import a sample
statement, show; a refused trade is one line on stderr with exit status 1. What the CLI
prints as JSON keeps the API's response contract (market/contract.py)."""

import json
import resource
import subprocess
from decimal import Decimal
from pathlib import Path

from ingest.pdf_text import PdfExtractor
from market.settings import Settings
from store.engine import service_engine
from tests.api.contract import violations
from tests.conftest import ON_SQLITE_ONLY
from tests.pdf_samples import text_pdf
from tests.pipeline.test_cli import MARKETINTEL, cli
from tests.portfolio.seed import seed_market


def test_portfolio_commands(settings: Settings, tmp_path: Path) -> None:
    from portfolio.market import market_days
    from portfolio.statement_pdfs import sample_holdings_statement
    from tests.portfolio.seed import DAY

    engine = service_engine(settings)
    seed_market(engine, {"AAA": {"close": 100.0, "volume": 20_000}, "BBB": {"close": 10.0, "volume": 90_000}})
    opened = cli("portfolio", "open", "acme", "--cash", "5000")
    assert opened.returncode == 0, opened.stderr
    assert opened.stdout.strip() == "portfolio client:acme; cash 5,000.00"

    refused = cli("portfolio", "trade", "client:acme", "buy", "AAA", "60", "100")
    assert refused.returncode == 1 and refused.stdout == ""
    # no --fees: the fee schedule's, as the trade preview shows them (51.00 on 6,000.00)
    assert refused.stderr.strip() == "error: buying 60 AAA costs 6,051.00 with fees; cash is 5,000.00"

    bought = cli("portfolio", "trade", "client:acme", "buy", "BBB", "10", "10", "--fees", "1.5")
    assert bought.returncode == 0, bought.stderr
    trade = json.loads(bought.stdout)
    assert list(violations(trade, "trade")) == []
    assert trade["cash_after"] == "4898.50" and trade["fees"] == "1.50"  # to the cent, not "4898.500000"
    # what it prints multiplies: price x quantity is the value, and the cash moved is value plus fees
    gross = Decimal(trade["price"]) * trade["quantity"]
    assert gross == Decimal(trade["gross"]) and Decimal("5000") - gross - Decimal(trade["fees"]) == Decimal("4898.50")
    assert len(trade["executed_at"]) == 19 and "+" not in trade["executed_at"]  # exchange time, to the second

    statement = tmp_path / "statement.pdf"
    with engine.connect() as conn:
        statement.write_bytes(sample_holdings_statement(market_days(conn, DAY), DAY, count=2))
    previewed = cli("portfolio", "import-statement", "client:acme", str(statement), "--preview")
    assert previewed.returncode == 0, previewed.stderr
    assert list(violations(json.loads(previewed.stdout), "preview")) == []
    synced = cli("portfolio", "import-statement", "client:acme", str(statement))
    assert synced.returncode == 0, synced.stderr
    assert '"status": "SYNCED"' in synced.stdout
    assert list(violations(json.loads(synced.stdout), "sync")) == []
    # a statement with its account line cut off is refused once the book's statement named one
    unnamed = tmp_path / "unnamed.pdf"
    with PdfExtractor.from_settings(settings) as extractor:
        lines = extractor.extract(statement.read_bytes()).text.splitlines()
    unnamed.write_bytes(text_pdf([line for line in lines if line.strip() and not line.startswith("Account:")]))
    for asked in (["--preview"], []):
        refused = cli("portfolio", "import-statement", "client:acme", str(unnamed), *asked)
        assert refused.returncode == 1 and len(refused.stderr.strip().splitlines()) == 1, refused.stderr
        assert refused.stderr.startswith("error: the statement is of no account: it prints no account line, not ")
        assert "upload a statement of account KC-DEMO-0001 that shows its account line" in refused.stderr

    shown = cli("portfolio", "show", "client:acme")
    # the statement's 250,000 on its date, plus the 5,000 deposited and the 101.50 spent today,
    # after it (what the ledger records after a statement's date is kept on top)
    assert shown.stdout.splitlines()[0] == "client:acme: cash 254,898.50, equity 364,998.50 at the 2026-11-20 closes"
    assert [line.split()[:2] for line in shown.stdout.splitlines()[1:]] == [["AAA", "1,000"], ["BBB", "1,010"]]
    assert cli("portfolio", "show", "client:nobody").stderr.strip() == "error: no portfolio 'client:nobody'"
    record = cli("portfolio", "record", "client:acme")  # its JSON by type: tests/api/test_contract.py
    assert record.returncode == 0, record.stderr
    assert json.loads(record.stdout)["reason"].endswith("the statistics need at least two")
    assert cli("portfolio", "record", "client:nobody").stderr.strip() == "error: no portfolio 'client:nobody'"


def test_the_ai_portfolio_answers_before_its_first_executed_day(settings: Settings) -> None:
    """A store with prices but no executed AI day: REST answers the AI record (days 0, with
    the reason) and an empty summary (`started` false), and so does the CLI, rather than
    "no portfolio 'AI'"."""
    seed_market(service_engine(settings), {"AAA": {"close": 100.0, "volume": 20_000}})
    record = cli("portfolio", "record", "AI")
    assert record.returncode == 0, record.stderr
    body = json.loads(record.stdout)
    assert (body["days"], body["fill_count"], body["reason"]) == (0, 0, "the AI portfolio has no executed day yet")
    shown = cli("portfolio", "show", "AI")
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.splitlines() == [
        f"AI: cash 0.00, equity 0.00 at the 2026-11-20 closes; not started: the AI portfolio has no executed day "
        f"yet (starting cash {settings.ai_starting_cash:,.2f})"
    ]


def test_a_buy_booked_for_a_later_session_is_shown_pending_and_a_sell_says_so(settings: Settings) -> None:
    """A suggestion confirmed ahead of its session (here: for the session after today's, on
    the wall clock the CLI reads) books shares that count from that session: `portfolio show`
    says until when they are pending, and a sell before then is refused with that reason."""
    from desk import Desk
    from market.clock import utc_now
    from portfolio import suggestions
    from store import tables
    from store.history import append_history
    from tests.portfolio.seed import CALENDAR

    engine = service_engine(settings)
    seed_market(engine, {"AAA": {"close": 100.0, "volume": 20_000}})
    assert cli("portfolio", "open", "acme", "--cash", "5000").returncode == 0
    today = CALENDAR.session_of(utc_now())
    ahead = CALENDAR.next_trading_day(today)
    sid = suggestions.suggestion_id("client:acme", ahead, "AAA", "BUY")
    row = {"suggestion_id": sid, "portfolio_id": "client:acme", "trading_date": ahead, "symbol": "AAA", "side": "BUY"}
    with engine.begin() as conn:
        append_history(
            conn,
            tables.suggestions,
            [{**row, "quantity": 10, "limit_price": 100, "fees": 1, "expires_at": suggestions.expires_at(ahead)}],
        )
        append_history(conn, tables.suggestion_events, [{"suggestion_id": sid, "state": "PENDING"}])
    assert Desk.from_settings(settings).confirm_suggestion("client:acme", sid).state == "CONFIRMED"

    shown = cli("portfolio", "show", "client:acme").stdout.splitlines()
    assert shown[0].startswith("client:acme: cash 3,999.00,")
    assert shown[1].split()[:2] == ["AAA", "10"] and shown[1].endswith(f"(+10 pending until {ahead})")
    sold = cli("portfolio", "trade", "client:acme", "sell", "AAA", "10", "100")
    assert sold.returncode == 1 and sold.stderr.strip() == (
        f"error: cannot sell 10 AAA: the portfolio holds 0 on {today}; 10 more are pending until the {ahead} session"
    )


@ON_SQLITE_ONLY
def test_show_prints_each_positions_price_value_and_flags_as_the_api_does(settings: Settings) -> None:
    """`portfolio show` printed quantity, cost and date only: a delisted holding (flagged
    DELISTED, valued at the rule's price: nothing, or a cash offer) and one that did not
    trade on the day (TRAPPED) read like any other, and the equity left the delisted one out
    without a word. Each line now says its price, value and flags, as GET /api/portfolio
    does, and the values add up to the equity on the first line; a name without a row says
    under it since when and what the delisting rule did or will do (`stopped`)."""
    from datetime import UTC, datetime

    from portfolio import ledger
    from store import tables
    from store.history import append_history
    from tests.portfolio.seed import CALENDAR, DAY

    engine = service_engine(settings)
    seed_market(engine, {"LIQ": {"close": 50.0, "volume": 40_000, "bid": 49.9, "ask": 50.1}}, history=90)
    seed_market(engine, {"STP": {"close": 20.0, "volume": 40_000}}, day=CALENDAR.add_trading_days(DAY, -1))
    gone = CALENDAR.add_trading_days(DAY, -70)  # more than the rule's 60 sessions without a row
    seed_market(engine, {"DEL": {"close": 40.0, "volume": 40_000}, "OFF": {"close": 40.0, "volume": 40_000}}, gone)
    with engine.begin() as conn:  # OFF's holders are offered 45 a share
        offer = {"symbol": "OFF", "action_date": gone, "kind": "DELISTING", "amount": 45.0, "source": "test"}
        append_history(conn, tables.corporate_actions, [offer])
    assert cli("portfolio", "open", "acme", "--cash", "1000").returncode == 0
    for symbol, day, quantity, price in (("DEL", gone, 1000, "40"), ("OFF", gone, 100, "40"), ("STP", DAY, 10, "20")):
        with ledger.portfolio_transaction(engine, "client:acme") as conn:
            when = datetime(day.year, day.month, day.day, 20, tzinfo=UTC)
            request = ledger.TradeRequest(
                "client:acme", day, when, symbol, "BUY", quantity, Decimal(price), origin="STATEMENT_SYNC",
                trade_id=f"t-{symbol}",
            )  # fmt: skip
            ledger.record_trade(conn, request, moves_cash=False)

    shown = cli("portfolio", "show", "client:acme")
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    assert lines[0] == "client:acme: cash 1,000.00, equity 5,700.00 at the 2026-11-20 closes"
    assert [line.split() for line in lines[1::2]] == [
        ["DEL", "1,000", "price", "0.00", "value", "0.00", "cost", "40,000.00", "avg", "40.00", "since", str(gone),
         "DELISTED"],
        ["OFF", "100", "price", "45.00", "value", "4,500.00", "cost", "4,000.00", "avg", "40.00", "since", str(gone),
         "DELISTED"],
        ["STP", "10", "price", "20.00", "value", "200.00", "cost", "200.00", "avg", "20.00", "since", str(DAY),
         "TRAPPED"],
    ]  # fmt: skip
    # under each name without a row, what its position's `stopped` says
    delisted_on = CALENDAR.add_trading_days(gone, 60)
    assert [line.strip() for line in lines[2::2]] == [
        f"delisted on {delisted_on} (no row since {gone}, 70 sessions): worth nothing until a corporate action gives "
        "a value per share (its last close: 40.00)",
        # OFF's notice is dated on its last row (its last trading day): delisted from the next session
        f"delisted on {CALENDAR.next_trading_day(gone)} (no row since {gone}, 70 sessions): worth 45.00 a share, the "
        "value a corporate action gives",
        f"no row since {CALENDAR.add_trading_days(DAY, -1)} (1 session): nothing can be sold; delisted after 60 "
        "sessions without a row (59 more) unless it has one again",
    ]


@ON_SQLITE_ONLY
def test_show_rounds_prices_and_amounts_as_rest_does(settings: Settings) -> None:
    """A reviewer's run: `portfolio show` printed an average cost of 104.01 / 2 as 52.00
    (Python's half-even rounding) where REST shows 52.01 (half up), and after a 3-for-2
    split a price of 34.67 beside a value of 34.673333 x 3. Prices print as every surface
    shows them (their places, at most six) and amounts half up, with thousands separators."""
    from datetime import UTC, datetime

    from portfolio import ledger
    from tests.portfolio.clients import announce_action
    from tests.portfolio.seed import CALENDAR, DAY

    engine = service_engine(settings)
    seed_market(engine, {"AAA": {"close": 52.01, "volume": 40_000}})
    assert cli("portfolio", "open", "acme", "--cash", "1000").returncode == 0
    for n, price in enumerate(("52.00", "52.01")):
        with ledger.portfolio_transaction(engine, "client:acme") as conn:
            when = datetime(DAY.year, DAY.month, DAY.day, 20, tzinfo=UTC)
            request = ledger.TradeRequest(
                "client:acme", DAY, when, "AAA", "BUY", 1, Decimal(price), origin="STATEMENT_SYNC", trade_id=f"t-{n}"
            )
            ledger.record_trade(conn, request, moves_cash=False)
    shown = cli("portfolio", "show", "client:acme").stdout.splitlines()
    assert shown[1].split() == [
        "AAA", "2", "price", "52.01", "value", "104.02", "cost", "104.01", "avg", "52.01", "since", str(DAY)
    ]  # fmt: skip
    announce_action(engine, "AAA", "SPLIT", 1.5, CALENDAR.next_trading_day(DAY), "3-for-2 split")
    shown = cli("portfolio", "show", "client:acme").stdout.splitlines()
    assert shown[0] == "client:acme: cash 1,000.00, equity 1,104.02 at the 2026-11-20 closes"
    assert shown[1].split() == [
        "AAA", "3", "price", "34.673333", "value", "104.02", "cost", "104.01", "avg", "34.67", "since", str(DAY)
    ]  # fmt: skip


def _capped(*args: str) -> subprocess.CompletedProcess:
    """The command under a 2 GiB address-space cap: a file read whole fails fast there
    instead of taking the test machine's memory."""

    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (2 * 2**30, 2 * 2**30))

    return subprocess.run([MARKETINTEL, *args], capture_output=True, text=True, timeout=300, preexec_fn=cap)


def test_a_statement_file_past_the_limit_is_one_line_and_never_read_whole(settings: Settings, tmp_path: Path) -> None:
    """An adversarial run: `import-statement client:acme huge.pdf` read a 4 GB file whole
    before its size was checked (a MemoryError's traceback under a 2 GiB cap, 4 GB of the
    machine's memory without one), and `/dev/zero` until memory ran out. The CLI reads no
    more than the limit: one line, nothing stored."""
    from store import tables
    from store.history import current_rows

    assert cli("portfolio", "open", "acme").returncode == 0
    huge = tmp_path / "huge.pdf"
    with huge.open("wb") as file:
        file.write(b"%PDF-1.4\n")
        file.truncate(4 * 2**30)  # sparse: 4 GiB that take no disk
    limit = f"{settings.pdf_max_bytes:,}"
    for path, said in (
        (huge, f"error: {huge} is 4,294,967,296 bytes, more than the limit of {limit}"),
        (Path("/dev/zero"), f"error: /dev/zero is over the limit of {limit} bytes; reading stopped there"),
    ):
        refused = _capped("portfolio", "import-statement", "client:acme", str(path))
        assert (refused.returncode, refused.stdout, refused.stderr.strip()) == (1, "", said)
    with service_engine(settings).connect() as conn:
        assert current_rows(conn, tables.statement_imports) == []


def test_a_ledger_row_dated_no_day_is_one_line_naming_it(settings: Settings, tmp_path: Path) -> None:
    """`import-statement` of an activity statement with a row dated 2026-13-45 synced it (the
    date was only used in messages); it is one line naming the row, kept as REJECTED."""
    from portfolio.statements import LEDGER_TITLE
    from store import tables
    from store.history import current_rows
    from tests.pdf_samples import text_pdf

    assert cli("portfolio", "open", "acme").returncode == 0
    row = "2026-13-45 DEPOSIT - - - 5.00 15.00"
    lines = [LEDGER_TITLE, "Period: 2026-11-01 to 2026-11-20", "2026-11-02 OPENING - - - - 10.00", row]
    statement = tmp_path / "activity.pdf"
    statement.write_bytes(text_pdf([*lines, "Closing Cash Balance: 15.00"]))
    refused = cli("portfolio", "import-statement", "client:acme", str(statement))
    said = f"error: the statement's line '{row}' is dated 2026-13-45, which is not a date"
    assert (refused.returncode, refused.stdout, refused.stderr.strip()) == (1, "", said)
    with service_engine(settings).connect() as conn:
        assert [r["status"] for r in current_rows(conn, tables.statement_imports)] == ["REJECTED"]


@ON_SQLITE_ONLY
def test_a_statement_path_that_is_no_file_is_one_line(settings: Settings, tmp_path: Path) -> None:
    """`import-statement client:acme /missing.pdf` printed click's three-line usage block
    and exit 2, unlike every other file the CLI reads (one line, exit 1)."""
    assert cli("portfolio", "open", "acme", "--cash", "100").returncode == 0
    for path, said in ((tmp_path / "missing.pdf", "No such file or directory"), (tmp_path, "Is a directory")):
        refused = cli("portfolio", "import-statement", "client:acme", str(path))
        assert (refused.returncode, refused.stdout) == (1, ""), refused.stderr
        assert refused.stderr == f"error: {said}: {path}\n"


def test_a_blank_client_id_is_refused_and_opens_nothing(settings: Settings) -> None:
    """An adversarial run: `portfolio open ''` printed `portfolio client:admin` (the empty
    id became the client `admin`, and `--cash` was deposited there); ' acme' opened a
    second book beside client:acme."""
    from sqlalchemy import func, select

    from store import tables

    engine = service_engine(settings)
    for client in ("", "  ", " acme", "acme "):
        refused = cli("portfolio", "open", client, "--cash", "100")
        assert (refused.returncode, refused.stdout) == (1, ""), refused.stdout
        assert refused.stderr == f"error: a client id must not be empty or have spaces around it, not {client!r}\n"
    with engine.connect() as conn:
        assert conn.execute(select(func.count()).select_from(tables.portfolios)).scalar_one() == 0
        assert conn.execute(select(func.count()).select_from(tables.cash_entries)).scalar_one() == 0


def test_the_ai_portfolio_is_refused_by_the_write_commands(settings: Settings, tmp_path: Path) -> None:
    """`portfolio trade AI buy NCT 1 85.35` exited 0 with a MANUAL trade in the autonomous
    book, and `import-statement AI s.pdf --preview` planned to sell every AI position: each
    is one line and exit status 1 now, and nothing is booked."""
    from portfolio import ledger
    from portfolio.market import market_days
    from portfolio.statement_pdfs import sample_holdings_statement
    from tests.portfolio.clients import FRIDAY
    from tests.portfolio.seed import DAY

    engine = service_engine(settings)
    seed_market(engine, {"AAA": {"close": 100.0, "volume": 20_000}, "BBB": {"close": 10.0, "volume": 90_000}})
    statement = tmp_path / "statement.pdf"
    with ledger.portfolio_transaction(engine, ledger.AI_PORTFOLIO) as conn:
        ledger.ensure_portfolio(conn, ledger.AI_PORTFOLIO, "AI")
        ledger.record_cash(conn, ledger.AI_PORTFOLIO, "C-ai-opening", Decimal("10000"), "DEPOSIT", FRIDAY, None)
        statement.write_bytes(sample_holdings_statement(market_days(conn, DAY), DAY, count=2))
    said = (
        "error: portfolio 'AI' is the AI book's own, written only by its executor: trade, move cash or "
        "sync a statement in a client's portfolio or the house portfolio"
    )
    for command in (
        ("trade", "AI", "buy", "AAA", "1", "100"),
        ("import-statement", "AI", str(statement), "--preview"),
        ("import-statement", "AI", str(statement)),
    ):
        refused = cli("portfolio", *command)
        assert (refused.returncode, refused.stdout, refused.stderr.strip()) == (1, "", said)
    with engine.connect() as conn:
        assert ledger.trade_rows(conn, ledger.AI_PORTFOLIO) == []


def test_opening_a_portfolio_again_deposits_nothing_and_says_so(settings: Settings) -> None:
    """`portfolio open acme --cash 1000` run twice left 2,000 (the opening deposit was made
    again on every run): the deposit is made only by the run that opens the portfolio; a
    later one (with or without an earlier deposit) deposits nothing, says so and exits 0."""
    from sqlalchemy import func, select

    from store import tables

    first = cli("portfolio", "open", "acme", "--cash", "1000")
    assert (first.returncode, first.stdout.strip()) == (0, "portfolio client:acme; cash 1,000.00"), first.stderr
    again = cli("portfolio", "open", "acme", "--cash", "1000")
    said = "portfolio client:acme was already open: --cash deposited nothing; cash 1,000.00"
    assert (again.returncode, again.stdout.strip(), again.stderr) == (0, said, "")
    assert cli("portfolio", "open", "beta").stdout.strip() == "portfolio client:beta"
    late = cli("portfolio", "open", "beta", "--cash", "500")
    said = "portfolio client:beta was already open: --cash deposited nothing; cash 0.00"
    assert (late.returncode, late.stdout.strip()) == (0, said)
    with service_engine(settings).connect() as conn:
        assert conn.execute(select(func.count()).select_from(tables.cash_entries)).scalar_one() == 1


@ON_SQLITE_ONLY
def test_the_house_portfolio_opens_without_a_client_and_a_client_without_house(settings: Settings) -> None:
    """`portfolio open --house` was refused for a missing client (exit 2 and usage): the house
    book is no client's, so a user passed a dummy one, which --house then ignored (and
    `open acme --house --cash 100` deposited into the house book). --house takes no client;
    without it the client is required, each refusal one line, exit status 1, nothing opened."""
    from sqlalchemy import func, select

    from store import tables

    opened = cli("portfolio", "open", "--house", "--cash", "100")
    assert (opened.returncode, opened.stdout, opened.stderr) == (0, "portfolio HOUSE; cash 100.00\n", "")
    said = {
        ("acme", "--house", "--cash", "5"): "error: --house opens the house portfolio, which is no client's: "
        "give no client id with it, not 'acme'",
        ("--cash", "5"): "error: name the client whose portfolio to open, or --house for the house portfolio",
    }
    for args, line in said.items():
        refused = cli("portfolio", "open", *args)
        assert (refused.returncode, refused.stdout, refused.stderr) == (1, "", line + "\n")
    with service_engine(settings).connect() as conn:
        assert conn.execute(select(func.count()).select_from(tables.portfolios)).scalar_one() == 1
        assert conn.execute(select(func.count()).select_from(tables.cash_entries)).scalar_one() == 1


@ON_SQLITE_ONLY
def test_a_confirm_token_no_preview_issued_is_one_line_saying_so(settings: Settings, tmp_path: Path) -> None:
    """`import-statement client:acme s.pdf --confirm bogus` answered "the book changed since the
    preview", of a book nobody had touched: it says the token is not one a preview of the
    file issued and how to get one, exit status 1, and books nothing."""
    from portfolio.market import market_days
    from portfolio.statement_pdfs import sample_holdings_statement
    from store import tables
    from store.history import current_rows
    from tests.portfolio.seed import DAY

    engine = service_engine(settings)
    seed_market(engine, {"AAA": {"close": 100.0, "volume": 20_000}, "BBB": {"close": 10.0, "volume": 90_000}})
    assert cli("portfolio", "open", "acme", "--cash", "5000").returncode == 0
    statement = tmp_path / "statement.pdf"
    with engine.connect() as conn:
        statement.write_bytes(sample_holdings_statement(market_days(conn, DAY), DAY, count=2))
    refused = cli("portfolio", "import-statement", "client:acme", str(statement), "--confirm", "bogus")
    said = (
        "error: the confirm token 'bogus' is not one a preview of this file issued; preview the file "
        "(CLI --preview, REST ?preview=true) and confirm with the confirm_token it answers\n"
    )
    assert (refused.returncode, refused.stdout, refused.stderr) == (1, "", said)
    assert cli("portfolio", "show", "client:acme").stdout.splitlines() == [
        "client:acme: cash 5,000.00, equity 5,000.00 at the 2026-11-20 closes"
    ]
    with engine.connect() as conn:
        assert current_rows(conn, tables.statement_imports) == []


@ON_SQLITE_ONLY
def test_a_booked_trade_whose_output_reader_went_away_is_no_error(settings: Settings) -> None:
    """`marketintel portfolio trade ... | jq` with no jq: the trade was booked, then writing
    its JSON to the closed pipe printed `error: Broken pipe` and exited 1, so a script (or an
    operator) that retried booked it twice. The command runs on with its output discarded,
    says so on stderr, and exits with its own status."""
    import os

    from sqlalchemy import func, select

    from store import tables

    engine = service_engine(settings)
    seed_market(engine, {"BBB": {"close": 10.0, "volume": 90_000}})
    assert cli("portfolio", "open", "acme", "--cash", "5000").returncode == 0
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader is gone before the command writes
    try:
        result = subprocess.run(
            [MARKETINTEL, "portfolio", "trade", "client:acme", "buy", "BBB", "10", "10"],
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
        )
    finally:
        os.close(write_end)
    assert result.returncode == 0, result.stderr
    assert "error" not in result.stderr and "Traceback" not in result.stderr, result.stderr
    assert result.stderr.strip() == (
        "warning: the output's reader went away (broken pipe): the command ran on, its output discarded"
    )
    with engine.connect() as conn:
        assert conn.execute(select(func.count()).select_from(tables.trades)).scalar() == 1


@ON_SQLITE_ONLY
def test_a_client_id_given_for_its_portfolio_id_names_the_portfolio(settings: Settings) -> None:
    """`portfolio open acme` opens client:acme, and the operator's next `portfolio trade acme
    ...` (or show, preview --portfolio) answered only "no portfolio 'acme'". The error names
    the portfolio meant; nothing is booked."""
    seed_market(service_engine(settings), {"BBB": {"close": 10.0, "volume": 90_000}})
    assert cli("portfolio", "open", "acme", "--cash", "5000").returncode == 0
    for args in (
        ["trade", "acme", "buy", "BBB", "10", "10"],
        ["show", "acme"],
        ["preview", "buy", "BBB", "10", "--portfolio", "acme"],
    ):
        result = cli("portfolio", *args)
        assert (result.returncode, result.stdout) == (1, ""), result.stdout
        assert result.stderr.strip() == "error: no portfolio 'acme'; client acme's portfolio is 'client:acme'", args
    assert cli("portfolio", "show", "client:nobody").stderr.strip() == "error: no portfolio 'client:nobody'"
