"""`marketintel portfolio ...` as a user runs it: open with cash, trade, import a sample
statement, show; a refused trade is one line on stderr with exit status 1."""

from pathlib import Path

from market.settings import Settings
from store.engine import service_engine
from tests.pipeline.test_cli import cli
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
    assert refused.stderr.strip() == "error: buying 60 AAA costs 6,000.00 with fees; cash is 5,000.00"

    statement = tmp_path / "statement.pdf"
    with engine.connect() as conn:
        statement.write_bytes(sample_holdings_statement(market_days(conn, DAY), DAY, count=2))
    synced = cli("portfolio", "import-statement", "client:acme", str(statement))
    assert synced.returncode == 0, synced.stderr
    assert '"status": "SYNCED"' in synced.stdout

    shown = cli("portfolio", "show", "client:acme")
    # the statement's 250,000 on its date, plus the 5,000 deposited today, after it (issue 42:
    # what the ledger records after a statement's date is kept on top)
    assert shown.stdout.splitlines()[0] == "client:acme: cash 255,000.00"
    assert [line.split()[:2] for line in shown.stdout.splitlines()[1:]] == [["AAA", "1,000"], ["BBB", "1,000"]]
    assert cli("portfolio", "show", "client:nobody").stderr.strip() == "error: no portfolio 'client:nobody'"
