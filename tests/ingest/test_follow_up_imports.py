"""A store filled by more than one import: what a later file does to what an earlier one
stored (the instruments' names, types and listing dates)."""

from datetime import date
from pathlib import Path

import pytest

from market.settings import Settings
from store import tables
from store.engine import service_engine
from store.history import append_history, current_rows
from tests.conftest import ON_SQLITE_ONLY
from tests.pipeline.test_cli import cli
from tests.portfolio.clients import announce_action


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


@ON_SQLITE_ONLY
def test_a_corrected_actions_file_names_the_stored_action_it_no_longer_has(settings: Settings, tmp_path: Path) -> None:
    """A corrected actions file (BIG's split moved from the 28th to the 29th) stored the new
    SPLIT beside the old one without a word: BIG's history divided by 4. The store keeps
    every row, so the old one stays, and the import says so, naming it and what to do; a
    later period's file without actions names nothing (the earlier split is before its rows)."""
    days = [f"2024-03-{d:02d}" for d in (25, 26, 27, 28, 29)] + ["2024-04-01", "2024-04-02"]
    prices = "symbol,date,close,volume\n" + "".join(f"BIG,{d},{40 if d >= '2024-03-29' else 80},100\n" for d in days)
    for name, ex in (("first", "2024-03-28"), ("corrected", "2024-03-29")):
        (tmp_path / name).mkdir()
        (tmp_path / name / "corporate_actions.csv").write_text(f"symbol,ex_date,kind,ratio\nBIG,{ex},split,2:1\n")
        (tmp_path / name / "prices.csv").write_text(prices)
    first = cli("import", str(tmp_path / "first"), "--accept-action", "BIG:2024-03-28")  # the closes do not show it
    assert first.returncode == 0 and "warning: the store holds" not in first.stdout
    result = cli("import", str(tmp_path / "corrected"))
    assert result.returncode == 0, result.stderr
    assert (
        "warning: the store holds corporate actions of these files' names, within their dates, that this import "
        "does not have, and they still apply: BIG 2024-03-28 SPLIT 2 (import:ohlcv). The store keeps every row it "
        "was given and no command withdraws one: if the file was corrected, import into a fresh store "
        "(MARKETINTEL_DATABASE_URL)"
    ) in result.stdout.splitlines()
    with service_engine(settings).connect() as conn:
        splits = sorted(str(r["action_date"]) for r in current_rows(conn, tables.corporate_actions))
    assert splits == ["2024-03-28", "2024-03-29"]
    later = tmp_path / "later.csv"
    later.write_text("symbol,date,close,volume\nBIG,2024-04-03,41,100\nBIG,2024-04-04,42,100\n")
    assert "warning: the store holds corporate actions" not in cli("import", str(later)).stdout


@ON_SQLITE_ONLY
def test_a_currency_column_is_read_and_a_file_of_two_currencies_is_refused(settings: Settings, tmp_path: Path) -> None:
    """A review's run: a file with a `currency` column stating USD for PROVEN was stored in
    JMD, the CLI saying the files do not say their currency. The column is read: one
    currency is the import's (a --currency that disagrees is refused), two are refused,
    since the service values everything in one trading currency; nothing is written."""
    mixed = tmp_path / "mixed.csv"
    mixed.write_text(
        "symbol,date,close,volume,currency\nNCBFG,2024-05-02,75.00,1000,JMD\nPROVEN,2024-05-02,0.21,50000,USD\n"
    )
    refused = cli("import", str(mixed))
    assert refused.returncode == 1 and "state prices in 2 currencies" in refused.stderr, refused.stderr
    assert "PROVEN" in refused.stderr and "nothing was imported" in refused.stderr
    assert _instruments(settings) == {}
    usd = tmp_path / "usd.csv"
    usd.write_text("symbol,date,close,volume,currency\nPROVEN,2024-05-02,0.21,50000,usd\nSEP,2024-05-02,0.5,10,USD\n")
    disagrees = cli("import", str(usd), "--currency", "JMD")
    assert disagrees.returncode == 1 and "the files state their prices in USD" in disagrees.stderr
    assert _instruments(settings) == {}
    read = cli("import", str(usd))
    assert read.returncode == 0 and "2 instruments in USD, as the files state" in read.stdout, read.stdout
    with service_engine(settings).connect() as conn:
        assert {r["symbol"]: r["currency"] for r in current_rows(conn, tables.instruments)} == {
            "PROVEN": "USD",
            "SEP": "USD",
        }


@ON_SQLITE_ONLY
def test_a_follow_up_without_a_currency_keeps_the_stored_one_and_a_blank_beside_usd_is_refused(
    settings: Settings, tmp_path: Path
) -> None:
    """A review's runs: a file whose rows mostly state no currency and a few USD stored
    every name in USD; a routine follow-up without the column turned a USD name into JMD
    (the assumed currency), and the board into the importer's OTHER."""
    blank = tmp_path / "blank.csv"
    blank.write_text("symbol,date,close,volume,currency\nGK,2024-05-02,80,10,\nPROVEN,2024-05-02,0.21,50,USD\n")
    refused = cli("import", str(blank))
    assert refused.returncode == 1 and "rows of 1 name (GK) state no currency while others state USD" in refused.stderr
    assert _instruments(settings) == {}
    _imported(tmp_path / "usd.csv", "symbol,date,close,volume,currency\nPROVEN,2024-05-02,0.21,50,USD\n")
    with service_engine(settings).begin() as conn:  # as T0 states it: on the MAIN board
        (row,) = current_rows(conn, tables.instruments)
        append_history(conn, tables.instruments, [{**_listing(row), "board": "MAIN"}])
    _imported(tmp_path / "next.csv", "symbol,date,close,volume\nPROVEN,2024-05-03,0.22,40\n")
    with service_engine(settings).connect() as conn:
        (row,) = current_rows(conn, tables.instruments)
    assert (row["currency"], row["board"]) == ("USD", "MAIN")


def _listing(row: dict) -> dict:
    return {k: v for k, v in row.items() if k not in ("id", "recorded_at")}


@ON_SQLITE_ONLY
def test_a_file_of_bad_rows_beside_an_actions_file_stores_nothing(settings: Settings, tmp_path: Path) -> None:
    """The import said "nothing was imported" after it had stored the actions file's split
    and delisting: now nothing is written when not a price row could be read."""
    (tmp_path / "prices.csv").write_text("symbol,date,close,volume\nBIG,2024-13-01,10,5\n")
    (tmp_path / "corporate_actions.csv").write_text("symbol,ex_date,kind,ratio\nBIG,2024-03-29,split,2:1\n")
    refused = cli("import", str(tmp_path))
    assert refused.returncode == 1 and "nothing was imported" in refused.stderr and "bad row" in refused.stdout
    with service_engine(settings).connect() as conn:
        assert current_rows(conn, tables.corporate_actions) == [] and current_rows(conn, tables.instruments) == []


@ON_SQLITE_ONLY
def test_a_later_file_that_changes_a_stored_close_says_so_and_counts_it_apart(
    settings: Settings, tmp_path: Path
) -> None:
    """A review's run: a.csv stored ABC's close of 10.5, then b.csv (the same day at 11)
    replaced it with "2 inserted" and no word; imported together the two files kept 10.5
    and listed the disagreement. A later import's row is a correction (the store keeps the
    earlier version): stored, counted as changed rather than inserted, and named."""
    (tmp_path / "a.csv").write_text("symbol,date,close,volume\nABC,2024-01-03,10.5,100\n")
    (tmp_path / "b.csv").write_text("symbol,date,close,volume\nABC,2024-01-03,11,100\nABC,2024-01-04,11.5,100\n")
    assert cli("import", str(tmp_path / "a.csv")).returncode == 0
    result = cli("import", str(tmp_path / "b.csv"))
    assert result.returncode == 0, result.stderr
    assert "ohlcv: 1 files, 2 rows read, 1 inserted, 1 changed, " in result.stdout
    lines = result.stdout.splitlines()
    at = lines.index(
        "stored rows this import changed: 1 (a later import's row of a name and day is a correction: the current "
        "version, the stored one kept as an earlier version)"
    )
    assert lines[at + 1] == f"  ABC 2024-01-03: close 10.5 stored (import:ohlcv) -> 11 ({tmp_path / 'b.csv'}:2)"
    with service_engine(settings).connect() as conn:
        closes = {(r["trading_date"].isoformat(), r["close"]) for r in current_rows(conn, tables.eod_prices)}
        versions = conn.execute(tables.eod_prices.select()).all()
    assert closes == {("2024-01-03", 11), ("2024-01-04", 11.5)} and len(versions) == 3
    again = cli("import", str(tmp_path / "b.csv")).stdout
    assert "2 rows read, 0 inserted, 0 changed" in again and "stored rows this import changed" not in again


def _month(path: Path, aaa: str = "100.00") -> None:
    """January's file: AAA at 100 and BBB at 10 each weekday, stored."""
    days = [f"2024-01-{d:02d}" for d in range(1, 32) if date(2024, 1, d).weekday() < 5]
    _imported(path, "symbol,date,close,volume\n" + "".join(f"AAA,{d},{aaa},1000\nBBB,{d},10.00,1000\n" for d in days))


def _splits(settings: Settings) -> list[tuple]:
    with service_engine(settings).connect() as conn:
        rows = current_rows(conn, tables.corporate_actions)
    return [(r["symbol"], r["action_date"].isoformat(), r["amount"]) for r in rows if r["kind"] == "SPLIT"]


@ON_SQLITE_ONLY
def test_a_nightly_import_is_checked_against_the_stored_closes(
    settings: Settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A follow-up import was checked for capital changes against its own rows only: each
    name's first row had no previous close, so AAA halving on a one-day file (an unadjusted
    2-for-1 split) passed a 10% limit and --adjust-implied unsaid, and a 100x fall passed
    the band. Each name's first row is read against its last stored close."""
    _month(tmp_path / "jan.csv")
    monkeypatch.setenv("MARKETINTEL_DAILY_PRICE_LIMIT", "0.1")
    feb1 = _written(tmp_path / "feb1.csv", "AAA,2024-02-01,50.00,2000\nBBB,2024-02-01,10.05,900\n")
    result = cli("import", "--adjust-implied", str(feb1))
    assert result.returncode == 0, result.stderr
    assert "  AAA 2024-02-01: 100 -> 50 (-50.0%); implied ratio 2 shares per share" in result.stdout.splitlines()
    assert _splits(settings) == [("AAA", "2024-02-01", 2.0)]
    monkeypatch.delenv("MARKETINTEL_DAILY_PRICE_LIMIT")
    result = cli("import", str(_written(tmp_path / "feb2.csv", "AAA,2024-02-02,0.50,1000\nBBB,2024-02-02,10,1000\n")))
    assert result.returncode == 0, result.stderr
    assert "that no action explains: 1 (not adjusted" in result.stdout
    assert "  AAA 2024-02-02: 50 -> 0.5 (-99.0%); implied ratio 100 shares per share" in result.stdout.splitlines()


def _written(path: Path, rows: str) -> Path:
    path.write_text("symbol,date,close,volume\n" + rows)
    return path


@ON_SQLITE_ONLY
def test_a_follow_up_rights_issue_is_priced_by_the_stored_close_and_a_stored_split_is_on_the_count(
    settings: Settings, tmp_path: Path
) -> None:
    """A rights issue on a follow-up's first day was "not applied: no close before the
    ex-date" though the store held it; a SPLIT the store holds for the day (T0's notice)
    puts the stored close on the day's count, so the halving it explains is no move."""
    _month(tmp_path / "jan.csv")
    folder = tmp_path / "feb"
    folder.mkdir()
    _written(folder / "prices.csv", "AAA,2024-02-01,92.00,1000\nBBB,2024-02-01,5.00,2000\n")
    (folder / "corporate_actions.csv").write_text("symbol,ex_date,kind,ratio,price\nAAA,2024-02-01,rights,1 for 4,60\n")
    announce_action(service_engine(settings), "BBB", "SPLIT", 2.0, date(2024, 2, 1), "BBB bonus 1 for 1")
    result = cli("import", str(folder))
    assert result.returncode == 0, result.stderr
    assert "1 read, 1 splits applied" in result.stdout and "warning" not in result.stdout
    assert "that no action explains: 0 (not adjusted" in result.stdout
    assert sorted(_splits(settings)) == [("AAA", "2024-02-01", pytest.approx(100 / 92)), ("BBB", "2024-02-01", 2.0)]


@ON_SQLITE_ONLY
def test_a_resent_history_already_adjusted_for_a_stored_split_is_refused(settings: Settings, tmp_path: Path) -> None:
    """A review's run: AAA's unadjusted history and its 2-for-1 split (ex 2024-03-15) were
    imported, then the vendor resent the history adjusted for it (the closes before the
    ex-date halved) without the actions file. The import stored the halved closes as
    corrections and exit 0, the stored split still applying to them: AAA's adjusted
    history read 25 then 50.5 across the ex-date, a +100% day the market never had, in the
    returns, the model's labels and a holder's past values. It is refused naming the split
    and the closes, nothing stored; --accept-action takes the split as standing."""
    days = [date(2024, 3, d) for d in range(11, 20) if date(2024, 3, d).weekday() < 5]

    def history(adjusted: bool) -> str:
        closes = [100 + i for i in range(len(days))]
        return "symbol,date,close,volume\n" + "".join(
            f"AAA,{d},{c / 2 if adjusted or d >= date(2024, 3, 15) else c:g},1000\n"
            for d, c in zip(days, closes, strict=True)
        )

    (tmp_path / "first").mkdir()
    (tmp_path / "first" / "corporate_actions.csv").write_text("symbol,ex_date,kind,ratio\nAAA,2024-03-15,split,2:1\n")
    _imported(tmp_path / "first" / "prices.csv", history(adjusted=False))
    resent = _written(tmp_path / "resent.csv", history(adjusted=True).split("\n", 1)[1])
    result = cli("import", str(resent))
    assert result.returncode == 1, result.stdout
    assert result.stderr.strip() == (
        "error: 1 stored split this import's closes no longer show: AAA 2024-03-15 SPLIT 2: the closes either "
        "side of its ex-date would be 51.5 on 2024-03-14 and 52 on 2024-03-15 (stored: 103 and 52): "
        "the files' prices look already adjusted for it, and stored over the unadjusted ones the split would "
        "adjust them again (a move of its ratio the market never made). Import prices on the count of their day, "
        "or keep the split over these closes with --accept-action SYMBOL:EX_DATE; nothing was imported"
    )
    with service_engine(settings).connect() as conn:
        closes = {r["trading_date"]: r["close"] for r in current_rows(conn, tables.eod_prices)}
    assert closes[date(2024, 3, 14)] == 103 and closes[date(2024, 3, 15)] == 52
    follow_up = _written(tmp_path / "next.csv", "AAA,2024-03-20,52.5,1000\n")  # a day after: nothing to refuse
    assert cli("import", str(follow_up)).returncode == 0
    taken = cli("import", str(resent), "--accept-action", "AAA:2024-03-15")
    assert taken.returncode == 0, taken.stderr


@ON_SQLITE_ONLY
def test_a_correction_that_leaves_a_jump_to_the_stored_close_after_it_is_a_warning(
    settings: Settings, tmp_path: Path
) -> None:
    """A review's run: AAA's history to 2024-01-31 stored, then the vendor resent its first
    ten sessions halved (another count). They were stored as corrections with exit 0 and
    "moves beyond T0's band ... that no action explains: 0", though AAA's stored history now
    read 54.5 on 2024-01-12 and 110 on 2024-01-15 (+101.8%): a follow-up's rows were read
    against the stored close before them only, never the one after. That seam is read too,
    and the move named on a warning line (stored as given: either side may be the one in
    error); a correction within the band says nothing."""
    days = [date(2024, 1, d) for d in range(1, 32) if date(2024, 1, d).weekday() < 5]
    _imported(
        tmp_path / "all.csv",
        "symbol,date,close,volume\n" + "".join(f"AAA,{d},{100 + i},1000\n" for i, d in enumerate(days)),
    )
    resent = _written(
        tmp_path / "resent.csv", "".join(f"AAA,{d},{(100 + i) / 2:g},1000\n" for i, d in enumerate(days[:10]))
    )
    result = cli("import", str(resent))
    assert result.returncode == 0, result.stderr
    assert [line for line in result.stdout.splitlines() if "stored close after" in line] == [
        "warning: AAA 2024-01-15: 54.5 on 2024-01-12 (this import's last row) -> 110 stored (+101.8%), beyond "
        "T0's band (50% up or 33% down): this import's rows and the stored ones after them read a move the "
        "market may not have made (a history resent on another count, or a misprint either side): stored as "
        "given, check the file against the stored close after it"
    ]
    counted = next(line for line in result.stdout.splitlines() if line.startswith("moves beyond"))
    assert counted.endswith(
        "that no action explains: 0 (not adjusted: misprints or capital changes to check); and 1 beyond T0's band "
        "where this import's rows meet the stored ones after them (not adjusted: the warnings above name them)"
    ), counted
    fixed = _written(tmp_path / "fixed.csv", "".join(f"AAA,{d},{100.5 + i:g},1000\n" for i, d in enumerate(days[:10])))
    assert "stored close after" not in cli("import", str(fixed)).stdout
