"""Files that overlap (a vendor's per-year files, each reaching a few sessions into the
next year): of a name's rows for a day the first by file path and line is kept, by the
importer, the replay and the benchmarks' loader alike, and the report tells the second
rows that repeat it from those that disagree with it (ingest.importers.formats.second_rows)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import date
from pathlib import Path
from types import ModuleType

import pytest

from ingest.importers.formats import second_rows
from market.settings import Settings
from store import tables
from store.engine import service_engine
from store.history import current_rows
from tests.benchmark_modules import benchmark_module

OVERLAP = [date(2019, 12, 27), date(2019, 12, 30), date(2019, 12, 31)]
YEAR_2019 = [date(2019, 12, 23), date(2019, 12, 24), *OVERLAP]
YEAR_2020 = [*OVERLAP, date(2020, 1, 2), date(2020, 1, 3)]


@pytest.fixture(scope="module")
def quality() -> Iterator[ModuleType]:
    with benchmark_module("model_quality") as module:
        yield module


def write_years(folder: Path) -> dict[int, Path]:
    """prices_2019.csv (ABC at 10.0) and prices_2020.csv (ABC at 11.0), both holding the
    last three sessions of 2019; XYZ's rows on those sessions are the same in both."""
    folder.mkdir(parents=True, exist_ok=True)
    files = {}
    for year, days, abc in ((2019, YEAR_2019, 10.0), (2020, YEAR_2020, 11.0)):
        lines = ["symbol,date,close,volume"]
        lines += [f"ABC,{d.isoformat()},{abc:.2f},100" for d in days]
        lines += [f"XYZ,{d.isoformat()},5.00,200" for d in days]
        files[year] = folder / f"prices_{year}.csv"
        files[year].write_text("\n".join(lines) + "\n")
    return files


def expected_report(files: dict[int, Path]) -> list[str]:
    """ABC's 2020-file rows on the overlap disagree (listed, each with both files' lines);
    XYZ's repeat the 2019 file's (counted)."""
    first, other = files[2019], files[2020]
    return [
        f"second rows of a name and day: 3 repeat the kept row exactly (first: {other}:7); 3 disagree with it "
        "(the first row by file path and line kept, the other left out)",
        *(
            f"  ABC {day.isoformat()}: close 10 kept ({first}:{4 + k}) vs 11 left out ({other}:{2 + k})"
            for k, day in enumerate(OVERLAP)
        ),
    ]


def test_overlapping_files_that_disagree_are_reported_apart_from_repeats(
    tmp_path: Path, settings: Settings, quality: ModuleType, capsys: pytest.CaptureFixture
) -> None:
    """An adversarial run: ABC closes 10.0 on the last sessions of 2019 in prices_2019.csv
    and 11.0 on the same sessions in prices_2020.csv. The importer and the loader kept the
    2019 rows and counted the 2020 ones like XYZ's identical repeats ("second row for ...",
    "N second rows of a name and day (the first kept)"): a 10% disagreement between two
    files passed as a duplicate. Now every reader keeps the same row and says which rows
    disagree, with both closes and both files."""
    from ingest.replay import ReplayMarket
    from tests.pipeline.test_cli import cli

    files = write_years(tmp_path / "market")
    report = expected_report(files)
    result = cli("import", str(tmp_path / "market"))
    assert result.returncode == 0, result.stderr
    assert "2 files, 14 rows read, 14 inserted, 0 changed, 2 instruments" in result.stdout
    lines = result.stdout.splitlines()
    start = lines.index(report[0])
    assert lines[start : start + len(report)] == report and "bad row" not in result.stdout
    with service_engine(settings).connect() as conn:
        stored = {(r["symbol"], r["trading_date"]): r["close"] for r in current_rows(conn, tables.eod_prices)}
    assert [stored[("ABC", d)] for d in YEAR_2019 + YEAR_2020[3:]] == [10.0] * 5 + [11.0] * 2
    replay = ReplayMarket(tmp_path / "market")
    assert replay.source.second_rows == report and replay.source.bad_rows == []
    assert {b["symbol"]: b["close"] for b in replay.day(OVERLAP[0]).bars}["ABC"] == 10.0
    prices = quality.load_ohlcv(tmp_path / "market")
    assert report == capsys.readouterr().out.splitlines()[1:]
    assert list(prices.loc[prices["symbol"] == "ABC", "close"]) == [10.0] * 5 + [11.0] * 2


def test_the_report_lists_the_first_few_and_names_the_field_that_differs() -> None:
    """Twelve disagreements: ten listed, two counted; a row whose close agrees but whose
    volume does not disagrees, and says so by the volume."""
    rows = [
        {"symbol": "A", "trading_date": date(2020, 1, d), "close": 1.0, "volume": 1, "_line": f"a:{d}"}
        for d in range(1, 13)
    ]
    rows += [{**r, "close": 2.0, "_line": r["_line"].replace("a", "b")} for r in rows]
    rows += [
        {"symbol": "B", "trading_date": date(2020, 1, 1), "close": 3.0, "volume": v, "_line": f"c:{v}"} for v in (5, 6)
    ]
    kept, found = second_rows(rows)
    assert len(kept) == 13 and len(found.disagree) == 13 and found.identical == ()
    lines = found.lines()
    assert lines[1] == "  A 2020-01-01: close 1 kept (a:1) vs 2 left out (b:1)"
    assert lines[-1] == "  ... and 3 more that disagree" and len(lines) == 12
    assert found.disagree[-1].line() == "B 2020-01-01: volume 5 kept (c:5) vs 6 left out (c:6)"


def test_an_index_level_that_disagrees_across_overlapping_files_is_listed(settings: Settings, tmp_path: Path) -> None:
    """An index's rows are kept as a name's are (the first by file path and line), but a
    second level of a day that disagreed was dropped without a word: a vendor's 2020 file
    restating ^NASI on the overlap left the 2019 file's level as the track record's
    benchmark, unsaid. It is listed with the names' second rows."""
    from ingest.importers import import_path

    files = write_years(tmp_path / "years")
    for year, level in ((2019, 150.5), (2020, 165.5)):
        with files[year].open("a") as out:
            out.writelines(f"^NASI,{d.isoformat()},{level},0\n" for d in OVERLAP)
    report = import_path(service_engine(settings), tmp_path / "years")
    first, other = files[2019], files[2020]
    assert report.second_rows[0].startswith("second rows of a name and day: 3 repeat the kept row exactly")
    assert "; 6 disagree with it" in report.second_rows[0]
    assert [line for line in report.second_rows if "^NASI" in line] == [
        f"  ^NASI {day.isoformat()}: close 150.5 kept ({first}:{12 + k}) vs 165.5 left out ({other}:{12 + k})"
        for k, day in enumerate(OVERLAP)
    ]
    with service_engine(settings).connect() as conn:
        levels = current_rows(conn, tables.index_levels)
    assert {r["level"] for r in levels} == {150.5}
