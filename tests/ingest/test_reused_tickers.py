"""A ticker another company takes after a gap (ingest/importers/renames.py `Reuse`): where
the files carry names, a symbol whose name changes across a gap the delisting rule
delists (60 sessions without a row by default) is split at the gap, in the benchmarks'
loaders, the importer and the replay alike: the earlier company's rows under SYMBOL~last
day (a name that stops), the symbol from the later company's first row a new listing;
each split is a line of the capital-changes report. A new spelling of one name, a gap
without a new name, or a new name without a long gap is no reuse."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import date, timedelta
from pathlib import Path
from types import ModuleType

import pandas as pd
import pytest
from fastapi.testclient import TestClient
from pydantic import SecretStr

from api.app import create_app
from ingest.importers.renames import name_key, reused_tickers
from market.settings import Settings
from store import tables
from store.engine import service_engine
from store.history import current_rows
from tests.benchmark_modules import benchmark_module
from tests.conftest import ADMIN_KEY

FIRST = date(2026, 1, 5)
SESSIONS = [d for d in (FIRST + timedelta(days=i) for i in range(400)) if d.weekday() < 5][:200]
OLD_LAST, NEW_FIRST = SESSIONS[49], SESSIONS[150]  # 100 sessions without a row between
RETIRED = f"ABC~{OLD_LAST.isoformat()}"
LINE = (
    f"reused ticker (split): ABC's rows end on {OLD_LAST.isoformat()} (10, 'Old Co') and begin again 100 "
    f"sessions later, on {NEW_FIRST.isoformat()} (30, 'New Co'): another company; the rows to "
    f"{OLD_LAST.isoformat()} are {RETIRED}'s (delisted after them), ABC from {NEW_FIRST.isoformat()} is a new "
    "listing (a rename row joins them if they are one company)"
)


@pytest.fixture(scope="module")
def quality() -> Iterator[ModuleType]:
    with benchmark_module("model_quality") as module:
        yield module


def write_market(folder: Path) -> Path:
    """AAA every session; ABC "Old Co" at 10 for 50 sessions, none for 100, "New Co" at 30;
    DEF the same gap under one name spelt anew ("Def Holdings Ltd", "DEF HOLDINGS LIMITED");
    GHI the same gap under one name; JKL a new name after a 10-session gap."""
    lines = ["symbol,date,close,volume,high,low,bid,ask,name"]
    for i, day in enumerate(SESSIONS):
        rows = [("AAA", 20.0 + 0.01 * i, "Alpha Plc")]  # AAA moves: no session is a copy of the one before
        if i < 50 or i >= 150:
            rows += [("ABC", 10.0, "Old Co") if i < 50 else ("ABC", 30.0, "New Co")]
            rows += [("DEF", 5.0, "Def Holdings Ltd" if i < 50 else "DEF HOLDINGS LIMITED")]
            rows += [("GHI", 7.0, "Ghi & Sons")]
        if i < 90 or i >= 100:
            rows += [("JKL", 3.0, "Jkl Mining" if i < 90 else "Jkl Energy")]
        for symbol, close, name in rows:
            lines.append(f"{symbol},{day},{close:.2f},50000,{close * 1.01:.2f},{close * 0.99:.2f},,,{name}")
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "prices.csv").write_text("\n".join(lines) + "\n")
    return folder


def test_a_ticker_another_company_took_is_two_series_in_every_reader(
    tmp_path: Path, settings: Settings, quality: ModuleType
) -> None:
    """An adversarial run: ABC "Old Co" trades for 50 sessions, has no rows for 100, and
    returns as "New Co" at three times the price. It passed unsaid as one series, with a
    +200% return across the gap, and a held Old Co position came back at New Co's price.
    Now the loaders, the importer and the replay split it at the gap and say so."""
    from ingest.replay import ReplayMarket
    from tests.pipeline.test_cli import cli

    folder = write_market(tmp_path / "market")
    prices, report = quality.load_market(folder, nse=False)
    assert [line for line in report.lines() if "reused" in line] == [LINE]
    assert "name" not in prices
    by_symbol = {s: part.sort_values("date") for s, part in prices.groupby("symbol")}
    assert sorted(by_symbol) == ["AAA", "ABC", RETIRED, "DEF", "GHI", "JKL"]
    assert list(by_symbol[RETIRED]["date"]) == SESSIONS[:50] and set(by_symbol[RETIRED]["close"]) == {10.0}
    assert list(by_symbol["ABC"]["date"]) == SESSIONS[150:] and set(by_symbol["ABC"]["close"]) == {30.0}
    assert len(by_symbol["DEF"]) == len(by_symbol["GHI"]) == 100  # a 100-session gap stays a gap
    assert len(by_symbol["JKL"]) == 200  # its 10 sessions without a row are no-trade rows (untraded.py)

    result = cli("import", str(folder))
    assert result.returncode == 0, result.stderr
    assert LINE in result.stdout.splitlines() and result.stdout.count("reused ticker") == 1
    with service_engine(settings).connect() as conn:
        instruments = {r["symbol"]: r for r in current_rows(conn, tables.instruments)}
        stored = current_rows(conn, tables.eod_prices)
    assert (instruments[RETIRED]["name"], instruments[RETIRED]["listed_on"]) == ("Old Co", SESSIONS[0])
    assert (instruments["ABC"]["name"], instruments["ABC"]["listed_on"]) == ("New Co", NEW_FIRST)
    assert min(r["trading_date"] for r in stored if r["symbol"] == "ABC") == NEW_FIRST

    # REST serves both companies, as GraphQL does: the symbol parameter takes what the store holds
    with TestClient(create_app(settings.model_copy(update={"admin_key": SecretStr(ADMIN_KEY)}))) as client:
        old = client.get(f"/api/market/history/{RETIRED}", params={"limit": 100}, headers={"X-API-Key": ADMIN_KEY})
        assert old.status_code == 200, old.text
        assert [(b["trading_date"], b["close"]) for b in old.json()["items"]] == [
            (d.isoformat(), 10.0) for d in SESSIONS[:50]
        ]
        assert client.get(f"/api/market/symbol/{RETIRED}", headers={"X-API-Key": ADMIN_KEY}).status_code == 200
        # and nothing else: a mark without its day, a day not in digits, a ticker over 20 characters
        for symbol in ("ABC~", "ABC~2025-9-30", "ABC~٢٠٢٥-09-30", "A" * 21, f"{'A' * 21}~2025-09-30", "~2025-09-30"):
            refused = client.get(f"/api/market/history/{symbol}", headers={"X-API-Key": ADMIN_KEY})
            assert refused.status_code == 422, (symbol, refused.text)
            assert [e["loc"] for e in refused.json()["errors"]] == [["path", "symbol"]]

    replay = ReplayMarket(folder)
    assert LINE in replay.source.capital_changes
    gone = replay.day(SESSIONS[50]).notices
    assert {(n["symbol"], n["kind"]) for n in gone} == {(RETIRED, "DELISTING")}
    assert {(n["symbol"], n["kind"]) for n in replay.day(NEW_FIRST).notices} == {("ABC", "LISTING")}


def test_the_backtest_delists_the_earlier_company_for_good(tmp_path: Path, quality: ModuleType) -> None:
    """The backtest's reading: a book holding Old Co sees it delisted after the rule's 60
    sessions and never back (it returned at New Co's price before); worth its last close,
    10, under the other reading."""
    from market.costs import FeeSchedule
    from portfolio.backtest import run_backtest
    from portfolio.book import Mandate
    from portfolio.delisting import DelistingRule

    prices, _ = quality.load_market(write_market(tmp_path / "market"), nse=False)
    liked = {"AAA": (0.68, 0.05), "ABC": (0.72, 0.06), RETIRED: (0.72, 0.06)}
    panel = prices[prices["symbol"].isin(liked)].assign(
        adv_20=400_000.0,
        bid=lambda f: f["close"] * 0.995,
        ask=lambda f: f["close"] * 1.005,
        p_up=lambda f: f["symbol"].map(lambda s: liked[s][0]),
        expected_return=lambda f: f["symbol"].map(lambda s: liked[s][1]),
        predicted_return=lambda f: f["symbol"].map(lambda s: liked[s][1]),
        volatility_20=0.02,
    )
    book = Mandate(names=2, rebalance_every=3)
    result = run_backtest(panel, 1_000_000, FeeSchedule(), "costed", book, delisting=DelistingRule(60))
    [episode] = result.delistings
    assert (episode["symbol"], episode["last_row"], episode["delisted_on"]) == (RETIRED, OLD_LAST, SESSIONS[109])
    assert episode["returned_on"] is None and episode["last_close"] == pytest.approx(10.0)


def test_the_same_name_is_its_words_without_case_punctuation_or_legal_form() -> None:
    assert name_key("Old Co Ltd") == name_key("OLD CO LIMITED") == name_key("old co. plc") == ("old",)
    assert name_key("Kenya Power & Lighting Company") == name_key("KENYA POWER AND LIGHTING") != name_key("New Co")
    assert name_key("Express Ltd") != name_key("Express Kenya Plc")  # another word: another name
    frame = pd.DataFrame(
        [("A", SESSIONS[0], 1.0, "Old Co"), ("A", SESSIONS[61], 2.0, None), ("B", SESSIONS[0], 1.0, "Bee")],
        columns=["symbol", "date", "close", "name"],
    )
    frame = pd.concat([frame, pd.DataFrame({"symbol": "C", "date": SESSIONS[:62], "close": 1.0, "name": "Cee"})])
    assert reused_tickers(frame, 60) == ()  # a row without a name says nothing
    frame.loc[1, "name"] = "New Co"
    assert [(r.symbol, r.sessions) for r in reused_tickers(frame, 60)] == [("A", 60)]
    assert reused_tickers(frame, 61) == ()


def test_a_split_that_would_leave_the_stored_series_beside_it_is_refused(tmp_path: Path, settings: Settings) -> None:
    """The store holds ABC as one series (the files without names: nothing told the
    companies apart); the same files with names split it, and would keep the stored
    Old Co rows under ABC beside ABC~...'s: refused before a row is written."""
    from ingest.importers import import_path
    from market.errors import InvalidInputError
    from store.history import row_counts

    named = write_market(tmp_path / "named")
    unnamed = tmp_path / "unnamed"
    unnamed.mkdir()
    rows = [line.rsplit(",", 1)[0] for line in (named / "prices.csv").read_text().splitlines()]
    (unnamed / "prices.csv").write_text("\n".join(rows) + "\n")
    engine = service_engine(settings)
    import_path(engine, unnamed)
    with engine.connect() as conn:
        before = row_counts(conn, [tables.eod_prices, tables.instruments])
    with pytest.raises(InvalidInputError) as refused:
        import_path(engine, named)
    assert str(refused.value).startswith(
        f"the store holds 50 rows of ABC ({SESSIONS[0].isoformat()} to {OLD_LAST.isoformat()}) that this file's "
        f"capital changes put under {RETIRED}"
    )
    with engine.connect() as conn:
        assert row_counts(conn, [tables.eod_prices, tables.instruments]) == before


def _part(path: Path, rows: list[tuple[str, date, float, str]]) -> Path:
    lines = ["symbol,date,close,volume,name"] + [f"{s},{d},{c:.2f},50000,{n}" for s, d, c, n in rows]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_a_ticker_reused_across_two_imports_is_split_or_refused_as_one_import_would(
    tmp_path: Path, settings: Settings
) -> None:
    """A review's run: old.csv (ABC "Old Co" at 10), mid.csv (ZZZ alone for 100 sessions)
    and new.csv (ABC "New Co" at 30) imported one after another made ABC one series with a
    +200% jump, renamed "New Co", without a word: the reused ticker was looked for in the
    files' rows only. The store's rows and name are read too: the later company's file is
    refused (the stored Old Co rows would stay under ABC beside ABC~...'s), saying what was
    found and how to import it; the earlier company's file after the later's is split."""
    from ingest.importers import import_path
    from market.errors import InvalidInputError
    from store.history import row_counts

    old = _part(tmp_path / "old.csv", [("ABC", d, 10.0, "Old Co") for d in SESSIONS[:50]])
    mid = _part(tmp_path / "mid.csv", [("ZZZ", d, 5.0, "Zed Ltd") for d in SESSIONS[50:150]])
    new = _part(tmp_path / "new.csv", [("ABC", d, 30.0, "New Co") for d in SESSIONS[150:]])
    engine = service_engine(settings)
    import_path(engine, old)
    import_path(engine, mid)
    with engine.connect() as conn:
        before = row_counts(conn, [tables.eod_prices, tables.instruments])
    with pytest.raises(InvalidInputError) as refused:
        import_path(engine, new)
    assert str(refused.value) == (
        f"the store holds 50 rows of ABC ({SESSIONS[0].isoformat()} to {OLD_LAST.isoformat()}) that this file's "
        f"capital changes put under {RETIRED}: ABC is a reused ticker, 'Old Co' to {OLD_LAST.isoformat()} and "
        f"'New Co' from {NEW_FIRST.isoformat()}, 100 sessions later: the store keeps every row it was given, so "
        "both series would stay; import both companies' files in one import into a fresh store "
        "(MARKETINTEL_DATABASE_URL), which splits the ticker; nothing was imported"
    )
    with engine.connect() as conn:
        assert row_counts(conn, [tables.eod_prices, tables.instruments]) == before
        assert {r["symbol"]: r["name"] for r in current_rows(conn, tables.instruments)}["ABC"] == "Old Co"


def test_the_earlier_companys_file_imported_after_the_later_ones_is_split(tmp_path: Path, settings: Settings) -> None:
    """The other order: the store holds New Co's ABC; Old Co's file, imported later, is
    stored under ABC~... (a name that stops) as one import of the three files stores it,
    and New Co keeps ABC and its name."""
    from ingest.importers import import_path

    engine = service_engine(settings)
    import_path(engine, _part(tmp_path / "new.csv", [("ABC", d, 30.0, "New Co") for d in SESSIONS[150:]]))
    import_path(engine, _part(tmp_path / "mid.csv", [("ZZZ", d, 5.0, "Zed Ltd") for d in SESSIONS[50:150]]))
    report = import_path(engine, _part(tmp_path / "old.csv", [("ABC", d, 10.0, "Old Co") for d in SESSIONS[:50]]))
    assert LINE in report.capital_changes
    with engine.connect() as conn:
        names = {r["symbol"]: r["name"] for r in current_rows(conn, tables.instruments)}
        stored = current_rows(conn, tables.eod_prices, where=[tables.eod_prices.c.symbol.in_(["ABC", RETIRED])])
    assert (names["ABC"], names[RETIRED]) == ("New Co", "Old Co")
    assert {r["symbol"] for r in stored if r["trading_date"] <= OLD_LAST} == {RETIRED}
    assert min(r["trading_date"] for r in stored if r["symbol"] == "ABC") == NEW_FIRST


def test_one_tickers_last_row_and_the_next_tickers_first_are_no_gap() -> None:
    """The rows are read sorted by symbol and date: AAA's last row (session 0) and BBB's
    first (session 100) sit side by side, 99 sessions and two names apart, and are two
    tickers, not one reused."""
    frame = pd.DataFrame(
        [("AAA", SESSIONS[0], 1.0, "Alpha Co"), ("BBB", SESSIONS[100], 2.0, "Beta Co")],
        columns=["symbol", "date", "close", "name"],
    )
    cee = pd.DataFrame({"symbol": "CCC", "date": SESSIONS[:101], "close": 1.0, "name": "Cee"})
    frame = pd.concat([frame, cee], ignore_index=True)
    assert reused_tickers(frame, 60) == ()
    frame.loc[1, "symbol"] = "AAA"  # one ticker: the gap is a reuse
    assert [(r.symbol, r.old_name, r.new_name, r.sessions) for r in reused_tickers(frame, 60)] == [
        ("AAA", "Alpha Co", "Beta Co", 99)
    ]
