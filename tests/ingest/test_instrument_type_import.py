"""Ordinary shares only (issue 55): instrument types through the readers, the importer,
the replay, the research loaders and the equal-weighted liquid benchmark."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from datetime import date, timedelta
from pathlib import Path
from types import ModuleType

import pandas as pd
import pytest

from ingest.importers import import_path
from ingest.importers.formats import (
    Bad,
    nse_daily_frame,
    read_nse_company,
    read_nse_daily,
    read_ohlcv,
    row_instrument_type,
)
from ingest.replay import ReplayMarket
from market.instruments import InstrumentType
from market.settings import Settings
from portfolio.track_record import equal_weight_liquid
from store import tables
from store.engine import service_engine
from store.history import current_rows
from store.instruments import ordinary_symbols
from tests.benchmark_modules import benchmark_module

NSE_HEADER = (
    "Code;Name;Lowest Price of the Day;Highest Price of the Day;Closing Price;Previous Day Closing Price;Volume Traded"
)
DAYS = [
    date(2026, 1, 26) + timedelta(days=i) for i in range(12) if (date(2026, 1, 26) + timedelta(days=i)).weekday() < 5
]
# symbol, stated type, close on the first day, daily growth: the preference share and the
# fund soar, the ordinary shares move slowly, so the benchmark shows which it holds
NAMES = [
    ("ACME", "ordinary", 10.0, 0.01),
    ("BETA", "", 20.0, 0.00),  # blank: not stated, inferred ORDINARY
    ("PREFA", "Preference", 5.0, 0.50),
    ("GOLDX", "ETF", 8.0, 0.40),
    ("KPLC-P4", "", 2.0, 0.30),  # blank: the inference's -P<n> suffix
]


def _typed_ohlcv(tmp_path: Path, *, typed: bool = True) -> Path:
    path = tmp_path / ("typed.csv" if typed else "untyped.csv")
    lines = ["symbol,date,close,volume,bid,ask,name" + (",instrument_type" if typed else "")]
    for i, day in enumerate(DAYS):
        for symbol, kind, close, growth in NAMES:
            price = round(close * (1 + growth) ** i, 4)
            row = f"{symbol},{day.isoformat()},{price},50000,{price * 0.995:.4f},{price * 1.005:.4f},{symbol} Ltd"
            lines.append(row + (f",{kind}" if typed else ""))
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture(scope="module")
def quality() -> Iterator[ModuleType]:
    with benchmark_module("model_quality") as module:
        yield module


def test_a_type_column_is_read_and_wins_over_the_inference(tmp_path: Path) -> None:
    rows = [r for r in read_ohlcv(_typed_ohlcv(tmp_path)) if not isinstance(r, Bad)]
    first = {r["symbol"]: r for r in rows if r["trading_date"] == DAYS[0]}
    assert first["PREFA"]["instrument_type"] == InstrumentType.PREFERENCE
    assert first["GOLDX"]["instrument_type"] == InstrumentType.FUND
    assert "instrument_type" not in first["BETA"]  # a blank cell states nothing
    kinds = {s: row_instrument_type(r) for s, r in first.items()}
    assert kinds == {
        "ACME": "ORDINARY",
        "BETA": "ORDINARY",
        "PREFA": "PREFERENCE",
        "GOLDX": "FUND",
        "KPLC-P4": "PREFERENCE",
    }


def test_the_importer_stores_the_types_and_the_reader_leaves_non_ordinary_out(
    settings: Settings, tmp_path: Path
) -> None:
    engine = service_engine(settings)
    report = import_path(engine, _typed_ohlcv(tmp_path))
    assert report.not_ordinary == {"GOLDX": "FUND", "KPLC-P4": "PREFERENCE", "PREFA": "PREFERENCE"}
    assert report.types.startswith("instrument_type column")
    with engine.connect() as conn:
        stored = {r["symbol"]: r["instrument_type"] for r in current_rows(conn, tables.instruments)}
        assert stored == {
            "ACME": "ORDINARY",
            "BETA": "ORDINARY",
            "GOLDX": "FUND",
            "KPLC-P4": "PREFERENCE",
            "PREFA": "PREFERENCE",
        }
        assert ordinary_symbols(conn, DAYS[-1]) == {"ACME", "BETA"}
    assert import_path(engine, _typed_ohlcv(tmp_path)).instruments_inserted == 0  # re-import: nothing new


def test_the_import_command_names_the_types_and_every_name_left_out_of_the_book(
    settings: Settings, tmp_path: Path
) -> None:
    """The report's types and non-ordinary names were never printed: a type cell the
    importer could not read (UNKNOWN) kept a name out of the AI book without a word."""
    from tests.pipeline.test_cli import cli

    path = _typed_ohlcv(tmp_path)
    path.write_text(path.read_text().replace(",ordinary\n", ",EQ\n"))  # ACME's cells: a code the vocabulary lacks
    result = cli("import", str(path))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert "instrument types: instrument_type column; blank cells inferred from code and name" in result.stdout
    assert (
        "not ordinary shares (outside the AI book and the equal-weighted benchmark): "
        "ACME UNKNOWN, GOLDX FUND, KPLC-P4 PREFERENCE, PREFA PREFERENCE"
    ) in lines


def test_the_benchmark_leaves_out_the_typed_non_equities(tmp_path: Path, quality) -> None:
    prices = quality.load_ohlcv(_typed_ohlcv(tmp_path))
    assert prices["ordinary"].dtype == bool
    assert set(prices.loc[~prices["ordinary"], "symbol"]) == {"PREFA", "GOLDX", "KPLC-P4"}
    frame = prices.assign(adv_20=50_000.0)
    ew = equal_weight_liquid(frame)
    ordinary_only = equal_weight_liquid(frame[frame["ordinary"]].drop(columns="ordinary"))
    everything = equal_weight_liquid(frame.drop(columns="ordinary"))
    pd.testing.assert_series_equal(ew, ordinary_only)
    assert ew.abs().max() < 0.02 < everything.abs().max()  # the soaring non-equities are not in it


def test_a_file_without_a_type_column_says_so_once(tmp_path: Path, caplog: pytest.LogCaptureFixture, quality) -> None:
    path = _typed_ohlcv(tmp_path, typed=False)
    with caplog.at_level(logging.INFO, logger="ingest.replay"):
        replay = ReplayMarket(path)
        for day in replay.days:
            replay.day(day)
    notices = [r for r in caplog.records if "no instrument_type column" in r.getMessage()]
    assert len(notices) == 1, [r.getMessage() for r in caplog.records]
    assert replay.source.types.startswith("no instrument_type column")
    # names are ordinary shares unless the market's inference says otherwise
    assert replay.not_ordinary == {"KPLC-P4": "PREFERENCE"}
    securities = {s["symbol"]: s["instrument_type"] for s in replay.day(replay.days[-1]).securities}
    assert securities["PREFA"] == "ORDINARY" and securities["KPLC-P4"] == "PREFERENCE"
    assert set(quality.load_ohlcv(path).query("not ordinary")["symbol"]) == {"KPLC-P4"}

    caplog.clear()
    with caplog.at_level(logging.INFO, logger="ingest.replay"):
        typed = ReplayMarket(_typed_ohlcv(tmp_path))
    assert not [r for r in caplog.records if "instrument_type" in r.getMessage()]
    assert typed.not_ordinary == {"PREFA": "PREFERENCE", "GOLDX": "FUND", "KPLC-P4": "PREFERENCE"}


def test_nse_style_files_mark_kplc_p4_a_preference_share(settings: Settings, tmp_path: Path, quality) -> None:
    daily = tmp_path / "daily" / "2022" / "04"
    daily.mkdir(parents=True)
    for day, scom, pref in (("20220427", "24.3", "5.5"), ("20220428", "24.2", "5.6")):
        (daily / f"{day}.csv").write_text(
            "\r\n".join(
                [
                    NSE_HEADER,
                    f"SCOM;Safaricom Plc;24.0;24.5;{scom};24.1;1,200,300",
                    f"KPLC-P4;KPLC-P4;5.5;5.6;{pref};5.5;100",
                    "GLD;ABSA NewGold ETF;2400;2450;2425;2410;30",
                    "^NASI;NSE All-Share Index;150;152;151;150;-",
                ]
            )
            + "\r\n"
        )
    rows = [r for f in sorted(daily.glob("*.csv")) for r in read_nse_daily(f) if not isinstance(r, Bad)]
    assert {r["symbol"]: row_instrument_type(r) for r in rows} == {
        "SCOM": "ORDINARY",
        "KPLC-P4": "PREFERENCE",
        "GLD": "FUND",
        "^NASI": "INDEX",
    }
    company = tmp_path / "KPLC-P4.csv"
    company.write_text("Date;Lowest;Highest;Close;Previous;Volume\n20220427,5.5,5.6,5.5,5.5,100\n")
    assert row_instrument_type(next(read_nse_company(company))) == "PREFERENCE"

    report = import_path(service_engine(settings), tmp_path / "daily")
    assert report.not_ordinary == {"GLD": "FUND", "KPLC-P4": "PREFERENCE"}
    assert report.types.startswith("no instrument_type column")
    frame = quality.load_nse(tmp_path / "daily")
    assert dict(zip(frame["symbol"], frame["ordinary"])) == {"SCOM": True, "KPLC-P4": False, "GLD": False}
    assert ReplayMarket(tmp_path / "daily").not_ordinary == {"GLD": "FUND", "KPLC-P4": "PREFERENCE"}


def test_the_real_nse_files_hold_two_preference_shares_and_two_funds(nse_data: Path) -> None:
    frame = nse_daily_frame(nse_data / "daily", ordinary=True)
    assert sorted(frame.loc[~frame["ordinary"], "symbol"].unique()) == ["FAHR", "GLD", "KPLC-P4", "KPLC-P7"]
    assert frame["symbol"].nunique() == 67


def _untyped_market(tmp_path: Path) -> Path:
    """A smaller market's daily file as it ships: no type column, the non-ordinary lines
    under codes that say nothing, the market's index a row among the shares, no `^`."""
    lines = ["symbol,date,close,volume,name"]
    for i, day in enumerate(DAYS):
        lines += [
            f"ACME,{day},{10 + i * 0.1:.2f},5000,Acme Holdings Ltd",
            f"JMMBGL7.25,{day},{2 * 1.3**i:.4f},5000,JMMB Group 7.25% Preference",
            f"BOND24,{day},{100 + i:.2f},5000,Corporate 10% Bond 2024",
            f"XYZ-R,{day},{0.5 * 1.5**i:.4f},5000,XYZ Holdings Rights",
            f"GSE-CI,{day},{3000 + i:.2f},0,GSE Composite Index",
        ]
    path = tmp_path / "market" / "prices.csv"
    path.parent.mkdir()
    path.write_text("\n".join(lines) + "\n")
    return path


def test_a_name_marks_the_lines_an_untyped_file_mixes_in(settings: Settings, tmp_path: Path, quality) -> None:
    """An adversarial run: a file without a type column stored a preference share, a
    bond and rights as ORDINARY shares (bought by the AI book, averaged into the benchmark)
    and the market's index, written without a `^`, as a listed share that never trades.
    The names say what they are: the index is left out as a level, the rest not ordinary."""
    path = _untyped_market(tmp_path)
    engine = service_engine(settings)
    report = import_path(engine, path)
    assert report.indices == ["GSE-CI"] and report.index_levels_inserted == len(DAYS)
    assert report.not_ordinary == {"BOND24": "DEBT", "JMMBGL7.25": "PREFERENCE", "XYZ-R": "RIGHTS"}
    with engine.connect() as conn:
        stored = {r["symbol"] for r in current_rows(conn, tables.instruments)}
        assert stored == {"ACME", "BOND24", "JMMBGL7.25", "XYZ-R"}
        assert ordinary_symbols(conn, DAYS[-1]) == {"ACME"}
    prices = quality.load_ohlcv(path)
    assert dict(prices.drop_duplicates("symbol")[["symbol", "ordinary"]].values) == {
        "ACME": True,
        "JMMBGL7.25": False,
        "BOND24": False,
        "XYZ-R": False,
    }
    replay = ReplayMarket(path)
    assert replay.source.indices == {"GSE-CI"}
    assert replay.not_ordinary == {"BOND24": "DEBT", "JMMBGL7.25": "PREFERENCE", "XYZ-R": "RIGHTS"}
    with benchmark_module("backtest") as backtest:
        name, levels = backtest.index_levels(path, None, nse=False)
    assert name == "GSE-CI" and levels.iloc[-1] == 3000 + len(DAYS) - 1
