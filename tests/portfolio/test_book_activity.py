"""benchmarks/book_activity.py: a fill's kind read from the reason the book wrote
(portfolio/book.py), a day's figures over the names through the gates, and the backtest's
fills carrying their reason (what its NSE replay counts sells by)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

import portfolio.backtest
from tests.benchmark_modules import benchmark_module
from tests.portfolio.test_backtest import run


def test_each_reason_the_book_writes_has_its_kind() -> None:
    with benchmark_module("book_activity") as activity:
        kinds = {
            ("BUY", "fills an empty slot (3 of 15): expected excess +0.31% ..."): "fills a slot",
            ("BUY", "reserve 2: capacity holds the book's 15 names below their slots, ..."): "reserve",
            ("BUY", "tops up to its slot; its expected excess is negative (-0.20%), ..."): "top-up",
            ("BUY", "replaces KCB (expected excess -0.40%): the gap +5.10% over 5 sessions ..."): "swap: buy",
            ("SELL", "replaced"): "swap: sell",
            ("SELL", "turned AVOID: expected excess -4.00% over 5 sessions ..."): "exit: AVOID",
            ("SELL", "expected to lose 3.10% over 20 sessions (...), more than its round trip 2.90%"): (
                "exit: loses over the hold"
            ),
            ("SELL", "trimmed to its slot: 2.3 slots, past the mandate's 2"): "trim",
            ("SELL", ""): "other sell",
        }
        assert {key: activity.kind(*key) for key in kinds} == kinds


def test_a_days_figures_read_the_names_through_the_gates() -> None:
    with benchmark_module("book_activity") as activity:
        rows = [
            ("LONG", "TOP", 0.012, 0.03),
            ("HOLD", "MIDDLE", -0.002, 0.05),
            ("AVOID", "BOTTOM", -0.06, 0.04),
            ("HOLD", "ILLIQUID", -0.09, 0.02),  # fails the gates: not among them
            ("HOLD", "TOP", None, 0.02),  # no expected excess: not among them
        ]
        day = activity.day_figures(rows)
    assert day["eligible"] == 3 and day["long"] == 1 and day["avoid"] == 1
    assert day["best"] == 0.012 and day["worst"] == -0.06 and day["gap"] == pytest.approx(0.072)
    assert day["round_trip"] == 0.04 and day["cheapest_round_trip"] == 0.03


def test_the_backtests_fills_carry_the_books_reason() -> None:
    trades = run().trades
    assert trades["reason"].str.len().gt(0).all()
    with benchmark_module("book_activity") as activity:
        kinds = {activity.kind(side, reason) for side, reason in zip(trades["side"], trades["reason"], strict=True)}
    assert "fills a slot" in kinds and not any(k.startswith("other") for k in kinds), kinds


def test_the_book_is_replayed_on_another_markets_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    """`--files FROM TO` with backtest.py's market options replays `Mandate()` on a market's
    generic OHLCV files, read and reported by backtest.py's loader (its capital changes, the
    fee schedule it charges): the script read the NSE files only, and `--ohlcv` was an
    unrecognised argument."""
    from tests.portfolio.test_backtest_market_files import DAYS, planted_files, planted_walk_forward

    monkeypatch.setattr(portfolio.backtest, "out_of_sample_predictions", planted_walk_forward)
    folder = planted_files(tmp_path / "market")
    span = [str(DAYS[30]), str(DAYS[-1])]
    monkeypatch.setattr(sys, "argv", ["book_activity.py", "--files", *span, "--ohlcv", str(folder), "--fees", "nse"])
    with benchmark_module("book_activity") as activity:
        activity.main()
    out = capsys.readouterr().out
    last = json.loads(out.strip().splitlines()[-1])
    assert last["days"] == 100 and sum(last["fills"].values()) > 0
    assert set(last["clustering"]) == {"files", "simulator"}
    assert "corporate actions: " in out and "1 splits applied" in out  # BIG's bonus issue, beside the prices
    assert "fees: the nse schedule" in out
