"""`benchmarks/backtest.py --ohlcv` on a market's files as they come (issue 66): it prints the
capital-change report of the files it read (a bonus issue its corporate-actions row
explains, a move beyond the stated limit none does) and, for each run, the delisted
positions, their position-days and their value under each reading, with each delisting's
dates; a fee file is the schedule every run charges. The walk-forward is replaced by a
planted signal (as tests/portfolio/test_backtest_cache.py replaces it): the rest is the
benchmark's own code."""

from __future__ import annotations

import json
import sys
from datetime import date, timedelta
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import portfolio.backtest
from tests.benchmark_modules import benchmark_module

DAYS = [d for d in (date(2025, 1, 6) + timedelta(days=i) for i in range(200)) if d.weekday() < 5][:130]
GONE_AFTER = 80  # GONE's rows end after its 80th day: 50 sessions before the end, fewer than the default 60
BONUS = DAYS[50]  # BIG's bonus issue, 1 for 1: the file's closes halve from here
JUMP = DAYS[90]  # ODD's close triples, beyond the 10% limit, and no action explains it


def planted_files(folder: Path, renamed: bool = False) -> Path:
    """The six names' files; with `renamed`, GONE's company trades on as NEW from its
    GONE_AFTER-th day, and the corporate-actions file says so."""
    rng = np.random.default_rng(3)
    lines = ["symbol,date,close,volume,high,low"]
    for k, symbol in enumerate(("GONE", "BIG", "ODD", "AAA", "BBB", "CCC")):
        close = 20.0 + 5 * k
        for i, day in enumerate(DAYS):
            if symbol == "GONE" and i >= GONE_AFTER and not renamed:
                break
            close *= 1 + rng.normal(0.0005, 0.01)
            shown = close / 2 if symbol == "BIG" and day >= BONUS else close
            shown = shown * 3 if symbol == "ODD" and day >= JUMP else shown
            named = "NEW" if symbol == "GONE" and i >= GONE_AFTER else symbol
            lines.append(f"{named},{day},{shown:.4f},1000000,{shown * 1.005:.4f},{shown * 0.995:.4f}")
    folder.mkdir()
    (folder / "prices.csv").write_text("\n".join(lines) + "\n")
    actions = f"symbol,ex_date,kind,ratio,new_symbol\nBIG,{BONUS},bonus,1 for 1,\n"
    actions += f"GONE,{DAYS[GONE_AFTER]},rename,,NEW\n" if renamed else ""
    (folder / "corporate_actions.csv").write_text(actions)
    return folder


def planted_walk_forward(prices: pd.DataFrame, first_test_date: date, horizon: int) -> pd.DataFrame:
    """The panel's rows from `first_test_date`, every name expected to beat the universe
    (GONE most): the book buys all six on its first day."""
    from models.dataset import build_panel

    panel = build_panel(prices, horizon=horizon)
    rows = panel[panel["date"] >= first_test_date].copy()
    edge = np.where(rows["symbol"] == "GONE", 0.03, 0.02)
    return rows.assign(p_up=0.6, raw_score=edge, expected_return=edge, predicted_return=edge)


def _planted_backtest(folder: Path, fees: str, monkeypatch, capsys) -> tuple[str, dict]:
    """benchmarks/backtest.py over the planted files with the planted walk-forward (no null
    books, a 10% limit, delisted after 10 sessions): what it printed and its JSON line."""
    monkeypatch.setattr(portfolio.backtest, "out_of_sample_predictions", planted_walk_forward)
    argv = ["backtest.py", "--ohlcv", str(folder), "--from", str(DAYS[30]), "--to", str(DAYS[-1])]
    argv += ["--no-nulls", "--fees", fees, "--price-limit", "0.1", "--delist-after", "10"]
    monkeypatch.setattr(sys, "argv", argv)
    with benchmark_module("backtest") as backtest:
        backtest.main()
    out = capsys.readouterr().out
    return out, json.loads(out.strip().splitlines()[-1])


def test_the_backtest_prints_the_capital_changes_and_the_delisted_positions_under_each_reading(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    from market.fees import market_fees

    folder = planted_files(tmp_path / "market")
    fees = tmp_path / "market.toml"
    fees.write_text('brokerage = 0.004\nretail_brokerage = 0.012\n[levies]\n"exchange levy" = 0.003\n')
    out, last = _planted_backtest(folder, str(fees), monkeypatch, capsys)
    # the capital-change report of the files it read, first
    assert f"corporate actions: {folder / 'corporate_actions.csv'}; 1 read, 1 splits applied" in out
    assert "beyond the daily price limit of 10.0% (and a tick): 2; explained by the corporate actions 1" in out
    assert f"  ODD {JUMP}: " in out and "implied ratio 0.33" in out
    assert last["capital_changes"]["splits_applied"] == [["BIG", str(BONUS), 2.0]]
    # the delisting: GONE, held from the first day, delisted on its 10th session without a row
    assert "delisting: a held name without a row for 10 sessions is delisted from that session" in out
    delisted_on = DAYS[GONE_AFTER - 1 + 10]
    figures = last["runs"]["default_brokerage"]["delisting"]
    (episode,) = figures["episodes"]
    assert (episode["symbol"], episode["last_row"], episode["delisted_on"]) == (
        "GONE",
        str(DAYS[GONE_AFTER - 1]),
        str(delisted_on),
    )
    days = len([d for d in DAYS if delisted_on <= d <= DAYS[-1]])
    assert (figures["positions"], figures["position_days"]) == (1, days)
    worth = figures["value_at_end"]["last_close"]
    assert worth > 0 and figures["value_at_end"]["nothing"] == 0
    assert figures["final_equity"]["last_close"] == pytest.approx(figures["final_equity"]["nothing"] + worth, abs=0.02)
    assert (
        f"  default_brokerage: 1 delisted positions (1 names), {days} position-days, 1 held at the end worth "
        f"0.00 (nothing) / {worth:,.2f} (last_close)" in out
    )
    assert (
        f"    GONE: {episode['quantity']:,} shares, last row {DAYS[GONE_AFTER - 1]}, delisted {delisted_on}, to the end"
        in out
    )
    for run in ("gross_of_costs", "retail_brokerage"):
        assert last["runs"][run]["delisting"]["positions"] == 1 and f"  {run}: 1 delisted positions" in out
    # the fee file is what every run charged
    schedule = market_fees(str(fees))
    assert last["fees"] == {
        "default": schedule.schedule().describe(),
        "retail": schedule.schedule(retail=True).describe(),
    }
    assert "levies 0.30% (exchange levy 0.30%) + brokerage 0.40% = 0.70% a side" in last["fees"]["default"]


def test_a_position_is_held_through_its_names_rename(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    """An adversarial run: GONE's company went on trading as NEW, and the backtest read the
    rename as GONE's last row: the position bought on the first day was delisted 10 sessions
    later, worth nothing, and NEW a name without history. With the file's rename row the
    two are one name, NEW, held from the first day to the end, and nothing is delisted."""
    folder = planted_files(tmp_path / "market", renamed=True)
    out, last = _planted_backtest(folder, "jse", monkeypatch, capsys)
    assert f"renamed: GONE -> NEW from {DAYS[GONE_AFTER]}: GONE's {GONE_AFTER} rows" in out
    assert last["capital_changes"]["renames_applied"] == [["GONE", "NEW", str(DAYS[GONE_AFTER])]]
    for run in ("default_brokerage", "gross_of_costs", "retail_brokerage"):
        assert last["runs"][run]["delisting"]["positions"] == 0
    held = last["runs"]["default_brokerage"]["holding"]
    assert (held["holdings"], held["closed"]) == (6, 0)  # the six names bought on the first day, NEW among them


def test_a_bad_fee_file_or_limit_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = planted_files(tmp_path / "market")
    bad = tmp_path / "bad.json"
    bad.write_text('{"brokerage": 5}')
    with benchmark_module("backtest") as backtest:
        for extra, says in (
            (["--fees", str(bad)], r"^error: --fees: fee file .*bad\.json: brokerage = 5 is not a rate"),
            (["--fees", "lse"], r"^error: --fees: no fee schedule 'lse'; known: jse, nse, or a \.toml or \.json"),
            (["--price-limit", "10"], r"^error: --price-limit 10\.0 is not a fraction between 0 and 1"),
        ):
            monkeypatch.setattr(sys, "argv", ["backtest.py", "--ohlcv", str(folder), *extra])
            with pytest.raises(SystemExit, match=says):
                backtest.main()


@pytest.mark.parametrize(
    ("extra", "says"),
    [
        (["--hold", "0"], "error: --hold, --swaps, --trim, --names, --rebalance: a mandate needs"),
        (["--trim", "1"], "error: --hold, --swaps, --trim, --names, --rebalance: trim must be more than one slot"),
        (["--trim", "two"], "error: --trim 'two': a number of slots above 1, or none"),
        (["--select", "--grid", "rebalance=0,5"], "error: --grid: a mandate needs names >= 1"),
        (["--cash", "0"], "error: --cash 0.0: the book's starting cash, an amount of money above 0"),
        (["--cash", "nan"], "error: --cash nan: the book's starting cash, an amount of money above 0"),
        (["--cash", "1e30"], "error: --cash 1e+30: the book's starting cash, an amount of money above 0"),
        (["--first-seed", "-5"], "error: --first-seed -5: the random books' seeds are 0 or more"),
        (["--daily-seeds", "-1"], "error: --daily-seeds -1: 0 random rankings drawn daily or more"),
    ],
)
def test_an_option_no_book_can_run_with_is_one_line_before_the_walk_forward(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture, extra: list[str], says: str
) -> None:
    """A book option the mandate refuses (`--hold 0`), a starting cash of 0, NaN or past the
    money bound, a negative seed: each was a traceback (ZeroDivisionError, "cannot convert
    float NaN to integer", the Mandate's ValueError) raised after the walk-forward, minutes
    into a market's run and its predictions lost; --cash -100 ran to a table of zeros and
    --daily-seeds -1 to a run without its daily random books, unsaid. Each is one line
    naming the option, and the walk-forward never starts."""

    def never(*_: object, **__: object) -> None:
        raise AssertionError("the walk-forward ran")

    monkeypatch.setattr(portfolio.backtest, "out_of_sample_predictions", never)
    folder = str(planted_files(tmp_path / "market"))
    monkeypatch.setattr(sys, "argv", ["backtest.py", "--ohlcv", folder, *extra])
    with benchmark_module("backtest") as backtest, pytest.raises(SystemExit):
        backtest.main()
    err = capsys.readouterr().err
    assert says in err.strip().splitlines()[-1] and "Traceback" not in err


def test_the_equal_weighted_benchmark_measures_the_spans_first_month(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    """The span starts on 17 February: the benchmark's February is the names that passed the
    gates on 31 January, held from its close, as the live record measures a month (not 0
    for every day until March because the predictions start mid-month)."""
    from portfolio.track_record import equal_weight_liquid

    panels, planted = [], planted_walk_forward

    def walk_forward(prices: pd.DataFrame, first_test_date: date, horizon: int) -> pd.DataFrame:
        panels.append(portfolio.backtest.build_panel(prices, horizon=horizon))
        return planted(prices, first_test_date, horizon)

    monkeypatch.setattr(sys.modules[__name__], "planted_walk_forward", walk_forward)
    _, last = _planted_backtest(planted_files(tmp_path / "market"), "jse", monkeypatch, capsys)
    span = [d for d in DAYS if d >= DAYS[30]]
    whole = equal_weight_liquid(panels[0]).reindex(span).fillna(0.0)  # the rule over the whole history
    february = whole[[d.month == 2 for d in span]]
    assert (february != 0).all() and len(february) == 10
    measured = last["runs"]["default_brokerage"]["benchmarks"]["equal_weight_liquid"]["total_return"]
    assert measured == pytest.approx(float((1 + whole).prod() - 1), abs=1e-4)


def test_no_fixed_random_books_is_refused_where_the_nulls_or_the_selection_read_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    """--fixed-seeds 0 left the model's book compared with an empty mean (its own returns
    against cash, reported as "vs fixed_random_mean") and the selection a traceback: it is
    one line wherever the null books or the selection would read the fixed random books."""
    folder = str(planted_files(tmp_path / "market"))
    with benchmark_module("backtest") as backtest:
        for extra in ([], ["--no-nulls", "--select"], ["--no-nulls", "--from", "2008-01-02", "--to", "2011-12-30"]):
            monkeypatch.setattr(sys, "argv", ["backtest.py", "--ohlcv", folder, "--fixed-seeds", "0", *extra])
            with pytest.raises(SystemExit):
                backtest.parse_args()
            (line,) = capsys.readouterr().err.strip().splitlines()[-1:]
            assert "error: --fixed-seeds 0: the null books and the selection measure the model's book against" in line
        monkeypatch.setattr(sys, "argv", ["backtest.py", "--ohlcv", folder, "--fixed-seeds", "0", "--no-nulls"])
        assert backtest.parse_args().fixed_seeds == 0  # nothing reads them


def test_the_index_is_compared_only_over_the_days_its_levels_cover(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    """^IDX's levels (up 0.2% a session) end 30 sessions before the span does: those sessions
    read as flat made the index's year 70 sessions of growth spread over 100 (its annual
    return understated, the book's excess over it overstated) with no word. The book is
    compared with it over the 70 sessions it covers, and the run says which it lacks."""
    folder = planted_files(tmp_path / "market")
    levels = [f"^IDX,{day},{1000 * 1.002**i:.4f},0,," for i, day in enumerate(DAYS[:100])]
    with (folder / "prices.csv").open("a") as f:
        f.write("\n".join(levels) + "\n")
    out, last = _planted_backtest(folder, "jse", monkeypatch, capsys)
    assert last["index"] == "^IDX"
    assert last["index_coverage"] == {
        "first": str(DAYS[30]),
        "last": str(DAYS[99]),
        "days": 70,
        "of": 100,
        "uncovered": [[str(DAYS[100]), str(DAYS[-1])]],
        "holes": [],
    }
    assert f"index ^IDX: no levels from {DAYS[100]} to {DAYS[-1]} (30 of 100 days)" in out
    index = last["runs"]["default_brokerage"]["benchmarks"]["index"]
    assert index["total_return"] == pytest.approx(1.002**70 - 1, abs=1e-3)
    # 70 sessions are under a year: no annual figure (GIPS, portfolio/track_record.py `under_a_year`)
    assert index["annual_return"] is None and "under a year" in index["note"]
    assert last["runs"]["default_brokerage"]["years"]["2025"]["benchmarks"]["index"] == index


def test_a_span_the_files_do_not_price_is_one_line_before_the_walk_forward(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    """A span after the files (or the default span, which ends in 2021, on files that start
    later) was a pandas KeyError after the whole load; --from after --to the same, and a bad
    date a ValueError. Each is one line, the span without a priced day naming the files'
    first and last dates, before any walk-forward."""

    def no_walk_forward(*_: object, **__: object) -> pd.DataFrame:
        raise AssertionError("the walk-forward ran")

    monkeypatch.setattr(portfolio.backtest, "out_of_sample_predictions", no_walk_forward)
    folder = str(planted_files(tmp_path / "market"))
    with benchmark_module("backtest") as backtest:
        for extra, says in (
            (["--from", "xx"], "argument --from: 'xx' is not a date (YYYY-MM-DD)"),
            (["--from", "2030-02-01", "--to", "2030-01-31"], "--from 2030-02-01 is after --to 2030-01-31"),
        ):
            monkeypatch.setattr(sys, "argv", ["backtest.py", "--ohlcv", folder, *extra])
            with pytest.raises(SystemExit):
                backtest.main()
            assert capsys.readouterr().err.strip().splitlines()[-1].endswith(says)
        for extra, span in ((["--from", "2030-01-02", "--to", "2030-12-31"], "2030-01-02 to 2030-12-31"), ([], "")):
            monkeypatch.setattr(sys, "argv", ["backtest.py", "--ohlcv", folder, "--no-nulls", *extra])
            with pytest.raises(
                SystemExit, match=f"^error: no day of the files from {span or '2012-01-02 to 2021-12-31'}"
            ):
                backtest.main()
        assert f"the files run from {DAYS[0]} to {DAYS[-1]}" in str(pytest.raises(SystemExit, backtest.main).value)
        # a span the files price but the walk-forward cannot predict (its training sessions)
        monkeypatch.setattr(portfolio.backtest, "out_of_sample_predictions", lambda *_, **__: pd.DataFrame())
        monkeypatch.setattr(
            sys, "argv", ["backtest.py", "--ohlcv", folder, "--from", str(DAYS[5]), "--to", str(DAYS[-1])]
        )
        with pytest.raises(SystemExit, match=f"^error: no out-of-sample prediction from {DAYS[5]} to {DAYS[-1]}: "):
            backtest.main()


def test_an_index_the_files_lack_is_one_line_naming_theirs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    """--index ^IDZ (a typo of ^IDX) was dropped without a word: no index in the comparison
    and `index` null. It is one line naming the files' indices, before the walk-forward."""

    def no_walk_forward(*_: object, **__: object) -> pd.DataFrame:
        raise AssertionError("the walk-forward ran")

    monkeypatch.setattr(portfolio.backtest, "out_of_sample_predictions", no_walk_forward)
    folder = planted_files(tmp_path / "market")
    with (folder / "prices.csv").open("a") as f:
        f.write("".join(f"{name},{day},1000,0,,\n" for name in ("^IDX", "^ALL") for day in DAYS))
    argv = ["backtest.py", "--ohlcv", str(folder), "--from", str(DAYS[30]), "--to", str(DAYS[-1]), "--no-nulls"]
    with benchmark_module("backtest") as backtest:
        monkeypatch.setattr(sys, "argv", [*argv, "--index", "^IDZ"])
        with pytest.raises(
            SystemExit, match=r"^error: --index \^IDZ: no such index in the files; theirs: \^ALL, \^IDX$"
        ):
            backtest.main()
        folder.joinpath("prices.csv").write_text(
            "\n".join(line for line in folder.joinpath("prices.csv").read_text().splitlines() if "^" not in line)
        )
        monkeypatch.setattr(sys, "argv", [*argv, "--index", "^IDX"])
        with pytest.raises(SystemExit, match=r"^error: --index \^IDX: no such index in the files; theirs: none$"):
            backtest.main()


def test_the_run_names_the_fee_schedule_it_assumed_and_the_files_currency(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    """`--ohlcv` files without --fees were charged the jse schedule, named only in the JSON,
    and the currency the files state appeared nowhere. The run says both once the files are
    read, and the JSON keeps the currency (null where the files state none)."""
    folder = planted_files(tmp_path / "market")
    monkeypatch.setattr(portfolio.backtest, "out_of_sample_predictions", planted_walk_forward)
    argv = ["backtest.py", "--ohlcv", str(folder), "--from", str(DAYS[30]), "--to", str(DAYS[-1]), "--no-nulls"]
    with benchmark_module("backtest") as backtest:
        monkeypatch.setattr(sys, "argv", argv)
        backtest.main()
        out = capsys.readouterr().out
        assert "fees: the jse schedule, assumed: --fees names the market's; the files state no currency\n" in out
        assert json.loads(out.strip().splitlines()[-1])["currency"] is None
        lines = (folder / "prices.csv").read_text().splitlines()
        stated = [f"{lines[0]},currency"] + [f"{line},GHS" for line in lines[1:]]
        (folder / "prices.csv").write_text("\n".join(stated) + "\n")
        monkeypatch.setattr(sys, "argv", [*argv, "--fees", "nse"])
        backtest.main()
        out = capsys.readouterr().out
    assert "fees: the nse schedule; the files' currency: GHS\n" in out
    last = json.loads(out.strip().splitlines()[-1])
    assert last["currency"] == "GHS" and last["fees"]["default"].startswith("nse:")


def test_a_months_long_hole_in_the_index_is_left_out_with_the_session_that_closes_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    """^IDX (up 0.2% a session) has no levels for 30 sessions (days 60 to 89) and for 10 (days
    105 to 114). The 30-session hole read as flat put its whole move on day 90, one +6% day
    that skewed the tracking error and beta, unsaid. A hole of more than LONGEST_HOLE sessions
    is uncovered with its closing session, named in the line and the JSON; the 10-session
    gap stays no change, its move on its closing day."""
    folder = planted_files(tmp_path / "market")
    gone = set(range(60, 90)) | set(range(105, 115))
    levels = [f"^IDX,{day},{1000 * 1.002**i:.4f},0,," for i, day in enumerate(DAYS) if i not in gone]
    with (folder / "prices.csv").open("a") as f:
        f.write("\n".join(levels) + "\n")
    out, last = _planted_backtest(folder, "jse", monkeypatch, capsys)
    coverage = last["index_coverage"]
    assert coverage["uncovered"] == [[str(DAYS[60]), str(DAYS[90])]]
    assert coverage["holes"] == [[str(DAYS[60]), str(DAYS[90])]]
    assert (coverage["days"], coverage["of"]) == (69, 100)
    assert f"a hole of more than 20 sessions from {DAYS[60]}, closed on {DAYS[90]}" in out
    index = last["runs"]["default_brokerage"]["benchmarks"]["index"]
    # 69 sessions of +0.2%: the 10-session gap's move lands on its closing day, the hole's not at all
    assert index["total_return"] == pytest.approx(1.002**69 - 1, abs=1e-3)
    assert last["runs"]["default_brokerage"]["years"]["2025"]["benchmarks"]["index"] == index


def test_the_index_moves_on_days_the_price_files_lack_count_on_the_next_session(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    """^IDX (up 0.2% a session) has a level on every day, but the price files have no row
    on five of the span's days (a day's prices file missing, the index from another source):
    the index's move on such a day was dated on a day the book never replays and dropped,
    so the index's return over the span was 95 sessions' growth, not 100 (its return
    understated, the book's excess over it overstated), unsaid. Each move counts on the
    next session the books replay, as the last level stands on a day without one."""
    folder = planted_files(tmp_path / "market")
    missing = {str(DAYS[i]) for i in (40, 60, 75, 100, 120)}
    prices = folder / "prices.csv"
    kept = [line for line in prices.read_text().splitlines() if line.split(",")[1] not in missing]
    levels = [f"^IDX,{day},{1000 * 1.002**i:.4f},0,," for i, day in enumerate(DAYS)]
    prices.write_text("\n".join(kept + levels) + "\n")
    _, last = _planted_backtest(folder, "jse", monkeypatch, capsys)
    assert (last["index_coverage"]["days"], last["index_coverage"]["of"]) == (95, 95)
    index = last["runs"]["default_brokerage"]["benchmarks"]["index"]
    assert index["total_return"] == pytest.approx(1.002**100 - 1, abs=1e-4)
    assert last["runs"]["default_brokerage"]["years"]["2025"]["benchmarks"]["index"] == index


def test_an_index_level_given_twice_for_a_day_is_reported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    """Two ^IDX levels for one day that disagree (a vendor's second file, a corrected level
    appended): the first by file and line stands, as for a name's rows, and the run says so
    with both lines; the second was dropped without a word."""
    folder = planted_files(tmp_path / "market")
    levels = [f"^IDX,{day},{1000 * 1.002**i:.4f},0,," for i, day in enumerate(DAYS)]
    with (folder / "prices.csv").open("a") as f:
        f.write("\n".join([*levels, f"^IDX,{DAYS[50]},2000,0,,"]) + "\n")
    out, last = _planted_backtest(folder, "jse", monkeypatch, capsys)
    assert "index levels: second rows of a name and day: 0 repeat the kept row exactly; 1 disagree" in out
    assert f"^IDX {DAYS[50]}: close {1000 * 1.002**50:g} kept" in out and "vs 2000 left out" in out
    index = last["runs"]["default_brokerage"]["benchmarks"]["index"]
    assert index["total_return"] == pytest.approx(1.002**100 - 1, abs=1e-4)


def test_files_of_index_levels_alone_are_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    """The index's file given as the prices (or prices whose every row is bad beside
    readable levels): the loader left the index rows out and was a KeyError traceback
    ("['symbol', 'date', 'close', 'volume'] not in index"). One line names the indices."""
    folder = tmp_path / "index"
    folder.mkdir()
    (folder / "levels.csv").write_text(
        "symbol,date,close,volume\n" + "".join(f"^IDX,{day},{1000 + i},0\n" for i, day in enumerate(DAYS))
    )
    monkeypatch.setattr(
        sys, "argv", ["backtest.py", "--ohlcv", str(folder), "--from", str(DAYS[30]), "--to", str(DAYS[-1])]
    )
    with benchmark_module("backtest") as backtest, pytest.raises(SystemExit) as stopped:
        backtest.main()
    assert str(stopped.value).startswith(f"error: no security's row in {folder}: its 130 readable rows are market")
    assert "(^IDX); give the prices' files too" in str(stopped.value)


def test_an_index_the_files_hold_as_a_security_says_how_to_mark_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An index's file from another vendor, its code without ^ and no name or type saying
    index (ALLSHARE): its rows are read as a security's, and `--index ALLSHARE` said only
    "no such index in the files; theirs: none". The line says how the rows are read and how
    to mark them."""
    folder = planted_files(tmp_path / "market")
    with (folder / "prices.csv").open("a") as f:
        f.write("".join(f"ALLSHARE,{day},{1000 + i},0,,\n" for i, day in enumerate(DAYS)))
    argv = ["backtest.py", "--ohlcv", str(folder), "--from", str(DAYS[30]), "--to", str(DAYS[-1])]
    monkeypatch.setattr(sys, "argv", [*argv, "--index", "ALLSHARE"])
    with benchmark_module("backtest") as backtest, pytest.raises(SystemExit) as stopped:
        backtest.main()
    assert str(stopped.value) == (
        "error: --index ALLSHARE: the files' ALLSHARE rows are read as a security's, not an index's: mark them "
        "(a ^ before the code, a name saying Index, or a type column saying index); theirs: none"
    )


def test_null_books_that_all_tie_with_the_model_say_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    """Six names, each expected to beat the universe, and a book of 15 slots: whatever the
    ranking, every book buys the six, so every null book earns what the model's book earns.
    The track record's nulls say so (portfolio/nulls.py SAME_BOOKS, family_ties); the
    backtest printed percentiles as if they measured skill. It says so too, in its JSON, and
    that 100 days is a short span (it printed a percentile over a quarter's books unsaid)."""
    from portfolio.nulls import SAME_BOOKS, family_ties

    monkeypatch.setattr(portfolio.backtest, "out_of_sample_predictions", planted_walk_forward)
    folder = planted_files(tmp_path / "market")
    argv = ["backtest.py", "--ohlcv", str(folder), "--from", str(DAYS[30]), "--to", str(DAYS[-1]), "--no-select"]
    monkeypatch.setattr(sys, "argv", [*argv, "--daily-seeds", "1", "--fixed-seeds", "2", "--delist-after", "200"])
    with benchmark_module("backtest") as backtest:
        backtest.main()
    out = capsys.readouterr().out
    last = json.loads(out.strip().splitlines()[-1])
    same = SAME_BOOKS.format(days=100)
    assert last["nulls_note"] == same and last["retail_nulls_note"] == same
    assert out.count(f"note: {same}\n") == 2  # printed under each brokerage's table
    for family, figures in last["nulls"].items():
        assert figures["note"] == family_ties(figures["books"]), family
        assert figures["model_beats"] == 0 and figures["model_percentile"] == 50.0
    # 100 days: the caveat the track record's nulls give a short span, printed once
    short = "100 days is a short span: the percentiles and ratios say little about skill."
    assert last["nulls_span_note"] == short and out.count(f"note: {short}\n") == 1


def test_a_percentile_over_too_few_books_is_not_printed_as_a_reading(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    """With --fixed-seeds 1 and the one-book families (size, inverted, bought-and-held) the
    model's percentile printed as 0, 50 or 100, and over three daily random books unqualified.
    A family of one book prints whether the model beats it; fewer than FEW_BOOKS books, the
    percentile said to be too few to read. The JSON keeps the percentile beside `books`."""
    from portfolio.nulls import FEW_BOOKS

    monkeypatch.setattr(portfolio.backtest, "out_of_sample_predictions", planted_walk_forward)
    folder = planted_files(tmp_path / "market")
    argv = ["backtest.py", "--ohlcv", str(folder), "--from", str(DAYS[30]), "--to", str(DAYS[-1]), "--no-select"]
    monkeypatch.setattr(sys, "argv", [*argv, "--daily-seeds", "3", "--fixed-seeds", "1", "--delist-after", "200"])
    with benchmark_module("backtest") as backtest:
        backtest.main()
    out = capsys.readouterr().out
    last = json.loads(out.strip().splitlines()[-1])
    rows = {line.split()[0]: line for line in out.splitlines() if line.split()[:1] and line.split()[0] in last["nulls"]}
    assert FEW_BOOKS == 10
    for family, figures in last["nulls"].items():
        assert figures["model_percentile"] is not None and figures["books"] >= 1, family
        if figures["books"] == 1:
            assert any(w in rows[family] for w in ("beats: yes", "beats: no", "level")), rows[family]
    assert last["nulls"]["fixed_random"]["books"] == 1
    assert "beats: " in rows["fixed_random"] or "level" in rows["fixed_random"]
    assert last["nulls"]["daily_random"]["books"] == 3
    assert "(of 3 books: too few to read)" in rows["daily_random"]


def test_the_selections_books_apply_the_runs_delisting_rule(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    """The selection table's books were replayed under the default delisting rule whatever
    --delist-after, --delisted-value and the actions file said: GONE, held and delisted after
    10 sessions without a row by the run's rule (worth nothing), was never delisted in the
    selection (60 sessions) and stayed worth its last close, so the table's row of the very
    book the run reports showed another return. The selection's row of the default book is
    the run's book."""
    from portfolio.book import Mandate

    monkeypatch.setattr(portfolio.backtest, "out_of_sample_predictions", planted_walk_forward)
    book = Mandate()
    grid = f"hold={book.hold} swaps={book.swaps} trim={book.trim} names={book.names}"
    argv = ["backtest.py", "--ohlcv", str(planted_files(tmp_path / "market")), "--from", str(DAYS[30])]
    argv += ["--to", str(DAYS[-1]), "--no-nulls", "--select", "--grid", grid, "--fixed-seeds", "1", "--workers", "1"]
    argv += ["--delist-after", "10"]
    monkeypatch.setattr(sys, "argv", argv)
    with benchmark_module("backtest") as backtest:
        backtest.main()
    last = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    run = last["runs"]["default_brokerage"]
    assert run["delisting"]["positions"] == 1 and run["delisting"]["value_at_end"]["nothing"] == 0
    (row,) = last["selection"]["table"]
    assert row["total_return"] == run["total_return"]


def test_the_days_replayed_are_printed_beside_the_span_asked_for(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    """A span wider than the files (a foreign market's files end before the default --to,
    and the walk-forward predicts nothing in its training sessions) was replayed over the
    days there are while the run printed no span and its JSON only the one asked for: every
    figure read as a figure over the asked span. The days replayed are printed and kept."""
    monkeypatch.setattr(portfolio.backtest, "out_of_sample_predictions", planted_walk_forward)
    folder = planted_files(tmp_path / "market")
    argv = ["backtest.py", "--ohlcv", str(folder), "--from", str(DAYS[30]), "--to", "2026-06-30", "--no-nulls"]
    monkeypatch.setattr(sys, "argv", argv)
    with benchmark_module("backtest") as backtest:
        backtest.main()
    out = capsys.readouterr().out
    last = json.loads(out.strip().splitlines()[-1])
    line = f"replayed {DAYS[30]} to {DAYS[-1]} (asked {DAYS[30]} to 2026-06-30), {len(DAYS) - 30} sessions"
    assert line in out.splitlines()
    assert (last["replayed_from"], last["replayed_to"], last["to"]) == (str(DAYS[30]), str(DAYS[-1]), "2026-06-30")


@pytest.mark.parametrize("price", ["5.0", ""])
def test_a_delisting_row_of_the_actions_file_delists_the_name_from_its_date(
    price: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    """The corporate-actions file says GONE was delisted on the session after its last row
    (at 5.00 a share, or with no price: nothing). The backtest read the row as a value only:
    it carried GONE at its last close (TRAPPED, one of the book's slots) until the gap reached
    the rule's sessions, as if no notice had come, while the live book and the track record's
    null books delist a name from the exchange's notice; a row without a price gave a value of
    0.00 "a corporate action gives". The row is now the notice it is, in every book of the run."""
    folder = planted_files(tmp_path / "market")
    actions = folder / "corporate_actions.csv"
    lines = actions.read_text().splitlines()
    rows = [lines[0] + ",price", *(f"{line}," for line in lines[1:]), f"GONE,{DAYS[GONE_AFTER]},delisting,,,{price}"]
    actions.write_text("\n".join(rows) + "\n")
    monkeypatch.setattr(portfolio.backtest, "out_of_sample_predictions", planted_walk_forward)
    argv = ["backtest.py", "--ohlcv", str(folder), "--from", str(DAYS[30]), "--to", str(DAYS[-1]), "--no-nulls"]
    monkeypatch.setattr(sys, "argv", argv + ["--delist-after", "30"])
    with benchmark_module("backtest") as backtest:
        backtest.main()
    out = capsys.readouterr().out
    last = json.loads(out.strip().splitlines()[-1])
    for run in ("default_brokerage", "gross_of_costs", "retail_brokerage"):
        figures = last["runs"][run]["delisting"]
        (episode,) = figures["episodes"]
        assert (episode["last_row"], episode["delisted_on"]) == (str(DAYS[GONE_AFTER - 1]), str(DAYS[GONE_AFTER]))
        assert figures["position_days"] == len(DAYS) - GONE_AFTER
        worth = episode["quantity"] * float(price or 0)
        assert figures["value_at_end"]["nothing"] == pytest.approx(worth, abs=0.01)
    assert (
        f"    GONE: {episode['quantity']:,} shares, last row {DAYS[GONE_AFTER - 1]}, delisted {DAYS[GONE_AFTER]}" in out
    )


def test_the_null_and_yearly_tables_print_a_missing_turnover_or_holding_as_n_a(capsys) -> None:
    """A span too short for an annual turnover, a year in which no holding ended: the null and
    per-year tables printed Python's `None` in those columns, as no other figure reads."""
    spread = {"mean": None, "low": None, "high": None}
    none_ratio = {"information_ratio": None, "excess_annual_return": None, "tracking_error": None}
    model = {
        "benchmarks": {"equal_weight_liquid": none_ratio},
        "annual_turnover": None,
        "holding": {"mean_sessions": None, "by_year": {"2025": None}},
        "years": {"2025": {"benchmarks": {}, "total_return": 0.01, "annual_turnover": None}},
        "total_return": 0.01,
    }
    family = {
        "books": 2,
        "information_ratio": spread,
        "excess_annual_return": spread,
        "annual_turnover": spread,
        "holding_sessions": [None, None],
        "model_percentile": None,
        "model_beats": 0,
        "note": None,
    }
    with benchmark_module("backtest") as backtest:
        backtest.print_nulls({"fixed_random": family}, model, None)
        backtest.print_against(model, {"fixed_random_mean": {}})
    printed = capsys.readouterr().out
    assert "None" not in printed and "n/a (n/a..n/a)" in printed, printed


def test_a_span_too_short_for_the_bought_and_held_book_says_so(tmp_path: Path, monkeypatch, capsys) -> None:
    """Over 16 sessions the first month's book, bought and held, cannot be built: the null
    table and the JSON line left the family out without a word, where the track record's
    nulls say why."""
    folder = planted_files(tmp_path / "files")
    monkeypatch.setattr(portfolio.backtest, "out_of_sample_predictions", planted_walk_forward)
    argv = ["backtest.py", "--ohlcv", str(folder), "--from", str(DAYS[30]), "--to", str(DAYS[45])]
    argv += ["--fees", "nse", "--daily-seeds", "1", "--fixed-seeds", "2"]
    monkeypatch.setattr(sys, "argv", argv)
    with benchmark_module("backtest") as backtest:
        backtest.main()
    out = capsys.readouterr().out
    held = json.loads(out.strip().splitlines()[-1])["nulls"]["bought_and_held"]
    assert held["books"] == 0 and held["model_percentile"] is None
    assert held["note"].startswith("the first month's book, bought and held, needs more than 21 days")
    assert f"note: bought_and_held: {held['note']}" in out
