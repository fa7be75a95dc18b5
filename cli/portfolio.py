"""`marketintel portfolio ...`: user portfolios from the command line, a client's commands:
each a thin adapter over one desk method (desk/desk.py), importing nothing of the project
but desk/ and market/ (pyproject.toml's import contracts)."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from cli.app import command_group
from cli.errors import one_line_errors
from cli.output import echo_json
from market.money import money_display, price_display
from market.settings import get_settings

if TYPE_CHECKING:
    from sqlalchemy import Connection

    from desk import Account, Desk

portfolio_app = command_group("User portfolios: open, trade, import statements, show.")


def _desk() -> Desk:
    """The desk, imported when a command runs: `marketintel --help` and the other commands
    do not load the domain."""
    from desk import Desk

    return Desk.from_settings(get_settings())


@portfolio_app.command("open")
@one_line_errors
def open_portfolio(
    client: str | None = typer.Argument(None, help="Client id; required, except with --house (which takes none)."),
    house: bool = typer.Option(False, "--house", help="The admin house portfolio (no client id)."),
    cash: str | None = typer.Option(
        None, help="Opening deposit (JMD), in whole cents; made only when this run opens the portfolio."
    ),
) -> None:
    """Open a client's portfolio (or with --house the house portfolio), optionally with an
    opening deposit: made only when this run opens it, so running it again deposits nothing."""
    from market.errors import InvalidInputError
    from market.money import MAX_CASH_MOVEMENT, parse_money

    # checked in full before the portfolio is opened (the rule and the bound move_cash
    # applies, the one REST and GraphQL apply to a deposit), so a refused deposit writes nothing
    deposit = parse_money(cash, "--cash") if cash is not None else None
    if deposit is not None and not 0 < deposit <= MAX_CASH_MOVEMENT:
        raise InvalidInputError(
            f"--cash must be a deposit of more than zero and at most {MAX_CASH_MOVEMENT:,}, not {cash}"
        )
    account = _account(client, house)
    opened = _desk().open_with_deposit(account, deposit, note="opening deposit (cli)")
    if deposit is None:
        typer.echo(f"portfolio {opened.portfolio_id}")
    elif opened.created:
        typer.echo(f"portfolio {opened.portfolio_id}; cash {opened.cash:,.2f}")
    else:
        typer.echo(
            f"portfolio {opened.portfolio_id} was already open: --cash deposited nothing; cash {opened.cash:,.2f}"
        )


def _account(client: str | None, house: bool) -> Account:
    """The account `portfolio open` names: a client's, or with --house the house's (no
    client's: a client id beside it is refused rather than ignored, since a deposit would
    land in the house book); one of the two is required."""
    from desk import Account
    from market.errors import InvalidInputError

    if house and client is not None:
        raise InvalidInputError(
            f"--house opens the house portfolio, which is no client's: give no client id with it, not {client!r}"
        )
    if not house and client is None:
        raise InvalidInputError("name the client whose portfolio to open, or --house for the house portfolio")
    return Account.house() if house else Account.of_client(client)


@portfolio_app.command("trade")
@one_line_errors
def trade(
    portfolio_id: str = typer.Argument(..., help="Portfolio id, e.g. client:acme or HOUSE."),
    side: str = typer.Argument(..., help="buy or sell."),
    symbol: str = typer.Argument(...),
    # text, read by market.money's one rule as REST and GraphQL read theirs: click's int
    # took "1_0" as 10 and "1.0" as 1; the price and fees go to the desk as the text given
    quantity: str = typer.Argument(..., help="Shares: the digits of a whole number."),
    price: str = typer.Argument(..., help="Per share, in whole cents (JMD), e.g. 52.25."),
    fees: str | None = typer.Option(
        None,
        help="Fees paid (JMD), in whole cents (0: none). Omitted: the fee schedule's, as `portfolio preview` "
        "shows them.",
    ),
) -> None:
    """Record a manual trade (refused with the reason when it breaks a rule)."""
    from desk import ManualTrade
    from market.money import parse_quantity

    shares = parse_quantity(quantity, "the quantity", text=True)
    result = _desk().place_trade(portfolio_id, ManualTrade(side, symbol, shares, price, fees))
    echo_json(result)  # a PlacedTrade, printed by its fields' types


@portfolio_app.command("preview")
@one_line_errors
def preview(
    side: str = typer.Argument(..., help="buy or sell."),
    symbol: str = typer.Argument(...),
    quantity: str = typer.Argument(..., help="Shares: the digits of a whole number."),
    portfolio_id: str | None = typer.Option(
        None, "--portfolio", help="Portfolio id (e.g. client:acme): say whether its booking would be accepted."
    ),
) -> None:
    """What the cost model says an order would cost (GET /api/portfolio/trade/preview's answer,
    refused as its booking is) and, with --portfolio, whether that portfolio's booking of it
    would be accepted now (bookable, refusal, held, cash_available); stores nothing."""
    from market.money import parse_quantity

    shares = parse_quantity(quantity, "the quantity", text=True)
    desk = _desk()
    with desk.engine.connect() as conn:
        echo_json(desk.preview_trade(conn, side, symbol, shares, portfolio_id))


@portfolio_app.command("sample-statement")
@one_line_errors
def sample_statement(out: Path = typer.Argument(..., help="Where to write the PDF.")) -> None:
    """Draw a valuation statement over today's most traded instruments (for the demo)."""
    from market.clock import exchange_now, latest_closed_trading_day

    out.write_bytes(_desk().sample_statement(latest_closed_trading_day(exchange_now())))
    typer.echo(f"wrote {out}")


@portfolio_app.command("import-statement")
@one_line_errors
def import_statement(
    portfolio_id: str = typer.Argument(..., help="Portfolio id, e.g. client:acme or HOUSE."),
    path: Path = typer.Argument(..., help="The broker statement PDF."),
    preview: bool = typer.Option(
        False, "--preview", help="Only print what the sync would change and its confirm token; store nothing."
    ),
    confirm: str | None = typer.Option(
        None,
        "--confirm",
        help="A preview's confirm token: apply exactly what it showed (refused if the book changed since, "
        "or if no preview of this file issued it).",
    ),
) -> None:
    """Synchronise a portfolio to a broker account statement (what the ledger records after
    the statement's date is kept on top); prints what changed, or with --preview what would."""
    from desk import domain

    result = _desk().import_statement_file(portfolio_id, path, preview=preview, confirm=confirm)
    echo_json(result, domain.StatementResult)


@portfolio_app.command("show")
@one_line_errors
def show(portfolio_id: str = typer.Argument(..., help="Portfolio id, e.g. client:acme, HOUSE or AI.")) -> None:
    """Cash, equity and positions valued at the latest priced day, as GET /api/portfolio
    values them: each with its price, market value, cost basis, purchase date and exit
    flags (DELISTED at the delisting rule's price, TRAPPED, UNPRICED...), so the values
    add up to the equity; a name without a row says under it since when and when the
    delisting rule delists it; shares booked for a later session say until when they are pending;
    the part of cash that is dividends not yet paid is named beside it (as GET
    /api/portfolio/summary's `dividends_receivable`). The AI portfolio before its first
    executed day: an empty book that says it has not started, as GET
    /api/ai-portfolio/summary's `started`. Prices and amounts read as REST's (`_price`,
    `_amount`), with thousands separators."""
    desk = _desk()
    with desk.engine.connect() as conn:
        view = desk.valuation(conn, portfolio_id)
        receivable = desk.portfolio_summary(conn, portfolio_id).value()["dividends_receivable"]
        waiting = _not_started(desk, conn, portfolio_id)
    unpaid = f" ({_amount(receivable)} of it dividends not yet paid: not withdrawable)" if receivable else ""
    typer.echo(
        f"{portfolio_id}: cash {_amount(view.cash)}{unpaid}, equity {_amount(view.equity)} at the {view.as_of} "
        f"closes{waiting}"
    )
    for p in view.positions:
        flags = f"  {' '.join(p.flags)}" if p.flags else ""
        pending = f"  ({p.pending_quantity:+,} pending until {p.pending_until})" if p.pending_quantity else ""
        typer.echo(
            f"  {p.symbol:<10} {p.quantity:>10,}  price {_price(p.price):>10}  value {_amount(p.market_value):>14}  "
            f"cost {_amount(p.cost_basis):>14}  avg {_amount(p.average_cost):>10}  since {p.purchase_date}"
            f"{flags}{pending}"
        )
        if p.stopped:
            typer.echo(f"  {'':<10} {p.stopped}")


def _amount(value: Decimal) -> str:
    """An amount as REST shows it (market.money.money_display: cents, half up; Python's
    `:,.2f` rounds half to even, 52.005 to 52.00), with thousands separators."""
    return f"{Decimal(money_display(value)):,f}"


def _price(value: Decimal) -> str:
    """A price per share as REST shows it (market.money.price_display: its cents, or the
    places a split-adjusted close needs, at most six, so price x quantity is the value),
    with thousands separators."""
    return f"{Decimal(price_display(value)):,f}"


def _not_started(desk: Desk, conn: Connection, portfolio_id: str) -> str:
    """ "; not started: ..." for the AI portfolio before its first executed day, with its
    starting cash; "" for any other book, or once it has started."""
    from desk import AI_PORTFOLIO, NO_AI_DAYS

    if portfolio_id != AI_PORTFOLIO:
        return ""
    summary = desk.ai_summary(conn).value()
    if summary["started"]:
        return ""
    return f"; not started: {NO_AI_DAYS} (starting cash {_amount(summary['starting_cash'])})"


@portfolio_app.command("record")
@one_line_errors
def record(portfolio_id: str = typer.Argument(..., help="Portfolio id, e.g. client:acme, HOUSE or AI.")) -> None:
    """The portfolio's track record as JSON, as REST's track-record reads serve it: returns,
    risk, ratios, turnover and costs paid beside the equal-weighted liquid universe and the
    index; the AI portfolio's with its null books. Fractions are percentages' fractions
    (0.0512 is 5.12%), money two decimals, as every surface prints them."""
    from desk import domain

    desk = _desk()
    with desk.engine.connect() as conn:
        echo_json(desk.record_of(conn, portfolio_id), domain.TrackRecord)
