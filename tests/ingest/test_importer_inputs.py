"""The importer on files a smaller exchange or a careless operator produces: what is
refused (one `error:` line, exit 1, nothing stored), what is a bad row, and what is stored."""

from pathlib import Path

from sqlalchemy import Table

from ingest.importers import import_path
from market.settings import Settings
from store import tables
from store.engine import service_engine
from store.history import current_rows
from tests.conftest import ON_SQLITE_ONLY
from tests.pipeline.test_cli import cli


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
