"""Ticker changes in the corporate-actions file (ingest/importers/renames.py): a `rename` row
makes the old symbol's rows before the ex-date and the new symbol's from it one series
under the new symbol, in the benchmarks' loader, the importer and the replay alike, so a
rename is neither a delisting of the old symbol (a held position worth nothing after 60
sessions) nor a new listing whose history starts from nothing; the cases the file cannot
settle are reported, and a bad rename row is a bad row with its file and line."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import date, timedelta
from pathlib import Path
from types import ModuleType

import numpy as np
import pandas as pd
import pytest

from ingest.importers.actions import capital_changes, read_actions
from market.errors import InvalidInputError
from tests.benchmark_modules import benchmark_module

FIRST = date(2026, 1, 5)
DAYS = [d for d in (FIRST + timedelta(days=i) for i in range(60)) if d.weekday() < 5][:40]
EX = DAYS[20]  # CFC trades as SBIC from here
BONUS = DAYS[10]  # CFC's 1-for-1 bonus issue, before the rename: the file's closes halve


@pytest.fixture(scope="module")
def quality() -> Iterator[ModuleType]:
    with benchmark_module("model_quality") as module:
        yield module


def true_closes() -> dict[str, list[float]]:
    """Each company's closes on today's share count: small daily moves, in cents."""
    rng = np.random.default_rng(11)
    out = {}
    for symbol, start in (("SBIC", 40.0), ("AAA", 20.0)):
        moves = rng.normal(0.0, 0.01, len(DAYS))
        moves[0] = 0.0
        out[symbol] = [round(c, 2) for c in start * np.cumprod(1 + moves)]  # prices at the tick
    return out


def write_market(folder: Path, actions: str, bonus: bool = True) -> Path:
    """prices.csv: AAA, and one company under CFC (name CFC Bank) before EX and SBIC
    (Stanbic Holdings) from it, its closes before BONUS on the old count (doubled) when
    `bonus`; corporate_actions.csv: `actions` below the header."""
    folder.mkdir(parents=True, exist_ok=True)
    lines = ["symbol,date,close,volume,name"]
    for symbol, closes in true_closes().items():
        for i, (day, close) in enumerate(zip(DAYS, closes, strict=True)):
            shown, shown_as, name = close, symbol, "Alpha"
            if symbol == "SBIC":
                shown = close * 2 if bonus and day < BONUS else close
                shown_as, name = ("CFC", "CFC Bank") if day < EX else ("SBIC", "Stanbic Holdings")
            lines.append(f"{shown_as},{day.isoformat()},{shown:.2f},{1000 + i},{name}")
    (folder / "prices.csv").write_text("\n".join(lines) + "\n")
    header = "symbol,ex_date,kind,ratio,price,new_symbol,note\n"
    (folder / "corporate_actions.csv").write_text(header + actions)
    return folder


RENAME = f"CFC,{EX.isoformat()},rename,,,SBIC,CFC Bank became Stanbic Holdings\n"
CFC_BONUS = f"CFC,{BONUS.isoformat()},bonus,1 for 1,,,\n"


def series(frame: pd.DataFrame, symbol: str) -> pd.Series:
    return frame[frame["symbol"] == symbol].sort_values("date").set_index("date")["close"].astype(float)


@pytest.mark.parametrize(
    "bonus_row",
    [CFC_BONUS, f"SBIC,{BONUS.isoformat()},bonus,1 for 1,,,\n"],
    ids=["bonus listed under the old symbol", "bonus listed under the new symbol"],
)
def test_a_rename_is_one_series_under_the_new_symbol_with_the_split_applied(
    tmp_path: Path, quality: ModuleType, bonus_row: str
) -> None:
    from models.dataset import build_panel

    folder = write_market(tmp_path / "market", RENAME + bonus_row)
    prices, report = quality.load_market(folder, nse=False, price_limit=0.10)
    assert set(prices["symbol"]) == {"SBIC", "AAA"}  # CFC is not a name of its own
    joined = series(prices, "SBIC")
    assert list(joined.index) == DAYS
    np.testing.assert_allclose(joined.to_numpy(), true_closes()["SBIC"], rtol=1e-6)
    assert joined.pct_change().abs().max() < 0.05  # no jump at the rename, none at the bonus issue
    assert [(s.symbol, s.ex_date, s.factor) for s in report.applied] == [("SBIC", BONUS, 2.0)]
    assert [(r.old, r.new, r.ex_date, r.rows) for r in report.renames.applied] == [("CFC", "SBIC", EX, 20)]
    assert report.warnings == () and report.beyond == ()
    lines = report.lines()
    assert lines[0].endswith("2 read, 1 splits applied, 1 renames applied")
    assert lines[1] == (
        f"renamed: CFC -> SBIC from {EX}: CFC's 20 rows ({DAYS[0]} to {DAYS[19]}) are SBIC's history "
        f"({folder / 'corporate_actions.csv'}:2)"
    )
    # the model's panel: one history, its labels across the ex-date the true returns
    panel = build_panel(prices.drop(columns="ordinary"), horizon=5).set_index(["symbol", "date"])
    assert len(panel.loc["SBIC"]) == len(DAYS)
    true = pd.DataFrame(
        [(s, d, c) for s, closes in true_closes().items() for d, c in zip(DAYS, closes, strict=True)],
        columns=["symbol", "date", "close"],
    )
    expected = build_panel(true.assign(volume=1000.0), horizon=5).set_index(["symbol", "date"])
    pd.testing.assert_series_equal(
        panel.loc["SBIC", "forward_return"].dropna(), expected.loc["SBIC", "forward_return"].dropna(), atol=1e-6
    )
    assert quality.capital_figures(report)["renames_applied"] == [("CFC", "SBIC", EX.isoformat())]


def test_the_importer_stores_one_series_and_one_instrument_under_the_new_symbol(tmp_path: Path, settings) -> None:
    from ingest.importers import import_path
    from store import tables
    from store.engine import service_engine
    from store.history import current_rows
    from store.panels import price_panel

    folder = write_market(tmp_path / "market", RENAME + CFC_BONUS)
    engine = service_engine(settings)
    report = import_path(engine, folder)
    assert report.rows_read == 2 * len(DAYS) and report.bad_rows == [] and report.instruments == 2
    assert any(line.startswith("renamed: CFC -> SBIC from ") for line in report.capital_changes)
    with engine.connect() as conn:
        prices = current_rows(conn, tables.eod_prices)
        instruments = {r["symbol"]: r for r in current_rows(conn, tables.instruments)}
        actions = current_rows(conn, tables.corporate_actions)
        panel = price_panel(conn, DAYS[-1])
    assert sorted(r["trading_date"] for r in prices if r["symbol"] == "SBIC") == DAYS
    assert not any(r["symbol"] == "CFC" for r in prices)
    assert set(instruments) == {"SBIC", "AAA"}
    assert (instruments["SBIC"]["listed_on"], instruments["SBIC"]["name"]) == (DAYS[0], "Stanbic Holdings")
    assert [(a["symbol"], a["kind"], a["action_date"], a["amount"]) for a in actions] == [("SBIC", "SPLIT", BONUS, 2.0)]
    np.testing.assert_allclose(series(panel, "SBIC").to_numpy(), true_closes()["SBIC"], rtol=1e-6)


def test_a_rename_on_a_store_that_holds_the_old_series_is_stored_as_an_action(tmp_path: Path, settings) -> None:
    """The store holds CFC's rows from the files without the rename row (a running store);
    the same files with it cannot move them (append-only), so no row moves: the rename is
    stored as a RENAME action of CFC (the ledger carries a holding of CFC on under SBIC
    from the ex-date: tests/api/test_renamed_holding.py), CFC is delisted from it, said in
    the report, and stored once however often the files are imported again. Imported with the rename from the
    start, into a fresh store, the two are one series under SBIC (above)."""
    from ingest.importers import import_path
    from store import tables
    from store.engine import service_engine
    from store.history import current_rows, row_counts

    engine = service_engine(settings)
    plain = import_path(engine, write_market(tmp_path / "plain", ""))
    assert any(line.startswith("probable rename (not joined): CFC's rows end") for line in plain.capital_changes)
    with engine.connect() as conn:
        before = row_counts(conn, [tables.eod_prices])
    renamed = write_market(tmp_path / "renamed", RENAME)
    report = import_path(engine, renamed)
    first, last = DAYS[0].isoformat(), max(d for d in DAYS if d < EX).isoformat()
    held = sum(1 for d in DAYS if d < EX)
    assert report.rows_inserted == 0 and report.corporate_actions_inserted == 1
    assert report.capital_changes[0].endswith(
        "1 read, 0 splits applied, 0 renames applied, 1 stored as RENAME actions (no row moved)"
    )
    assert report.capital_changes[1:2] == [
        f"renamed on the store: CFC -> SBIC from {EX}: the store's {held:,} rows of CFC ({first} to {last}) stay "
        f"under CFC; a holding of CFC is held as SBIC from {EX} (a RENAME action; "
        f"{renamed / 'corporate_actions.csv'}:2)"
    ]
    assert import_path(engine, renamed).corporate_actions_inserted == 0  # the same files again: stored once
    with engine.connect() as conn:
        assert row_counts(conn, [tables.eod_prices]) == before
        actions = current_rows(conn, tables.corporate_actions)
        listed = {r["symbol"]: r["delisted_on"] for r in current_rows(conn, tables.instruments)}
    assert listed == {"CFC": EX, "SBIC": None, "AAA": None}  # CFC stops at the ex-date: T1 expects no row of it
    assert [(a["symbol"], a["kind"], a["action_date"], a["detail"]["new_symbol"]) for a in actions] == [
        ("CFC", "RENAME", EX, "SBIC")
    ]

    fresh = service_engine(settings.model_copy(update={"database_url": f"sqlite:///{tmp_path / 'fresh.db'}"}))
    from store.migrations import upgrade

    upgrade(fresh)
    assert import_path(fresh, renamed).rows_inserted == len(DAYS) * 2
    assert import_path(fresh, renamed).rows_inserted == 0  # the same files again: nothing moves, nothing refused
    with fresh.connect() as conn:
        assert not current_rows(conn, tables.corporate_actions)  # joined: no action is stored for it


def test_a_replay_serves_the_renamed_company_as_one_instrument_and_t0_stores_one_series(
    tmp_path: Path, settings
) -> None:
    """An adversarial run: the replay served CFC until the rename, then a DELISTING notice for
    it and a new listing, SBIC, with no history; a held CFC position was an absent name, worth
    nothing once the delisting rule's sessions had passed. Now SBIC is served from CFC's first
    row with no notice at the rename, and a position in it is priced every session."""
    from ingest.replay import ReplayMarket
    from pipeline.backfill import backfill
    from portfolio.delisting import DelistingRule, stored_absences
    from store import tables
    from store.engine import service_engine
    from store.history import current_rows

    folder = write_market(tmp_path / "market", RENAME, bonus=False)
    header, *rows = (folder / "prices.csv").read_text().splitlines()
    kept = [row for row in rows if row.split(",")[1] <= DAYS[25].isoformat()]  # 26 sessions are enough
    (folder / "prices.csv").write_text("\n".join([header, *kept]) + "\n")
    market = ReplayMarket(folder)
    assert market.symbols == ["AAA", "SBIC"]
    assert market.source.capital_changes == [
        f"renamed: CFC -> SBIC from {EX}: CFC's 20 rows ({DAYS[0]} to {DAYS[19]}) are SBIC's history "
        f"({folder / 'corporate_actions.csv'}:2)"
    ]
    for day in market.days[1:]:
        assert market.day(day).notices == []  # no LISTING of SBIC, no DELISTING of CFC
    first = market.day(DAYS[0]).bars
    assert [(b["symbol"], b["name"]) for b in first] == [("AAA", "Alpha"), ("SBIC", "Stanbic Holdings")]
    securities = {s["symbol"]: s for s in market.day(DAYS[25]).securities}
    assert securities["SBIC"]["listed_on"] == DAYS[0] and securities["SBIC"]["status"] == "ACTIVE"
    assert "CFC" not in securities
    engine = service_engine(settings)
    reports = backfill(engine, settings, 26, DAYS[25], market)
    assert [r.status for r in reports] == ["COMPLETE"] * 26
    with engine.connect() as conn:
        stored = [r for r in current_rows(conn, tables.eod_prices) if r["symbol"] in ("SBIC", "CFC")]
        absent = stored_absences(conn, DAYS[25], ["SBIC"], DelistingRule(after_sessions=3))
        kinds = {(a["symbol"], a["kind"]) for a in current_rows(conn, tables.corporate_actions)}
    assert sorted(r["trading_date"] for r in stored) == DAYS[:26] and {r["symbol"] for r in stored} == {"SBIC"}
    np.testing.assert_allclose(
        [r["close"] for r in sorted(stored, key=lambda r: r["trading_date"])], true_closes()["SBIC"][:26], rtol=1e-6
    )
    assert absent == {} and not any(kind in ("LISTING", "DELISTING") for _, kind in kinds)


def test_the_cases_a_rename_row_cannot_settle_are_reported(tmp_path: Path) -> None:
    """A reused ticker is not joined (two companies would be one series); the old symbol's
    rows after the ex-date stay its own; a chain is one series under the last symbol; a
    rename without rows is not applied; a new symbol without rows after the ex-date is."""
    rows = [("OLD", DAYS[0], 10.0), ("OLD", DAYS[1], 10.1), ("NEW", DAYS[2], 10.2), ("NEW", DAYS[3], 10.3)]
    rows += [("LAG", DAYS[0], 5.0), ("LAG", DAYS[1], 5.1), ("LAG", DAYS[2], 5.1), ("LAGGED", DAYS[2], 5.1)]
    rows += [("LAGGED", DAYS[3], 5.2)]
    rows += [("XA", DAYS[0], 2.0), ("XB", DAYS[1], 2.1), ("XC", DAYS[2], 2.2), ("XC", DAYS[3], 2.3)]
    rows += [("GONE", DAYS[0], 3.0), ("GONE", DAYS[1], 3.1)]
    rows += [("TAKEN", DAYS[0], 7.0), ("TAKEN", DAYS[1], 7.1), ("OWNER", DAYS[0], 1.0), ("TAKEN", DAYS[3], 1.1)]
    prices = pd.DataFrame(rows, columns=["symbol", "date", "close"]).assign(volume=100)
    path = tmp_path / "corporate_actions.csv"
    path.write_text(
        "symbol,ex_date,kind,ratio,new_symbol\n"
        f"OLD,{DAYS[2]},rename,,NEW\n"  # 2: the plain case
        f"OWNER,{DAYS[3]},ticker change,,TAKEN\n"  # 3: TAKEN traded before: another company's
        f"LAG,{DAYS[2]},Symbol Change,,LAGGED\n"  # 4: LAG still has a row on the ex-date
        f"XA,{DAYS[1]},rename,,XB\n"  # 5: a chain, XA -> XB -> XC
        f"XB,{DAYS[2]},name_change,,XC\n"  # 6
        f"NOBODY,{DAYS[2]},rename,,SOMEONE\n"  # 7: no rows at all
        f"GONE,{DAYS[3]},rename,,LATER\n"  # 8: LATER has no row from the ex-date
    )
    adjusted, report = capital_changes(prices, path)
    where = {line: f"{path}:{line}" for line in range(2, 9)}
    assert {(r.old, r.new) for r in report.renames.applied} == {
        ("OLD", "NEW"),
        ("LAG", "LAGGED"),
        ("XA", "XB"),
        ("XB", "XC"),
        ("GONE", "LATER"),
    }
    assert list(series(adjusted, "NEW")) == [10.0, 10.1, 10.2, 10.3]
    assert list(series(adjusted, "XC")) == [2.0, 2.1, 2.2, 2.3]
    assert list(series(adjusted, "LAGGED")) == [5.0, 5.1, 5.1, 5.2] and list(series(adjusted, "LAG")) == [5.1]
    assert list(series(adjusted, "TAKEN")) == [7.0, 7.1, 1.1] and list(series(adjusted, "OWNER")) == [1.0]
    assert list(series(adjusted, "LATER")) == [3.0, 3.1]
    assert set(adjusted["symbol"]) == {"NEW", "XC", "LAG", "LAGGED", "TAKEN", "OWNER", "LATER"}
    assert list(report.warnings) == [
        f"{where[4]}: LAG {DAYS[2]} rename to LAGGED: LAG still has 1 rows on or after the ex-date ({DAYS[2]} to "
        f"{DAYS[2]}): not joined (a vendor's lag, a wrong ex-date or a reused ticker); kept under LAG as the file "
        "has them",
        f"{where[6]}: XB {DAYS[2]} rename to XC: a chain: XA -> XB on {DAYS[1]} ({where[5]}), then XB -> XC: one "
        "series under XC",
        f"{where[7]}: NOBODY {DAYS[2]} rename to SOMEONE: NOBODY has no row before the ex-date: nothing to join; "
        "not applied",
        f"{where[3]}: OWNER {DAYS[3]} rename to TAKEN: not applied: TAKEN already has 2 rows before the ex-date "
        f"({DAYS[0]} to {DAYS[1]}): a reused ticker or a wrong ex-date; joined, two companies' rows would be one "
        "series, so OWNER and TAKEN keep the rows the file gives them",
        f"{where[8]}: GONE {DAYS[3]} rename to LATER: LATER has no row on or after the ex-date; GONE's history is "
        "LATER's",
    ]
    assert [line for line in report.lines() if line.startswith("warning: ")] == [
        f"warning: {w}" for w in report.warnings
    ]


def test_a_ticker_reused_by_a_later_rename_is_no_lag(tmp_path: Path) -> None:
    """B became C; later A took the ticker B: B's rows from A's rename are A's, not rows
    the first rename left behind."""
    prices = pd.DataFrame(
        [("B", DAYS[0], 1.0), ("C", DAYS[1], 1.1), ("A", DAYS[0], 9.0), ("A", DAYS[1], 9.1), ("B", DAYS[2], 9.2)],
        columns=["symbol", "date", "close"],
    ).assign(volume=100)
    path = tmp_path / "corporate_actions.csv"
    path.write_text(f"symbol,ex_date,kind,ratio,new_symbol\nB,{DAYS[1]},rename,,C\nA,{DAYS[2]},rename,,B\n")
    adjusted, report = capital_changes(prices, path)
    assert report.warnings == ()
    assert list(series(adjusted, "C")) == [1.0, 1.1] and list(series(adjusted, "B")) == [9.0, 9.1, 9.2]


def test_a_bad_rename_row_is_named_with_its_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "corporate_actions.csv"
    path.write_text(
        "symbol,ex_date,kind,ratio,price,new_symbol\n"
        f"CFC,{EX},rename,,,\n"
        f"CFC,{EX},rename,,,cfc\n"
        f"CFC,{EX},renaming,,,SBIC\n"
        f"CFC,{EX},split,2,,SBIC\n"
        f"CFC,{EX},Ticker-Change,,,sbic\n"
    )
    actions, bad = read_actions(path)
    assert bad == [
        f"{path}:2: a rename without a new_symbol",
        f"{path}:3: a rename of CFC to CFC: the same symbol, nothing changes",
        f"{path}:4: kind 'renaming' is not one of split, bonus, rights, consolidation, delisting, rename",
        f"{path}:5: new_symbol 'SBIC' is a rename's; this row is a split",
    ]
    assert [(a.symbol, a.kind, a.new_symbol) for a in actions] == [("CFC", "RENAME", "SBIC")]
    # the new symbol in the ratio, without the column: said what to write instead
    path.write_text(f"symbol,ex_date,kind,ratio\nCFC,{EX},rename,SBIC\n")
    assert read_actions(path) == (
        [],
        [
            f"{path}:2: a rename needs a new_symbol column (symbol,ex_date,kind,ratio[,price,new_symbol,note]); "
            "ratio 'SBIC' is not read for a rename"
        ],
    )


def test_a_rename_row_with_a_ratio_or_a_price_is_a_bad_row_and_joins_nothing(tmp_path: Path, settings) -> None:
    """A rename row carrying a ratio (a split written on it) or a price was applied as a
    plain rename, the cell dropped without a word. Such a row is a bad row saying what to
    fix, as a split with a price is, and the import is refused: nothing joined or stored."""
    from ingest.importers import import_path
    from store import tables
    from store.engine import service_engine
    from store.history import current_rows

    folder = write_market(tmp_path / "market", f"CFC,{EX},rename,2 for 1,,SBIC,\nAAA,{EX},rename,,7.5,AAB,\n")
    actions = folder / "corporate_actions.csv"
    engine = service_engine(settings)
    with pytest.raises(InvalidInputError) as refused:
        import_path(engine, folder)
    said = str(refused.value)
    assert (
        f"{actions}:2: ratio '2 for 1' on a rename: a rename has no ratio (a capital change on its ex-date "
        "is a row of its own, kind split, bonus or consolidation); leave the ratio blank" in said
    )
    assert (
        f"{actions}:3: price '7.5' on a rename: a rename has no price (the shares carry on under the new "
        "symbol; a value paid per share is a delisting, kind delisting); leave the price blank" in said
    )
    with engine.connect() as conn:
        assert current_rows(conn, tables.eod_prices) == current_rows(conn, tables.corporate_actions) == []


def test_a_ticker_change_without_a_rename_row_is_reported(tmp_path: Path, quality: ModuleType) -> None:
    """An adversarial run: CFC's rows ending the session before SBIC's begin, at the same
    price, without a rename row, passed unsaid: two names, CFC one that stops (a held
    position delisted, worth nothing) and SBIC a listing without history. The report says
    which rename row would join them; with the row, nothing is said."""
    folder = write_market(tmp_path / "market", "", bonus=False)
    _, report = quality.load_market(folder, nse=False)
    (handover,) = report.handovers
    assert (handover.old, handover.new, handover.last_day, handover.first_day) == ("CFC", "SBIC", DAYS[19], EX)
    assert handover.line() in report.lines() and handover.line().startswith("probable rename (not joined): CFC's")
    assert f"a rename row (CFC,{EX.isoformat()},rename,,,SBIC) joins them" in handover.line()
    joined = write_market(tmp_path / "joined", RENAME, bonus=False)
    assert quality.load_market(joined, nse=False)[1].handovers == ()


def test_a_vendors_new_spelling_of_a_code_is_reported_and_its_case_and_spaces_are_not_a_name(
    tmp_path: Path, settings
) -> None:
    """Files per half-year as a vendor ships them: SCOM, then "scom " (one name: a code is
    read upper-cased and stripped), then SCOM.NR, a new spelling the importer reports as a
    probable rename; a new listing at a price unlike any name that stopped is not one."""
    from tests.pipeline.test_cli import cli

    folder = tmp_path / "market"
    folder.mkdir()
    halves = {"2026a": DAYS[:10], "2026b": DAYS[10:20], "2026c": DAYS[20:]}
    spelling = {"2026a": "SCOM", "2026b": "scom ", "2026c": "SCOM.NR"}
    for half, days in halves.items():
        rows = [f"{spelling[half]},{d.isoformat()},{20 + i * 0.05:.2f},1000" for i, d in enumerate(days)]
        rows += [f"AAA,{d.isoformat()},10.00,1000" for d in days]
        rows += [f"NEWCO,{d.isoformat()},95.00,1000" for d in days if half == "2026c"]
        (folder / f"prices_{half}.csv").write_text("symbol,date,close,volume\n" + "\n".join(rows) + "\n")
    result = cli("import", str(folder))
    assert result.returncode == 0, result.stderr
    assert "3 files, 100 rows read, 100 inserted, 0 changed, 4 instruments" in result.stdout
    probable = [line for line in result.stdout.splitlines() if line.startswith("probable rename")]
    from ingest.replay import ReplayMarket

    assert [line for line in ReplayMarket(folder).source.capital_changes if "probable" in line] == probable
    assert probable == [
        f"probable rename (not joined): SCOM's rows end on {DAYS[19].isoformat()} (20.45) and SCOM.NR's begin on "
        f"the next session, {EX.isoformat()} (20): the same company? Read apart, SCOM is a name that stops (a held "
        f"position is delisted); a rename row (SCOM,{EX.isoformat()},rename,,,SCOM.NR) joins them"
    ]


DELISTED = DAYS[15]  # a delisting row of the company, before its rename


@pytest.mark.parametrize(
    ("rows", "repeat", "delisted"),
    [
        (f"CFC,{BONUS},split,2 for 1,,,\nSBIC,{BONUS},split,2 for 1,,,\n", f"CFC {BONUS} split 2 for 1", []),
        (
            f"{CFC_BONUS}CFC,{DELISTED},delisting,,30,,\nSBIC,{DELISTED},delisting,,30.00,,\n",
            f"CFC {DELISTED} delisting at 30",
            [("SBIC", "DELISTING", DELISTED, 30.0)],
        ),
    ],
    ids=["a split", "a delisting"],
)
def test_an_action_listed_under_both_symbols_of_a_rename_counts_once(
    tmp_path: Path, settings, rows: str, repeat: str, delisted: list[tuple]
) -> None:
    """A file that lists an action under the old symbol and again under the new one (a
    vendor's file per ticker pasted together) states one action of the joined series: the
    split was applied twice (a 2-for-1 stored as a SPLIT of 4.0, CFC's history divided by
    4) and the delisting stored twice (the import failed on the store's key). Counted once
    and reported: the repeat is found after the rename puts both rows under SBIC."""
    from ingest.importers import import_path
    from store import tables
    from store.engine import service_engine
    from store.history import current_rows
    from store.panels import price_panel

    folder = write_market(tmp_path / "market", RENAME + rows)
    engine = service_engine(settings)
    report = import_path(engine, folder)
    with engine.connect() as conn:
        actions = current_rows(conn, tables.corporate_actions)
        panel = price_panel(conn, DAYS[-1])
    stored = sorted((a["symbol"], a["kind"], a["action_date"], a["amount"]) for a in actions)
    assert stored == sorted([("SBIC", "SPLIT", BONUS, 2.0), *delisted])
    np.testing.assert_allclose(series(panel, "SBIC").to_numpy()[:10], true_closes()["SBIC"][:10], rtol=1e-6)
    file = folder / "corporate_actions.csv"
    line = 4 if delisted else 3  # the rename is line 2
    assert (
        f"repeated row: {file}:{line + 1} repeats {file}:{line} ({repeat}, on SBIC's series): counted once"
        in report.capital_changes
    )
    from ingest.replay import ReplayMarket

    replayed = ReplayMarket(folder).source.capital_changes  # the replay's rule is the importer's
    assert [c for c in report.capital_changes if c.startswith("repeated row")] == [
        c for c in replayed if c.startswith("repeated row")
    ]
    assert f"SBIC {BONUS} x2: served as a SPLIT notice on {BONUS}" in replayed


@pytest.mark.parametrize(
    ("rows", "first", "second"),
    [
        (f"CFC,{BONUS},split,2 for 1,,,\nSBIC,{BONUS},split,3 for 1,,,\n", "split 2 for 1", "split 3 for 1"),
        (f"CFC,{DELISTED},delisting,,30,,\nSBIC,{DELISTED},delisting,,31,,\n", "delisting at 30", "delisting at 31"),
    ],
    ids=["two splits", "two delistings"],
)
def test_an_action_under_both_symbols_of_a_rename_that_disagrees_is_refused(
    tmp_path: Path, settings, rows: str, first: str, second: str
) -> None:
    """Two rows that state one action of the joined series differently: nothing in the file
    says which is right, so the import is refused before a row is written, in one line
    naming both rows (the delistings were stored until the store's key refused the second,
    in Python's words)."""
    from ingest.importers import import_path
    from market.errors import InvalidInputError
    from store import tables
    from store.engine import service_engine
    from store.history import row_counts

    folder = write_market(tmp_path / "market", RENAME + rows)
    engine = service_engine(settings)
    with pytest.raises(InvalidInputError) as refused:
        import_path(engine, folder)
    file = folder / "corporate_actions.csv"
    day = BONUS if first.startswith("split") else DELISTED
    assert str(refused.value) == (
        "two corporate actions of one kind for one symbol and ex-date that disagree: "
        f"{file}:3 (CFC {day} {first}, on SBIC's series) and {file}:4 (SBIC {day} {second}): keep the row that "
        "is right (one row per symbol, ex-date and kind); nothing was imported"
    )
    with engine.connect() as conn:
        assert row_counts(conn, [tables.eod_prices, tables.instruments, tables.corporate_actions]) == {
            "eod_prices": 0,
            "instruments": 0,
            "corporate_actions": 0,
        }
