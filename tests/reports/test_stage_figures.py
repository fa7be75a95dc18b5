"""What the stage notebooks draw (reports/stage_figures.py): a chart with a title naming
the day, or, for nothing to draw, a sentence that says why; never an empty plot."""

from __future__ import annotations

import io
from datetime import date

import pytest
from IPython.display import Markdown

from pipeline.runner import StageResult
from reports import stage_figures
from reports.figures import figure, tight_png

DAY = date(2026, 11, 20)
FILLED = {
    "rows_per_table": ({}, {"row_counts": [{"table": "eod_prices", "rows": 15400}, {"table": "trades", "rows": 347}]}),
    "day_coverage": ({"active_instruments": 59, "traded": 46, "no_trade": 13, "halted": 0}, {}),
    "spreads_by_board": (
        {},
        {"prices": [{"board": "MAIN", "spread_pct": 0.8}, {"board": "JUNIOR", "spread_pct": 12.5}]},
    ),
    "text_intake": (
        {"feeds": 1, "news_new": 4, "news_already_stored": 2, "disclosures_ok": 1, "disclosures_failed": 0},
        {},
    ),
    "sentiment_composite": (
        {},
        {"composite": [{"symbol": "JMF", "score": -0.37, "items": 1}, {"symbol": "HLF", "score": 0.47, "items": 2}]},
    ),
    "features_spread": (
        {},
        {
            "features": [
                {
                    "symbol": s,
                    "rsi_14": r,
                    "momentum_20": m,
                    "volatility_20": 0.02,
                    "zero_volume_share_20": 0.1,
                    "spread_pct": 0.04,
                    "layer1_p_up": 0.5,
                }
                for s, r, m in [("A", 40.0, 0.01), ("B", 60.0, -0.02)]
            ]
        },
    ),
    "importances": (
        {},
        {
            "importances": [
                {"feature": "close_location", "gain_share": 0.18},
                {"feature": "sentiment", "gain_share": 0.09},
            ]
        },
    ),
    "calibration": (
        {},
        {"calibration": [{"mean_score": 35.0, "up_rate": 0.4, "n": 50}, {"mean_score": 65.0, "up_rate": 0.6, "n": 50}]},
    ),
    "orders": (
        {},
        {
            "orders": [
                {"symbol": "CLM", "side": "SELL", "quantity": 1482, "price": "81.250000"},
                {"symbol": "ISB", "side": "BUY", "quantity": 100, "price": "29.70"},
            ]
        },
    ),
    "equity": (
        {"cash": "6460855.833050", "market_value": 3632235.03, "equity": 10093090.86, "liquid_equity": 8986744.56},
        {},
    ),
    "suggestions": ({}, {"suggestions": [{"portfolio_id": "HOUSE", "symbol": "AIS", "side": "BUY", "quantity": 931}]}),
}


def result(summary: dict, tables: dict, status: str = "SUCCEEDED") -> StageResult:
    return StageResult("stage", DAY, "run", status, True, summary, tables)


@pytest.mark.parametrize("name", sorted(FILLED))
def test_each_chart_has_a_title_and_an_empty_day_is_a_sentence(name: str) -> None:
    draw = getattr(stage_figures, name)
    chart = draw(result(*FILLED[name]))
    assert not isinstance(chart, Markdown), chart.data
    assert chart._repr_png_().startswith(b"\x89PNG")
    assert len(repr(chart)) > len("<chart: >") + 10, repr(chart)  # a title, not a bare figure
    empty = draw(result({}, {}))
    assert isinstance(empty, Markdown) and empty.data.endswith(".") and len(empty.data.split()) >= 4, empty.data
    skipped = draw(result({"skipped_reason": "2026-11-21 is a Saturday"}, {}, "SKIPPED"))
    assert isinstance(skipped, Markdown) and "was skipped, 2026-11-21 is a Saturday" in skipped.data


def _pixels(png: bytes):
    import numpy as np
    from PIL import Image

    return np.asarray(Image.open(io.BytesIO(png)).convert("RGB"), dtype=float)


def _savefig_tight(chart) -> bytes:
    buffer = io.BytesIO()
    chart.savefig(buffer, format="png", dpi=chart.dpi, bbox_inches="tight")
    return buffer.getvalue()


@pytest.mark.parametrize("name", sorted(FILLED))
def test_a_charts_png_is_the_picture_savefig_draws(name: str) -> None:
    """`tight_png` (one draw, cropped) shows what `savefig(bbox_inches="tight")` shows: the
    same size and the same pixels (identical for these charts; anti-aliasing could differ at a
    sub-pixel shift)."""
    ours, theirs = (
        _pixels(draw(getattr(stage_figures, name)(result(*FILLED[name])))) for draw in (tight_png, _savefig_tight)
    )
    assert ours.shape == theirs.shape
    assert abs(ours - theirs).mean() < 0.5, abs(ours - theirs).mean()  # of 255: 0 here; one pixel off is 1.8-6.3


def test_a_chart_drawn_past_its_edges_is_widened_as_savefig_widens_it() -> None:
    fig, ax = figure()
    ax.plot([0, 1], [0, 1], label="a label that the legend puts outside the axes")
    ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0))
    ours, theirs = _pixels(tight_png(fig)), _pixels(_savefig_tight(fig))
    assert ours.shape == theirs.shape and ours.shape[1] > fig.get_figwidth() * fig.dpi
    assert abs(ours - theirs).mean() < 0.5


def test_the_analysis_is_markdown_prose_and_the_calibration_cell_always_says_something() -> None:
    prose = stage_figures.analysis(
        result(
            {},
            {"analysis": [{"paragraph": "Market on 2026-11-20: advancers led."}, {"paragraph": "Top signals: LGE."}]},
        )
    )
    assert isinstance(prose, Markdown) and prose.data == "Market on 2026-11-20: advancers led.\n\nTop signals: LGE."
    assert "live out-of-sample record" in stage_figures.calibration(result({}, {"calibration": []})).data


def test_a_news_title_holding_markup_is_shown_as_text_not_run() -> None:
    """A feed's title `&lt;img src=x onerror=alert(1)&gt;` is unescaped by the feed reader
    to `<img src=x onerror=alert(1)>`, stored so, and t1_sentiment's table of texts put it
    in the notebook's HTML as a tag, which ran its script when the notebook was opened.
    Every table cell is HTML-escaped (`styled`): the title reads as it was written."""
    title = "<img src=x onerror=alert(1)>Profit & loss"
    shown = result({}, {"texts": [{"kind": "NEWS", "id": 1, "score": 0.5, "weight": 1.0, "title": title}]})
    html = shown.show("texts")._repr_html_()
    assert "&lt;img src=x onerror=alert(1)&gt;Profit &amp; loss" in html, html
    assert "<img" not in html, html
    import pandas as pd

    from reports.figures import styled

    assert "&lt;b&gt;symbol" in styled(pd.DataFrame({"<b>symbol": ["LIQ"]}))._repr_html_()  # a label too


HOSTILE = "<img src=x onerror=alert(1)>**Profit** & [loss](javascript:alert(1)) | `x`"
# what a notebook shows of it: its text, no tag, no link, no emphasis, no extra table cell
SHOWN = "&lt;img src=x onerror=alert(1)&gt;**Profit** &amp; [loss](javascript:alert(1)) | `x`"


def _page(text: str) -> str:
    """Markdown as a notebook renders it: CommonMark with GFM tables, raw HTML passed
    through as Jupyter's renderer passes it (markdown-it-py, which typer's rich installs)."""
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark").enable("table").render(text)


def test_data_in_a_markdown_cell_is_shown_as_text_not_run() -> None:
    """A news title, a stored name or a symbol holding `<img onerror=...>` reached the stage
    notebooks' Markdown cells as it was: t1_analysis's paragraphs quote the day's news titles,
    a stage's summary table and a skipped stage's sentence quote stored values, and the
    notebook rendered each as live HTML. The data is escaped (`reports.figures.markdown_text`);
    the notebook's own bold and tables stay."""
    from reports.research import markdown_none

    day = result(
        {"fallback_reason": HOSTILE, "symbols": ["LGE", HOSTILE]},
        {"analysis": [{"paragraph": f"{HOSTILE}\n\n# Buy now"}]},
    )
    skipped = result({"skipped_reason": HOSTILE}, {}, status="SKIPPED")
    pages = [
        _page(stage_figures.analysis(day).data),
        _page(day._repr_markdown_()),
        _page(stage_figures.analysis(skipped).data),
        _page(skipped.show("orders").data),
        _page(markdown_none(HOSTILE).data),
    ]
    for page in pages:
        assert SHOWN in page, page
        assert "<img" not in page and "<a " not in page and "<strong>Profit" not in page and "<code>x" not in page, page
        assert "<h1>" not in page, page  # a line break in the data opens no block of its own
    assert "<strong>stage for 2026-11-20: SUCCEEDED.</strong>" in pages[1], pages[1]
    assert pages[1].count("<td>") == 4 and "<td>fallback reason</td>" in pages[1], pages[1]
    assert f"<td>LGE, {SHOWN}</td>" in pages[1], pages[1]
    assert "<code>nse_path</code>" in pages[4], pages[4]  # the author's own Markdown keeps its formatting


def test_a_column_is_formatted_by_its_last_word_not_its_last_letters() -> None:
    """A reviewer's read of the demo's t1_trade notebook: its table of TRAPPED positions
    printed HLF's discount as 33,077, where the PDF, the API and the notebook's own summary
    say 33,076.68: "discount" ends in "count", so the money was rounded as a count. A name is
    matched by its last word ("warning_count", "market_value"), so a "mean" is no "n", a
    "discount" is money, to the cent."""
    discounts = [{"symbol": "HLF", "discount": 33076.68}, {"symbol": "KEX", "discount": 149254.65}]
    html = result({}, {"illiquid_discounts": discounts}).show("illiquid_discounts")._repr_html_()
    assert "33,076.68" in html and "149,254.65" in html, html
    import pandas as pd

    from reports.figures import column_format, fmt_count, fmt_money, styled

    shown = styled(pd.DataFrame({"mean": [0.1234], "min": [0.0567], "warning_count": [3], "market_value": [12.5]}))
    assert ">0.12<" in shown._repr_html_() and ">0.06<" in shown._repr_html_(), "a mean is no count"
    assert column_format("warning_count") is fmt_count and column_format("market_value") is fmt_money
    assert column_format("below") is None and column_format("account") is None
