"""Rows dated on a day the files' market does not trade (`files.refuse_off_days`): a
vendor's file shifted by a day puts one session a week on a weekend and every other on
the wrong day. It was stored unseen (exit 0); the import is refused before a row is
written, naming the first such row, unless `--weekdays` says the market trades that day."""

from __future__ import annotations

import shutil
from datetime import date, timedelta
from pathlib import Path

import pytest

from market.clock import MONDAY_TO_FRIDAY, session_weekdays
from market.errors import InvalidInputError
from market.settings import Settings
from store import tables
from store.engine import service_engine
from store.history import current_rows
from tests.conftest import ON_SQLITE_ONLY
from tests.pipeline.test_cli import cli


def _stored(settings: Settings) -> tuple[list[dict], list[dict]]:
    with service_engine(settings).connect() as conn:
        return current_rows(conn, tables.eod_prices), current_rows(conn, tables.instruments)


@ON_SQLITE_ONLY
def test_an_nse_folder_shifted_by_a_day_is_refused_and_nothing_is_stored(
    settings: Settings, tmp_path: Path, nse_data: Path
) -> None:
    """A review's run: January 2015's NSE daily files, each named a day late (Monday's
    session in Tuesday's file, ..., Friday's in Saturday's), imported with exit 0: 1,281
    rows stored, each a day late, four of them on Saturdays. The import is refused with one
    line naming the first Saturday row and the way out; the store holds nothing."""
    shifted = tmp_path / "shifted"
    shifted.mkdir()
    for file in sorted((nse_data / "daily" / "2015" / "01").glob("*.csv")):
        day = date(int(file.name[:4]), int(file.name[4:6]), int(file.name[6:8])) + timedelta(days=1)
        shutil.copy(file, shifted / f"{day:%Y%m%d}.csv")
    refused = cli("import", str(shifted))
    assert refused.returncode == 1, refused.stdout
    (line,) = refused.stderr.splitlines()
    assert line.startswith("error: ") and line.endswith("nothing was imported")
    first = shifted / "20150103.csv"
    assert f"on 5 days the market does not trade (it trades Mon, Tue, Wed, Thu, Fri), the first {first}:2 " in line
    assert ", a Sat): a vendor's dates shifted by a day" in line and "--weekdays (e.g. Sun-Thu)" in line
    assert _stored(settings) == ([], [])


@ON_SQLITE_ONLY
def test_a_sunday_to_thursday_market_imports_with_its_weekdays(settings: Settings, tmp_path: Path) -> None:
    """A market that trades Sunday to Thursday: refused as it stands (its Sundays are no
    session of a Monday-to-Friday market), imported whole with `--weekdays Sun-Thu`; a
    typed list says the same, and a day that is not a weekday's name is one line."""
    first = date(2024, 1, 7)  # a Sunday
    days = [d for d in (first + timedelta(days=i) for i in range(14)) if d.weekday() in (6, 0, 1, 2, 3)]
    (tmp_path / "prices.csv").write_text(
        "symbol,date,close,volume\n" + "".join(f"{s},{d.isoformat()},10,100\n" for d in days for s in ("AAA", "BBB"))
    )
    refused = cli("import", str(tmp_path / "prices.csv"))
    assert refused.returncode == 1
    assert f"the first {tmp_path / 'prices.csv'}:2 (AAA 2024-01-07, a Sun)" in refused.stderr
    imported = cli("import", str(tmp_path / "prices.csv"), "--weekdays", "Sun-Thu")
    assert imported.returncode == 0, imported.stderr
    assert "20 rows read, 20 inserted" in imported.stdout
    prices, _ = _stored(settings)
    assert {p["trading_date"] for p in prices} == set(days)
    typo = cli("import", str(tmp_path / "prices.csv"), "--weekdays", "Sun-Thur")
    assert typo.returncode == 1
    assert typo.stderr.startswith("error: weekdays 'Sun-Thur': expected a range such as Mon-Fri or Sun-Thu")


def test_a_copied_weekend_day_is_left_out_not_refused(settings: Settings, tmp_path: Path) -> None:
    """A crawler's copy of Friday's page saved as Saturday's file is left out as a copy (it
    was before): it holds no session to misdate, so it refuses nothing."""
    from ingest.importers import import_path

    days = [date(2024, 1, d) for d in (1, 2, 3, 4, 5)]
    rows = [f"{s},{d.isoformat()},{10 + k + i},{100 + k}" for k, d in enumerate(days) for i, s in enumerate("ABCDEF")]
    friday = [r for r in rows if ",2024-01-05," in r]
    copy = [r.replace("2024-01-05", "2024-01-06") for r in friday]
    (tmp_path / "prices.csv").write_text("symbol,date,close,volume\n" + "\n".join(rows + copy) + "\n")
    report = import_path(service_engine(settings), tmp_path / "prices.csv")
    assert report.rows_inserted == 30
    assert report.repeated_days and report.repeated_days[0].startswith("2024-01-06")


def test_weekdays_are_read_as_ranges_and_lists() -> None:
    assert session_weekdays("Mon-Fri") == MONDAY_TO_FRIDAY
    assert session_weekdays("sun - thu") == frozenset({6, 0, 1, 2, 3})
    assert session_weekdays("Mon,Tue,Wed,Thu,Fri,Sat") == frozenset(range(6))
    for bad in ("", "Monday-Friday", "Mon-", "Mon;Tue"):
        with pytest.raises(InvalidInputError, match="expected a range such as Mon-Fri"):
            session_weekdays(bad)
