"""`marketintel portfolio trade` and `open --cash` hold numbers to the rule REST and GraphQL
hold them to (market/money.py, docs/api.md "Numbers in"): a quantity is the digits of a
whole number, money is plain decimal text in whole cents. A refusal is one line on stderr,
exit status 1, and writes nothing (an adversarial run: `buy LIQ 1 52.001` stored a price of
52.001 beside a cash entry of 52.00; `1_0` bought 10 shares, `1.0` one)."""

from decimal import Decimal

from sqlalchemy import func, select

from market.settings import Settings
from store import tables
from store.engine import service_engine
from tests.pipeline.test_cli import cli
from tests.portfolio.seed import seed_market


def _rows(engine) -> tuple[int, int, int]:
    with engine.connect() as conn:
        return tuple(
            conn.execute(select(func.count()).select_from(table)).scalar_one()
            for table in (tables.trades, tables.cash_entries, tables.portfolios)
        )


def test_the_cli_refuses_what_rest_refuses_and_writes_nothing(settings: Settings) -> None:
    engine = service_engine(settings)
    seed_market(engine, {"AAA": {"close": 52.0, "volume": 20_000}})
    opened = cli("portfolio", "open", "acme", "--cash", "5000")
    assert opened.returncode == 0, opened.stderr
    before = _rows(engine)

    for args, words in [
        (("52.001",), "price must be a whole number of cents (at most 2 decimals that are not zero), not 52.001"),
        (("52.00", "--fees", "0.005"), "fees must be a whole number of cents"),
        (("5.2e1",), "price must be a decimal number like 101.50"),
        (("52_00",), "price must be a decimal number like 101.50"),
    ]:
        refused = cli("portfolio", "trade", "client:acme", "buy", "AAA", "1", *args)
        assert (refused.returncode, refused.stdout) == (1, ""), refused.stdout
        (line,) = refused.stderr.strip().splitlines()
        assert line.startswith("error: ") and words in line, line
    for quantity in ("1_0", "1.0", "1e1", "+1", " 1", "１"):
        refused = cli("portfolio", "trade", "client:acme", "buy", "AAA", quantity, "52.00")
        assert (refused.returncode, refused.stdout) == (1, ""), refused.stdout
        assert refused.stderr.strip() == f"error: the quantity must be a whole number of shares, not {quantity!r}"
    for cash in ("100.005", "1e3", "1_000", "0"):
        refused = cli("portfolio", "open", "other", "--cash", cash)
        assert (refused.returncode, refused.stdout) == (1, ""), refused.stdout
        (line,) = refused.stderr.strip().splitlines()
        assert line.startswith("error: --cash must be"), line
    assert _rows(engine) == before  # no trade, no cash entry, no portfolio

    # the same order in the rule's own form is taken, at the price it gives, to the cent
    bought = cli("portfolio", "trade", "client:acme", "buy", "AAA", "10", "52.010", "--fees", "1.50")
    assert bought.returncode == 0, bought.stderr
    with engine.connect() as conn:
        (price, quantity) = conn.execute(select(tables.trades.c.price, tables.trades.c.quantity)).one()
        gross = conn.execute(select(tables.cash_entries.c.amount).where(tables.cash_entries.c.kind == "TRADE")).one()
    assert (quantity, Decimal(price), Decimal(gross[0])) == (10, Decimal("52.01"), Decimal("-520.10"))


def test_a_deposit_over_the_one_limit_is_refused_before_the_portfolio_opens(settings: Settings) -> None:
    """An adversarial run: `open partialA --cash 99999999999999.99` printed `amount must be
    a finite number ... not Decimal('99999999999999.99')`, exited 1 and left the portfolio
    open with no cash; `--cash 1000000001` was taken where REST and GraphQL refuse a
    deposit over 1,000,000,000 (market.money.MAX_CASH_MOVEMENT, one bound for all)."""
    engine = service_engine(settings)
    before = _rows(engine)
    for args, shown in [
        (("partialA", "--cash", "99999999999999.99"), "99999999999999.99"),
        (("partialA", "--cash", "1000000000000.01"), "1000000000000.01"),
        (("--house", "--cash", "99999999999999"), "99999999999999"),
        (("partialA", "--cash", "1000000001"), "1000000001"),
        (("partialA", "--cash", "1000000000.01"), "1000000000.01"),
    ]:
        refused = cli("portfolio", "open", *args)
        assert (refused.returncode, refused.stdout) == (1, ""), (args, refused.stdout)
        assert refused.stderr.strip() == (
            f"error: --cash must be a deposit of more than zero and at most 1,000,000,000, not {shown}"
        ), refused.stderr
    assert _rows(engine) == before  # no portfolio, no cash entry
    assert cli("portfolio", "show", "client:partialA").returncode == 1

    # the limit itself is a deposit REST takes, and so is it here
    opened = cli("portfolio", "open", "partialA", "--cash", "1000000000")
    assert opened.returncode == 0, opened.stderr
    assert opened.stdout.strip() == "portfolio client:partialA; cash 1,000,000,000.00"

    # the domain holds the same bound, whichever way a movement comes, and writes nothing
    import pytest

    from market.errors import InvalidInputError
    from portfolio.trading import move_cash

    after = _rows(engine)
    for amount in ("1000000000.01", "-1000000000.01", Decimal("99999999999999.99")):
        with pytest.raises(InvalidInputError, match=r"at most 1,000,000,000(,000)?, not -?\d+\.\d\d$"):
            move_cash(engine, "client:partialA", amount)
    assert _rows(engine) == after
