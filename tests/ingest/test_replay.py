"""Real-history replay: real files served as the exchange website and delivered by the same
T0 code (client, parsers, validation, delivery), on a generic OHLCV file written here and
on a few real NSE days over real HTTP."""

import os
from dataclasses import replace
from datetime import date
from pathlib import Path

import httpx
import pytest

from ingest.exchange.delivery import client_for, deliver_day
from ingest.importers.formats import Bad, is_index, read_nse_daily
from ingest.macro_sources import parse_boj_csv, parse_statin_html
from ingest.markets import market_for
from ingest.replay import ABSENT_STATUS, ReplayMarket, replay_for
from ingest.simulator.market import SimulatedMarket
from ingest.simulator.site import SimulatorSite
from market import clock
from market.clock import DatedCalendar, TradingCalendar, default_calendar
from market.errors import ConfigurationError, InvalidInputError, NotReadyError
from market.settings import Settings, get_settings
from pipeline.backfill import backfill
from pipeline.preflight import check_delivery
from pipeline.serving import serve_in_thread
from store import tables
from store.engine import service_engine
from store.history import current_rows
from tests.conftest import ON_SQLITE_ONLY
from tests.pipeline.test_cli import cli

OHLCV = """symbol,date,open,high,low,close,volume,name
AAA,2021-03-01,10.00,10.50,9.90,10.20,1500,Alpha Holdings
BBB,2021-03-01,,,,4.00,0,Beta Mills
AAA,2021-03-02,10.20,10.40,10.00,10.30,900,Alpha Holdings
BBB,2021-03-02,4.00,4.10,3.95,4.05,2000,Beta Mills
AAA,2021-03-04,10.30,10.30,10.30,10.30,0,Alpha Holdings
AAA,2021-03-05,10.30,25.00,10.30,24.00,5100,Alpha Holdings
BBB,2021-03-05,4.05,4.05,4.00,4.00,300,Beta Mills
CCC,2021-03-05,1.00,1.10,0.95,1.05,7000,Gamma Energy
"""


@pytest.fixture
def ohlcv(tmp_path: Path) -> Path:
    path = tmp_path / "history" / "prices.csv"
    path.parent.mkdir()
    path.write_text(OHLCV)
    return path


def _prices(settings: Settings) -> dict[tuple[str, str], dict]:
    with service_engine(settings).connect() as conn:
        return {(r["symbol"], r["trading_date"].isoformat()): r for r in current_rows(conn, tables.eod_prices)}


def test_a_generic_csv_replays_through_t0_as_the_file_says(settings: Settings, ohlcv: Path) -> None:
    market = ReplayMarket(ohlcv)
    assert market.days == [date(2021, 3, d) for d in (1, 2, 4, 5)]  # the calendar is the file's dates
    assert market.calendar.closed_reason(date(2021, 3, 3)).endswith(
        "has no session in the replayed files (2021-03-01 to 2021-03-05)"
    )
    assert market.currency == "JMD" and ReplayMarket(ohlcv, currency="USD").currency == "USD"
    assert market.source.lacks == ["prev_close", "bid", "ask", "trades", "value_traded"]

    reports = backfill(service_engine(settings), settings, 4, date(2021, 3, 5), market)
    assert [r.status for r in reports] == ["COMPLETE"] * 4
    stored = _prices(settings)
    for line in OHLCV.splitlines()[1:]:
        symbol, day, open_, high, low, close, volume, _ = line.split(",")
        row = stored[(symbol, day)]
        assert (row["open"], row["high"], row["low"]) == tuple(float(x) if x else None for x in (open_, high, low))
        assert (row["close"], row["volume"]) == (float(close), int(volume))
        assert row["bid"] is row["ask"] is row["trades"] is row["value_traded"] is None  # lacking: never invented
    # BBB is missing from 2021-03-04's rows while still listed: a no-trade row at its last close
    gap = stored[("BBB", "2021-03-04")]
    assert (gap["close"], gap["prev_close"], gap["volume"], gap["high"], gap["halted"]) == (4.05, 4.05, 0, None, False)
    assert stored[("AAA", "2021-03-02")]["prev_close"] == 10.20  # the file's previous row: it has no prev_close column
    assert ("CCC", "2021-03-04") not in stored  # not listed before its first row
    with service_engine(settings).connect() as conn:
        instruments = {r["symbol"]: r for r in current_rows(conn, tables.instruments)}
        actions = current_rows(conn, tables.corporate_actions)
    assert {s: (i["name"], i["currency"], i["board"], i["sector"]) for s, i in instruments.items()} == {
        "AAA": ("Alpha Holdings", "JMD", "MAIN", None),
        "BBB": ("Beta Mills", "JMD", "MAIN", None),
        "CCC": ("Gamma Energy", "JMD", "MAIN", None),
    }
    assert instruments["CCC"]["listed_on"] == date(2021, 3, 5)
    assert [(a["symbol"], a["kind"]) for a in actions] == [("CCC", "LISTING")]
    # AAA's +133% is what the file says: delivered, and the manifest says it was accepted as confirmed
    assert any(
        w.startswith(
            "AAA: close 24.0 is 133% from the previous close 10.3, beyond the band (50% up or 33% down): accepted"
        )
        for w in reports[-1].warnings
    )
    assert check_delivery(service_engine(settings), date(2021, 3, 5), market.calendar)["active_instruments"] == 3


SPLIT_PRICES = """symbol,date,close,volume
AAA,2021-03-01,10.00,1000
BBB,2021-03-01,4.00,500
AAA,2021-03-02,10.20,1000
BBB,2021-03-02,4.05,500
AAA,2021-03-03,5.15,2000
BBB,2021-03-03,4.10,500
AAA,2021-03-04,5.20,2000
BBB,2021-03-04,4.10,500
AAA,2021-03-05,5.25,2000
"""
SPLIT_ACTIONS = """symbol,ex_date,kind,ratio,price
AAA,2021-03-03,split,2 for 1,
BBB,2021-03-04,split,2 for 1,
BBB,2021-03-08,delisting,,3.50
"""


def test_a_fall_beyond_the_band_is_served_as_a_confirmed_move(tmp_path: Path) -> None:
    """The band is a factor either way (`validation.beyond_band`): a fall to 60% of the
    previous close, which T0 refuses without a notice, is served as a CONFIRMED MOVE (a
    replayed file is the record); a fall to 70% is within the band, unmarked."""
    path = tmp_path / "prices.csv"
    path.write_text(
        "symbol,date,close,volume\nAAA,2021-03-01,10.0,100\nBBB,2021-03-01,10.0,100\n"
        "AAA,2021-03-02,6.0,100\nBBB,2021-03-02,7.0,100\n"
    )
    bars = {b["symbol"]: b["status"] for b in ReplayMarket(path).day(date(2021, 3, 2)).bars}
    assert bars == {"AAA": "CONFIRMED MOVE", "BBB": ""}


def test_a_corporate_actions_file_beside_the_replay_is_served_and_stored_by_t0(
    settings: Settings, tmp_path: Path
) -> None:
    """An adversarial run: a replay (and `make demo MARKET=`) ignored the corporate-actions
    file the importer and the backtest apply, so a 2-for-1 split reached T0 as a -50% move
    (CONFIRMED MOVE) and the AI book lost half of the name on its ex-date. The file's split
    is served as a SPLIT notice on its ex-date and stored as one; one that does not explain
    the close (BBB's: the file is already on one count) is not served and is said; a
    delisting's price is the value of the DELISTING notice."""
    folder = tmp_path / "split"
    folder.mkdir()
    (folder / "prices.csv").write_text(SPLIT_PRICES)
    (folder / "corporate_actions.csv").write_text(SPLIT_ACTIONS)
    market = ReplayMarket(folder)
    assert market.source.actions_file == str(folder / "corporate_actions.csv")
    assert market.source.capital_changes == [
        "AAA 2021-03-03 x2: served as a SPLIT notice on 2021-03-03",
        "BBB 2021-03-04 x2: not served, it does not explain the close on its session",
    ]
    reports = backfill(service_engine(settings), settings, 5, date(2021, 3, 5), market)
    assert [r.status for r in reports] == ["COMPLETE"] * 5
    with service_engine(settings).connect() as conn:
        actions = {(a["symbol"], a["kind"]): a for a in current_rows(conn, tables.corporate_actions)}
    assert actions[("AAA", "SPLIT")]["amount"] == 2.0
    assert actions[("AAA", "SPLIT")]["action_date"] == date(2021, 3, 3)
    assert ("BBB", "SPLIT") not in actions
    assert actions[("BBB", "DELISTING")]["amount"] == 3.5  # BBB's last row is 03-04: delisted on 03-05
    assert not any(w.startswith("AAA: close") for w in reports[2].warnings)  # a split, not a confirmed move


def test_a_corporate_actions_file_with_an_unreadable_row_refuses_the_replay(tmp_path: Path) -> None:
    """A row that cannot be read (`bonus,x`) was listed in `source.bad_rows` and the replay
    served the rest: CCC's bonus issue lost, its close reached T0 as a crash on the ex-date.
    The replay is refused, naming the row, as the importer is (`actions.readable_actions`)."""
    folder = tmp_path / "split"
    folder.mkdir()
    (folder / "prices.csv").write_text(SPLIT_PRICES)
    (folder / "corporate_actions.csv").write_text(SPLIT_ACTIONS + "CCC,2021-03-02,bonus,x,\n")
    with pytest.raises(InvalidInputError) as refused:
        ReplayMarket(folder)
    assert f"{folder / 'corporate_actions.csv'}:5: ratio 'x' is not a number" in str(refused.value)


def test_the_currency_the_files_state_is_the_replays(settings: Settings, tmp_path: Path) -> None:
    """An adversarial run: a generic file whose rows state their currency (`currency`, GHS)
    was replayed, and stored by T0, in the home currency (JMD), where `marketintel import`
    of the same file stores GHS: `make demo MARKET=` valued a Ghanaian market's prices as
    Jamaican dollars. The importer's rule (`stated_currency`): the one currency the rows
    state, a second one or a given currency that contradicts it refused."""
    path = tmp_path / "prices.csv"
    path.write_text("symbol,date,close,volume,currency\nAAA,2021-03-01,10.00,100,GHS\nAAA,2021-03-02,10.10,100,ghs\n")
    market = ReplayMarket(path)
    assert (market.currency, market.source.currency) == ("GHS", "GHS")
    backfill(service_engine(settings), settings, 2, date(2021, 3, 2), market)
    with service_engine(settings).connect() as conn:
        assert {r["symbol"]: r["currency"] for r in current_rows(conn, tables.instruments)} == {"AAA": "GHS"}
    with pytest.raises(InvalidInputError, match="--currency USD, but the files state their prices in GHS"):
        ReplayMarket(path, currency="USD")


def test_a_row_dated_after_today_is_a_bad_row_not_a_replayed_session(tmp_path: Path) -> None:
    """An adversarial run: a typo's year (2062 for 2026) in a replayed file was a session:
    the replay's calendar, which every process reads, closed every weekday from the files'
    last real day to 2062, and the demo delivered 2062-03-03 as its day. The importer's
    rule: a row dated after today on the exchange's clock is a bad row ("not known yet")."""
    path = tmp_path / "prices.csv"
    path.write_text(
        "symbol,date,close,volume\nAAA,2021-03-01,10.00,100\nAAA,2021-03-02,10.10,100\nAAA,2062-03-03,10.20,100\n"
    )
    market = ReplayMarket(path)
    assert market.days == [date(2021, 3, 1), date(2021, 3, 2)]
    assert market.calendar.is_trading_day(date(2021, 3, 3))  # outside the files' span: every weekday
    assert len(market.source.bad_rows) == 1 and market.source.bad_rows[0].startswith(
        f"{path}:4: dated 2062-03-03, after today"
    )


STALE_EX_DATE = """symbol,date,close,volume
AAA,2021-03-01,10.00,100
BBB,2021-03-01,4.00,500
AAA,2021-03-02,10.10,100
BBB,2021-03-02,4.10,500
AAA,2021-03-03,10.20,100
BBB,2021-03-03,4.10,0
AAA,2021-03-04,10.30,100
BBB,2021-03-04,2.06,800
AAA,2021-03-05,10.40,100
BBB,2021-03-05,2.08,800
"""


def test_a_split_whose_ex_date_is_untraded_at_the_old_close_is_served_on_the_first_trade(
    settings: Settings, tmp_path: Path
) -> None:
    """An adversarial run: a file that lists an untraded name with its last close (volume 0,
    as the NSE files do from 2009) carries the old count's close on a split's ex-date when
    the name does not trade that day. The split was "not served, it does not explain the
    close on its session", so T0 stored no split and the next day's halving was a CONFIRMED
    MOVE: every holder lost half the position. Served on the first row on the new count
    (BBB's trade on 03-04), it is stored and the halving is no loss."""
    (tmp_path / "prices.csv").write_text(STALE_EX_DATE)
    (tmp_path / "corporate_actions.csv").write_text("symbol,ex_date,kind,ratio\nBBB,2021-03-03,split,2 for 1\n")
    market = ReplayMarket(tmp_path)
    assert market.source.capital_changes == ["BBB 2021-03-03 x2: served as a SPLIT notice on 2021-03-04"]
    reports = backfill(service_engine(settings), settings, 5, date(2021, 3, 5), market)
    assert [r.status for r in reports] == ["COMPLETE"] * 5
    assert not any(w.startswith("BBB: close") for w in reports[3].warnings)  # a split, not a confirmed move
    with service_engine(settings).connect() as conn:
        splits = [(a["symbol"], a["action_date"], a["amount"]) for a in current_rows(conn, tables.corporate_actions)]
    assert splits == [("BBB", date(2021, 3, 4), 2.0)]


THIN_END = """symbol,date,close,volume
AAA,2021-03-01,10.00,100
BBB,2021-03-01,4.00,500
AAA,2021-03-02,10.10,100
BBB,2021-03-02,4.10,500
AAA,2021-03-03,10.20,100
AAA,2021-03-04,10.30,100
AAA,2021-03-05,10.40,100
"""


def test_a_name_that_did_not_trade_on_the_files_last_days_stays_listed(settings: Settings, tmp_path: Path) -> None:
    """An adversarial run: a thin name left out of the files on the days it does not trade
    (BBB's rows end three sessions before the files do) was DELISTED by the replay on the
    session after its last row, as if the files' later days showed it gone; `make demo
    MARKET=` of a thin market delisted every junior name without a trade on its last days
    (out of the listings, the AI book and the suggestions), where the importer keeps them
    listed until the delisting rule's sessions pass. Listed to the files' end, a no-trade
    row at its last close on each day; a name the actions file delists still leaves."""
    path = tmp_path / "thin.csv"
    path.write_text(THIN_END)
    market = ReplayMarket(path)
    reports = backfill(service_engine(settings), settings, 5, date(2021, 3, 5), market)
    assert [r.status for r in reports] == ["COMPLETE"] * 5
    with service_engine(settings).connect() as conn:
        instruments = {r["symbol"]: r for r in current_rows(conn, tables.instruments)}
        kinds = {(a["symbol"], a["kind"]) for a in current_rows(conn, tables.corporate_actions)}
    assert instruments["BBB"]["delisted_on"] is None and ("BBB", "DELISTING") not in kinds
    assert _prices(settings)[("BBB", "2021-03-05")]["close"] == 4.10  # untraded, at its last close
    assert check_delivery(service_engine(settings), date(2021, 3, 5), market.calendar)["active_instruments"] == 2
    (tmp_path / "corporate_actions.csv").write_text("symbol,ex_date,kind,ratio,price\nBBB,2021-03-03,delisting,,4\n")
    gone = ReplayMarket(path).day(date(2021, 3, 3))
    assert [(n["symbol"], n["kind"], n["amount"]) for n in gone.notices] == [("BBB", "DELISTING", 4.0)]


def test_a_replayed_index_is_published_on_the_page_stored_by_t0_and_is_the_track_records_benchmark(
    settings: Settings, tmp_path: Path
) -> None:
    """The index levels a file carries are served in the page's index table, as an exchange
    publishes them; T0 stores them (index_levels, with the day's delivery) and the track
    record compares with that index rather than the service's own. A level that is not a
    positive number refuses the day, as any bad cell does."""
    from views.track_record import benchmark_returns

    path = tmp_path / "history" / "prices.csv"
    path.parent.mkdir()
    index = {"2021-03-01": 100.0, "2021-03-02": 101.0, "2021-03-04": 99.99, "2021-03-05": 102.0}
    path.write_text(OHLCV + "".join(f"^ALL,{d},,,,{v},0,All Share\n" for d, v in index.items()))
    market = ReplayMarket(path)
    assert market.source.indices == {"^ALL"} and "^ALL" not in market.symbols
    page = (
        SimulatorSite(market, base_url="http://x")
        .handle("GET", "/market/trade-quotes", "date=2021-03-02")
        .body.decode()
    )
    assert 'class="indices"' in page and "^ALL" in page and "101.0000" in page
    reports = backfill(service_engine(settings), settings, 4, date(2021, 3, 5), market)
    assert [r.inserted["index_levels"] for r in reports] == [1, 1, 1, 1]
    with service_engine(settings).connect() as conn:
        stored = current_rows(conn, tables.index_levels)
        deliveries = {r["trading_date"]: r["id"] for r in current_rows(conn, tables.deliveries)}
        assert {(r["symbol"], r["trading_date"].isoformat()): r["level"] for r in stored} == {
            ("^ALL", d): v for d, v in index.items()
        }
        assert all(r["delivery_id"] == deliveries[r["trading_date"]] for r in stored)
        benchmarks, source = benchmark_returns(conn, [date(2021, 3, d) for d in (2, 4, 5)])
    assert source == "^ALL"
    assert benchmarks["index"].round(6).tolist() == [0.01, round(99.99 / 101 - 1, 6), round(102 / 99.99 - 1, 6)]
    # a record whose days skip 03-04 (no closes stored that day): its level's move counts on 03-05, not lost
    with service_engine(settings).connect() as conn:
        skipping, _ = benchmark_returns(conn, [date(2021, 3, 2), date(2021, 3, 5)])
    assert skipping["index"].round(6).tolist() == [0.01, round(102 / 101 - 1, 6)]
    again = backfill(service_engine(settings), settings, 4, date(2021, 3, 5), market)
    assert [r.inserted.get("index_levels", 0) for r in again] == [0, 0, 0, 0]


def test_a_page_with_an_index_level_that_is_not_a_positive_number_is_refused() -> None:
    from ingest.exchange.parsers import parse_trade_quotes
    from ingest.exchange.validation import Known, Published, validate_day
    from ingest.simulator import pages

    market = SimulatedMarket(seed=7)
    day = market.day(market.days[5])
    for level, reason in ((0.0, "level 0.0 is not a positive number"), (-3.5, "level -3.5 is not a positive number")):
        served = replace(day, indices=[{"symbol": "^ALL", "level": level}])
        quotes, notices, indices = parse_trade_quotes(pages.trade_quotes_page(served))
        assert indices.rows == [{"symbol": "^ALL", "level": level}]
        published = Published(quotes.page_date, quotes.rows, notices.rows, day.securities, indices.rows)
        verdict = validate_day(day.day, published, Known({b["symbol"] for b in day.bars}, {}, 0.5))
        assert f"index ^ALL: {reason}" in verdict.errors
    twice = replace(day, indices=[{"symbol": "^ALL", "level": 1.0}, {"symbol": "^ALL", "level": 2.0}])
    _, _, indices = parse_trade_quotes(pages.trade_quotes_page(twice))
    assert (
        "index ^ALL: 2 levels on one page (one per index and day)"
        in validate_day(day.day, Published(day.day, [], [], [], indices.rows), Known(set(), {}, 0.5)).errors
    )
    plain = parse_trade_quotes(pages.trade_quotes_page(day))[2]
    assert plain.rows == [] and plain.errors == []  # the simulator publishes no index: the track record uses its own


def test_the_setting_makes_every_process_use_the_replay_calendar(
    settings: Settings, ohlcv: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert type(default_calendar()) is TradingCalendar  # no setting: weekdays minus Jamaican holidays
    assert isinstance(market_for(settings), SimulatedMarket)
    monkeypatch.setenv("MARKETINTEL_REPLAY_PATH", str(ohlcv))
    get_settings.cache_clear()
    with pytest.raises(ConfigurationError, match="has not been built yet"):
        default_calendar()  # nothing has read the files yet
    market = market_for(get_settings())
    assert isinstance(market, ReplayMarket)
    calendar = default_calendar()
    assert isinstance(calendar, DatedCalendar) and calendar.dates == market.days
    assert calendar.next_trading_day(date(2021, 3, 2)) == date(2021, 3, 4)
    assert calendar.next_trading_day(date(2021, 3, 5)) == date(2021, 3, 8)  # after the files: weekdays
    # a kernel started now reads the same calendar, with nothing but the environment
    kernel = cli("scrape", "--date", "2021-03-03")
    assert "has no session in the replayed files" in kernel.stdout + kernel.stderr, kernel.stderr
    ohlcv.write_text(OHLCV + "AAA,2021-03-08,24,24,24,24,0,Alpha Holdings\n")
    os.utime(ohlcv, ns=(1, 1))
    clock._replay_calendar.cache_clear()  # as in a new process: the files changed since the replay was built
    with pytest.raises(ConfigurationError, match="stale"):
        default_calendar()
    assert replay_for(get_settings()).days[-1] == date(2021, 3, 8) == default_calendar().last
    # an index written under older calendar rules (before the copied days were left out) is stale too
    rules = clock.REPLAY_CALENDAR_RULES
    monkeypatch.setattr(clock, "REPLAY_CALENDAR_RULES", rules - 1)
    replay_for(get_settings())
    monkeypatch.setattr(clock, "REPLAY_CALENDAR_RULES", rules)
    clock._replay_calendar.cache_clear()
    with pytest.raises(ConfigurationError, match=r"stale: the files \(or the calendar rules\) changed"):
        default_calendar()


@ON_SQLITE_ONLY
def test_backfill_builds_the_replay_before_it_reads_the_calendar(
    settings: Settings, ohlcv: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`MARKETINTEL_REPLAY_PATH=DIR marketintel backfill --days N --end D` on a fresh data
    folder failed ("its calendar has not been built yet ... build the replay once, e.g.
    marketintel exchange serve --replay PATH"), though the command needs no server: it
    read the calendar before it built the replay. Without --end, the files' last day."""
    monkeypatch.setenv("MARKETINTEL_REPLAY_PATH", str(ohlcv))
    result = cli("backfill", "--days", "3", "--end", "2021-03-04")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("delivered 3 replayed days (2021-03-01 to 2021-03-04)")
    monkeypatch.setenv("MARKETINTEL_DATA_DIR", str(tmp_path / "fresh"))
    latest = cli("backfill", "--days", "1")
    assert latest.returncode == 0, latest.stderr
    assert latest.stdout.startswith("delivered 1 replayed days (2021-03-05 to 2021-03-05)")


def test_simulated_text_and_macro_are_labelled(ohlcv: Path) -> None:
    site = SimulatorSite(ReplayMarket(ohlcv), published_through=date(2021, 3, 5))
    feed = site.handle("GET", "/news/rss", "date=2021-03-05")
    assert (
        feed.status == 200 and b"<title>Exchange News (simulated)</title>" in feed.body and b"<item>" not in feed.body
    )
    statin = site.handle("GET", "/statin/indicators.html", "date=2026-01-30").body.decode()
    boj = site.handle("GET", "/boj/series/M2.csv", "date=2026-01-30").body.decode()
    assert "key indicators (simulated)" in statin and boj.splitlines()[0].endswith("(simulated)")
    assert parse_statin_html(statin) and parse_boj_csv("M2", boj)  # still read by the same adapters
    plain = SimulatorSite(SimulatedMarket(), published_through=date(2026, 11, 20))
    assert b"(simulated)" not in plain.handle("GET", "/statin/indicators.html", "date=2026-01-30").body
    assert b"<th>Value (JMD)</th>" in plain.handle("GET", "/market/trade-quotes", "date=2026-11-20").body


def test_replay_without_files_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InvalidInputError, match="does not exist"):
        ReplayMarket(tmp_path / "nowhere")
    with pytest.raises(InvalidInputError, match="holds no .csv files"):
        ReplayMarket(tmp_path)
    (tmp_path / "bad.csv").write_text("symbol,date,close,volume\nAAA,2021-13-01,1,1\n")
    with pytest.raises(InvalidInputError, match="holds no readable ohlcv rows .first problem: .*bad.csv:2"):
        ReplayMarket(tmp_path)


def test_serve_replay_with_a_bad_path_is_one_line(tmp_path: Path) -> None:
    for path, message in ((tmp_path / "nowhere", "does not exist"), (tmp_path, "holds no .csv files")):
        result = cli("exchange", "serve", "--replay", str(path))
        assert result.returncode == 1
        assert result.stderr.strip().splitlines() == [f"error: {path} {message}"]


# ---- the real NSE files ------------------------------------------------------------------
# Days are delivered in order, as T0 and backfill deliver them: T0 checks each close
# against the store's latest one before it.


@pytest.fixture(scope="module")
def nse_replay(nse_data: Path) -> ReplayMarket:
    return ReplayMarket(nse_data / "daily")


def _file_rows(nse_data: Path, day: date) -> tuple[dict[str, dict], list[Bad]]:
    items = list(read_nse_daily(nse_data / "daily" / f"{day:%Y}" / f"{day:%m}" / f"{day:%Y%m%d}.csv"))
    return {r["symbol"]: r for r in items if not isinstance(r, Bad)}, [r for r in items if isinstance(r, Bad)]


def _deliver_over_http(
    settings: Settings, nse_data: Path, replay: ReplayMarket, days: list[date], *, preflight: bool = True
) -> dict:
    """Serve the replay on loopback, let T0 scrape `days`, check the store holds each
    file row as it is and that the pre-flight passes (`preflight`); return the stored prices."""
    site = SimulatorSite(replay, published_through=days[-1])
    with serve_in_thread(site.asgi_app()) as url:
        exchange = settings.model_copy(update={"exchange_base_url": url})
        later = replay.calendar.next_trading_day(days[-1]).isoformat()
        assert httpx.get(f"{url}/market/trade-quotes", params={"date": later}).status_code == 404  # not published yet
        with client_for(exchange) as client:
            reports = [deliver_day(service_engine(exchange), exchange, day, client) for day in days]
    assert [r.status for r in reports] == ["COMPLETE"] * len(days)
    stored = _prices(settings)
    for day in days:
        rows, _ = _file_rows(nse_data, day)
        assert any(is_index(symbol) for symbol in rows)  # the files carry index levels ...
        assert not any(is_index(symbol) for symbol, _ in stored)  # ... which are not securities
        for symbol, row in rows.items():
            if is_index(symbol):
                continue
            got = stored[(symbol, day.isoformat())]
            assert {k: got[k] for k in ("low", "high", "close", "prev_close", "volume")} == {
                k: row[k] for k in ("low", "high", "close", "prev_close", "volume")
            }, (symbol, day)
            assert got["open"] is got["bid"] is got["ask"] is got["trades"] is None  # the files lack them
        if preflight:
            check_delivery(service_engine(settings), day, replay.calendar)  # the pre-flight passes a replayed day
    with service_engine(settings).connect() as conn:
        assert {r["currency"] for r in current_rows(conn, tables.instruments)} == {"KES"}
    return stored


def test_real_nse_calendar_and_currency(nse_data: Path, nse_replay: ReplayMarket) -> None:
    files = sorted(nse_data.joinpath("daily").rglob("*.csv"))
    dates = [date(int(f.stem[:4]), int(f.stem[4:6]), int(f.stem[6:])) for f in files]
    # the files' dates less the 56 that copy the session before (the 2010 referendum among them)
    copies = [date.fromisoformat(line[:10]) for line in nse_replay.source.repeated_days]
    assert len(copies) == 56 and nse_replay.days == [d for d in dates if d not in copies]
    assert date(2010, 8, 4) in copies and not nse_replay.calendar.is_trading_day(date(2010, 8, 4))
    assert nse_replay.calendar.is_trading_day(date(2021, 12, 24)) and not nse_replay.calendar.is_trading_day(
        date(2021, 12, 27)
    )
    assert nse_replay.currency == "KES" and nse_replay.source.lacks == ["open", "bid", "ask", "trades", "value_traded"]


def test_a_real_split_day_through_t0_over_http(settings: Settings, nse_data: Path, nse_replay: ReplayMarket) -> None:
    stored = _deliver_over_http(settings, nse_data, nse_replay, [date(2007, 4, 2), date(2007, 4, 3)])
    # KCB closes 89% below the day before (a 10-for-1 split the files do not record):
    # delivered as the file says, the manifest saying why it passed the price band
    assert (stored[("KCB", "2007-04-02")]["close"], stored[("KCB", "2007-04-03")]["close"]) == (212.0, 22.5)
    with service_engine(settings).connect() as conn:
        delivery = current_rows(conn, tables.deliveries, where=[tables.deliveries.c.trading_date == date(2007, 4, 3)])[
            0
        ]
    assert (
        "KCB: close 22.5 is 89% from the previous close 212.0, beyond the band (50% up or 33% down): accepted, the "
        "page confirms it (CONFIRMED MOVE)" in delivery["manifest"]["warnings"]
    )


def test_a_real_unreadable_row_is_no_no_trade_row(settings: Settings, nse_data: Path, nse_replay: ReplayMarket) -> None:
    """The NSE's 2019-10-16 file holds a row whose close is '-': the importer refuses it, and
    so does the replay. It was served as a `NOT IN FILE` no-trade row, which T0 stored as a
    day without trades at the last close; its name held a row that day, so it is served on
    neither page (`untraded.unread_rows`) and T0 delivers the day without a row of it; the
    pre-flight names the name T1 waits for (it is listed until the delisting rule's
    sessions pass without a row of it)."""
    day = date(2019, 10, 16)
    _, bad = _file_rows(nse_data, day)
    assert len(bad) == 1 and "close '-'" in str(bad[0])  # the importer refuses it, and so does the replay
    stored = _deliver_over_http(settings, nse_data, nse_replay, [date(2019, 10, 15), day], preflight=False)
    symbol = bad[0].symbol
    assert symbol is not None and (symbol, "2019-10-15") in stored and (symbol, day.isoformat()) not in stored
    with pytest.raises(NotReadyError, match=f"T0 delivery for 2019-10-16 lacks 1 active instruments: {symbol}$"):
        check_delivery(service_engine(settings), day, nse_replay.calendar)
    assert symbol not in {b["symbol"] for b in nse_replay.day(day).bars}
    assert ABSENT_STATUS not in {b["status"] for b in nse_replay.day(day).bars}


@ON_SQLITE_ONLY
def test_backfill_names_what_of_the_replayed_files_to_check(
    settings: Settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`backfill` over a replay (and `demo --market`, which printed the corporate actions
    alone) said nothing of the files' unreadable rows, nor of a close that halved with no
    corporate action: an unadjusted 2-for-1 split, served as a CONFIRMED MOVE and stored by
    T0 as it is, a holder's loss of half. Both print `ReplaySource.lines`, as `exchange
    serve --replay` does, the move worded as the importer reports it."""
    path = tmp_path / "prices.csv"
    path.write_text(
        "symbol,date,close,volume\nAAA,2021-03-01,10.0,100\nAAA,2021-03-02,10.2,100\n"
        "AAA,2021-03-03,5.1,200\nAAA,2021-03-04,x,100\n"
    )
    monkeypatch.setenv("MARKETINTEL_REPLAY_PATH", str(path))
    result = cli("backfill", "--days", "3")
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        "delivered 3 replayed days (2021-03-01 to 2021-03-03); 3 price rows inserted",
        f"bad row (not served): {path}:5: close 'x' is not a number like 1,234.50",
        "moves beyond T0's band (50% up or 33% down) that no corporate action explains: 1, served as CONFIRMED "
        "MOVE as the files have them (not adjusted: misprints or capital changes to check; a corporate_actions.csv "
        "beside the files adjusts them)",
        "  AAA 2021-03-03: 10.2 -> 5.1 (-50.0%); implied ratio 2 shares per share",
    ]
