"""What the reports claim is what the store records (issue 42): where each day's prices
came from, which layer-1 backend the forecaster used, and why liquid equity drops on a
day when holdings did not trade. Each report is rendered for real and read back as text."""

from __future__ import annotations

from datetime import UTC, date, datetime
from pathlib import Path

import pytest
from sqlalchemy import Engine

from ingest.exchange.delivery import client_for, deliver_day
from ingest.importers import import_path
from ingest.markets import market_for
from ingest.simulator.site import SimulatorSite
from market.clock import TradingCalendar, default_calendar
from market.settings import Settings
from pipeline.backfill import backfill
from pipeline.serving import serve_in_thread
from portfolio import ai
from reports import KINDS, generate
from reports.charts import WRITTEN_DOWN_LABEL
from store import tables
from store.engine import service_engine
from store.history import append_history, current_rows
from tests.api.world import HISTORY_DAYS, SYMBOLS, close_of, seed_prices
from tests.portfolio.seed import CALENDAR, DAY, price_row, seed_predictions
from tests.reports.pdf import column_below, read
from views.performance import performance

NOW = datetime(2026, 11, 22, 15, 0, tzinfo=UTC)


def flat(pdf: bytes) -> str:
    return " ".join(read(pdf).text.split())


def provenance_of(pdf: bytes) -> str:
    text = flat(pdf)
    return text[text.index("Data provenance") : text.index("Forward-looking statements")]


def test_compliance_report_counts_the_days_of_prices_from_each_source(settings: Settings, tmp_path: Path) -> None:
    """Three days of simulated backfill (in-process, as `make demo` backfills), one day
    scraped over HTTP (as T0 scrapes), two days imported from a file (`marketintel
    import`): the notice counts each, from what the store recorded for the day."""
    engine = service_engine(settings)
    market = market_for(settings)
    backfill(engine, settings, 3, CALENDAR.previous_trading_day(DAY), market, with_text=False)
    with (
        serve_in_thread(SimulatorSite(market, published_through=DAY).asgi_app()) as base,
        client_for(settings.model_copy(update={"exchange_base_url": base}), retries=0) as client,
    ):
        deliver_day(engine, settings, DAY, client)
    history = tmp_path / "old-prices.csv"
    history.write_text("date,symbol,close,volume\n2026-10-01,OLDCO,10.50,100\n2026-10-02,OLDCO,10.70,200\n")
    import_path(engine, history)

    text = provenance_of(generate("compliance", engine, settings, default_calendar(), NOW).pdf)
    backfilled = "2026-11-17 to 2026-11-19"
    assert (
        "Prices for 6 market days: 3 days of simulated backfill, made up by the built-in exchange simulator and "
        f"not market data ({backfilled}); 2 days imported from files in the ohlcv format by marketintel import "
        f"(2026-10-01 to 2026-10-02); 1 day scraped over HTTP from the exchange's pages at {base}, a site on this "
        "machine (2026-11-20)."
    ) in text, text
    assert "The latest delivery (2026-11-20) is COMPLETE with 59 rows" in text
    assert "published pages" not in text

    # Real history replayed from files is backfilled through the same in-process site; the
    # rows say so (source replay:<folder>), whatever the settings of the process reading them.
    from ingest.replay import ReplayMarket
    from tests.ingest.test_replay import OHLCV

    folder = tmp_path / "nse-daily"
    folder.mkdir()
    (folder / "prices.csv").write_text(OHLCV)
    backfill(engine, settings, 4, date(2021, 3, 5), ReplayMarket(folder), with_text=False)
    replayed = provenance_of(generate("compliance", engine, settings, default_calendar(), NOW).pdf)
    assert "4 days of replayed history from files (nse-daily) (2021-03-01 to 2021-03-05)" in replayed, replayed
    assert (
        f"3 days of simulated backfill, made up by the built-in exchange simulator and not market data ({backfilled})"
        in replayed
    )


def seed_model_run(engine: Engine, model_id: str, train_end: date, backend: str) -> None:
    with engine.begin() as conn:
        append_history(
            conn,
            tables.model_runs,
            [
                {
                    "model_id": model_id,
                    "kind": "risk",
                    "train_start": date(2026, 6, 1),
                    "train_end": train_end,
                    "horizon_days": 1,
                    "layer1_backend": backend,
                    "training_rows": 1234,
                }
            ],
        )


@pytest.mark.parametrize("kind", KINDS)
def test_powered_by_claims_only_the_layer1_backend_the_model_used(settings: Settings, kind: str) -> None:
    engine = service_engine(settings)

    def forecaster() -> tuple[str, str]:
        pdf = generate(kind, engine, settings, default_calendar(), NOW).pdf
        return column_below(pdf, "Powered", 1), flat(pdf)

    caption, _ = forecaster()
    assert caption == "Two-layer forecaster: layer 1 and a risk model; no model has been trained yet"

    seed_model_run(engine, "risk-fallback", date(2026, 11, 19), "fallback-empirical-v2")
    caption, text = forecaster()
    assert caption == (
        "Two-layer forecaster: layer 1 is the empirical fallback (fallback-empirical-v2), no foundation "
        "model; layer 2 the risk model"
    )
    assert "Layer 1 fallback-empirical-v2 (FALLBACK" in text, "the caption and the report's Layer 1 line agree"
    assert "foundation model and" not in text

    seed_model_run(engine, "risk-chronos", date(2026, 11, 20), "chronos-bolt:chronos-bolt-tiny")
    caption, _ = forecaster()
    assert caption == "Two-layer forecaster: foundation model (chronos-bolt:chronos-bolt-tiny) and risk model"


def test_equity_curve_marks_the_days_untraded_holdings_were_left_out_of_liquid_equity(settings: Settings) -> None:
    """The AI portfolio buys LIQ and MID; the next session LIQ does not trade (TRAPPED: left
    out of liquid equity at its whole value) and MID trades at a 40% spread (HIGH_SPREAD:
    discounted by its spread); the session after, both trade again."""
    settings = settings.model_copy(update={"ai_starting_cash": 1_000_000})
    engine = service_engine(settings)
    seed_prices(engine)
    long = {"score": 72.0, "action": "LONG", "tercile": "TOP", "weight": 0.2, "predicted_return": 0.012}
    for day in (CALENDAR.previous_trading_day(DAY), DAY):
        seed_predictions(engine, day, {"LIQ": long, "MID": long})
        ai.execute_day(engine, settings, day)
    after = [CALENDAR.next_trading_day(DAY), CALENDAR.add_trading_days(DAY, 2)]
    rows = []
    for i, day in enumerate(after):
        for symbol, (_, volume, half) in SYMBOLS.items():
            close = close_of(symbol, HISTORY_DAYS + i)
            half = 0.2 * close if (i, symbol) == (0, "MID") else half
            volume = 0 if (i, symbol) == (0, "LIQ") else volume
            rows.append(price_row(symbol, day, close, volume, round(close - half, 2), round(close + half, 2)))
    with engine.begin() as conn:
        append_history(conn, tables.eod_prices, rows)
    hold = {"score": 50.0, "action": "HOLD", "tercile": "MIDDLE"}

    def briefing_after(day: date) -> str:
        seed_predictions(engine, day, {"LIQ": hold, "MID": hold})
        ai.execute_day(engine, settings, day)
        now = datetime.combine(day, datetime.min.time(), UTC).replace(hour=23)
        return flat(generate("quant-briefing", engine, settings, default_calendar(), now).pdf)

    before = flat(generate("quant-briefing", engine, settings, default_calendar(), NOW).pdf)
    assert "Equity curve" in before and WRITTEN_DOWN_LABEL not in before, "no holding was left out yet"

    text = briefing_after(after[0])
    with engine.connect() as conn:
        (stored,) = current_rows(conn, tables.portfolio_days, where=[tables.portfolio_days.c.trading_date == after[0]])
    discounts = stored["summary"]["illiquid_discounts"]
    assert set(discounts) == {"LIQ", "MID"}, discounts
    assert text.count(WRITTEN_DOWN_LABEL) == 2, "the chart's legend entry and the note under it"
    note = text[text.rindex(WRITTEN_DOWN_LABEL) : text.index("Score distribution", text.rindex(WRITTEN_DOWN_LABEL))]
    assert "did not trade that day cannot be sold, so liquid equity leaves out its whole value" in note
    assert f"On 1 of 3 executed days, latest first: {after[0]} (LIQ: JMD {discounts['LIQ']:,.2f} left out)." in note, (
        note
    )
    assert "MID" not in note, "a holding that traded at a wide spread was not left out for want of a trade"

    text = briefing_after(after[1])
    assert text.count(WRITTEN_DOWN_LABEL) == 2 and f"On 1 of 4 executed days, latest first: {after[0]} (LIQ:" in text


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_the_reports_date_the_first_live_outcome_on_the_services_calendar(settings: Settings) -> None:
    """A closure the service's calendar has (an unscheduled one, as the exchange may declare)
    moves the day the first live outcome is known. Both reports said the default calendar's
    day while GET /api/ai/performance, read on the service's calendar, said the later one."""
    engine = service_engine(settings)
    seed_prices(engine)
    seed_model_run(engine, "risk-fallback", DAY, "fallback-empirical-v2")
    seed_predictions(engine, DAY, {"LIQ": {"score": 60.0, "action": "HOLD", "tercile": "TOP"}})
    closed = TradingCalendar(extra_closures=[CALENDAR.next_trading_day(DAY)])
    with engine.connect() as conn:
        served = performance(conn, closed)["live"]["reason"]
    known = closed.add_trading_days(DAY, 2).isoformat()
    assert served.endswith(f"is known at the close of {known} (1 + 1 sessions later)"), served
    for kind in KINDS:
        assert served in flat(generate(kind, engine, settings, closed, NOW).pdf), kind
