"""benchmarks/model_quality.py says the span it actually scored (the first and last dates of
the scored rows), not the span it was asked for: a file asked from 2002 on whose first
scored year is 2009 printed "scored 2002-01-01" (issue 42). It measures the model on the
product's label (the H-session excess, issue 55) beside the plain reference trained on the
same label and the next-day reference, and reads nothing after the last scored day's label
end. Synthetic data only: the real NSE runs are the benchmark's own."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from datetime import date
from pathlib import Path
from types import ModuleType

import numpy as np
import pandas as pd
import pytest

from models.decisions import HORIZON
from tests.benchmark_modules import BENCHMARKS, benchmark_module
from tests.models.synthetic import synthetic_prices


@pytest.fixture(scope="module")
def quality() -> Iterator[ModuleType]:
    with benchmark_module("model_quality") as module:
        yield module


def test_the_span_comes_from_the_scored_rows(quality) -> None:
    rows = pd.DataFrame({"symbol": ["A", "B", "A"], "date": [date(2010, 12, 30), date(2009, 1, 5), date(2009, 6, 1)]})
    assert quality.scored_span(rows) == (date(2009, 1, 5), date(2010, 12, 30))
    assert (
        quality.span_text(rows, date(2002, 1, 1), date(2010, 12, 31))
        == "scored 2009-01-05 to 2010-12-30 (asked 2002-01-01 to 2010-12-31)"
    )
    assert quality.span_text(rows, date(2009, 1, 5), date(2010, 12, 30)) == "scored 2009-01-05 to 2010-12-30"
    assert quality.scored_span(rows.iloc[:0]) is None
    assert (
        quality.span_text(rows.iloc[:0], date(2002, 1, 1), date(2010, 12, 31))
        == "scored nothing (asked 2002-01-01 to 2010-12-31)"
    )


def _run(path: Path, *options: str) -> tuple[list[str], dict]:
    done = subprocess.run(
        [sys.executable, str(BENCHMARKS / "model_quality.py"), "--ohlcv", str(path), *options],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.strip().splitlines()
    return lines, json.loads(lines[-1])


@pytest.fixture(scope="module")
def synthetic_file(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list]:
    prices, _ = synthetic_prices(instruments=12, days=330, seed=3)
    path = tmp_path_factory.mktemp("quality") / "prices.csv"
    prices[["symbol", "date", "close", "volume", "high", "low"]].to_csv(path, index=False)
    return path, sorted(prices["date"].unique())


def _is_rate(x: object) -> bool:
    return isinstance(x, float) and 0.0 <= x <= 1.0


def _is_ic(x: object) -> bool:
    return isinstance(x, float) and -1.0 <= x <= 1.0


def test_a_run_asked_for_more_than_it_can_score_prints_what_it_scored(synthetic_file) -> None:
    """300 trading days from 2024-01-01 asked from 2024-02-01: the walk-forward scores
    nothing before its 250 trading days of training, and the last HORIZON + 1 days have no
    label (the excess return from t+1 to t+1+H)."""
    path, days = synthetic_file
    printed, figures = _run(path, "--from", "2024-02-01", "--no-reference")
    lines = printed[next(i for i, line in enumerate(printed) if line.startswith("ohlcv ")) :]  # after the file's report
    assert "scored 2024-02-01 to" not in lines[0], lines[0]  # what it printed before: the span asked for
    assert (figures["from"], figures["to"]) == ("2024-02-01", days[-1].isoformat())  # asked
    assert (figures["label"], figures["horizon_days"], figures["label_end_days"]) == ("excess", HORIZON, HORIZON + 1)
    first, last = date.fromisoformat(figures["scored_from"]), date.fromisoformat(figures["scored_to"])
    assert first >= days[250] and last == days[-(HORIZON + 2)]  # scored: the last whose label end is known
    assert min(int(y) for y in figures["by_year"]) == first.year
    assert lines[0] == (
        f"ohlcv {path}: scored {first} to {last} (asked 2024-02-01 to {days[-1]}), "
        f"{figures['overall']['rows']} rows ({figures['overall']['moved_rows']} moved)"
    )
    assert lines[1].startswith(f"label: excess return close t+1 to t+1+{HORIZON}")


def test_the_figures_are_on_the_label_beside_their_base_rates(synthetic_file) -> None:
    """The default run: the model, the reference on the same label and the next-day
    reference, each figure beside its base rate, overall and per year; the product's
    walk-forward seconds apart from the next-day reference's."""
    path, days = synthetic_file
    lines, figures = _run(path, "--from", "2024-09-02")
    assert figures["reference_embargo_days"] >= HORIZON + 1
    for key in ("walk_forward_seconds", "next_day_seconds", "reference_seconds"):
        assert figures[key] > 0, key
    assert figures["next_day_walk_forward_seconds"] >= 0  # ten small sign classifiers: under 0.05 s, printed 0.0
    assert figures["next_day_seconds"] >= figures["next_day_walk_forward_seconds"]
    assert figures["peak_rss_mb"] > 0 and figures["cpu_seconds"] > 0 and figures["wall_seconds"] > 0
    for m in [figures["overall"], *figures["by_year"].values()]:
        assert m["rows"] > 0 and m["moved_rows"] > 0
        assert all(_is_rate(m["binary"][k]) for k in ("model", "reference", "majority", "last_move"))
        assert m["binary"]["majority"] >= 0.5  # the base rate: the more common sign of the label
        assert _is_rate(m["three_class"]["model"]) and _is_rate(m["three_class"]["majority"])
        assert m["movers"]["rows"] > 0 and m["movers"]["majority"] >= 0.5
        assert m["mae"]["zero"] > 0 and m["mae"]["model"] > 0
        for part in ("all", "liquid"):
            ranking = m[part]
            if ranking["days"] == 0:
                # a year this small market scored before its first calibration (no expected excess), and its
                # bars (close mid-range, a 2% range) read an estimated spread over 5% (no liquid part)
                continue
            assert ranking["days"] > 0 and ranking["rank_ic"]["base_rate"] == 0.0
            for k in ("model", "p_up", "raw_score", "reference", "next_day_reference", "last_return"):
                assert _is_ic(ranking["rank_ic"][k]), (part, k, ranking["rank_ic"][k])
            for k in ("model", "reference", "next_day_reference"):
                spread = ranking["tercile_spread"][k]
                assert isinstance(spread, float) and abs(spread) < 1, (part, k)
                annual = m["tercile_spread_annualised"][part][k]
                assert annual == pytest.approx(spread * 250 / HORIZON)
        nd = m["next_day_reference"]
        assert nd["rows"] > 0 and _is_rate(nd["up_share_of_moved"])
        assert all(_is_rate(nd["binary"][k]) for k in ("model", "majority", "last_move"))
        assert _is_ic(nd["rank_ic_own_label"]) and _is_ic(nd["rank_ic_on_label"]["expected_return"])
    text = "\n".join(lines)
    assert "next-day reference: binary" in text and f"tercile spread per {HORIZON} sessions" in text


def test_the_next_day_label_is_the_old_reference(synthetic_file) -> None:
    """--label next_day: H = 1, the label known on t+1, so the last scored day is the day
    before the last; no next-day reference beside itself."""
    path, days = synthetic_file
    _, figures = _run(path, "--from", "2024-09-02", "--label", "next_day", "--no-reference")
    assert (figures["label"], figures["horizon_days"], figures["label_end_days"]) == ("next_day", 1, 1)
    assert figures["scored_to"] == days[-2].isoformat()
    assert figures["overall"]["next_day_reference"] is None and figures["next_day_seconds"] == 0
    assert figures["overall"]["binary"]["reference"] is None  # --no-reference: no figure, not "always down"


def test_nothing_after_the_last_label_end_is_read(quality) -> None:
    days = [date(2024, 1, d) for d in range(1, 31)]
    assert quality.label_cut(days, days[9], 11) == days[20]  # t+1+H for H = 10
    assert quality.label_cut(days, days[9], 1) == days[10]  # next day
    assert quality.label_cut(days, days[25], 11) == days[-1]  # fewer days left than the label needs
    assert quality.label_cut(days, days[-1], 11) == days[-1]


def test_rank_ic_and_tercile_spread_by_hand(quality) -> None:
    """Per day: Spearman of the score with the label (a constant score counts 0, a constant
    label leaves the day out), and the top third's mean label minus the bottom third's."""
    day1, day2, day3 = date(2024, 1, 2), date(2024, 1, 3), date(2024, 1, 4)
    label = [0.01, 0.02, 0.03, 0.04, 0.05, 0.06]
    f = pd.DataFrame(
        {
            "date": [day1] * 6 + [day2] * 6 + [day3] * 6,
            "forward_return": label + label + [0.0] * 6,
            "expected_return": [1, 2, 3, 4, 5, 6] + [0.5] * 6 + [1, 2, 3, 4, 5, 6],
            "p_up": [0.1, 0.2, 0.3, 0.4, 0.5, 0.6] + [0.6, 0.5, 0.4, 0.3, 0.2, 0.1] + [0.5] * 6,
        }
    )
    daily = quality.daily_rank_ic(f, "expected_return", constant_as_zero=True)
    assert daily.to_dict() == {day1: pytest.approx(1.0), day2: 0.0}  # day 3's label is constant
    assert quality.daily_ic(f, "expected_return") == pytest.approx(1.0)  # without: the flat day is left out
    assert quality.daily_ic(f, "p_up") == pytest.approx(0.0)  # +1 and -1
    spread = quality.daily_tercile_spread(f, ["expected_return", "p_up"])
    # day 1: (0.055 - 0.015); day 2: expected flat, ties by P(up), which ranks backwards; day 3: 0
    assert spread.to_dict() == {
        day1: pytest.approx(0.04),
        day2: pytest.approx(-0.04),
        day3: pytest.approx(0.0),
    }


def test_the_reference_learns_the_label_it_is_given(quality) -> None:
    """The reference is trained on the panel's label (merged on symbol and date), not on a
    next-day return of its own: a label that is the sign of r5 is learnt; its inverse is
    learnt inverted."""
    prices, _ = synthetic_prices(instruments=8, days=520, seed=4)
    features = quality.reference_features(prices)
    dates = sorted(prices["date"].unique())
    end = {d: dates[min(i + HORIZON + 1, len(dates) - 1)] for i, d in enumerate(dates)}
    labels = features[["symbol", "date"]].assign(
        forward_return=np.sign(features["r5"]).fillna(0.0) * 0.01, label_end=features["date"].map(end)
    )
    year = dates[-1].year
    got = quality.reference_predictions(features, labels, [year], dates, quality.REFERENCE_FEATURES, HORIZON + 1)
    rows = got.merge(features[["symbol", "date", "r5"]], on=["symbol", "date"])
    assert len(rows) and ((rows["reference_p_up"] > 0.5) == (rows["r5"] > 0)).mean() > 0.9
    flipped = labels.assign(forward_return=-labels["forward_return"])
    got = quality.reference_predictions(features, flipped, [year], dates, quality.REFERENCE_FEATURES, HORIZON + 1)
    rows = got.merge(features[["symbol", "date", "r5"]], on=["symbol", "date"])
    assert ((rows["reference_p_up"] > 0.5) == (rows["r5"] <= 0)).mean() > 0.9


def test_a_span_the_run_cannot_score_is_one_line_before_or_after_the_walk_forward(
    quality, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    """A foreign market's files through `--ohlcv`: a date written another way was a ValueError,
    --from after --to and a span the files do not price a pandas KeyError after the whole
    walk-forward, the default --from on files under two calendar years a StopIteration, and a
    span inside the walk-forward's training sessions a KeyError. Each is one line: the span
    the files do not price, or the default they cannot give, before any walk-forward."""
    import models.walkforward

    prices, _ = synthetic_prices(instruments=6, days=120, seed=3)
    path = tmp_path / "prices.csv"
    prices[["symbol", "date", "close", "volume", "high", "low"]].to_csv(path, index=False)
    days = sorted(prices["date"].unique())

    def no_walk_forward(*_: object, **__: object) -> None:
        raise AssertionError("the walk-forward ran")

    monkeypatch.setattr(models.walkforward, "walk_forward", no_walk_forward)

    def refused(*extra: str) -> str:
        monkeypatch.setattr(sys, "argv", ["model_quality.py", "--ohlcv", str(path), "--no-next-day", *extra])
        with pytest.raises(SystemExit) as stopped:
            quality.main()
        return str(stopped.value.code) if stopped.value.code != 2 else capsys.readouterr().err.strip().splitlines()[-1]

    assert refused("--from", "03/01/2024").endswith("argument --from: '03/01/2024' is not a date (YYYY-MM-DD)")
    assert refused("--from", "2024-03-01", "--to", "2024-02-01").endswith("--from 2024-03-01 is after --to 2024-02-01")
    assert refused("--from", "2030-01-02", "--to", "2030-12-31") == (
        f"error: no day of the files from 2030-01-02 to 2030-12-31: the files run from {days[0]} to {days[-1]} "
        "(set --from and --to)"
    )
    assert refused().startswith(f"error: no --from by default: the files hold {len(days)} trading days, from {days[0]}")
    # a span the files price but the walk-forward scores nothing of (its training sessions)
    nothing = models.walkforward.WalkForwardResult(pd.DataFrame())
    monkeypatch.setattr(models.walkforward, "walk_forward", lambda *_, **__: nothing)
    assert refused("--from", str(days[5]), "--no-reference").startswith(
        f"error: no scored row from {days[5]} to {days[-1]}: the walk-forward trains on the sessions before its first "
    )
