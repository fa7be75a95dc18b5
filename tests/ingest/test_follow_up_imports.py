"""A store filled by more than one import: what a later file does to what an earlier one
stored (the instruments' names, types and listing dates)."""

from pathlib import Path

from market.settings import Settings
from store import tables
from store.engine import service_engine
from store.history import current_rows
from tests.conftest import ON_SQLITE_ONLY
from tests.pipeline.test_cli import cli


def _instruments(settings: Settings) -> dict[str, tuple]:
    with service_engine(settings).connect() as conn:
        rows = current_rows(conn, tables.instruments)
    return {r["symbol"]: (r["name"], r["instrument_type"], r["listed_on"].isoformat()) for r in rows}


def _imported(path: Path, text: str) -> None:
    path.write_text(text)
    result = cli("import", str(path))
    assert result.returncode == 0, result.stderr


@ON_SQLITE_ONLY
def test_a_follow_up_file_without_names_or_types_keeps_the_stored_ones(settings: Settings, tmp_path: Path) -> None:
    """A routine follow-up import (no name or type column) stored every instrument again
    under its bare symbol, as an ORDINARY share, listed from the follow-up's first day."""
    _imported(
        tmp_path / "a.csv",
        "symbol,date,close,volume,name,instrument_type\n"
        "JMMBPA,2024-05-02,1.90,1000,JMMB Group Series A,preference\n"
        "NCBFG,2024-05-02,75.00,1000,NCB Financial Group,ordinary\n",
    )
    _imported(tmp_path / "b.csv", "symbol,date,close,volume\nJMMBPA,2024-05-03,1.91,500\nNCBFG,2024-05-03,75.50,800\n")
    assert _instruments(settings) == {
        "JMMBPA": ("JMMB Group Series A", "PREFERENCE", "2024-05-02"),
        "NCBFG": ("NCB Financial Group", "ORDINARY", "2024-05-02"),
    }


@ON_SQLITE_ONLY
def test_the_latest_name_by_date_wins_and_the_earliest_listing_date(settings: Settings, tmp_path: Path) -> None:
    """An older file imported after a newer one put the old name back; a file that starts
    later than the store's rows moved the listing date forward. A file with names imported
    after one without them (the symbol stored as the name, the type inferred) names them."""
    _imported(tmp_path / "new.csv", "symbol,date,close,volume,name\nCROWN,2024-05-02,40,100,Crown Paints Kenya Plc\n")
    _imported(tmp_path / "old.csv", "symbol,date,close,volume,name\nCROWN,2019-05-02,30,100,Crown Berger Ltd\n")
    assert _instruments(settings)["CROWN"] == ("Crown Paints Kenya Plc", "ORDINARY", "2019-05-02")
    _imported(tmp_path / "later.csv", "symbol,date,close,volume\nCROWN,2024-05-03,41,100\nPREFX,2024-05-03,2,100\n")
    _imported(
        tmp_path / "named.csv",
        "symbol,date,close,volume,name,instrument_type\nPREFX,2024-05-02,2,100,Prefx Series A,preference\n",
    )
    assert _instruments(settings) == {
        "CROWN": ("Crown Paints Kenya Plc", "ORDINARY", "2019-05-02"),
        "PREFX": ("Prefx Series A", "PREFERENCE", "2024-05-02"),
    }
