"""Instrument types in the store (sql/*/0018, store/instruments.py, store/history.py's
kept columns): the migration fills the instruments already stored by the same rule as
market/instruments.py, a writer that does not know the type keeps it, and the readers
answer point in time."""

import shutil
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

from sqlalchemy import text

from market.instruments import infer_instrument_type
from store import tables
from store.engine import build_engine
from store.history import append_history, current_rows
from store.instruments import instrument_types, ordinary_symbols
from store.migrations import SQL_DIR, upgrade

# Every code with its latest name in the NSE Kenya daily files (2006-2022), and edges of the rule.
NSE_LATEST_NAMES = {
    "ABSA": "ABSA Bank Kenya Plc", "ARM": "ARM Cement Plc", "BAMB": "Bamburi Cement Ltd",
    "BAT": "British American Tobacco Kenya Plc", "BKG": "BK Group Plc", "BOC": "BOC Kenya Plc",
    "BRIT": "Britam Holdings Plc", "CABL": "East African Cables Ltd", "CARB": "Carbacid Investments Plc",
    "CGEN": "Car and General (K) Ltd", "CIC": "CIC Insurance Group Ltd", "COOP": "Co-operative Bank of Kenya Ltd",
    "CRWN": "Crown Paints Kenya Plc", "CTUM": "Centum Investment Company Plc", "DCON": "Deacons (East Africa) Plc",
    "DTK": "Diamond Trust Bank Kenya Ltd", "EABL": "East African Breweries Ltd", "EGAD": "Eaagads Ltd",
    "EQTY": "Equity Group Holdings Plc", "EVRD": "Eveready East Africa Ltd", "FAHR": "Stanlib Fahari Income-REIT",
    "FTGH": "Flame Tree Group Holdings Ltd", "GLD": "ABSA NewGold ETF", "HAFR": "Home Afrika Ltd",
    "HBE": "Homeboyz Entertainment Plc", "HFCK": "HF Group Ltd", "IMH": "I & M Holdings Plc",
    "JUB": "Jubilee Holdings Ltd", "KAPC": "Kapchorua Tea Kenya Plc", "KCB": "KCB Group Plc",
    "KEGN": "Kenya Electricity Generating Company Plc", "KENO": "KenolKobil Ltd",
    "KNRE": "Kenya Re-Insurance Corporation Ltd", "KPLC-P4": "KPLC-P4", "KPLC-P7": "KPLC-P7",
    "KPLC": "Kenya Power and Lighting Company Plc", "KQ": "Kenya Airways Plc", "KUKZ": "Kakuzi Plc",
    "KURV": "Kurwitu Ventures Ltd", "LBTY": "Liberty Kenya Holdings Ltd", "LIMT": "Limuru Tea Plc",
    "LKL": "Longhorn Publishers Plc", "MSC": "Mumias Sugar Company Ltd", "NBK": "National Bank of Kenya Ltd",
    "NBV": "Nairobi Business Ventures Ltd", "NCBA": "NCBA Group Plc", "NMG": "Nation Media Group Plc",
    "NSE": "Nairobi Securities Exchange Plc", "OCH": "Olympia Capital Holdings Ltd", "ORCH": "Kenya Orchards Ltd",
    "PORT": "East African Portland Cement Ltd", "SASN": "Sasini Plc", "SBIC": "Stanbic Holdings Plc",
    "SCAN": "WPP ScanGroup Plc", "SCBK": "Standard Chartered Bank Kenya Ltd", "SCOM": "Safaricom Plc",
    "SGL": "Standard Group Plc", "SLAM": "Sanlam Kenya Plc", "SMER": "Sameer Africa Plc", "TCL": "Trans-Century Plc",
    "TOTL": "Total Kenya Ltd", "TPSE": "TPS Eastern Africa (Serena) Ltd", "UCHM": "Uchumi Supermarket Plc",
    "UMME": "Umeme Ltd", "UNGA": "Unga Group Ltd", "WTK": "Williamson Tea Kenya Plc", "XPRS": "Express Kenya Plc",
    # edges of the rule
    "ACME-P12": "Acme 12% Preference", "ACME-PX": "Acme Ltd", "AETF": "Acmetf Holdings", "BREIT": "Breitling Ltd",
    "CFUND": "Gold etf", "DREIT": "Income_REIT", "EPFX": "Fund ETF-backed", "KPLC-P": "no digits",
}  # fmt: skip


def _migrated_to(url: str, tmp_path: Path, last: int) -> tuple:
    """An engine on `url` upgraded with the migrations up to `last`, and the folder of DDL
    files that `upgrade(engine, folder)` later completes."""
    sql_dir = tmp_path / "sql"
    shutil.copytree(SQL_DIR, sql_dir)
    held = tmp_path / "held"
    held.mkdir()
    for path in sql_dir.glob("*/*.sql"):
        if int(path.name[:4]) > last:
            (held / path.parent.name).mkdir(exist_ok=True)
            path.rename(held / path.parent.name / path.name)
    engine = build_engine(url)
    upgrade(engine, sql_dir)
    return engine, sql_dir, held


def _release(sql_dir: Path, held: Path) -> None:
    for path in held.glob("*/*.sql"):
        path.rename(sql_dir / path.parent.name / path.name)


def test_the_migration_fills_the_stored_instruments_by_the_inference(empty_database_url: str, tmp_path: Path) -> None:
    engine, sql_dir, held = _migrated_to(empty_database_url, tmp_path, 17)
    with engine.begin() as conn:
        for symbol, name in NSE_LATEST_NAMES.items():
            for version in ("an older name", name):  # the latest version is the one copied
                conn.execute(
                    text(
                        "INSERT INTO instruments (symbol, name, board, currency, source) "
                        "VALUES (:s, :n, 'MAIN', 'KES', 'import:nse-daily')"
                    ),
                    {"s": symbol, "n": version},
                )
    _release(sql_dir, held)
    assert [m.version for m in upgrade(engine, sql_dir)][:1] == [18]
    with engine.connect() as conn:
        rows = conn.execute(text("SELECT symbol, name, instrument_type FROM instruments ORDER BY id")).all()
        current = {r["symbol"]: r for r in current_rows(conn, tables.instruments)}
    assert len(rows) == 3 * len(NSE_LATEST_NAMES)  # appended, nothing updated
    assert all(r.instrument_type is None for r in rows[: 2 * len(NSE_LATEST_NAMES)])
    for symbol, name in NSE_LATEST_NAMES.items():
        assert current[symbol]["name"] == name
        assert current[symbol]["instrument_type"] == infer_instrument_type(symbol, name), symbol
    assert current["KPLC-P4"]["instrument_type"] == "PREFERENCE"
    assert current["GLD"]["instrument_type"] == "FUND" and current["FAHR"]["instrument_type"] == "FUND"
    assert current["KCB"]["instrument_type"] == "ORDINARY"
    engine.dispose()


def _instrument(symbol: str, **extra) -> dict:
    return {"symbol": symbol, "name": extra.pop("name", symbol), "board": "MAIN", "source": "test", **extra}


def test_a_writer_that_does_not_know_the_type_keeps_the_stored_one(settings) -> None:
    engine = build_engine(settings.database_url)
    with engine.begin() as conn:
        first = append_history(conn, tables.instruments, [_instrument("ACME", instrument_type="FUND")])
        # T0's securities page carries no type: the same row without it is no new version
        again = append_history(conn, tables.instruments, [_instrument("ACME")])
        # a change it does know about is a new version that keeps the type
        renamed = append_history(conn, tables.instruments, [_instrument("ACME", name="Acme Fund")])
        fresh = append_history(conn, tables.instruments, [_instrument("NEWCO")])
        stated = append_history(conn, tables.instruments, [_instrument("ACME", name="Acme Fund", instrument_type=None)])
    assert (first.inserted, again.inserted, renamed.inserted, fresh.inserted) == (1, 0, 1, 1)
    assert stated.inserted == 1  # a writer that gives the column, even as None, states it
    with engine.connect() as conn:
        versions = conn.execute(
            text("SELECT name, instrument_type FROM instruments WHERE symbol = 'ACME' ORDER BY id")
        ).all()
        stored_new = current_rows(conn, tables.instruments, where=[tables.instruments.c.symbol == "NEWCO"])
    assert [tuple(v) for v in versions] == [("ACME", "FUND"), ("Acme Fund", "FUND"), ("Acme Fund", None)]
    assert stored_new[0]["instrument_type"] is None
    engine.dispose()


def test_the_readers_answer_point_in_time(settings) -> None:
    engine = build_engine(settings.database_url)
    before = datetime(2026, 1, 1, tzinfo=UTC)
    with engine.begin() as conn:
        append_history(
            conn,
            tables.instruments,
            [
                _instrument("KCB", listed_on=date(2010, 1, 4)),
                _instrument("KPLC-P4"),  # no type stored: inferred
                _instrument("GLD", name="ABSA NewGold ETF", instrument_type="ORDINARY"),  # a stated type wins
                _instrument("ACME", instrument_type="PREFERENCE"),
                _instrument("LATER", listed_on=date(2021, 6, 1), instrument_type="ORDINARY"),
                _instrument("GONE", delisted_on=date(2020, 3, 2), instrument_type="ORDINARY"),
                _instrument("ODD", instrument_type="UNKNOWN"),
            ],
            recorded_at=before,
        )
        append_history(
            conn,
            tables.instruments,
            [_instrument("ACME", instrument_type="ORDINARY")],
            recorded_at=before + timedelta(days=30),
        )
    with engine.connect() as conn:
        types = instrument_types(conn)
        assert types["KPLC-P4"] == "PREFERENCE" and types["ODD"] == "UNKNOWN" and types["GLD"] == "ORDINARY"
        assert ordinary_symbols(conn, date(2021, 1, 4)) == {"KCB", "GLD", "ACME"}
        assert ordinary_symbols(conn, date(2020, 3, 1)) == {"KCB", "GLD", "ACME", "GONE"}
        assert ordinary_symbols(conn, date(2021, 6, 1), as_of=before + timedelta(days=1)) == {"KCB", "GLD", "LATER"}
    engine.dispose()
