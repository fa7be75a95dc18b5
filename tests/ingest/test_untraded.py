"""Files that leave untraded names out (ingest/importers/untraded.py): a listed name absent
from a day's file is a no-trade row (volume 0 at its last close) inside a gap shorter than
the delisting rule's count, in the importer's store and in the research frames alike, so the
entry gates' 20-day average volume and the model's windows count sessions, not trades."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import date, timedelta
from pathlib import Path
from types import ModuleType

import numpy as np
import pandas as pd
import pytest

from ingest.importers import import_path
from ingest.importers.untraded import untraded_rows
from market.settings import Settings
from store import tables
from store.engine import service_engine
from store.history import current_rows
from tests.benchmark_modules import benchmark_module
from tests.pipeline.test_cli import cli

FIRST = date(2026, 1, 5)
DAYS = [d for d in (FIRST + timedelta(days=i) for i in range(80)) if d.weekday() < 5][:40]


@pytest.fixture(scope="module")
def quality() -> Iterator[ModuleType]:
    with benchmark_module("model_quality") as module:
        yield module


def _frame(rows: list[tuple[str, int, float]]) -> pd.DataFrame:
    frame = pd.DataFrame(
        [(s, DAYS[i], close, 1_000) for s, i, close in rows], columns=["symbol", "date", "close", "volume"]
    )
    return frame.assign(high=frame["close"] * 1.01, ordinary=True)


def test_a_gap_shorter_than_the_rules_count_is_untraded_and_a_longer_one_stays_a_gap() -> None:
    every = [("EVERY", i, 10.0 + i) for i in range(10)]
    gappy = [("GAPPY", 0, 5.0), ("GAPPY", 3, 6.0), ("GAPPY", 9, 7.0)]  # 2 sessions missing, then 5
    late = [("LATE", 2, 1.0), ("LATE", 5, 2.0)]  # listed from day 2, its rows end on day 5
    added = untraded_rows(_frame(every + gappy + late), shorter_than=5)
    assert [(r.symbol, DAYS.index(r.date), r.close, r.volume) for r in added.itertuples()] == [
        ("GAPPY", 1, 5.0, 0),
        ("GAPPY", 2, 5.0, 0),
        ("LATE", 3, 1.0, 0),
        ("LATE", 4, 1.0, 0),
    ]
    assert added["high"].isna().all() and added["ordinary"].all()  # nothing invented; the name's own type
    assert added["high"].dtype == np.float64  # a frame's numbers stay numbers
    longer = untraded_rows(_frame(every + gappy + late), shorter_than=6)  # the 5-session gap is now short
    assert [DAYS.index(d) for d in longer.loc[longer["symbol"] == "GAPPY", "date"]] == [1, 2, 4, 5, 6, 7, 8]
    assert set(longer.loc[longer["date"] > DAYS[3], "close"]) == {6.0, 1.0}  # each at its last close
    assert untraded_rows(_frame(every), shorter_than=60).empty  # a file that lists every name adds nothing


def _gappy_market(folder: Path, sessions: int = len(DAYS)) -> Path:
    """prices.csv over the first `sessions` DAYS: LIQUID trades every session; THIN's rows are
    every third session (the file leaves it out on the others), 300,000 shares each."""
    folder.mkdir(parents=True, exist_ok=True)
    lines = ["symbol,date,close,volume,high,low"]
    for i, day in enumerate(DAYS[:sessions]):
        lines.append(f"LIQUID,{day.isoformat()},{20 + i * 0.1:.2f},100000,{20.5 + i * 0.1:.2f},{19.5 + i * 0.1:.2f}")
        if i % 3 == 0:
            lines.append(f"THIN,{day.isoformat()},{50 + i:.2f},300000,{51 + i:.2f},{49 + i:.2f}")
    (folder / "prices.csv").write_text("\n".join(lines) + "\n")
    return folder


def test_the_gates_and_the_models_windows_count_sessions_on_a_file_that_leaves_untraded_names_out(
    tmp_path: Path, quality: ModuleType
) -> None:
    from models.dataset import build_panel

    prices, _ = quality.load_market(_gappy_market(tmp_path / "market"), nse=False)
    thin = prices[prices["symbol"] == "THIN"]
    assert len(thin) == len(DAYS)  # every session from its first row to its last (day 39)
    panel = build_panel(prices.drop(columns="ordinary"), horizon=5).set_index(["symbol", "date"])
    last = panel.loc[("THIN", DAYS[39])]
    # 7 trades of 300,000 in its last 20 sessions: 105,000 a session, not the 300,000 of its last 20 trades
    assert last["adv_20"] == pytest.approx(7 * 300_000 / 20)
    assert last["zero_volume_share_20"] == pytest.approx(13 / 20)
    assert prices.attrs["untraded_rows"] == len(DAYS) - 14


def _stored(settings: Settings) -> pd.DataFrame:
    with service_engine(settings).connect() as conn:
        return pd.DataFrame(current_rows(conn, tables.eod_prices))


def test_the_importer_stores_the_no_trade_rows_once_and_across_follow_up_imports(
    settings: Settings, tmp_path: Path
) -> None:
    market = _gappy_market(tmp_path / "market", sessions=39)
    report = import_path(service_engine(settings), market)
    assert report.rows_inserted == report.rows_read == 39 + 13 and report.untraded_inserted == 24
    thin = _stored(settings).query("symbol == 'THIN'").set_index("trading_date").sort_index()
    assert list(thin.index) == DAYS[:37]  # to its last row (day 36); nothing after it
    untraded = thin[thin["source"] == "import:ohlcv:not in file"]
    assert len(untraded) == 24 and (untraded["volume"] == 0).all() and untraded["high"].isna().all()
    assert untraded.loc[DAYS[2], "close"] == untraded.loc[DAYS[2], "prev_close"] == thin.loc[DAYS[0], "close"]
    assert import_path(service_engine(settings), market).untraded_inserted == 0  # a re-import adds nothing
    # the next day's file, in which THIN trades again after two sessions without a row
    later = tmp_path / "later"
    later.mkdir()
    day = DAYS[39].isoformat()
    (later / "prices.csv").write_text(f"symbol,date,close,volume\nTHIN,{day},90,1000\nLIQUID,{day},24,1000\n")
    follow = import_path(service_engine(settings), later)
    assert (follow.rows_inserted, follow.untraded_inserted) == (2, 2)  # days 37 and 38, the store's sessions
    assert len(_stored(settings).query("symbol == 'THIN'")) == len(DAYS)


def test_a_no_trade_row_after_a_bonus_issues_ex_date_carries_the_close_on_the_new_count(
    settings: Settings, tmp_path: Path
) -> None:
    """A one-for-one bonus issue goes ex on a day the file leaves BONUS out: the no-trade rows
    from its ex-date on carry the last close halved, as the exchange quotes it, so the
    adjusted history is flat across the gap. Carried as stored, the rows after the ex-date
    held the old count's close: the adjusted price doubled for three sessions and fell back."""
    from store.splits import on_count, stored_splits

    folder = _bonus_market(tmp_path)
    (folder / "corporate_actions.csv").write_text(f"symbol,ex_date,kind,ratio\nBONUS,{DAYS[12]},bonus,1 for 1\n")
    report = import_path(service_engine(settings), folder)
    assert report.untraded_inserted == 5 and report.corporate_actions_inserted == 1
    bonus = _stored(settings).query("symbol == 'BONUS'").set_index("trading_date").sort_index()
    assert list(bonus.loc[DAYS[10] : DAYS[14], "close"]) == [100, 100, 50, 50, 50]
    assert list(bonus.loc[DAYS[10] : DAYS[14], "prev_close"]) == [100, 100, 50, 50, 50]
    with service_engine(settings).connect() as conn:
        splits = stored_splits(conn)
    adjusted = on_count(bonus.reset_index().assign(symbol="BONUS"), splits, DAYS[19])
    assert set(adjusted["close"]) == {50}


def test_an_actions_file_imported_after_the_prices_puts_the_carried_closes_on_the_new_count(
    settings: Settings, tmp_path: Path
) -> None:
    """The prices imported first (BONUS untraded over its ex-date: the no-trade rows carry
    100), then the same folder with its corporate_actions.csv: the split was stored and the
    bars refreshed, but the no-trade rows from the ex-date kept 100, a holder valued double
    for three sessions. They are put again at 50 (a new version each), as one import of
    both stores them, and the command says so."""
    folder = _bonus_market(tmp_path)
    assert import_path(service_engine(settings), folder).untraded_inserted == 5
    (folder / "corporate_actions.csv").write_text(f"symbol,ex_date,kind,ratio\nBONUS,{DAYS[12]},bonus,1 for 1\n")
    result = cli("import", str(folder))
    assert result.returncode == 0, result.stderr
    assert "3 no-trade rows an earlier import stored put again at the last close on the current count" in result.stdout
    bonus = _stored(settings).query("symbol == 'BONUS'").set_index("trading_date").sort_index()
    assert list(bonus.loc[DAYS[10] : DAYS[14], "close"]) == [100, 100, 50, 50, 50]
    assert import_path(service_engine(settings), folder).untraded_changed == 0  # once is enough


def test_the_import_command_says_how_many_no_trade_rows_it_stored(settings: Settings, tmp_path: Path) -> None:
    result = cli("import", str(_gappy_market(tmp_path / "market")))
    assert result.returncode == 0, result.stderr
    assert "26 no-trade rows stored for listed names a day's file left out (volume 0 at the last close" in (
        result.stdout
    )


def _weekdays(first: date, last: date, weekdays: set[int]) -> list[date]:
    return [d for d in (first + timedelta(days=i) for i in range((last - first).days + 1)) if d.weekday() in weekdays]


def _market_file(folder: Path, rows: list[tuple[str, date]]) -> Path:
    """prices.csv of (symbol, day) rows, each name at its own steady close."""
    folder.mkdir(parents=True, exist_ok=True)
    lines = ["symbol,date,close,volume"] + [f"{s},{d.isoformat()},{10 + ord(s[0]) % 7},500" for s, d in rows]
    (folder / "prices.csv").write_text("\n".join(lines) + "\n")
    return folder


MISDATED = date(2024, 1, 5)  # a Friday the market did not trade (a holiday); a Sunday's row refuses the import
WEEKDAYS = [d for d in _weekdays(date(2024, 1, 2), date(2024, 1, 9), {0, 1, 2, 3, 4}) if d != MISDATED]


def test_a_misdated_row_adds_no_session_for_the_other_names_and_the_import_names_its_day(
    settings: Settings, tmp_path: Path
) -> None:
    """AAA, BBB and CCC trade every session; AAA also has one row dated a holiday. The import
    stored a no-trade row for BBB and CCC on that day, flagged nothing: every date with a
    row was a session. A day with rows of fewer than half the names around it is no session
    for the fill: AAA's row is stored as the file says, no other name gets one, the day is named."""
    rows = [(s, d) for d in WEEKDAYS for s in ("AAA", "BBB", "CCC")] + [("AAA", MISDATED)]
    report = import_path(service_engine(settings), _market_file(tmp_path / "market", rows))
    assert report.untraded_inserted == 0
    stored = _stored(settings)
    assert sorted(stored.loc[stored["trading_date"] == MISDATED, "symbol"]) == ["AAA"]
    assert report.thin_days == [
        "2024-01-05: rows of 1 name (AAA) against 3 on the days around it: not taken as a session, no other name "
        "was given a no-trade row on it; check the day's rows"
    ]
    result = cli("import", str(_market_file(tmp_path / "again", rows)))
    assert result.returncode == 0, result.stderr
    assert "thin day 2024-01-05: rows of 1 name (AAA) against 3 on the days around it" in result.stdout


def test_the_rule_reads_the_markets_days_not_the_calendars_and_applies_to_the_research_frames(
    quality: ModuleType, tmp_path: Path
) -> None:
    """A Sunday-to-Thursday market: its Sundays are sessions (a name absent on one is
    untraded there), a misdated Saturday row is not; the research frames read the same rule."""
    sessions = _weekdays(date(2024, 1, 7), date(2024, 1, 25), {6, 0, 1, 2, 3})
    saturday = date(2024, 1, 13)
    rows = [(s, d) for d in sessions for s in ("AAA", "BBB", "CCC", "DDD") if not (s == "DDD" and d == sessions[5])]
    prices, _ = quality.load_market(_market_file(tmp_path / "market", [*rows, ("AAA", saturday)]), nse=False)
    added = prices[prices["volume"] == 0]
    assert [(r.symbol, r.date) for r in added.itertuples()] == [("DDD", sessions[5])]
    assert sessions[5].weekday() == 6  # a Sunday, a session of this market
    assert [t.day for t in prices.attrs["thin_days"]] == [saturday]


def test_a_market_that_grows_has_no_thin_day_and_a_quiet_day_stays_a_session() -> None:
    """Two names for twelve days, then ten: the days before the new board are judged against
    their own side too. A quiet day with rows of half the names is a session."""
    from ingest.importers.untraded import thin_days

    names = [f"N{i}" for i in range(10)]
    rows = [(s, d) for i, d in enumerate(DAYS[:30]) for s in (names[:2] if i < 12 else names)]
    quiet = [(s, d) for s, d in rows if d != DAYS[20] or s in names[:5]]
    assert thin_days(pd.DataFrame(quiet, columns=["symbol", "date"])) == []
    misdated = [*quiet, ("N0", DAYS[20] - timedelta(days=1)), ("N1", DAYS[20] - timedelta(days=1))]
    assert [t.day for t in thin_days(pd.DataFrame(misdated, columns=["symbol", "date"]))] == [
        DAYS[20] - timedelta(days=1)
    ]


def _bonus_market(tmp_path: Path) -> Path:
    """A folder whose prices.csv leaves BONUS out for five sessions around the ex-date of a
    one-for-one bonus issue (day 12): two before it, three from it; LIQUID trades daily."""
    folder = tmp_path / "market"
    folder.mkdir()
    lines = ["symbol,date,close,volume"]
    for i, day in enumerate(DAYS[:20]):
        lines.append(f"LIQUID,{day.isoformat()},20,100000")
        if not 10 <= i <= 14:
            lines.append(f"BONUS,{day.isoformat()},{100 if i < 12 else 50},1000")
    (folder / "prices.csv").write_text("\n".join(lines) + "\n")
    return folder


SPAN = [d for d in (FIRST + timedelta(days=i) for i in range(220)) if d.weekday() < 5][:142]
NAMES = [f"N{i}" for i in range(8)]


def _span_rows(days: range, left_out: set[tuple[str, int]], closes: dict[str, float] | None = None) -> list[str]:
    """Rows of NAMES on SPAN's `days` but the (name, day) `left_out`, each name's close its
    own (`closes` over the default: 10 + the day's number / 10, and the name's number)."""
    closes = closes or {}
    return [
        f"{s},{SPAN[i].isoformat()},{closes.get(s, 10 + int(s[1:]) + i / 10):.2f},{100 + i}"
        for i in days
        for s in NAMES
        if (s, i) not in left_out
    ]


def _gaps() -> set[tuple[str, int]]:
    """The (name, day) the files leave out: a scatter of short gaps, N1 out across the first
    file's end (days 76 to 81), N2 around day 60 (a bonus issue's ex-date, stored later), N7
    out for 62 sessions (a gap that stays one), day 79 a thin day (one name's row), days 117
    and 118 two (three names' rows, N5's on 117, then N5 out to day 121), and day 127 one
    (three names') until a quieter market of two names follows it (days 130 on)."""
    rng = np.random.default_rng(5)
    scatter = {(s, int(i)) for s in NAMES[3:7] for i in rng.choice(125, size=25, replace=False)}
    thin = {(s, 117) for s in NAMES if s not in ("N0", "N1", "N5")} | {(s, 118) for s in NAMES[3:]}
    return (
        scatter - {("N5", 117)}
        | thin
        | {("N5", i) for i in range(118, 122)}
        | {("N1", i) for i in range(76, 82)}
        | {("N2", i) for i in range(58, 63)}
        | {("N7", i) for i in range(20, 82)}
        | {(s, 79) for s in NAMES[1:]}
        | {(s, 127) for s in NAMES[3:]}
        | {(s, i) for s in NAMES if s not in ("N0", "N5") for i in range(130, 142)}
    )


def test_an_import_reads_what_it_can_change_and_stores_what_the_rule_over_the_whole_store_stores(
    settings: Settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each import found the no-trade rows over every stored row of its names and the whole
    market's days, so its cost grew with the store. It reads the days its rows and actions
    can change (`untraded_scope`) and stores the same rows: the same imports into a second
    store, each over the whole store, leave the same prices, follow-up by follow-up (a gap
    across the last file's end, a thin day judged once later days come, an older bonus
    issue's carried closes put on the new count, a corrected close carried on, a thin day
    before the file's first that its rows make a session)."""
    import ingest.importers.files as files
    from store.migrations import upgrade

    whole = service_engine(settings.model_copy(update={"database_url": f"sqlite:///{tmp_path / 'whole.db'}"}))
    upgrade(whole)
    gaps = _gaps()
    steps = [
        (_span_rows(range(0, 80), gaps), ""),
        (_span_rows(range(80, 95), gaps), ""),
        (_span_rows(range(95, 100), gaps), f"N2,{SPAN[60]},bonus,1 for 1\n"),
        (_span_rows(range(88, 89), gaps, {"N4": 99.0}), ""),  # a corrected close, carried on after it
        (_span_rows(range(100, 130), gaps), ""),
        (_span_rows(range(130, 142), gaps), ""),  # day 127 a session: N5's row on it is a no-trade row
    ]
    reports, scopes = [], []
    scope = files.untraded_scope
    monkeypatch.setattr(files, "untraded_scope", lambda *a: scopes.append(scope(*a)) or scopes[-1])
    for k, (lines, actions) in enumerate(steps):
        folder = tmp_path / f"step{k}"
        folder.mkdir()
        (folder / "prices.csv").write_text("\n".join(["symbol,date,close,volume", *lines]) + "\n")
        if actions:
            (folder / "corporate_actions.csv").write_text("symbol,ex_date,kind,ratio\n" + actions)
        scoped = import_path(service_engine(settings), folder)
        with monkeypatch.context() as m:
            m.setattr(files, "untraded_scope", lambda *_: files.UntradedScope())  # every stored row
            everything = import_path(whole, folder)
        assert (scoped.untraded_inserted, scoped.untraded_changed, scoped.thin_days) == (
            everything.untraded_inserted,
            everything.untraded_changed,
            everything.thin_days,
        )
        assert _prices(service_engine(settings)).equals(_prices(whole)), f"step {k}"
        reports.append((scoped.untraded_inserted, scoped.untraded_changed))
    assert reports[1][0] and reports[2][1] == 3 and reports[3][1] == 1  # a gap across, a bonus, a correction
    assert _prices(whole).query("symbol == 'N5' and volume == 0")["trading_date"].max() == SPAN[127]
    # the last file's names and the ten days each side of the days it can change: N5's gap from day 117 on
    assert (scopes[-1].read_from, scopes[-1].read_to, scopes[-1].since) == (
        SPAN[107],
        None,
        {"N0": SPAN[119], "N5": SPAN[117]},
    )


def _prices(engine) -> pd.DataFrame:
    columns = ["symbol", "trading_date", "close", "prev_close", "volume", "source"]
    with engine.connect() as conn:
        frame = pd.DataFrame(current_rows(conn, tables.eod_prices, columns=columns))
    return frame.sort_values(["symbol", "trading_date"]).reset_index(drop=True)


NSE_HEADER = (
    "Code;Name;Lowest Price of the Day;Highest Price of the Day;Closing Price;Previous Day Closing Price;Volume"
)


def _daily_files(folder: Path, days: list[date], row: Callable[[str, int], str | None]) -> Path:
    """An NSE daily file per day of six names, each name's line `row(symbol, day's index)`
    (None: the file leaves the name out)."""
    folder.mkdir(parents=True, exist_ok=True)
    for i, day in enumerate(days):
        lines = [f"{NSE_HEADER} Traded"] + [
            line for s in ("AAA", "BBB", "CCC", "DDD", "EEE", "FFF") if (line := row(s, i))
        ]
        (folder / f"{day:%Y%m%d}.csv").write_text("\r\n".join(lines) + "\r\n")
    return folder


def _typo_market(folder: Path) -> Path:
    """BBB's close on the third day is a typo ('10,5x'); CCC is left out of that day's file."""

    def row(symbol: str, i: int) -> str | None:
        if symbol == "CCC" and i == 2:
            return None
        close = "10,5x" if symbol == "BBB" and i == 2 else "10.50"
        return f"{symbol};{symbol} Ltd;10.00;11.00;{close};10.50;{100 + i}"

    return _daily_files(folder, DAYS[:5], row)


def test_a_bad_row_is_no_day_left_out_the_import_stores_no_trade_row_for_it(settings: Settings, tmp_path: Path) -> None:
    """A typo in BBB's close (a bad row, reported) was stored anyway as a made-up no-trade
    row (volume 0 at the previous close, source `...:not in file`) and the import said "1
    no-trade rows stored for listed names a day's file left out", which the file did not.
    A name with a row in the day's file, even an unreadable one, gets no no-trade row: the
    day stays without a row of it until the row is fixed and imported again. CCC, which the
    file leaves out, still gets its no-trade row."""
    folder = _typo_market(tmp_path / "daily")
    result = cli("import", str(folder))
    assert result.returncode == 0, result.stderr
    typo = f"bad row: {folder}/{DAYS[2]:%Y%m%d}.csv:3: close '10,5x' is not a number like 1,234.50"
    assert typo in result.stdout.splitlines()
    assert "1 no-trade rows stored for listed names a day's file left out" in result.stdout
    with service_engine(settings).connect() as conn:
        stored = {(r["symbol"], r["trading_date"]): r for r in current_rows(conn, tables.eod_prices)}
    assert ("BBB", DAYS[2]) not in stored
    assert (stored[("CCC", DAYS[2])]["volume"], stored[("CCC", DAYS[2])]["source"]) == (
        0,
        "import:nse-daily:not in file",
    )
    fixed = _daily_files(tmp_path / "fixed", DAYS[2:3], lambda s, i: f"{s};{s} Ltd;10.00;11.00;10.55;10.50;7")
    assert cli("import", str(fixed)).returncode == 0
    with service_engine(settings).connect() as conn:
        stored = {(r["symbol"], r["trading_date"]): r for r in current_rows(conn, tables.eod_prices)}
    assert (stored[("BBB", DAYS[2])]["close"], stored[("BBB", DAYS[2])]["volume"]) == (10.55, 7)


def test_a_later_import_stores_no_trade_row_on_a_day_an_earlier_one_could_not_read(
    settings: Settings, tmp_path: Path
) -> None:
    """The next week's files imported after the week with BBB's typo gave BBB's day of the
    typo a no-trade row at the last close (`...:not in file`): the later import did not
    know the earlier one's bad row, so the gap was an absence to fill, and the typo the
    first file still holds was stored as a day without trades. The names and days an import
    could not read are stored (`tables.unread_rows`) and no later import fills them; the
    fixed row is still inserted."""
    engine = service_engine(settings)
    import_path(engine, _typo_market(tmp_path / "week1"))
    later = _daily_files(tmp_path / "week2", DAYS[5:10], lambda s, i: f"{s};{s} Ltd;10.00;11.00;10.50;10.50;9")
    import_path(engine, later)
    with engine.connect() as conn:
        stored = {(r["symbol"], r["trading_date"]) for r in current_rows(conn, tables.eod_prices)}
    assert ("BBB", DAYS[2]) not in stored and ("CCC", DAYS[2]) in stored
    fixed = _daily_files(tmp_path / "fixed", DAYS[2:3], lambda s, i: f"{s};{s} Ltd;10.00;11.00;10.55;10.50;7")
    import_path(engine, fixed)
    with engine.connect() as conn:
        day = current_rows(conn, tables.eod_prices, where=[tables.eod_prices.c.trading_date == DAYS[2]])
    assert {(r["symbol"], r["close"], r["volume"]) for r in day if r["symbol"] == "BBB"} == {("BBB", 10.55, 7)}


def test_per_company_files_imported_one_by_one_store_the_no_trade_rows_of_one_import(
    settings: Settings, tmp_path: Path
) -> None:
    """Per-company files leave a name's untraded days out. Imported together, AAA's two
    missing sessions got their no-trade rows; imported one after the other (AAA's file,
    then BBB's), the days BBB's file added were no gap of AAA's when AAA was imported, and
    BBB's import filled BBB's names only: AAA kept two holes the 20-day windows read as
    no sessions at all. An import fills every stored name's gaps within the days it reads
    (`_store_untraded`), so the order of the files does not matter."""
    header = (
        "Date;Lowest Price of the Day;Highest Price of the Day;Closing Price;Previous Day Closing Price;Volume Traded"
    )
    traded = {"AAA": [0, 1, 2, 4, 5, 7, 8, 9], "BBB": list(range(10))}
    engine = service_engine(settings)
    for symbol, days in traded.items():
        folder = tmp_path / symbol
        folder.mkdir()
        lines = [header] + [f"{DAYS[i]:%Y%m%d},10.0,10.0,10.0,10.0,100" for i in days]
        (folder / f"{symbol}.csv").write_text("\n".join(lines) + "\n")
        import_path(engine, folder, "nse-company")
    with engine.connect() as conn:
        aaa = {r["trading_date"]: r for r in current_rows(conn, tables.eod_prices) if r["symbol"] == "AAA"}
    assert sorted(aaa) == DAYS[:10]
    assert [(aaa[DAYS[i]]["volume"], aaa[DAYS[i]]["close"]) for i in (3, 6)] == [(0, 10.0), (0, 10.0)]


def test_a_row_split_by_an_unquoted_decimal_comma_is_no_day_to_fill(settings: Settings, tmp_path: Path) -> None:
    """`AAA,2024-..,19,35,100` (a decimal comma in a comma-separated file) is a bad row of
    5 fields, which named no symbol or day: AAA's day was filled as a day without trades at
    the last close, the close the file holds lost unsaid. Its symbol and date cells, left
    of the cell that gained a separator, name the row (`formats.Unaligned`)."""
    lines = ["symbol,date,close,volume"]
    for i in range(6):
        lines += [f"AAA,{DAYS[i]},{'19,35' if i == 2 else '19.00'},100", f"BBB,{DAYS[i]},5.00,100"]
    (tmp_path / "prices.csv").write_text("\n".join(lines) + "\n")
    report = import_path(service_engine(settings), tmp_path / "prices.csv")
    assert report.bad_rows == [f"{tmp_path / 'prices.csv'}:6: 5 fields, expected 4"]
    assert report.untraded_inserted == 0
    with service_engine(settings).connect() as conn:
        assert ("AAA", DAYS[2]) not in {(r["symbol"], r["trading_date"]) for r in current_rows(conn, tables.eod_prices)}


def test_the_replay_serves_no_made_up_row_for_a_bad_row_and_t0_stores_none(settings: Settings, tmp_path: Path) -> None:
    """The replay (`backfill`, `demo --market`) served BBB's unreadable row as a `NOT IN
    FILE` no-trade row, which T0 stored as a day without trades. The importer's rule
    (`unread_rows`): BBB is on neither page that day, T0 delivers the day COMPLETE without
    a row of it, and CCC, left out of the file, is served and stored as its no-trade row."""
    from ingest.replay import ABSENT_STATUS, ReplayMarket
    from pipeline.backfill import backfill

    market = ReplayMarket(_typo_market(tmp_path / "daily"))
    assert market.source.bad_rows[0].endswith(":3: close '10,5x' is not a number like 1,234.50")
    day = market.day(DAYS[2])
    assert {b["symbol"]: b["status"] for b in day.bars} == {
        "AAA": "",
        "CCC": ABSENT_STATUS,
        "DDD": "",
        "EEE": "",
        "FFF": "",
    }
    assert "BBB" not in {s["symbol"] for s in day.securities}
    reports = backfill(service_engine(settings), settings, 5, DAYS[4], market)
    assert [r.status for r in reports] == ["COMPLETE"] * 5
    with service_engine(settings).connect() as conn:
        stored = {(r["symbol"], r["trading_date"]): r for r in current_rows(conn, tables.eod_prices)}
    assert ("BBB", DAYS[2]) not in stored and stored[("BBB", DAYS[3])]["close"] == 10.5
    assert stored[("CCC", DAYS[2])]["volume"] == 0


def test_the_research_frames_add_no_no_trade_row_for_a_bad_row(tmp_path: Path, quality: ModuleType) -> None:
    """The research frames (`load_market`, which the backtest reads) gave BBB's unreadable
    row a no-trade row too, a day without trades in its windows: the importer's rule
    (`unread_rows`) keeps its day empty there as well, and CCC, left out of the file, is filled."""
    frame, _ = quality.load_market(_typo_market(tmp_path / "daily"), nse=True)
    on_day = frame[frame["date"] == DAYS[2]].set_index("symbol")
    assert "BBB" not in on_day.index and on_day.loc["CCC", "volume"] == 0
    assert frame.attrs["untraded_rows"] == 1
