"""The monitor's day checks (models/monitor.py) on small made-up panels: what a reader of
a check's level would notice on ordinary stores (a market-wide input whose names differ
today, a thin day, a short validation record)."""

from __future__ import annotations

from datetime import date, timedelta

import numpy as np
import pandas as pd

from models import monitor
from models.features import FEATURE_NAMES
from models.monitor import ALERT, OK, Thresholds, input_checks, live_checks

NAMES = [f"S{i:02d}" for i in range(12)]
REFERENCE_DAYS = [date(2025, 1, 1) + timedelta(days=i) for i in range(120)]
CURRENT_DAYS = [date(2025, 6, 1) + timedelta(days=i) for i in range(20)]


def _panel(days: list[date], rng: np.random.Generator, zero_volume=lambda s: 0.0, traded_on_last=None) -> pd.DataFrame:
    """Every name trades every day; market_breadth one value a day; sentiment 0 before news;
    zero_volume_share_20 per name by `zero_volume`; on the last day only `traded_on_last` trade."""
    rows = []
    for d in days:
        breadth = rng.uniform(-0.5, 0.5)
        for s in NAMES:
            row = {"symbol": s, "date": d, "traded": True, **{n: rng.normal() for n in FEATURE_NAMES}}
            row.update(market_breadth=breadth, sentiment=0.0, market_sentiment=0.0)
            row["zero_volume_share_20"] = zero_volume(s)
            if traded_on_last is not None and d == days[-1]:
                row["traded"] = s in traded_on_last
            rows.append(row)
    return pd.DataFrame(rows)


def _checks(reference: pd.DataFrame, current: pd.DataFrame) -> dict[str, monitor.Check]:
    return {c.check_name: c for c in input_checks(reference, current, CURRENT_DAYS[-1], Thresholds())}


def test_an_input_constant_across_names_in_the_reference_is_read_on_every_name_today() -> None:
    """zero_volume_share_20 was 0 for every name in the reference (every name traded every
    day): the check reads the names' median today, not whichever name comes first."""
    rng = np.random.default_rng(1)
    reference = _panel(REFERENCE_DAYS, rng)
    most_thin = _panel(CURRENT_DAYS, rng, lambda s: 0.0 if s == NAMES[0] else 0.3)
    check = _checks(reference, most_thin)["input:zero_volume_share_20"]
    assert check.level == ALERT and check.figures["value"] == 0.3
    assert check.figures["names_range"] == [0.0, 0.3]
    for odd in (NAMES[0], NAMES[5]):  # one name at 5% no-trade days is not the market's value, wherever it sorts
        one_thin = _panel(CURRENT_DAYS, rng, lambda s, odd=odd: 0.05 if s == odd else 0.0)
        check = _checks(reference, one_thin)["input:zero_volume_share_20"]
        assert check.level == OK and check.figures["value"] == 0.0


def _outcomes(rng: np.random.Generator, rows: int) -> pd.DataFrame:
    p = rng.uniform(0.4, 0.6, rows)
    return pd.DataFrame({"p_up": p, "up": (rng.uniform(size=rows) < p).astype(float)})


def test_a_validation_record_without_calibrated_scores_gives_the_score_check_no_figure() -> None:
    none = pd.DataFrame({"date": pd.Series([], dtype=object), "score": pd.Series([], dtype=float)})
    check = monitor.score_check(none, np.linspace(20, 80, 600), 20, Thresholds())
    assert check.level == OK and check.figure is None and check.watch_threshold is None
    assert check.figures["note"] == "no calibrated Scores in the validation record"


def test_the_live_checks_need_a_band_of_enough_validation_chunks() -> None:
    """One chunk of 300 outcomes is a band of one draw: a live record of the same model is
    beyond it about half the time (ALERT on noise, WATCH at the same line). Below
    LIVE_MIN_CHUNKS the checks are OK and say the record is too short, not that it is missing."""
    rng = np.random.default_rng(0)
    t = Thresholds()
    short = live_checks(_outcomes(rng, 348), _outcomes(rng, 300), t)
    assert {c.level for c in short} == {OK} and {c.figure for c in short} == {None}
    assert {c.figures["note"] for c in short} == {
        f"validation record too short: 1 chunk of 300 outcomes (the live checks need {monitor.LIVE_MIN_CHUNKS})"
    }
    missing = live_checks(None, _outcomes(rng, 300), t)
    assert {c.figures["note"] for c in missing} == {monitor.NO_RECORD}
    enough = live_checks(_outcomes(rng, 300 * monitor.LIVE_MIN_CHUNKS), _outcomes(rng, 300), t)
    assert all(c.figure is not None and c.watch_threshold != c.alert_threshold for c in enough)


def test_same_model_noise_rarely_reaches_alert_once_the_band_has_enough_chunks() -> None:
    t = Thresholds()
    alerts = 0
    for seed in range(100):
        rng = np.random.default_rng(seed)
        checks = live_checks(_outcomes(rng, 300 * monitor.LIVE_MIN_CHUNKS), _outcomes(rng, 300), t)
        alerts += sum(c.level == ALERT for c in checks)
    assert alerts / 300 < 0.12  # about 1 / (chunks + 1) per check: the live chunk the worst of them all


def test_a_day_on_which_one_or_two_names_traded_is_no_stuck_feed() -> None:
    """One value covers all of one name: the stuck-feed rule reads a day only when at least
    STUCK_MIN_NAMES names traded; below that the share is shown and the level is the PSI's."""
    rng = np.random.default_rng(2)
    reference = _panel(REFERENCE_DAYS, rng)
    for traded in (NAMES[:1], NAMES[:2]):
        checks = _checks(reference, _panel(CURRENT_DAYS, rng, traded_on_last=traded))
        per_name = [c for c in checks.values() if c.figures.get("market_wide") is False]
        assert per_name and not [c.check_name for c in per_name if c.figures["stuck"] or c.level == ALERT]
        assert {c.figures["top_value_share"] for c in per_name} == {1.0 / len(traded)}
    assert monitor.STUCK_MIN_NAMES == 3
    stuck = _panel(CURRENT_DAYS, rng, traded_on_last=NAMES[:3])
    stuck.loc[stuck["date"] == CURRENT_DAYS[-1], "rsi_14"] = 0.5  # three names, one value: a stuck feed
    check = _checks(reference, stuck)["input:rsi_14"]
    assert check.level == ALERT and check.figures["stuck"] is True


def test_an_input_whose_feed_stopped_is_alert_not_read_as_stable() -> None:
    """A feed that stops (layer 1 down, a market-wide series not delivered) leaves the input
    without a value (NaN) for every traded name: the model reads it down its missing
    branches, and neither a PSI nor a tail share has anything to read (a PSI of 0, a tail
    share of 1: "stable"). It is ALERT from its first day, with a note saying why; a new
    listing's missing windowed inputs (as in the reference) and a thin day are not."""
    rng = np.random.default_rng(4)
    reference = _panel(REFERENCE_DAYS, rng)
    reference.loc[reference["symbol"] == NAMES[0], "volatility_60"] = np.nan  # a new listing, throughout
    current = _panel(CURRENT_DAYS, rng)
    last = current["date"] == CURRENT_DAYS[-1]
    current.loc[last, ["layer1_p_up", "market_breadth"]] = np.nan
    current.loc[last & current["symbol"].isin(NAMES[:1]), "volatility_60"] = np.nan
    checks = _checks(reference, current)
    for name in ("input:layer1_p_up", "input:market_breadth"):
        assert checks[name].level == ALERT, name
        assert checks[name].figures["missing"] is True and checks[name].figures["missing_share"] == 1.0
        assert checks[name].figures["note"] == (
            "missing feed: no value for 12 of the day's 12 traded names (100%; at most 0% on any day of the "
            "validation record); the model read them as missing"
        )
    listing = checks["input:volatility_60"]
    assert listing.level == OK and listing.figures["missing"] is False and "note" not in listing.figures
    thin = _panel(CURRENT_DAYS, rng, traded_on_last=NAMES[:2])
    thin.loc[thin["date"] == CURRENT_DAYS[-1], "layer1_p_up"] = np.nan
    check = _checks(reference, thin)["input:layer1_p_up"]
    assert check.level == OK and check.figures["missing"] is False and check.figures["missing_share"] == 1.0


def test_a_market_wide_input_that_stopped_changing_is_alert_not_at_the_median() -> None:
    """A news feed that stops leaves the market sentiment at 0 (features fill "nothing
    said" with 0), a value the reference knows well: its tail share reads 1.0, "at the
    median", however many days it lasts. A run of one value longer than any in the
    reference (and at least FROZEN_MIN_DAYS) is ALERT with a note; a shorter one is not, and
    an input one value throughout the reference (zero_volume_share_20 here) never is."""
    rng = np.random.default_rng(5)
    reference = _panel(REFERENCE_DAYS, rng)
    daily = reference.groupby("date")["market_breadth"].first().to_numpy()
    median = float(np.sort(daily)[len(daily) // 2])
    for run, level in ((2, OK), (monitor.FROZEN_MIN_DAYS, ALERT), (20, ALERT)):
        current = _panel(CURRENT_DAYS, rng)
        current.loc[current["date"].isin(CURRENT_DAYS[-run:]), "market_breadth"] = median
        checks = _checks(reference, current)
        check = checks["input:market_breadth"]
        assert check.level == level and check.figures["run_days"] == run, run
        assert check.figures["reference_longest_run"] == 1 and check.figures["frozen"] is (level == ALERT)
        if level == ALERT:
            assert check.figures["note"] == (
                f"frozen feed: the same value ({median:.6g}) on each of the last {run} trading days, longer than "
                "any run of one value in the validation record (1 day)"
            )
        assert checks["input:zero_volume_share_20"].level == OK
        assert checks["input:zero_volume_share_20"].figures["frozen"] is False


def test_a_stuck_feed_says_so_in_its_note_not_only_in_its_figures() -> None:
    """A stuck feed is ALERT whatever its PSI says, so its reading ("0.0: WATCH above 0.1,
    ALERT above 0.25; level ALERT", what the API, the CLI and the reports show without a
    note) contradicted its level: the note names the stuck value and its share."""
    rng = np.random.default_rng(6)
    reference = _panel(REFERENCE_DAYS, rng)
    current = _panel(CURRENT_DAYS, rng)
    current.loc[current["date"] == CURRENT_DAYS[-1], "layer1_p_up"] = 0.5
    checks = _checks(reference, current)
    stuck = checks["input:layer1_p_up"]
    assert stuck.level == ALERT and stuck.figures["stuck"] is True and stuck.figure < stuck.alert_threshold
    assert stuck.figures["note"] == (
        "stuck feed: one value (0.5) for 12 of the day's 12 traded names (100%; at most 8% on any day of the "
        "validation record)"
    )
    assert "note" not in checks["input:rsi_14"].figures
