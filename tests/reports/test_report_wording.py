"""What the reports say where a careful reader checks it against the API (a review of the
demo's two reports beside the API's answers): a check that never ran is not counted OK; a
metric's sample says whether it counts predictions or days; the track record says which of
its executed days were a replay on the validation record."""

from __future__ import annotations

from reports.format import metric_rows, record_caption
from reports.model_health import checks_ok, waiting_note
from reports.quant_briefing import record_split


def check(state: str, figure: float | None) -> dict:
    return {"check": "c", "state": state, "figure": figure}


def test_a_check_without_a_figure_is_not_counted_ok() -> None:
    checks = [check("OK", 0.1)] * 15 + [check("WATCH", 0.3)] + [check("OK", None)] * 3
    assert checks_ok(checks) == "15 of 16, 3 not run yet"
    assert checks_ok([check("OK", 0.1), check("ALERT", 0.9)]) == "1 of 2"
    assert checks_ok([check("OK", None)] * 4) == "none run yet (4 waiting)"


def test_each_check_not_run_says_its_own_reason() -> None:
    waiting = [
        {"check": "live_accuracy", "state": "OK", "figure": None, "note": "not enough live outcomes"},
        {"check": "live_brier", "state": "OK", "figure": None, "note": "not enough live outcomes"},
        {"check": "input:rsi_14", "state": "OK", "figure": None, "note": "no validation record to compare with."},
    ]
    assert waiting_note(waiting) == (
        "Not run yet (live_accuracy, live_brier): not enough live outcomes. "
        "Not run yet (input:rsi_14): no validation record to compare with."
    )


def test_a_metric_sample_says_what_it_counts() -> None:
    metric = {"value": 0.05, "base_rate": 0.0, "sample_size": 114}
    record = {"metrics": {"rank_ic": metric, "binary_accuracy": {**metric, "value": 0.53, "sample_size": 7906}}}
    rows = metric_rows(record, ["binary_accuracy", "rank_ic"])  # type: ignore[arg-type]
    assert [r[-1] for r in rows] == ["7,906 predictions", "114 days"]
    one = metric_rows({"metrics": {"rank_ic": {**metric, "sample_size": 1}}}, ["rank_ic"])  # type: ignore[arg-type]
    assert one[0][-1] == "1 day"


def test_the_track_record_says_which_days_were_a_replay() -> None:
    replayed = {"days": 60, "first": "2026-09-03", "last": "2026-11-26"}
    one_day = {"days": 1, "first": "2026-11-27", "last": "2026-11-27"}  # the statistics' dates of a day alone
    split = record_split({"records": {"validation": replayed, "live": one_day}})
    assert split == (
        ": 60 replayed on the validation record's out-of-sample predictions before the first live day "
        "(2026-09-03 to 2026-11-26), 1 live (2026-11-27)"
    )
    assert record_split({"records": {"validation": replayed}}).startswith(", all replayed on the validation record")
    assert record_split({"records": {"live": replayed}}) == ", all live"
    assert record_split({}) == ""


def test_an_empty_record_caption_gives_its_reason_in_sentences() -> None:
    """Before any model: the shown record's label with its reason and a full stop, then the
    other record's, never two labels run together."""

    def empty(record: str, label: str, reason: str) -> dict:
        return {"record": record, "label": label, "period_start": None, "period_end": None, "reason": reason}

    perf = {
        "horizon_days": None,
        "validation": empty("validation", "Validation record (walk-forward)", "no model has been trained yet"),
        "live": empty("live", "Live record (predictions made each day)", "no model has been trained yet"),
    }
    assert record_caption(perf, perf["validation"]) == (  # type: ignore[arg-type]
        "Validation record (walk-forward): no model has been trained yet. "
        "Live record (predictions made each day): no model has been trained yet."
    )


def test_each_total_return_says_to_which_day() -> None:
    """T0 delivered, T1 not yet run: the AI portfolio is valued at a close after its last
    executed day, so its total return is not the track record's; each says which day."""
    from types import SimpleNamespace

    from reports.layout import render
    from reports.quant_briefing import _book_rows, _portfolio
    from tests.reports.pdf import read

    record = {"first": "2026-09-03", "last": "2026-11-26", "total_return": 0.0275, "annual_return": 0.1}
    record |= dict.fromkeys(("annual_volatility", "sharpe", "sortino", "max_drawdown", "calmar"))
    columns = SimpleNamespace(against=lambda *_: ["", ""])
    assert _book_rows(record, columns, "JMD")[0][:2] == ["Total return to 2026-11-26", "+2.75%"]  # type: ignore[arg-type]
    ai = {
        "started": True, "positions_count": 0, "positions": [], "allocation": [], "equity": 1.0, "cash": 1.0,
        "liquid_equity": 1.0, "total_return_pct": 2.38, "as_of": "2026-11-27",
    }  # fmt: skip

    def shown(section: dict) -> str:
        pdf = render(_portfolio(section, record, "JMD"), company="c", title="t", page_size="A4", subject="s").pdf  # type: ignore[arg-type]
        return read(pdf).text

    assert "Last executed day 2026-11-26 (the track record's total return runs to it)" in shown(ai)
    assert "Last executed day" not in shown({**ai, "as_of": "2026-11-26"})


def test_a_figure_a_year_not_annualised_reads_as_a_dash_in_the_research_table() -> None:
    """Under a year of returns the track record's figures a year are null (portfolio/track_record.py
    `under_a_year`): the research notebooks' backtest table prints "-", never "-x" or "nan"."""
    from types import SimpleNamespace

    from reports.research import backtest_table

    figures = {"total_return": 0.01, "annual_return": None, "annual_turnover": None, "calmar": None}
    shown = backtest_table({"book": SimpleNamespace(figures=figures)}).data.set_index("figure")["book"]
    assert shown[["annual return", "annual turnover", "calmar"]].tolist() == ["-", "-", "-"]
    assert shown["total return"] == "+1.00%"


def test_the_record_caption_counts_the_predictions_with_an_outcome_over_their_span() -> None:
    """A reviewer's read of the demo: "Validation record ...: 2026-05-14 to 2026-11-30, 7,906
    predictions by 28 models", where the record holds 8,260 predictions over that span and
    7,906 is those with a realised outcome (the API's `predictions`), made through 2026-11-20
    (its `evaluated_through`). The caption says which predictions it counts."""
    record = {
        "record": "validation",
        "label": "Validation record (walk-forward)",
        "period_start": "2026-05-14",
        "period_end": "2026-11-30",
        "evaluated_through": "2026-11-20",
        "predictions": 7906,
        "models": 28,
        "reason": None,
    }
    live = {"record": "live", "label": "Live record", "period_start": None, "reason": "no outcome yet"}
    perf = {"horizon_days": 5, "validation": record, "live": live}
    assert record_caption(perf, record).startswith(  # type: ignore[arg-type]
        "Validation record (walk-forward): 2026-05-14 to 2026-11-30, 7,906 predictions with a realised outcome "
        "(those made through 2026-11-20) by 28 models."
    )
    whole = {**record, "evaluated_through": "2026-11-30", "predictions": 1, "models": None}
    assert record_caption({**perf, "validation": whole}, whole).startswith(  # type: ignore[arg-type]
        "Validation record (walk-forward): 2026-05-14 to 2026-11-30, 1 prediction with a realised outcome."
    )
