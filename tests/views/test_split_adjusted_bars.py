"""A split read as a new share count, not a loss, in everything the market endpoints serve:
the stored daily bars (REST history, GraphQL `recentBars`), their per-request twin, the
latest day's change and RSI, breadth and a symbol's statistics read each bar's returns and
indicators with the bars before it on its own day's share count (the splits with an
ex-date on or before the day, store.splits.on_count), while the prices stay as traded. A
split recorded after the bars were built is built into them by the next refresh, which a
stage or an import that stores one runs (SQLite and Postgres)."""

from __future__ import annotations

import math
from datetime import date
from pathlib import Path

import pandas as pd
import pytest
from sqlalchemy import Engine

from desk import versions
from market.contract import conform
from market.settings import Settings
from pipeline import registry
from pipeline.runner import run_stage
from pipeline.stage import Stage, StageContext, StageOutcome
from store import tables
from store.engine import service_engine
from store.history import append_history, current_rows
from store.splits import Split, on_count
from tests.conftest import ON_SQLITE_ONLY
from tests.pipeline.test_cli import cli
from tests.portfolio.clients import announce_action
from tests.portfolio.seed import CALENDAR, DAY, days_up_to, price_row
from views import bars as bar_views
from views import market as market_views
from views.breadth import breadth_of, market_breadth

DAYS = days_up_to(DAY, 40)
EX = DAYS[-3]  # the ex-date: two sessions follow it
BEFORE = DAYS[-4]  # the last session on the old count
INDICATORS = list(market_views.INDICATORS)


def _close(symbol: str, i: int) -> float:
    """BIG: flat at 100, then 50 from EX (a 2-for-1 split, nothing else); BONUS: moving, its
    closes from EX on divided by 1.2 (one new share for every five held); MOVE: moving."""
    day = DAYS[i]
    if symbol == "BIG":
        return 100.0 if day < EX else 50.0
    close = round(40 * (1 + 0.04 * math.sin(i / 2 + len(symbol))), 2)
    return round(close / 1.2, 2) if symbol == "BONUS" and day >= EX else close


def _volume(symbol: str, i: int) -> int:
    factor = {"BIG": 2.0, "BONUS": 1.2}.get(symbol, 1.0) if DAYS[i] >= EX else 1.0
    return int((10_000 + 100 * (i % 3 if symbol != "BIG" else 0)) * factor)


def _store(engine: Engine) -> None:
    """Three names' 40 sessions to DAY, their bars built, no split recorded yet."""
    symbols = ("BIG", "BONUS", "MOVE")
    with engine.begin() as conn:
        append_history(
            conn,
            tables.instruments,
            [{"symbol": s, "name": f"{s} Ltd", "board": "MAIN", "currency": "JMD", "source": "test"} for s in symbols],
        )
        rows = []
        for s in symbols:
            for i, d in enumerate(DAYS):
                close = _close(s, i)
                rows.append(price_row(s, d, close, _volume(s, i), round(close - 0.05, 2), round(close + 0.05, 2)))
        append_history(conn, tables.eod_prices, rows)
        bar_views.refresh_bars(conn)


def _split(engine: Engine, symbol: str, factor: float) -> None:
    announce_action(engine, symbol, "SPLIT", factor, EX, f"{symbol} {factor} for 1")


def _stored(engine: Engine, symbol: str) -> dict[date, dict]:
    """The current stored bar rows of `symbol` by date (id and recorded_at included)."""
    with engine.connect() as conn:
        rows = current_rows(conn, tables.daily_bars, where=[tables.daily_bars.c.symbol == symbol])
    return {r["trading_date"]: r for r in rows}


def _page(engine: Engine, symbol: str) -> dict[date, dict]:
    with engine.connect() as conn:
        items = bar_views.history(conn, symbol, bar_views.BarPage(100))["items"]
    return {b["trading_date"]: b for b in items}


@pytest.fixture
def engine(settings: Settings) -> Engine:
    engine = service_engine(settings)
    _store(engine)
    return engine


def test_a_split_recorded_after_the_bars_were_built_reads_as_no_move_from_the_next_refresh(engine: Engine) -> None:
    built = _stored(engine, "BIG")
    assert built[EX]["momentum_5"] == pytest.approx(-0.5)  # what the bars read with no split recorded
    _split(engine, "BIG", 2.0)
    with engine.connect() as conn:
        assert not bar_views.is_current(bar_views.watermarks(conn))  # the stored bars are not the split's
    read_before_refresh = _page(engine, "BIG")  # built in memory for the read, with the split
    with engine.begin() as conn:
        assert bar_views.refresh_bars(conn) == 3  # BIG's bars from the ex-date on, no other
        assert bar_views.is_current(bar_views.watermarks(conn))
        assert bar_views.refresh_bars(conn) == 0
    stored, page = _stored(engine, "BIG"), _page(engine, "BIG")
    assert page == read_before_refresh
    ex = page[EX]
    assert (ex["close"], ex["open"], ex["volume"]) == (50.0, 50.0, 20_000)  # the prices as traded
    assert ex["momentum_5"] == 0.0 and ex["momentum_20"] == 0.0 and ex["volatility_20"] == 0.0
    assert ex["rsi_14"] == page[BEFORE]["rsi_14"] == 50.0  # a flat price: no gain, no loss
    assert ex["volume_ratio_20"] == 1.0  # the volume on the new count is the usual one
    # the day before the split reads what it read before the split was recorded, bit for bit
    assert all(stored[d] == built[d] for d in DAYS if d < EX)
    assert all(stored[d]["id"] != built[d]["id"] for d in DAYS if d >= EX)
    # the notice written again with the same factor (only its text changed) changes no bar: the
    # stored bars stay current (a review found every read then built the bars in memory for good)
    announce_action(engine, "BIG", "SPLIT", 2.0, EX, "BIG: 2:1 split, as the exchange wrote it again")
    with engine.begin() as conn:
        assert bar_views.is_current(bar_views.watermarks(conn)) and bar_views.refresh_bars(conn) == 0
    announce_action(engine, "BIG", "SPLIT", 4.0, EX, "BIG: corrected, 4 for 1")  # a new factor: rebuilt
    with engine.begin() as conn:
        assert not bar_views.is_current(bar_views.watermarks(conn)) and bar_views.refresh_bars(conn) == 3
        assert bar_views.is_current(bar_views.watermarks(conn))


def test_the_stored_bars_and_the_per_request_computation_agree_across_splits(engine: Engine) -> None:
    built = _stored(engine, "BONUS")
    _split(engine, "BIG", 2.0)
    _split(engine, "BONUS", 1.2)
    with engine.begin() as conn:
        assert bar_views.refresh_bars(conn) == 6  # the two names' bars from the ex-date on
    # a bar before the ex-date reads no bar on the new count (point in time): as it was,
    # stored, and built afresh with the split known, to the last bit
    stored_bonus = _stored(engine, "BONUS")
    assert all(stored_bonus[d] == built[d] for d in DAYS if d < EX)
    with engine.connect() as conn:
        rebuilt = {r["trading_date"]: r for r in bar_views.built_rows(conn, ["BONUS"])}
    assert all(rebuilt[d][name] == built[d][name] for d in DAYS if d < EX for name in INDICATORS)
    with engine.connect() as conn:
        symbols = ["BIG", "BONUS", "MOVE"]
        assert bar_views.recent_histories(conn, symbols, 20) == market_views.recent_histories(conn, symbols, 20)
        assert bar_views.histories(conn, symbols, None, None, 50) == market_views.histories(
            conn, symbols, None, None, 50
        )
        stored = bar_views.symbol_statistics(conn, "BIG")
        assert stored == market_views.symbol_statistics(conn, "BIG")
    # BIG's returns on one share count are all 0: no variance, no return, the volume the usual one
    assert stored["variance"]["20d"]["variance"] == 0.0
    assert stored["normalised"]["return_1d"]["value"] == 0.0
    assert (stored["normalised"]["volume"]["mean"], stored["normalised"]["volume"]["std"]) == (20_000.0, 0.0)
    # BONUS's ex-date reads its move net of the split: 1.2 times the close over the close before
    bonus = _page(engine, "BONUS")
    true_moves = [_close("BONUS", DAYS.index(EX)) * 1.2, *(_close("BONUS", DAYS.index(EX) - k) for k in (1, 5))]
    assert bonus[EX]["momentum_5"] == pytest.approx(true_moves[0] / true_moves[2] - 1, abs=1e-5)
    assert bonus[EX]["close"] == _close("BONUS", DAYS.index(EX))


def test_the_latest_day_and_breadth_read_a_split_day_net_of_the_split(engine: Engine) -> None:
    with engine.connect() as conn:
        unsplit = market_views.latest_market(conn, CALENDAR, DAY, EX)
        unsplit_before = market_views.latest_market(conn, CALENDAR, DAY, BEFORE)
        version = (versions.latest_market(conn), versions.breadth(conn), versions.bars(conn))
    assert unsplit["BIG"]["change_pct"] == -50.0  # what it read with no split recorded
    _split(engine, "BIG", 2.0)
    _split(engine, "BONUS", 1.2)
    with engine.connect() as conn:
        # an answer kept per version is not served past the split: each version moves
        moved = (versions.latest_market(conn), versions.breadth(conn), versions.bars(conn))
        assert all(old != new for old, new in zip(version, moved))
        quotes = market_views.latest_market(conn, CALENDAR, DAY, EX)
        breadth = market_breadth(conn, CALENDAR, DAY, EX)
        before = market_views.latest_market(conn, CALENDAR, DAY, BEFORE)
        bars = {s: bar_views.history(conn, s, bar_views.BarPage(1, end=EX))["items"][0] for s in quotes}
    big, bonus = quotes["BIG"], quotes["BONUS"]
    assert (big["close"], big["volume"], big["change_pct"]) == (50.0, 20_000, 0.0)  # as traded; no move
    i = DAYS.index(EX)
    true_move = (_close("BONUS", i) * 1.2 / _close("BONUS", i - 1) - 1) * 100
    assert bonus["close"] == _close("BONUS", i) and bonus["change_pct"] == pytest.approx(true_move, abs=1e-3)
    assert all(quotes[s]["rsi_14"] == round(bars[s]["rsi_14"], 4) for s in quotes)  # as the stored bar reads it
    # breadth counts BIG as unchanged, not as a decliner, and the index reads no fall from it
    others = [quotes[s]["change_pct"] for s in ("BONUS", "MOVE")]
    assert breadth["unchanged"] == 1 + sum(c == 0 for c in others)
    assert breadth["decliners"] == sum(c < 0 for c in others) and breadth["advancers"] == sum(c > 0 for c in others)
    assert before == unsplit_before  # the day before the ex-date reads as it did


def test_a_stage_that_stores_only_a_split_notice_refreshes_the_bars(
    engine: Engine, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    def notices(ctx: StageContext) -> StageOutcome:
        with ctx.transaction() as conn:
            row = {"symbol": "BIG", "action_date": EX, "kind": "SPLIT", "amount": 2.0, "detail": {}, "source": "t"}
            append_history(conn, tables.corporate_actions, [row])
        return StageOutcome()

    monkeypatch.setattr(registry, "STAGES", {**registry.STAGES, "notices": Stage("notices", notices, "notices")})
    run_stage("notices", DAY, settings=settings)
    with engine.connect() as conn:
        assert bar_views.is_current(bar_views.watermarks(conn))  # built by the stage, not by a read
    assert _stored(engine, "BIG")[EX]["momentum_5"] == 0.0


@ON_SQLITE_ONLY
def test_an_import_that_stores_only_a_split_refreshes_the_bars(settings: Settings, tmp_path: Path) -> None:
    """The reviewer's path: prices imported, then the corporate-actions file beside them
    imported (no new price): the import's refresh builds the split into the bars."""
    lines = ["symbol,date,close,volume,high,low"]
    lines += [f"BIG,{d.isoformat()},{_close('BIG', i)},{_volume('BIG', i)},," for i, d in enumerate(DAYS)]
    (tmp_path / "prices.csv").write_text("\n".join(lines) + "\n")
    assert cli("import", str(tmp_path), "--currency", "JMD").returncode == 0
    engine = service_engine(settings)
    assert _stored(engine, "BIG")[EX]["momentum_5"] == pytest.approx(-0.5)
    (tmp_path / "corporate_actions.csv").write_text(f"symbol,ex_date,kind,ratio\nBIG,{EX.isoformat()},split,2:1\n")
    again = cli("import", str(tmp_path), "--currency", "JMD")
    assert again.returncode == 0 and "1 corporate actions stored" in again.stdout, again.stdout + again.stderr
    with engine.connect() as conn:
        assert bar_views.is_current(bar_views.watermarks(conn))  # built by the import, not by a read
    assert _stored(engine, "BIG")[EX]["momentum_5"] == 0.0


def test_each_bar_reads_the_bars_before_it_on_its_own_share_count() -> None:
    """`with_indicators` of several names, one with two splits, equals each bar computed on
    its own: the bars up to it put on its day's count (`on_count` through its date) and
    nothing after it."""
    rows = []
    for s, splits_at in (("TWO", {12: 2.0, 30: 0.5}), ("ONE", {20: 1.2}), ("NONE", {})):
        factor = 1.0
        for i, d in enumerate(DAYS):
            factor *= splits_at.get(i, 1.0)
            close = round(_close("MOVE", i) / factor, 2)
            rows.append(price_row(s, d, close, int(1000 * factor), round(close - 0.05, 2), round(close + 0.05, 2)))
    bars = pd.DataFrame(rows)[["symbol", *market_views.PRICE_COLUMNS]]
    splits = [Split("TWO", DAYS[12], 2.0), Split("TWO", DAYS[30], 0.5), Split("ONE", DAYS[20], 1.2)]
    enriched = market_views.with_indicators(bars, splits)
    for position, bar in enumerate(bars.itertuples(index=False)):
        upto = bars.iloc[: position + 1]
        upto = upto[upto["symbol"] == bar.symbol]
        alone = market_views.with_indicators(on_count(upto, splits, bar.trading_date)).iloc[-1]
        for name in INDICATORS:
            got, expected = enriched[name].iloc[position], alone[name]
            assert (pd.isna(got) and pd.isna(expected)) or got == pytest.approx(expected, rel=1e-12, abs=1e-12), (
                bar.symbol,
                bar.trading_date,
                name,
            )
    ex = enriched[(enriched["symbol"] == "TWO") & (enriched["trading_date"] == DAYS[30])].iloc[0]
    assert ex["momentum_5"] == pytest.approx(_close("MOVE", 30) / _close("MOVE", 25) - 1, abs=1e-3)  # no 2x jump


def test_breadth_counts_a_change_as_it_is_served(engine: Engine) -> None:
    """A close of 333.33 against a split-adjusted 333.333333 (1,000 before a 3-for-1 split)
    moved -0.001%: served as 0.00 (`change_pct` has two places), so breadth counts it
    unchanged, not as a decliner (it counted the unrounded change)."""
    with engine.connect() as conn:
        quotes = market_views.latest_market(conn, CALENDAR, DAY, EX)
        tiny = {**quotes["MOVE"], "change_pct": (333.33 / (1000 / 3) - 1) * 100}
        shown = conform({"change_pct": tiny["change_pct"]})
        breadth = breadth_of(conn, {"MOVE": tiny})
    assert shown == {"change_pct": 0.0}
    assert (breadth["advancers"], breadth["decliners"], breadth["unchanged"]) == (0, 0, 1)


def test_the_index_reads_a_name_untraded_since_a_split_on_the_days_count(engine: Engine) -> None:
    """STALE's last bar is before a 2-for-1 split's ex-date (a suspended name the files
    leave out): its quote is the day's no-trade row, its last close on the day's count
    (half of it, as the exchange's reference price), and its shares outstanding are on the
    day's count too, so the index's capitalisation is unchanged by the split, not the old
    close on the doubled shares."""
    with engine.begin() as conn:
        row = {"symbol": "STALE", "name": "STALE Ltd", "board": "MAIN", "currency": "JMD", "source": "test"}
        append_history(conn, tables.instruments, [row])
        stale = [price_row("STALE", d, 40.0, 1_000, 39.95, 40.05) for d in DAYS if d <= BEFORE]
        append_history(conn, tables.eod_prices, stale)
        shares = {"symbol": "STALE", "report_date": DAYS[0], "period_end": DAYS[0], "source": "test"}
        append_history(conn, tables.fundamentals, [{**shares, "shares_outstanding": 1_000_000}])
    _split(engine, "STALE", 2.0)
    with engine.connect() as conn:
        quotes = market_views.latest_market(conn, CALENDAR, DAY)
        breadth = market_breadth(conn, CALENDAR, DAY)
    assert (quotes["STALE"]["close"], quotes["STALE"]["trading_date"], quotes["STALE"]["volume"]) == (20.0, DAY, 0)
    assert breadth["index_constituents"] == 1 and breadth["index_market_cap"] == 40.0 * 1_000_000
    assert breadth["index_change_pct"] == 0.0
