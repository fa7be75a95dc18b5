"""The importer on files a smaller exchange or a careless operator produces: what is
refused (one `error:` line, exit 1, nothing stored), what is a bad row, and what is stored."""

from datetime import date
from pathlib import Path

from sqlalchemy import Table

from ingest.importers import import_path
from market.settings import Settings
from store import tables
from store.engine import service_engine
from store.history import current_rows
from tests.conftest import ON_SQLITE_ONLY
from tests.pipeline.test_cli import cli

COMPANY_HEADER = (
    "Date;Lowest Price of the Day;Highest Price of the Day;Closing Price;Previous Day Closing Price;Volume Traded"
)


def _bad_rows(stdout: str) -> list[str]:
    """The `bad row: ...` lines an import printed, in order."""
    return [line for line in stdout.splitlines() if line.startswith("bad row: ")]


def _stored(settings: Settings, table: Table = tables.eod_prices) -> list[dict]:
    with service_engine(settings).connect() as conn:
        return current_rows(conn, table)


@ON_SQLITE_ONLY
def test_a_file_that_is_not_utf8_is_refused_and_nothing_is_stored(settings: Settings, tmp_path: Path) -> None:
    """A Windows-1252 export ("Société Générale" in its name column) was read with
    replacement characters: the instrument was stored as "Soci\ufffdt\ufffd G\ufffdn\ufffdrale", exit 0.
    The import is refused naming the file and line, and the folder's other file is not
    stored either; a UTF-16 file ("Unicode text" from a spreadsheet) is refused the same way."""
    root = tmp_path / "prices"
    root.mkdir()
    (root / "a.csv").write_text("symbol,date,close,volume,name\nKCB,2024-01-03,10.5,100,KCB Group\n")
    (root / "b.csv").write_bytes(
        "symbol,date,close,volume,name\nSGB,2024-01-03,10.5,100,Société Générale\n".encode("cp1252")
    )
    result = cli("import", str(root))
    assert result.returncode == 1
    assert result.stderr.strip() == (
        f"error: {root}/b.csv:2: not UTF-8 text (byte 0xe9); save the file as UTF-8 (a Latin-1, Windows-1252 "
        "or UTF-16 export is not read): nothing was imported"
    )
    assert _stored(settings) == [] and _stored(settings, tables.instruments) == []
    wide = tmp_path / "wide.csv"
    wide.write_text("symbol,date,close,volume\nKCB,2024-01-03,10.5,100\n", encoding="utf-16")
    result = cli("import", str(wide))
    assert result.returncode == 1
    assert result.stderr.startswith(f"error: {wide}:1: not UTF-8 text (byte 0xff); save the file as UTF-8")
    utf8 = tmp_path / "utf8.csv"  # the same name in UTF-8 is stored as written
    utf8.write_text("symbol,date,close,volume,name\nSGB,2024-01-03,10.5,100,Société Générale\n")
    import_path(service_engine(settings), utf8)
    assert [i["name"] for i in _stored(settings, tables.instruments)] == ["Société Générale"]


@ON_SQLITE_ONLY
def test_a_symbol_that_is_no_ticker_is_a_bad_row(settings: Settings, tmp_path: Path) -> None:
    """A spreadsheet's `#N/A` in the symbol column, a name typed for a ticker and a per-company
    file a browser saved twice (`SCOM (1).csv`) were stored as instruments the API cannot
    serve (the last one SCOM's series again, a second company). Each is a bad row; a lower-case
    or space-padded ticker is the ticker."""
    prices = tmp_path / "prices.csv"
    prices.write_text(
        "symbol,date,close,volume\n kcb ,2024-01-03,10.5,100\n#N/A,2024-01-03,11,100\nKCB Group,2024-01-03,12,100\n"
    )
    result = cli("import", str(prices))
    assert result.returncode == 0, result.stderr
    assert _bad_rows(result.stdout) == [
        f"bad row: {prices}:3: symbol '#N/A' is not a ticker (letters, digits, '.' and '-', at most 20)",
        f"bad row: {prices}:4: symbol 'KCB GROUP' is not a ticker (letters, digits, '.' and '-', at most 20)",
    ]
    company = tmp_path / "company"
    company.mkdir()
    for name in ("SCOM.csv", "SCOM (1).csv"):
        (company / name).write_text(f"{COMPANY_HEADER}\n20240103,6.95,8.0,7.35,7.5,4100\n")
    result = cli("import", str(company))
    assert result.returncode == 2, result.stderr  # a file not read (`_unread_files`)
    assert f"bad row: {company}/SCOM (1).csv:2: symbol 'SCOM (1)' is not a ticker" in result.stdout
    assert sorted(i["symbol"] for i in _stored(settings, tables.instruments)) == ["KCB", "SCOM"]
    assert sorted((p["symbol"], p["close"]) for p in _stored(settings)) == [("KCB", 10.5), ("SCOM", 7.35)]


@ON_SQLITE_ONLY
def test_an_index_keeps_its_code_and_a_symbol_is_capitalised_in_ascii_only(settings: Settings, tmp_path: Path) -> None:
    """An index whose name says so is a level whatever its code ("JSE INDEX" "JSE Main
    Index"): the ticker rule refused it as a bad row and the market's benchmark was lost. A
    symbol is capitalised in ASCII letters only, as the API compares them: `str.upper()`
    stored "lıq" (a dotless i) as LIQ, another listed name's series."""
    prices = tmp_path / "prices.csv"
    prices.write_text(
        "symbol,date,close,volume,name\n"
        "JSE INDEX,2024-01-03,350100.5,0,JSE Main Index\nliq,2024-01-03,10.5,100,Liq\nlıq,2024-01-03,99,100,Liq\n"
    )
    result = cli("import", str(prices))
    assert result.returncode == 0, result.stderr
    assert _bad_rows(result.stdout) == [
        f"bad row: {prices}:4: symbol 'LıQ' is not a ticker (letters, digits, '.' and '-', at most 20)"
    ]
    assert [(p["symbol"], p["close"]) for p in _stored(settings)] == [("LIQ", 10.5)]
    assert [(i["symbol"], i["level"]) for i in _stored(settings, tables.index_levels)] == [("JSE INDEX", 350100.5)]


@ON_SQLITE_ONLY
def test_a_share_count_written_with_a_thousands_point_is_a_bad_row(settings: Settings, tmp_path: Path) -> None:
    """A file that writes thousands with a point: its "12.345" shares were a bad row (not a whole
    number) but its "5.000" was stored as 5 shares, a thousandth of the volume. A count of one to
    three digits, a point and three digits is a bad row, for volume and trades alike; a
    spreadsheet's whole "1200.0" and "0.000" are read."""
    prices = tmp_path / "prices.csv"
    prices.write_text(
        "symbol,date,close,volume,trades\n"
        "KCB,2024-01-03,45,5.000,3\n"
        "KCB,2024-01-04,45,12.345,3\n"
        "KCB,2024-01-05,45,1200.0,2.000\n"
        "KCB,2024-01-08,45,1200.0,4\n"
        "KCB,2024-01-09,45,0.000,\n"
    )
    result = cli("import", str(prices))
    assert result.returncode == 0, result.stderr
    assert _bad_rows(result.stdout) == [
        f"bad row: {prices}:2: volume '5.000' is ambiguous: 5,000 with a point between thousands, or a decimal point",
        f"bad row: {prices}:3: volume '12.345' is ambiguous: 12,345 with a point between thousands, or a decimal point",
        f"bad row: {prices}:4: trades '2.000' is ambiguous: 2,000 with a point between thousands, or a decimal point",
    ]
    assert sorted((str(p["trading_date"]), p["volume"], p["trades"]) for p in _stored(settings)) == [
        ("2024-01-08", 1200, 4),
        ("2024-01-09", 0, None),
    ]


@ON_SQLITE_ONLY
def test_a_header_that_names_a_column_twice_is_refused(settings: Settings, tmp_path: Path) -> None:
    """A row is read by column name: of `close` and `Close` the last was stored (99 for a close
    of 10.5), exit 0. The file is a bad row at line 1 (the folder's other files load) and a
    corporate-actions file so headed is refused before a row is stored."""
    root = tmp_path / "prices"
    root.mkdir()
    (root / "a.csv").write_text("symbol,date,close,volume,Close\nKCB,2024-01-03,10.5,100,99\n")
    (root / "b.csv").write_text("symbol,date,close,volume\nKCB,2024-01-04,10.6,100\n")
    result = cli("import", str(root))
    assert result.returncode == 2, result.stderr  # a file not read (`_unread_files`)
    assert f"bad row: {root}/a.csv:1: header names the columns ['close'] more than once" in result.stdout
    assert [(str(p["trading_date"]), p["close"]) for p in _stored(settings)] == [("2024-01-04", 10.6)]
    actions = tmp_path / "actions.csv"
    actions.write_text("symbol,ex_date,kind,ratio,Ratio\nKCB,2024-01-04,split,2,0.5\n")
    result = cli("import", str(root / "b.csv"), "--actions", str(actions))
    assert result.returncode == 1
    assert result.stderr.strip() == f"error: {actions}:1: the header names the columns ['ratio'] more than once"


@ON_SQLITE_ONLY
def test_a_day_before_1900_is_a_bad_row(settings: Settings, tmp_path: Path) -> None:
    """A spreadsheet's empty date cell exported as its day 0 (1899-12-30) and a year cut to
    0024 were stored, the instrument listed from 1899; they are bad rows, in every format."""
    prices = tmp_path / "prices.csv"
    prices.write_text(
        "symbol,date,close,volume\nKCB,1899-12-30,10.5,100\nKCB,00240103,10.5,100\nKCB,2024-01-03,10.5,100\n"
    )
    result = cli("import", str(prices))
    assert result.returncode == 0, result.stderr
    assert _bad_rows(result.stdout) == [
        f"bad row: {prices}:2: dated 1899-12-30, before 1900-01-01: not a session",
        f"bad row: {prices}:3: dated 0024-01-03, before 1900-01-01: not a session",
    ]
    company = tmp_path / "company"
    company.mkdir()
    (company / "SCOM.csv").write_text(f"{COMPANY_HEADER}\n18991230,6.95,8.0,7.35,7.5,4100\n")
    result = cli("import", str(company))
    assert result.returncode == 1
    assert f"bad row: {company}/SCOM.csv:2: dated 1899-12-30, before 1900-01-01: not a session" in result.stdout
    with service_engine(settings).connect() as conn:
        listed = {r["symbol"]: str(r["listed_on"]) for r in current_rows(conn, tables.instruments)}
    assert listed == {"KCB": "2024-01-03"}


@ON_SQLITE_ONLY
def test_an_actions_file_the_import_does_not_read_refuses_it(settings: Settings, tmp_path: Path) -> None:
    """A year's folder with its own corporate_actions.csv: never read as prices, it was not read
    as actions either; AAA's 2-for-1 split was not stored, its halved close stored as a move and
    the report said "none beside the prices", exit 0. The import is refused before a row is
    stored; the folder's own file (or --actions) is read as before."""
    root = tmp_path / "prices"
    (root / "2024").mkdir(parents=True)
    (root / "2024" / "p.csv").write_text("symbol,date,close,volume\nAAA,2024-01-03,10,100\nAAA,2024-01-04,5,200\n")
    (root / "2024" / "corporate_actions.csv").write_text("symbol,ex_date,kind,ratio\nAAA,2024-01-04,split,2\n")
    result = cli("import", str(root))
    assert result.returncode == 1
    assert result.stderr.strip() == (
        f"error: {root}/2024/corporate_actions.csv: corporate-actions files that are not read (a folder's actions "
        "are its own corporate_actions.csv, or the file --actions names): put their rows in one; nothing was imported"
    )
    assert _stored(settings) == []
    (root / "2024" / "corporate_actions.csv").rename(root / "corporate_actions.csv")
    result = cli("import", str(root))
    assert result.returncode == 0, result.stderr
    assert "1 corporate actions stored (SPLIT, DELISTING)" in result.stdout
    assert [(a["symbol"], a["kind"], a["amount"]) for a in _stored(settings, tables.corporate_actions)] == [
        ("AAA", "SPLIT", 2.0)
    ]


@ON_SQLITE_ONLY
def test_a_file_named_csv_in_capitals_is_read(settings: Settings, tmp_path: Path) -> None:
    """A Windows export's `20240104.CSV` beside `20240103.csv`: only `*.csv` was looked for, so
    the import said "1 files" and left its rows out without a word. Both are read, in every format."""
    root = tmp_path / "prices"
    root.mkdir()
    (root / "a.csv").write_text("symbol,date,close,volume\nAAA,2024-01-03,10,100\n")
    (root / "b.CSV").write_text("symbol,date,close,volume\nAAA,2024-01-04,11,100\n")
    result = cli("import", str(root))
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("ohlcv: 2 files, 2 rows read, 2 inserted")
    daily = tmp_path / "daily"
    daily.mkdir()
    header = "Code;Name;Lowest Price of the Day;Highest Price of the Day;Closing Price;Previous Day Closing Price"
    (daily / "20240105.CSV").write_text(f"{header};Volume Traded\nAAA;AAA Ltd;11;12;12;11;300\n")
    result = cli("import", str(daily))
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("nse-daily: 1 files, 1 rows read, 1 inserted")
    assert [p["close"] for p in sorted(_stored(settings), key=lambda p: p["trading_date"])] == [10, 11, 12]


@ON_SQLITE_ONLY
def test_a_systems_leftovers_beside_the_files_are_not_read(settings: Settings, tmp_path: Path) -> None:
    """A folder unzipped from a Mac's zip holds `__MACOSX/._<name>.csv` and one a spreadsheet
    has open holds Excel's lock file `~$<name>.csv`: neither is text, and each refused the
    whole import as not UTF-8. They are not price files; a per-company header ending in `;`
    is the NSE's header, and a `.CSV` price file finds its own `.actions.csv`."""
    root = tmp_path / "prices"
    (root / "__MACOSX").mkdir(parents=True)
    (root / "a.csv").write_text("symbol,date,close,volume\nAAA,2024-01-03,10,100\n")
    (root / "__MACOSX" / "._a.csv").write_bytes(b"\x00\x05\x16\x07\x00\x02\x00\x00Mac OS X        \xff")
    (root / "~$a.csv").write_bytes(b"\x0cJane Doe\x00\x00\xe9")
    result = cli("import", str(root))
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("ohlcv: 1 files, 1 rows read, 1 inserted")
    company = tmp_path / "company"
    company.mkdir()
    (company / "BBB.csv").write_text(f"{COMPANY_HEADER};\n20240103,6.9,8.0,7.35,7.5,4100\n")
    result = cli("import", str(company))
    assert result.returncode == 0, result.stderr
    assert "bad row" not in result.stdout
    single = tmp_path / "CCC.CSV"
    single.write_text("symbol,date,close,volume\nCCC,2024-01-03,10,100\nCCC,2024-01-04,5,200\n")
    (tmp_path / "CCC.actions.csv").write_text("symbol,ex_date,kind,ratio\nCCC,2024-01-04,bonus,1 for 1\n")
    result = cli("import", str(single))
    assert result.returncode == 0, result.stderr
    assert "1 corporate actions stored" in result.stdout


@ON_SQLITE_ONLY
def test_a_file_with_a_nul_byte_is_refused(settings: Settings, tmp_path: Path) -> None:
    """UTF-16 without its byte-order mark decodes as UTF-8 with a NUL after each letter: the
    error line printed the NULs. A damaged file's NUL in a cell was a bad row whose message
    held it, and the rest was stored. Both are refused, naming the line; nothing is stored."""
    wide = tmp_path / "wide.csv"
    wide.write_bytes("symbol,date,close,volume\nKCB,2024-01-03,10.5,100\n".encode("utf-16-le"))
    result = cli("import", str(wide))
    assert result.returncode == 1
    assert result.stderr == (
        f"error: {wide}:1: a NUL byte is not text (a UTF-16 export, or a damaged file); save the file as UTF-8: "
        "nothing was imported\n"
    )
    damaged = tmp_path / "damaged.csv"
    damaged.write_bytes(b"symbol,date,close,volume\nKCB,2024-01-03,10.5,1\x0000\nKCB,2024-01-04,10.5,100\n")
    result = cli("import", str(damaged))
    assert result.returncode == 1
    assert result.stderr.startswith(f"error: {damaged}:2: a NUL byte is not text")
    assert _stored(settings) == []


@ON_SQLITE_ONLY
def test_a_path_that_does_not_exist_says_so(settings: Settings, tmp_path: Path) -> None:
    """`marketintel import` detects the format before it reads: a mistyped path was "holds no
    .csv files", as if it were an empty folder."""
    result = cli("import", str(tmp_path / "pricse"))
    assert result.returncode == 1
    assert result.stderr == f"error: {tmp_path / 'pricse'} does not exist\n"


@ON_SQLITE_ONLY
def test_a_quote_left_open_is_refused_before_a_row_is_stored(settings: Settings, tmp_path: Path) -> None:
    """A name cell `"AAA Ltd` whose quote never closes: the csv module read the rest of the file
    into it, so the rows after it were lost without a bad row (the instrument's name held them,
    exit 0); a long file stopped with a traceback ("field larger than field limit"), and an
    actions file lost its later actions. Each is refused, naming the line; nothing is stored."""
    rows = [f"AAA,2024-01-{d:02d},10,100,AAA Ltd" for d in range(3, 6)]
    short = tmp_path / "short.csv"
    short.write_text("\n".join(["symbol,date,close,volume,name", 'AAA,2024-01-02,10,100,"AAA Ltd', *rows]) + "\n")
    result = cli("import", str(short))
    assert result.returncode == 1
    assert result.stderr == (
        f"error: {short}:2: a quote opened on this line is not closed on it (the cell ran to line 5); "
        "nothing was imported\n"
    )
    long = tmp_path / "long.csv"
    long.write_text('symbol,date,close,volume,name\nAAA,2024-01-02,10,100,"AAA Ltd\n' + "x" * 140_000 + "\n")
    result = cli("import", str(long))
    assert result.returncode == 1
    assert result.stderr == (
        f"error: {long}:2: not read as CSV (field larger than field limit (131072): a quote left open?); "
        "nothing was imported\n"
    )
    good = tmp_path / "prices" / "p.csv"
    good.parent.mkdir()
    good.write_text("symbol,date,close,volume\nAAA,2024-01-02,10,100\nAAA,2024-01-03,5,200\n")
    (good.parent / "corporate_actions.csv").write_text(
        'symbol,ex_date,kind,ratio,note\nAAA,2024-01-03,split,2,"2 for 1\nBBB,2024-01-03,split,2,x\n'
    )
    result = cli("import", str(good.parent))
    assert result.returncode == 1
    assert result.stderr.startswith(f"error: {good.parent / 'corporate_actions.csv'}:2: a quote opened on this line")
    assert _stored(settings) == [] and _stored(settings, tables.instruments) == []


@ON_SQLITE_ONLY
def test_a_type_column_that_says_ordinary_shares_states_ordinary(settings: Settings, tmp_path: Path) -> None:
    """A type column in the words a market prints ("Ordinary Shares", "Preferred Shares"): both
    were UNKNOWN (only "ordinary", "shares" and "preference shares" were in the vocabulary), so
    every share was stored as UNKNOWN and kept out of the AI book and the benchmark, exit 0."""
    prices = tmp_path / "prices.csv"
    prices.write_text(
        "symbol,date,close,volume,instrument_type\n"
        "AAA,2024-01-03,10,100,Ordinary Shares\n"
        "BBB,2024-01-03,10,100,Common Shares\n"
        "CCC,2024-01-03,10,100,Preferred Shares\n"
        "DDD,2024-01-03,10,100,Index Shares\n"
    )
    result = cli("import", str(prices))
    assert result.returncode == 0, result.stderr
    with service_engine(settings).connect() as conn:
        kinds = {r["symbol"]: r["instrument_type"] for r in current_rows(conn, tables.instruments)}
    assert kinds == {"AAA": "ORDINARY", "BBB": "ORDINARY", "CCC": "PREFERENCE", "DDD": "UNKNOWN"}


@ON_SQLITE_ONLY
def test_an_import_with_no_price_file_is_refused_with_a_format_given(settings: Settings, tmp_path: Path) -> None:
    """With --format given the importer did not check that it had a price file: the actions file
    named by mistake stored its split with no prices at all, and an empty folder was "0 files",
    exit 0. Both are refused; so is the actions file without --format (it "held no .csv files")."""
    actions = tmp_path / "corporate_actions.csv"
    actions.write_text("symbol,ex_date,kind,ratio\nAAA,2024-01-04,split,2\n")
    for args in (("--format", "ohlcv", str(actions)), (str(actions),)):
        result = cli("import", *args)
        assert result.returncode == 1
        assert result.stderr == (
            f"error: {actions} is a corporate-actions file, not prices: it is read beside them, or named with "
            "--actions\n"
        )
    empty = tmp_path / "empty"
    empty.mkdir()
    result = cli("import", "--format", "ohlcv", str(empty))
    assert result.returncode == 1
    assert result.stderr == f"error: {empty} holds no .csv files\n"
    assert _stored(settings, tables.corporate_actions) == []


@ON_SQLITE_ONLY
def test_a_per_company_file_with_other_columns_is_not_read_by_position(settings: Settings, tmp_path: Path) -> None:
    """Any `Date;` header made a per-company file, read by position: `Date;Open;High;Low;Close;Volume`
    stored the open (6.95) as the low, the low (6.9) as the close and the close (7.35) as the
    previous close, exit 0. Its header is a bad row; the NSE's own header (in any case) is read."""
    company = tmp_path / "company"
    company.mkdir()
    (company / "AAA.csv").write_text("Date;Open;High;Low;Close;Volume\n20240103,6.95,8.0,6.9,7.35,4100\n")
    (company / "BBB.csv").write_text(f"{COMPANY_HEADER.upper()}\n20240103,6.9,8.0,7.35,7.5,4100\n")
    result = cli("import", str(company))
    assert result.returncode == 2, result.stderr  # a file not read (`_unread_files`)
    assert (
        f"bad row: {company}/AAA.csv:1: header 'Date;Open;High;Low;Close;Volume' is not the NSE per-company header "
        "(Date;Lowest ...;Highest ...;Closing ...;Previous ...;Volume ...)"
    ) in result.stdout
    assert [(p["symbol"], p["low"], p["close"], p["prev_close"]) for p in _stored(settings)] == [
        ("BBB", 6.9, 7.35, 7.5)
    ]


@ON_SQLITE_ONLY
def test_a_record_of_another_width_is_its_lines_bad_row_and_the_rest_loads(settings: Settings, tmp_path: Path) -> None:
    """The price files and the corporate-actions file read their records by one rule
    (`formats.named_rows`): a record with a cell missing or one too many is a bad row naming
    its line, a blank line is skipped, and the rows after it are read; the corporate-actions
    file's bad row refuses the import (`actions.readable_actions`)."""
    prices = tmp_path / "prices.csv"
    prices.write_text(
        "symbol,date,close,volume\nKCB,2024-01-03,10.5\n\nKCB,2024-01-04,11,100\nKCB,2024-01-05,12,100,x\n"
    )
    actions = tmp_path / "prices.actions.csv"
    actions.write_text("symbol,ex_date,kind,ratio\nKCB,2024-01-04,bonus\n\nKCB,2024-01-05,bonus,1 for 1\n")
    refused = cli("import", str(prices))
    assert refused.returncode == 1 and f"{actions}:2: 3 fields, expected 4" in refused.stderr, refused.stderr
    actions.write_text("symbol,ex_date,kind,ratio\n\nKCB,2024-01-05,bonus,1 for 1\n")
    result = cli("import", str(prices))
    assert result.returncode == 0, result.stderr
    assert _bad_rows(result.stdout) == [
        f"bad row: {prices}:2: 3 fields, expected 4",
        f"bad row: {prices}:5: 5 fields, expected 4",
    ]
    assert [p["close"] for p in _stored(settings)] == [11]
    assert "1 corporate actions stored" in result.stdout


@ON_SQLITE_ONLY
def test_a_daily_file_named_with_a_day_that_does_not_exist_is_a_bad_row(settings: Settings, tmp_path: Path) -> None:
    """A folder holding `20240230.csv` in the NSE daily format stopped the import with a
    traceback (`ValueError: day is out of range for month`). The file is a bad row named by
    its path, the folder's other files load, and a folder holding only it is one error line."""
    header = "Code;Name;Lowest Price of the Day;Highest Price of the Day;Closing Price;Previous Day Closing Price"
    daily = tmp_path / "daily"
    daily.mkdir()
    (daily / "20240229.csv").write_text(f"{header};Volume Traded\nAAA;AAA Ltd;11;12;12;11;300\n")
    (daily / "20240230.csv").write_text(f"{header};Volume Traded\nAAA;AAA Ltd;12;13;13;12;300\n")
    result = cli("import", str(daily))
    assert result.returncode == 2, result.stderr  # a file not read (`_unread_files`)
    assert _bad_rows(result.stdout) == [
        f"bad row: {daily}/20240230.csv:0: file name '20240230' is not a date as YYYY-MM-DD (or YYYYMMDD)"
    ]
    assert [(str(p["trading_date"]), p["close"]) for p in _stored(settings)] == [("2024-02-29", 12)]
    (daily / "20240229.csv").unlink()
    result = cli("import", str(daily))
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert (
        result.stderr.strip()
        == f"error: no row of {daily} could be read: nothing was imported (the bad rows are above)"
    )


@ON_SQLITE_ONLY
def test_a_file_separated_by_semicolons_or_tabs_says_so(settings: Settings, tmp_path: Path) -> None:
    """`symbol;date;close;volume` was "header lacks required columns ['symbol', 'date', 'close',
    'volume']", the very columns it names, after "0 instruments in JMD, assumed: the files do
    not say (--currency)": a currency assumed for nothing. The bad row names the separator
    and says the files are read comma-separated (a ';' file's decimal commas are not read)."""
    for separator, called in ((";", "semicolons (';')"), ("\t", "tabs ('\\t')")):
        prices = tmp_path / "prices.csv"
        prices.write_text(separator.join(["symbol", "date", "close", "volume"]) + "\n" + "KCB;2024-01-03;10,5;100\n")
        result = cli("import", str(prices))
        assert result.returncode == 1
        assert (
            f"bad row: {prices}:1: the header separates its columns with {called}: the importer reads "
            "comma-separated files (',' between columns, '.' as the decimal point); save the file so"
        ) in result.stdout
        assert "lacks required columns" not in result.stdout
        first = "ohlcv: 1 files, 0 rows read, 0 inserted, 0 changed, 0 instruments (0 new or changed)"
        assert result.stdout.startswith(first)
    assert _stored(settings) == []


@ON_SQLITE_ONLY
def test_a_file_not_read_beside_files_imported_exits_2(settings: Settings, tmp_path: Path) -> None:
    """A folder whose one file is refused whole (its header separated by semicolons) while
    the others load exited 0, as a folder imported whole does: an operator's script took
    the day's import for done. The other files are stored, the bad row is listed, and one
    line on stderr names the file not read, exit 2 (1 stays an import that stored nothing);
    a file with a bad row among rows read is no file unread."""
    (tmp_path / "a.csv").write_text("symbol,date,close,volume\nAAA,2024-01-02,10,100\nAAA,2024-01-03,x,100\n")
    (tmp_path / "b.csv").write_text("symbol;date;close;volume\nBBB;2024-01-02;10;100\n")
    result = cli("import", str(tmp_path))
    assert result.returncode == 2, result.stderr
    assert result.stderr.strip() == (
        f"error: 1 file of which no row could be read ({tmp_path / 'b.csv'}; the bad rows are above): the other "
        "files were imported"
    )
    assert f"bad row: {tmp_path / 'b.csv'}:1: the header separates its columns with semicolons" in result.stdout
    assert {r["symbol"] for r in _stored(settings)} == {"AAA"}
    (tmp_path / "b.csv").unlink()
    again = cli("import", str(tmp_path))
    assert again.returncode == 0 and f"bad row: {tmp_path / 'a.csv'}:3" in again.stdout, again.stderr


@ON_SQLITE_ONLY
def test_a_column_blank_on_every_row_is_named(settings: Settings, tmp_path: Path) -> None:
    """A volume column blank on every row (a vendor's export without volumes) was read as
    no trade on every row: each name stored as untraded, the liquid ones read as names that
    never trade, and nothing said. The file is a bad row naming the blank required column
    and what to fill in, and the folder's other file loads; an optional column blank on
    every row (bid, ask) is named with those the source lacks. The command exits 2, a file
    of it not read (`_unread_files`)."""
    blank = tmp_path / "a_blank.csv"
    blank.write_text("symbol,date,close,volume\nAAA,2024-01-02,10,\nAAA,2024-01-03,10.5,\n")
    (tmp_path / "b_quotes.csv").write_text(
        "symbol,date,close,volume,bid,ask\nBBB,2024-01-02,5,100,,\nBBB,2024-01-03,5.1,200,,\n"
    )
    result = cli("import", str(tmp_path))
    assert result.returncode == 2, result.stderr
    assert (
        f"bad row: {blank}:1: the required column volume is blank on every row: fill in each row's volume; a "
        "volume is a number of shares, 0 for a day without trades; the file was not read"
    ) in result.stdout.splitlines(), result.stdout
    assert "the source lacks: open, high, low, prev_close, bid, ask, trades, value_traded (" in result.stdout
    assert {r["symbol"] for r in _stored(settings)} == {"BBB"}


@ON_SQLITE_ONLY
def test_a_per_company_count_saved_with_thousands_separators_is_read(settings: Settings, tmp_path: Path) -> None:
    """A per-company file saved from a spreadsheet quotes a count written with thousands
    separators (`"125,400"`). Its rows were split at every comma: each traded row was a bad
    row of "7 fields, expected 6", and only the untraded ones were stored, a liquid name read
    as one that never trades. The records are read as CSV: the quoted count is 125,400."""
    company = tmp_path / "company"
    company.mkdir()
    (company / "KCB.csv").write_text(
        f'{COMPANY_HEADER}\n20061101,200.0,225.0,214.0,204.0,"125,400"\n20061102,210.0,238.0,225.0,214.0,-\n'
    )
    result = cli("import", str(company))
    assert result.returncode == 0, result.stderr
    assert _bad_rows(result.stdout) == []
    assert [(str(p["trading_date"]), p["close"], p["volume"]) for p in _stored(settings)] == [
        ("2006-11-01", 214.0, 125_400),
        ("2006-11-02", 225.0, 0),
    ]


@ON_SQLITE_ONLY
def test_a_daily_file_whose_columns_moved_is_read_by_their_names(settings: Settings, tmp_path: Path) -> None:
    """An exchange's daily file whose export put the previous close before the close (and
    the volume first) was refused whole, `header is not the NSE daily-summary header`, exit
    0 with the session missing for every name. The NSE's seven columns are read by name in
    any order; a header without one of them names what it lacks and what it has instead."""
    names = ["Lowest Price of the Day", "Highest Price of the Day", "Closing Price", "Previous Day Closing Price"]
    daily = tmp_path / "daily"
    daily.mkdir()
    moved = ["Volume Traded", "Code", "Name", names[0], names[1], names[3], names[2]]
    (daily / "20240229.csv").write_text(f"{';'.join(moved)}\r\n1,200;AAA;AAA Ltd;11;12;11;12\r\n")
    (daily / "20240301.csv").write_text(f"Code;Name;{';'.join(names)};Volume Traded\nAAA;AAA Ltd;12;13;12.5;12;300\n")
    lacking = f"Code;Name;Low;{';'.join(names[1:])};Volume Traded"
    (daily / "20240304.csv").write_text(f"{lacking}\nAAA;AAA Ltd;12;13;13;12;3\n")
    result = cli("import", str(daily))
    assert result.returncode == 2, result.stderr  # a file not read (`_unread_files`)
    assert _bad_rows(result.stdout) == [
        f"bad row: {daily}/20240304.csv:1: header is not the NSE daily-summary header (Code;Name;Lowest Price of "
        "the Day;Highest Price of the Day;Closing Price;Previous Day Closing Price;Volume Traded, in any order): "
        "it lacks 'Lowest Price of the Day'; it has 'Low'"
    ]
    stored = [(str(p["trading_date"]), p["low"], p["close"], p["prev_close"], p["volume"]) for p in _stored(settings)]
    assert stored == [("2024-02-29", 11, 12, 11, 1200), ("2024-03-01", 12, 12.5, 12, 300)]


@ON_SQLITE_ONLY
def test_a_daily_file_whose_header_ends_in_a_separator_is_read(settings: Settings, tmp_path: Path) -> None:
    """An NSE daily file whose lines end in `;` (an export that closes each line with the
    separator) was refused whole, `header is not the NSE daily-summary header ... it has ''`,
    its session missing for every name, while a per-company file's header ending in `;` was
    read. Both readers take a trailing `;` as naming nothing, on the header and on a row."""
    names = ["Lowest Price of the Day", "Highest Price of the Day", "Closing Price", "Previous Day Closing Price"]
    daily = tmp_path / "daily"
    daily.mkdir()
    moved = ["Volume Traded", "Code", "Name", *names]
    (daily / "20240229.csv").write_text(f"{';'.join(moved)};\r\n200;AAA;AAA Ltd;11;12;11.5;11;\r\n")
    (daily / "20240301.csv").write_text(f"Code;Name;{';'.join(names)};Volume Traded;\nAAA;AAA Ltd;12;13;12.5;12;300\n")
    result = cli("import", str(daily))
    assert result.returncode == 0, result.stderr
    assert _bad_rows(result.stdout) == []
    stored = [(str(p["trading_date"]), p["close"], p["prev_close"], p["volume"]) for p in _stored(settings)]
    assert sorted(stored) == [("2024-02-29", 11.5, 11, 200), ("2024-03-01", 12.5, 12, 300)]


@ON_SQLITE_ONLY
def test_an_empty_first_file_is_its_bad_row_not_the_folders_format(settings: Settings, tmp_path: Path) -> None:
    """The format is read off a folder's first file: an empty one first by name (a day the
    exchange sent a 0-byte file) refused the whole import and the replay, `unrecognised
    header ''`, where an empty file anywhere else is a bad row and the rest loads."""
    from ingest.replay import ReplayMarket

    header = "Code;Name;Lowest Price of the Day;Highest Price of the Day;Closing Price;Previous Day Closing Price"
    daily = tmp_path / "daily"
    daily.mkdir()
    (daily / "20240228.csv").write_bytes(b"")
    (daily / "20240229.csv").write_text(f"{header};Volume Traded\nAAA;AAA Ltd;11;12;12;11;300\n")
    result = cli("import", str(daily))
    assert result.returncode == 2, result.stderr  # a file not read (`_unread_files`)
    assert _bad_rows(result.stdout) == [f"bad row: {daily}/20240228.csv:0: empty file"]
    assert [(str(p["trading_date"]), p["close"]) for p in _stored(settings)] == [("2024-02-29", 12)]
    assert ReplayMarket(daily).days == [date(2024, 2, 29)]


@ON_SQLITE_ONLY
def test_a_file_of_index_levels_alone_stores_them(settings: Settings, tmp_path: Path) -> None:
    """A vendor's index file (the market's benchmark, no security in it) stopped the import
    with a traceback (`min() arg is an empty sequence`, the no-trade rows' scope of no
    price row) and stored nothing: its levels are stored and said."""
    levels = tmp_path / "nasi.csv"
    levels.write_text("symbol,date,close,volume\n^NASI,2024-01-02,100.5,0\n^NASI,2024-01-04,101.5,0\n")
    result = cli("import", str(levels))
    assert result.returncode == 0, result.stderr
    assert "2 levels stored as the market's benchmark (index_levels)" in result.stdout
    stored = _stored(settings, tables.index_levels)
    assert [(r["trading_date"], r["level"]) for r in stored] == [(date(2024, 1, 2), 100.5), (date(2024, 1, 4), 101.5)]
    assert _stored(settings) == []


@ON_SQLITE_ONLY
def test_an_index_level_beyond_the_band_is_a_warning(settings: Settings, tmp_path: Path) -> None:
    """A misprinted index level (a point lost: 101.5 then 1015) was stored as the track
    record's benchmark without a word, where a name's close past T0's band is reported. It
    is stored as given and named on a warning line; a level within the band is not."""
    levels = tmp_path / "nasi.csv"
    levels.write_text(
        "symbol,date,close,volume\n^NASI,2024-01-02,100.5,0\n^NASI,2024-01-03,101.5,0\n^NASI,2024-01-04,1015,0\n"
    )
    result = cli("import", str(levels))
    assert result.returncode == 0, result.stderr
    assert [line for line in result.stdout.splitlines() if line.startswith("warning: index level")] == [
        "warning: index level ^NASI 2024-01-04: 101.5 -> 1015 (+900.0%), beyond T0's band (50% up or 33% down) "
        "from its previous level (2024-01-03): stored as given, check the file"
    ]
    assert [r["level"] for r in _stored(settings, tables.index_levels)] == [100.5, 101.5, 1015.0]


@ON_SQLITE_ONLY
def test_a_nightly_index_level_beyond_the_band_from_the_stored_one_is_a_warning(
    settings: Settings, tmp_path: Path
) -> None:
    """A review's run: the nightly file of one day, its index level misprinted (101.5 stored
    the day before, then 1015), was stored as the track record's benchmark without a word:
    the level was compared with the file's own levels only, and a one-day file has none
    before it. Its first level is compared with the stored level before it, as a name's
    first close is; the gap of a day without a level between them is no move."""
    (tmp_path / "jan2.csv").write_text("symbol,date,close,volume\n^NASI,2024-01-02,100.5,0\n^NASI,2024-01-03,101.5,0\n")
    assert cli("import", str(tmp_path / "jan2.csv")).returncode == 0
    (tmp_path / "jan5.csv").write_text("symbol,date,close,volume\n^NASI,2024-01-05,1015,0\n")
    result = cli("import", str(tmp_path / "jan5.csv"))
    assert result.returncode == 0, result.stderr
    assert [line for line in result.stdout.splitlines() if line.startswith("warning: index level")] == [
        "warning: index level ^NASI 2024-01-05: 101.5 -> 1015 (+900.0%), beyond T0's band (50% up or 33% down) "
        "from its previous level (2024-01-03): stored as given, check the file"
    ]
    (tmp_path / "jan8.csv").write_text("symbol,date,close,volume\n^NASI,2024-01-08,1016,0\n")
    later = cli("import", str(tmp_path / "jan8.csv"))
    assert "warning: index level" not in later.stdout


@ON_SQLITE_ONLY
def test_an_untraded_row_whose_close_moved_is_counted_and_named(settings: Settings, tmp_path: Path) -> None:
    """A review's run: BBB's row of 2024-01-04 had no volume and a close of 10.5 after 10
    (a vendor that writes the closing bid, or a reference price, where nothing traded) and
    was stored without a word, read as a +5% return by the model's labels and the backtest;
    T0 warns of the same row. The import counts such rows and names the first ones; they
    are stored as given. A row at its last close without a trade says nothing."""
    prices = tmp_path / "p.csv"
    prices.write_text(
        "symbol,date,close,volume\nAAA,2024-01-02,20,100\nAAA,2024-01-03,20,0\nAAA,2024-01-04,21,100\n"
        "BBB,2024-01-02,10,100\nBBB,2024-01-03,10,0\nBBB,2024-01-04,10.5,0\n"
    )
    result = cli("import", str(prices))
    assert result.returncode == 0, result.stderr
    assert [line for line in result.stdout.splitlines() if "untraded row" in line] == [
        "warning: 1 untraded row whose close moved from the name's previous close in the files (a close on a day "
        "without a trade is a quote, a reference price or a restated one, read as a return: stored as given), the "
        f"first: BBB 2024-01-04: 10 -> 10.5 ({prices}:7)"
    ]
    assert sorted(r["close"] for r in _stored(settings) if r["symbol"] == "BBB") == [10, 10, 10.5]
