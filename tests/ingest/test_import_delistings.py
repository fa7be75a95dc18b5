"""A name whose history stops, imported: the instrument is delisted, so T1's pre-flight
and the active names stop expecting its rows (`ingest.importers.files.delisting_date`)."""

from datetime import date, timedelta
from pathlib import Path

import pytest

from ingest.importers import import_path
from ingest.importers.files import CapitalOptions
from market.errors import InvalidInputError
from market.settings import Settings
from store import tables
from store.engine import service_engine
from store.history import current_rows
from store.instruments import ordinary_symbols

SESSIONS = [d for d in (date(2025, 12, 1) + timedelta(days=i) for i in range(70)) if d.weekday() < 5][:40]


def _prices(folder: Path, last: dict[str, date]) -> Path:
    """prices.csv: each name's rows from the first session to its `last` day."""
    folder.mkdir(parents=True, exist_ok=True)
    lines = ["symbol,date,close,volume,name"]
    lines += [f"{s},{d.isoformat()},10.00,100,{s} Ltd" for s, end in last.items() for d in SESSIONS if d <= end]
    (folder / "prices.csv").write_text("\n".join(lines) + "\n")
    return folder


def _delisted(settings: Settings) -> dict[str, date | None]:
    with service_engine(settings).connect() as conn:
        return {r["symbol"]: r["delisted_on"] for r in current_rows(conn, tables.instruments)}


def test_a_delisting_row_delists_the_imported_instrument(settings: Settings, tmp_path: Path) -> None:
    """OLDCO's rows end on a Friday and the actions file delists it the Tuesday after: the
    import stored the DELISTING action but left the instrument active, so every later
    day's pre-flight wanted OLDCO's row and /api/market/latest listed it."""
    last = date(2026, 1, 9)
    folder = _prices(tmp_path / "old", {"OLDCO": last, "AAA": SESSIONS[-1]})
    (folder / "corporate_actions.csv").write_text(
        "symbol,ex_date,kind,ratio,price\nOLDCO,2026-01-13,delisting,,10.50\n"
    )
    engine = service_engine(settings)
    import_path(engine, folder)
    assert _delisted(settings) == {"OLDCO": date(2026, 1, 13), "AAA": None}
    with engine.connect() as conn:
        assert ordinary_symbols(conn, last) == {"OLDCO", "AAA"}
        assert ordinary_symbols(conn, SESSIONS[-1]) == {"AAA"}


def test_a_delisting_row_with_a_ratio_is_a_bad_row(settings: Settings, tmp_path: Path) -> None:
    """`OLDCO,2026-01-13,delisting,1 for 2,10.50` was stored as a delisting at 10.50, its
    ratio dropped without a word (a share exchange the file meant is not what a holder is
    paid). It is a bad row, as a rename with a ratio is: the import is refused, nothing of
    it stored, and the operator fixes the row (a split of its own, or the ratio blank) and
    imports again."""
    folder = _prices(tmp_path / "old", {"OLDCO": date(2026, 1, 9), "AAA": SESSIONS[-1]})
    actions = folder / "corporate_actions.csv"
    actions.write_text("symbol,ex_date,kind,ratio,price\nOLDCO,2026-01-13,delisting,1 for 2,10.50\n")
    engine = service_engine(settings)
    with pytest.raises(InvalidInputError) as refused:
        import_path(engine, folder)
    assert (
        f"{actions}:2: ratio '1 for 2' on a delisting: a delisting has no ratio (its price is the value "
        "per share holders received; a capital change on its ex-date is a row of its own, kind split, bonus or "
        "consolidation); leave the ratio blank"
    ) in str(refused.value)
    with engine.connect() as conn:
        assert current_rows(conn, tables.corporate_actions) == current_rows(conn, tables.eod_prices) == []


def test_a_name_whose_rows_stop_for_the_rules_sessions_is_delisted_after_its_last_row(
    settings: Settings, tmp_path: Path
) -> None:
    """Without a delisting row: a name whose rows stop for the delisting rule's sessions is
    delisted on the session after its last row (the replay's date); one whose gap is shorter
    (a suspension, or a file exported a day early) stays listed; a later import whose rows
    resume lists it again."""
    folder = _prices(tmp_path / "a", {"GONE": SESSIONS[30], "PAUSED": SESSIONS[-3], "AAA": SESSIONS[-1]})
    engine = service_engine(settings)
    import_path(engine, folder, capital=CapitalOptions(delist_after=5))
    assert _delisted(settings) == {"GONE": SESSIONS[31], "PAUSED": None, "AAA": None}
    back = tmp_path / "b"
    back.mkdir()
    (back / "prices.csv").write_text("symbol,date,close,volume\nGONE,2026-02-02,9.00,100\nAAA,2026-02-02,10.0,100\n")
    import_path(engine, back, capital=CapitalOptions(delist_after=5))
    assert _delisted(settings)["GONE"] is None


def test_a_delisting_whose_name_trades_on_after_its_ex_date_is_warned(settings: Settings, tmp_path: Path) -> None:
    """A review's run: the actions file delists OLDCO on 2026-01-13 at 10.50 a share, and the
    prices trade it to the end of the files (a wrong ex-date, or the wrong name's row). The
    import stored both and said nothing: OLDCO delisted from the day after its last row, the
    notice's date and price standing beside twenty sessions of trades. The report says so,
    naming the row and the rows after it; what is stored is as before."""
    folder = _prices(tmp_path / "old", {"OLDCO": SESSIONS[-1], "AAA": SESSIONS[-1]})
    (folder / "corporate_actions.csv").write_text(
        "symbol,ex_date,kind,ratio,price\nOLDCO,2026-01-13,delisting,,10.50\n"
    )
    report = import_path(service_engine(settings), folder)
    after = [d for d in SESSIONS if d >= date(2026, 1, 13)]
    assert (
        f"warning: {folder / 'corporate_actions.csv'}:2: OLDCO 2026-01-13 delisting at 10.5: OLDCO has {len(after)} "
        f"rows on or after the ex-date ({after[0].isoformat()} to {after[-1].isoformat()}): it stays listed while "
        f"it has rows and is delisted from the day after its last ({(after[-1] + timedelta(days=1)).isoformat()}); "
        "correct the ex-date, or the rows, if they are wrong"
    ) in report.capital_changes
    assert _delisted(settings) == {"OLDCO": SESSIONS[-1] + timedelta(days=1), "AAA": None}
