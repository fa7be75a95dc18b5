"""Historical importers: formats, bad rows by file and line, what a source lacks, and
idempotent re-imports; then the whole real NSE set."""

from datetime import date
from pathlib import Path

import pytest
from sqlalchemy import func, select

from ingest.importers import import_path
from market.errors import InvalidInputError
from market.settings import Settings
from store import tables
from store.engine import service_engine
from store.history import current_rows
from tests.pipeline.test_cli import cli

HEADER = (
    "Code;Name;Lowest Price of the Day;Highest Price of the Day;Closing Price;Previous Day Closing Price;Volume Traded"
)


def _write(path: Path, lines: list[str], newline: str = "\r\n") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(newline.join(lines) + newline)
    return path


@pytest.fixture
def nse_daily_folder(tmp_path: Path) -> Path:
    root = tmp_path / "daily"
    _write(
        root / "2022" / "04" / "20220427.csv",
        [HEADER, "SCOM;Safaricom Plc;24.0;24.5;24.3;24.1;1,200,300", "EGAD;Eaagads Ltd;12.65;12.65;12.65;12.65;-"],
    )
    _write(
        root / "2022" / "04" / "20220428.csv",
        [
            HEADER,
            "SCOM;Safaricom PLC;24.1;24.4;24.2;24.3;800",
            "EGAD;Eaagads Ltd;12.65;12.65;-;12.65;-",
            "KUKZ;Kakuzi Plc;400.0;400.0;400.0;400.0;-",
            "",
        ],
    )
    return root


def _prices(settings: Settings) -> list[dict]:
    with service_engine(settings).connect() as conn:
        return current_rows(conn, tables.eod_prices)


def test_nse_daily_summary_imports_with_bad_rows_reported(settings: Settings, nse_daily_folder: Path) -> None:
    report = import_path(service_engine(settings), nse_daily_folder)
    assert report.format == "nse-daily" and report.files == 2
    assert report.rows_read == report.rows_inserted == 4
    assert report.bad_rows == [f"{nse_daily_folder}/2022/04/20220428.csv:3: close '-' is not a positive price"]
    assert report.lacks == ["open", "bid", "ask", "trades", "value_traded"]
    prices = {(p["symbol"], p["trading_date"]): p for p in _prices(settings)}
    assert prices[("EGAD", date(2022, 4, 27))]["volume"] == 0  # '-' means no shares traded
    assert prices[("SCOM", date(2022, 4, 27))]["volume"] == 1_200_300
    scom = prices[("SCOM", date(2022, 4, 28))]
    assert (scom["low"], scom["high"], scom["close"], scom["prev_close"]) == (24.1, 24.4, 24.2, 24.3)
    assert scom["open"] is None and scom["bid"] is None and scom["ask"] is None
    with service_engine(settings).connect() as conn:
        names = {
            r["symbol"]: (r["name"], r["currency"], r["listed_on"]) for r in current_rows(conn, tables.instruments)
        }
    assert names["SCOM"] == ("Safaricom PLC", "KES", date(2022, 4, 27))  # the latest name; the NSE format's currency


def test_reimporting_adds_nothing(settings: Settings, nse_daily_folder: Path) -> None:
    engine = service_engine(settings)
    import_path(engine, nse_daily_folder)
    again = import_path(engine, nse_daily_folder)
    assert again.rows_inserted == 0 and again.instruments_inserted == 0
    with engine.connect() as conn:
        assert conn.execute(select(func.count()).select_from(tables.eod_prices)).scalar_one() == 4


def _six_names(volume_of_last: str = "700") -> list[str]:
    return [
        HEADER,
        "SCOM;Safaricom;24.0;24.5;24.3;24.1;1,200",
        "KCB;KCB Group;40.0;41.0;40.5;40.0;300",
        "EQTY;Equity;50.0;51.0;50.5;50.0;900",
        "EABL;EABL;150.0;151.0;150.0;151.0;50",
        "BAT;BAT Kenya;400.0;405.0;401.0;400.0;20",
        f"NMG;Nation Media;30.0;30.5;30.2;30.0;{volume_of_last}",
        "EGAD;Eaagads Ltd;12.65;12.65;12.65;12.65;-",
        "^NASI;NSE All Share;;;150.1;149.9;-",
    ]


def test_a_day_that_copies_the_one_before_is_left_out_and_said(settings: Settings, tmp_path: Path) -> None:
    """A crawler records an unpublished day (a holiday) as a copy of the session before: every
    traded row the same, field for field. It is not a session: importing it would make a
    day on which nothing moved and take the next day's move away from the real session."""
    root = tmp_path / "daily"
    _write(root / "2010" / "08" / "20100803.csv", _six_names())
    _write(root / "2010" / "08" / "20100804.csv", _six_names())  # the referendum holiday: the page of the 3rd
    _write(root / "2010" / "08" / "20100805.csv", [HEADER, "SCOM;Safaricom;24.4;24.8;24.6;24.3;500"])
    _write(root / "2010" / "08" / "20100806.csv", _six_names())  # the same bars again, but not the day before's
    _write(root / "2010" / "08" / "20100809.csv", _six_names(volume_of_last="701"))  # five repeat, one does not
    result = cli("import", str(root))
    assert result.returncode == 0, result.stderr
    left_out = [line for line in result.stdout.splitlines() if line.startswith("left out: ")]
    assert left_out == [
        "left out: 2010-08-04: every traded row repeats 2010-08-03's verbatim; left out as a copy, not a session",
        "left out: market indices ^NASI (index levels, not securities); 3 levels "
        "stored as the market's benchmark (index_levels)",
    ]  # not the copied day's
    # the index's three rows are not read as prices
    assert "nse-daily: 5 files, 22 rows read, 22 inserted" in result.stdout
    prices = _prices(settings)
    assert {p["trading_date"] for p in prices} == {date(2010, 8, d) for d in (3, 5, 6, 9)}
    # the replay serves the same calendar: the copy is not a session there either
    from ingest.replay import ReplayMarket

    replay = ReplayMarket(root)
    assert replay.days == [date(2010, 8, d) for d in (3, 5, 6, 9)]
    assert replay.source.repeated_days == [left_out[0].removeprefix("left out: ")]


def test_a_copy_whose_previous_close_is_the_close_it_repeats_is_left_out(settings: Settings, tmp_path: Path) -> None:
    """The NSE's 20191210.csv repeats 2019-12-09's low, high, close and volume for every
    traded name, but its previous-close column holds the 9th's close (a page whose previous
    close the exchange computes): read field for field it was stored as a session, every
    name's volume counted twice and the 11th's move taken from the 9th."""
    root = tmp_path / "daily"
    session = _six_names()
    # the copy: each row's previous close is the close it repeats
    copy = [HEADER, *(";".join([*r.split(";")[:5], r.split(";")[4], r.split(";")[6]]) for r in session[1:])]
    _write(root / "2019" / "12" / "20191209.csv", session)
    _write(root / "2019" / "12" / "20191210.csv", copy)
    report = import_path(service_engine(settings), root)
    assert report.repeated_days == [
        "2019-12-10: every traded row repeats 2019-12-09's verbatim; left out as a copy, not a session"
    ]
    assert {p["trading_date"] for p in _prices(settings)} == {date(2019, 12, 9)}


def test_a_days_file_imported_alone_that_copies_the_stored_session_is_left_out(
    settings: Settings, tmp_path: Path
) -> None:
    """The nightly routine imports each day's file on its own. A holiday's file that is the
    session before's again was compared with nothing (its day the only one of the import)
    and stored as a session; T0 refuses the same page as stale. It is checked against the
    store's session before it, left out and said; the next day's file is stored."""
    engine = service_engine(settings)
    import_path(engine, _write(tmp_path / "a" / "20100803.csv", _six_names()))
    copy = import_path(engine, _write(tmp_path / "b" / "20100804.csv", _six_names()))
    assert copy.repeated_days == [
        "2010-08-04: every traded row repeats 2010-08-03's verbatim; left out as a copy, not a session"
    ]
    assert copy.rows_inserted == 0 and copy.index_levels_inserted == 0
    moved = import_path(engine, _write(tmp_path / "c" / "20100805.csv", _six_names(volume_of_last="701")))
    assert moved.repeated_days == [] and moved.rows_inserted == 7
    assert {p["trading_date"] for p in _prices(settings)} == {date(2010, 8, 3), date(2010, 8, 5)}


def test_a_holidays_file_that_lists_every_name_untraded_at_its_last_close_is_left_out(
    settings: Settings, tmp_path: Path
) -> None:
    """A review's run: a vendor's daily files for Christmas, Boxing Day and New Year's Day,
    every name listed untraded at its last close (no traded row, so never a copy by the
    traded rows' rule), were stored as three sessions on which nothing traded: the 20-day
    windows read a zero-volume day for every name (ADV_20 and the zero-volume share), and a
    label or a fill from the day before read the holiday's stale close as the next session.
    A day of five or more rows, none traded and every close the same name's of the day
    before, is left out as a copy, by the importer and the replay alike; a day on which
    nothing traded but a close moved is a session."""
    names = ("AAA", "BBB", "CCC", "DDD", "EEE")
    root = tmp_path / "daily"

    def day(when: str, closes: list[float], volume: int) -> None:
        rows = [f"{s},{when},{c:g},{volume}" for s, c in zip(names, closes, strict=True)]
        _write(root / f"{when.replace('-', '')}.csv", ["symbol,date,close,volume", *rows])

    day("2024-12-24", [10, 20, 30, 40, 50], 100)
    day("2024-12-25", [10, 20, 30, 40, 50], 0)  # Christmas: every name at its last close, untraded
    day("2024-12-26", [10, 20, 30, 40, 50], 0)  # Boxing Day, the same
    day("2024-12-27", [11, 20, 30, 40, 50], 100)
    _write(  # a quiet session: no trade, but a close moved
        root / "20241230.csv",
        [
            "symbol,date,close,volume",
            "AAA,2024-12-30,11.5,0",
            "BBB,2024-12-30,20,0",
            "CCC,2024-12-30,30,0",
            "DDD,2024-12-30,40,0",
            "EEE,2024-12-30,50,0",
        ],
    )
    result = cli("import", str(root))
    assert result.returncode == 0, result.stderr
    left_out = [line for line in result.stdout.splitlines() if line.startswith("left out: ")]
    assert left_out == [
        "left out: 2024-12-25: no row traded and every close is 2024-12-24's; left out as a copy, not a session",
        "left out: 2024-12-26: no row traded and every close is 2024-12-24's; left out as a copy, not a session",
    ]
    with service_engine(settings).connect() as conn:
        stored = {p["trading_date"] for p in current_rows(conn, tables.eod_prices)}
    assert stored == {date(2024, 12, 24), date(2024, 12, 27), date(2024, 12, 30)}
    from ingest.replay import ReplayMarket

    assert ReplayMarket(root).days == [date(2024, 12, 24), date(2024, 12, 27), date(2024, 12, 30)]


def test_a_market_with_few_trades_keeps_its_repeated_bars(settings: Settings, tmp_path: Path) -> None:
    """Under five traded rows, all of them repeating is not evidence of a copy: kept."""
    root = tmp_path / "daily"
    lines = [
        HEADER,
        "SCOM;Safaricom;24.0;24.5;24.3;24.1;1,200",
        "KCB;KCB Group;40.0;41.0;40.5;40.0;300",
        "EGAD;Eaagads Ltd;12.65;12.65;12.65;12.65;-",
    ]
    _write(root / "2010" / "08" / "20100803.csv", lines)
    _write(root / "2010" / "08" / "20100804.csv", lines)
    report = import_path(service_engine(settings), root)
    assert report.repeated_days == [] and report.rows_inserted == 6


def test_an_empty_or_header_only_file_is_a_bad_row_not_a_silent_gap(settings: Settings, tmp_path: Path) -> None:
    """An adversarial run: a 0-byte NSE daily file and one with only its header were
    skipped without a word (exit 0, two sessions silently missing, the replay dropping
    them too); each is now a bad row of its file, per-company files alike."""
    root = tmp_path / "daily"
    _write(root / "20210105.csv", [HEADER, "EGAD;Eaagads Ltd;12.5;12.5;12.5;12.5;-"])
    (root / "20210106.csv").write_bytes(b"")
    _write(root / "20210107.csv", [HEADER])
    _write(root / "20210108.csv", [HEADER, "EGAD;Eaagads Ltd;13.5;13.5;13.5;13.5;100"])
    result = cli("import", str(root))
    assert result.returncode == 2, result.stderr  # files not read (`_unread_files`)
    assert f"bad row: {root}/20210106.csv:0: empty file" in result.stdout
    assert f"bad row: {root}/20210107.csv:1: no rows" in result.stdout
    from ingest.replay import ReplayMarket

    assert ReplayMarket(root).source.bad_rows == [
        f"{root}/20210106.csv:0: empty file",
        f"{root}/20210107.csv:1: no rows",
    ]
    company = tmp_path / "company"
    _write(company / "SCOM.csv", ["Date;Lowest;Highest;Closing;Previous;Volume", "20080609,6.95,8.0,7.35,7.3,100"])
    (company / "KCB.csv").write_bytes(b"")
    _write(company / "EGAD.csv", ["Date;Lowest;Highest;Closing;Previous;Volume"])
    report = import_path(service_engine(settings), company, "nse-company")
    assert report.bad_rows == [f"{company}/EGAD.csv:1: no rows", f"{company}/KCB.csv:0: empty file"]


def test_nse_per_company_quirk_header_semicolons_rows_commas(settings: Settings, tmp_path: Path) -> None:
    path = _write(
        tmp_path / "company" / "SCOM.csv",
        [
            "Date;Lowest Price of the Day;Highest Price of the Day;Closing Price;"
            "Previous Day Closing Price;Volume Traded",
            "20080609,6.95,8.0,7.35,219.5,416383100",
            "20080610,6.65,8.0,6.95,7.35,-",
            "2008-06-11,6.9,7.1,6.95,6.95,100",
        ],
    )
    report = import_path(service_engine(settings), path, "nse-company", currency="KES")
    assert report.rows_inserted == 2
    assert report.bad_rows == [f"{path}:4: date '2008-06-11' is not YYYYMMDD"]
    assert {p["volume"] for p in _prices(settings)} == {416383100, 0}


def test_generic_ohlcv_with_optional_bid_ask(settings: Settings, tmp_path: Path) -> None:
    path = _write(
        tmp_path / "prices.csv",
        [
            "symbol,date,open,high,low,close,volume,bid,ask",
            "KCB,2026-11-19,25.5,26.0,25.4,25.73,12000,25.70,25.80",
            "KCB,2026-11-20,25.7,26.3,25.6,26.17,0,26.11,26.22",
            "KCB,2026-11-21,25.7,26.3,25.6,26.17,0,26.30,26.22",
            "KCB,20-11-2026,25.7,26.3,25.6,26.17,0,26.11,26.22",
        ],
        newline="\n",
    )
    report = import_path(service_engine(settings), path)
    assert report.format == "ohlcv" and report.rows_inserted == 2
    assert report.lacks == ["prev_close", "trades", "value_traded"]
    assert report.bad_rows[0] == f"{path}:4: bid 26.3 is above ask 26.22"
    assert report.bad_rows[1] == f"{path}:5: date '20-11-2026' is not a date as YYYY-MM-DD (or YYYYMMDD)"
    assert {(p["bid"], p["ask"]) for p in _prices(settings)} == {(25.7, 25.8), (26.11, 26.22)}


def test_numbers_a_file_could_misread_are_bad_rows_and_the_rest_loads(settings: Settings, tmp_path: Path) -> None:
    """An adversarial run: a decimal comma ("12,50") was read as 1250 with every comma
    dropped; a volume of 10^19 or 1e30 stopped the import with a database error after its
    first batch was stored; a close of inf or 1e308 was stored and broke the backtest; a
    byte-order mark hid the header's first column; "0,325" (a decimal comma's 0.325: no
    thousands group starts with 0) was read as 325. Each such cell is now a bad row with
    its line, and the file's other rows load."""
    path = tmp_path / "prices.csv"
    lines = [
        "symbol,date,close,volume",
        "KCB,2026-11-16,25.50,1200",
        'KCB,2026-11-17,"12,50",100',
        "KCB,2026-11-18,26.00,10000000000000000000",
        "KCB,2026-11-19,26.00,1e30",
        "KCB,2026-11-20,inf,100",
        "KCB,2026-11-23,1e308,100",
        "KCB,2026-11-24,nan,100",
        'KCB,2026-11-25,"1,234.50",100',
        'KCB,2026-11-26,"0,325",100',
    ]
    path.write_text("\ufeff" + "\n".join(lines) + "\n", encoding="utf-8")
    report = import_path(service_engine(settings), path)
    assert report.format == "ohlcv" and report.rows_inserted == 2
    assert [r.split(": ", 1)[1] for r in report.bad_rows] == [
        "close '12,50' is not a number like 1,234.50",
        "volume '10000000000000000000' is not a share count (0 to 1,000,000,000,000)",
        "volume '1e30' is not a number like 1,234.50",
        "close 'inf' is not a number like 1,234.50",
        "close '1e308' is not a number like 1,234.50",
        "close 'nan' is not a number like 1,234.50",
        "close '0,325' is not a number like 1,234.50",  # a decimal comma's 0.325, read as 325
    ]
    assert sorted(p["close"] for p in _prices(settings)) == [25.5, 1234.5]


def test_a_date_is_a_calendar_date_and_nothing_else(settings: Settings, tmp_path: Path) -> None:
    """An adversarial run: Python's ISO reader takes week dates, so a weekly vendor's
    "2012-W01" and "2012W011" were stored as Monday 2012-01-02, a close on a day nobody
    priced; they are bad rows, as a day-or-month-first "03/01/2012" and a two-digit year are."""
    path = _write(
        tmp_path / "prices.csv",
        [
            "symbol,date,close,volume",
            "KCB,2012-01-03,25.5,100",
            "KCB,20120104,25.6,100",
            "KCB,2012-W01,25.7,100",
            "KCB,2012W011,25.8,100",
            "KCB,03/01/2012,25.9,100",
            "KCB,12-01-05,26.0,100",
        ],
        newline="\n",
    )
    report = import_path(service_engine(settings), path)
    assert [r.split(": ", 1)[1] for r in report.bad_rows] == [
        f"date '{cell}' is not a date as YYYY-MM-DD (or YYYYMMDD)"
        for cell in ("2012-W01", "2012W011", "03/01/2012", "12-01-05")
    ]
    assert sorted((p["trading_date"], p["close"]) for p in _prices(settings)) == [
        (date(2012, 1, 3), 25.5),
        (date(2012, 1, 4), 25.6),
    ]


def test_unrecognised_files_are_a_clear_error(settings: Settings, tmp_path: Path) -> None:
    path = _write(tmp_path / "x.csv", ["a,b,c", "1,2,3"])
    with pytest.raises(InvalidInputError, match="unrecognised header 'a,b,c'"):
        import_path(service_engine(settings), path)
    with pytest.raises(InvalidInputError, match="does not exist"):
        import_path(service_engine(settings), tmp_path / "nowhere")


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_the_whole_nse_daily_set(settings: Settings, nse_data: Path) -> None:
    engine = service_engine(settings)
    report = import_path(engine, nse_data / "daily", currency="KES")
    assert report.instruments == 67  # the 74 names in the files less seven market indices
    assert report.indices == ["^FNK15", "^FNK25", "^N20I", "^N25I", "^NASI", "^ZKEQTK", "^ZKEQTU"]
    assert 210_000 <= report.rows_inserted <= 220_000
    assert len(report.bad_rows) < 10 and all(".csv:" in b for b in report.bad_rows)
    # 56 days are the previous session's file saved again (holidays among them: the 2010
    # referendum, the 2017 election days; 2019-12-10 with the close it repeats as its
    # previous close); none is stored as a session
    assert len(report.repeated_days) == 56
    assert any(r.startswith("2010-08-04: every traded row repeats 2010-08-03's") for r in report.repeated_days)
    assert any(r.startswith("2017-08-08: every traded row repeats 2017-08-07's") for r in report.repeated_days)
    # the files before 2009 leave untraded names out: 2,215 no-trade rows in gaps under 60
    # sessions, the rows the research frames add too (ingest/importers/untraded.py); none on
    # 2008-01-03, a thin day (7 names against 37.5 around it), which the import names
    assert report.untraded_inserted == 2_215
    assert [t.split(":")[0] for t in report.thin_days] == ["2008-01-03"]
    again = import_path(engine, nse_data / "daily", currency="KES")
    assert again.rows_inserted == again.untraded_inserted == 0 and again.instruments_inserted == 0
    stored = report.rows_inserted + report.untraded_inserted
    with engine.connect() as conn:
        assert conn.execute(select(func.count()).select_from(tables.eod_prices)).scalar_one() == stored
        zero = conn.execute(
            select(func.count()).select_from(tables.eod_prices).where(tables.eod_prices.c.volume == 0)
        ).scalar_one()
    assert 0.15 < zero / stored < 0.35  # about a quarter of instrument-days have no trades
    with engine.connect() as conn:
        days = {d for (d,) in conn.execute(select(tables.eod_prices.c.trading_date).distinct())}
    assert date(2010, 8, 4) not in days and date(2010, 8, 3) in days and date(2010, 8, 5) in days


def test_market_indices_are_left_out_and_named(settings: Settings, tmp_path: Path) -> None:
    """The NSE files carry index levels (`^NASI`, FTSE's `^FNK15`) beside the equities. They
    are not securities: imported they would be listed and priced, counted as untraded
    names, scored and trained on. The importer leaves them out and says so, as the replay does."""
    root = tmp_path / "daily"
    _write(
        root / "2021" / "12" / "20211230.csv",
        _six_names() + ["^FNK15;FTSE NSE Kenya 15 Index;206.1;209.9;207.1;206.5;-"],
    )
    _write(root / "2021" / "12" / "20211231.csv", _six_names(volume_of_last="800"))
    result = cli("import", str(root))
    assert result.returncode == 0, result.stderr
    assert (
        "left out: market indices ^FNK15, ^NASI (index levels, not securities); 3 levels stored as the market's "
        "benchmark (index_levels)"
    ) in result.stdout
    assert "nse-daily: 2 files, 14 rows read, 14 inserted, 0 changed, 7 instruments" in result.stdout
    engine = service_engine(settings)
    with engine.connect() as conn:
        symbols = {r["symbol"] for r in current_rows(conn, tables.instruments)}
    assert len(symbols) == 7 and not any(s.startswith("^") for s in symbols)
    assert not any(p["symbol"].startswith("^") for p in _prices(settings))
    with engine.connect() as conn:  # their levels (the close) kept as the market's benchmark series
        levels = {(r["symbol"], r["trading_date"], r["level"]) for r in current_rows(conn, tables.index_levels)}
    assert levels == {
        ("^NASI", date(2021, 12, 30), 150.1),
        ("^NASI", date(2021, 12, 31), 150.1),
        ("^FNK15", date(2021, 12, 30), 207.1),
    }
    again = cli("import", str(root))
    assert "0 levels stored" in again.stdout  # a re-import adds nothing
    from ingest.replay import ReplayMarket

    assert ReplayMarket(root).source.indices == {"^FNK15", "^NASI"}  # the replay's rule, the same


def test_a_file_none_of_whose_rows_can_be_read_is_an_error(settings: Settings, tmp_path: Path) -> None:
    """An adversarial run: a semicolon-separated OHLCV file, or one whose every date is
    dd/mm/yyyy, imported nothing and exited 0; it lists its bad rows and exits 1."""
    path = _write(tmp_path / "prices.csv", ["symbol,date,close,volume", "KCB,03/01/2012,25.5,100"], newline="\n")
    result = cli("import", str(path))
    assert result.returncode == 1
    assert f"bad row: {path}:2: date '03/01/2012' is not a date" in result.stdout
    assert (
        result.stderr.strip() == f"error: no row of {path} could be read: nothing was imported (the bad rows are above)"
    )


def test_a_row_dated_after_today_is_a_bad_row_and_the_rest_loads(settings: Settings, tmp_path: Path) -> None:
    """The store is append-only: a row dated in 2030 would list the name from 2030 and date
    the next report by it. It is a bad row with its file and line; the rest is stored."""
    from market.clock import exchange_date, utc_now

    path = _write(
        tmp_path / "prices.csv",
        ["symbol,date,close,volume", "KCB,2026-11-19,25.73,12000", "KCB,2030-11-20,26.17,100"],
        newline="\n",
    )
    report = import_path(service_engine(settings), path)
    today = exchange_date(utc_now()).isoformat()
    assert report.rows_inserted == 1
    assert report.bad_rows == [
        f"{path}:3: dated 2030-11-20, after today ({today}) on the exchange's clock: not known yet"
    ]
    assert [p["trading_date"] for p in _prices(settings)] == [date(2026, 11, 19)]
