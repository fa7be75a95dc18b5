"""What each stage notebook draws of its result (`pipeline.runner.StageResult`): one call
per chart, so a notebook stays a few lines. Every function returns a matplotlib Figure, or,
when there is nothing to draw, a Markdown sentence that says why (never an empty plot).

Formatting and chart style come from reports/figures.py.
"""

from __future__ import annotations

from reports.figures import (
    COLOURS,
    PALETTE,
    BarStyle,
    bar,
    figure,
    fmt_count,
    fmt_money,
    fmt_number,
    fmt_pct,
    markdown,
    markdown_text,
    percent_axis,
    styled,
    thousands_axis,
    titled,
)
from reports.format import METRIC_LABELS, metric_value

# t1_features: how each feature reads (fractions as percentages, the rest as numbers)
FEATURE_FORMATS = {
    "rsi_14": fmt_number,
    "bollinger_pct_b": fmt_number,
    "bollinger_bandwidth": fmt_pct,
    "market_breadth": fmt_number,
    "momentum_5": fmt_pct,
    "momentum_20": fmt_pct,
    "momentum_60": fmt_pct,
    "close_location": fmt_number,
    "return_1d": fmt_pct,
    "volatility_20": fmt_pct,
    "volatility_60": fmt_pct,
    "log_value_adv20": fmt_number,
    "volume_ratio_20": fmt_number,
    "zero_volume_share_20": fmt_pct,
    "spread_pct": fmt_pct,
    "sentiment": fmt_number,
    "market_sentiment": fmt_number,
    "layer1_p_up": fmt_pct,
}
SPREAD_FEATURES = [
    ("rsi_14", "RSI (14 days)", False),
    ("momentum_20", "Momentum, 20 days", True),
    ("volatility_20", "Volatility, 20 days (daily)", True),
    ("zero_volume_share_20", "Share of no-trade days, 20 days", True),
    ("spread_pct", "Closing spread", True),
    ("layer1_p_up", "Layer 1 P(up)", True),
]


def _nothing(result, what: str, empty: str | None = None):  # noqa: ANN001, ANN202
    return markdown(result.nothing(what) if result.status == "SKIPPED" or empty is None else empty)


# --- health ---------------------------------------------------------------------------------


def rows_per_table(result, top: int = 20):  # noqa: ANN001, ANN201
    frame = result.frame("row_counts")
    if frame.empty:
        return _nothing(result, "row counts")
    frame = frame.sort_values("rows", ascending=False).head(top)
    fig, ax = bar(
        frame["table"],
        frame["rows"],
        f"Rows per table, the {len(frame)} largest ({result.trading_date})",
        BarStyle(xlabel="rows", horizontal=True, value_format=fmt_count),
    )
    thousands_axis(ax, "x")
    return fig


# --- t0 / pre-flight ------------------------------------------------------------------------


def day_coverage(result):  # noqa: ANN001, ANN201
    """Pre-flight: the day's instruments that traded, did not, or were halted."""
    summary = result.summary
    if "active_instruments" not in summary:
        return _nothing(result, "coverage of the day")
    labels = ["traded", "no trade (volume 0)", "halted"]
    values = [summary.get("traded", 0), summary.get("no_trade", 0), summary.get("halted", 0)]
    fig, ax = bar(
        labels,
        values,
        f"{summary['active_instruments']} active instruments on {result.trading_date}",
        BarStyle(
            ylabel="instruments",
            value_format=fmt_count,
            colours=[PALETTE["teal"], PALETTE["amber"], PALETTE["grey"]],
            width=5.5,
        ),
    )
    return fig


def spreads_by_board(result):  # noqa: ANN001, ANN201
    prices = result.frame("prices")
    if prices.empty or "spread_pct" not in prices:
        return _nothing(result, "prices")
    fig, ax = figure(6.5, 3.2)
    boards = sorted(prices["board"].dropna().unique())
    data = [prices.loc[prices["board"] == b, "spread_pct"].dropna() for b in boards]
    ax.boxplot(data)
    ax.set_xticks(range(1, len(boards) + 1), boards)
    percent_axis(ax, fraction=False)
    titled(ax, f"Closing spread by board, {result.trading_date}", "board", "(ask - bid) / mid")
    fig.tight_layout()
    return fig


# --- T1 text and sentiment ------------------------------------------------------------------


def text_intake(result):  # noqa: ANN001, ANN201
    summary = result.summary
    keys = [
        ("news_new", "news, new"),
        ("news_already_stored", "news, already stored"),
        ("disclosures_ok", "disclosures read"),
        ("disclosures_failed", "disclosures failed"),
        ("disclosures_deferred", "disclosures left for the next run"),
    ]
    if not any(k in summary for k, _ in keys):
        return _nothing(result, "texts")
    values = [summary.get(k, 0) for k, _ in keys]
    feeds = summary.get("feeds", 0)
    if not any(values):
        return markdown(
            f"Nothing new to read on {result.trading_date}: {fmt_count(feeds)} feed(s) checked, no new news "
            "item and no disclosure in the window (a replayed market carries no news)."
        )
    fig, _ = bar(
        [label for _, label in keys],
        values,
        f"Texts taken in on {result.trading_date} from {fmt_count(feeds)} feed(s)",
        BarStyle(ylabel="items", value_format=fmt_count, width=6.5),
    )
    return fig


def sentiment_composite(result, top: int = 20):  # noqa: ANN001, ANN201
    """The names' composites as bars: every name with news, or in a market where more have
    news than a chart can show, the `top` most negative and the `top` most positive (the
    table lists them all; 864 bars at 2,000 names took 3.6 s to draw and could not be read)."""
    composite = result.frame("composite")
    if composite.empty:
        return _nothing(
            result, "sentiment composite", "No instrument had news or disclosures in the window: nothing to plot."
        )
    composite = composite.sort_values("score")
    named = len(composite)
    if named > 2 * top:
        composite = composite.iloc[list(range(top)) + list(range(named - top, named))]
    colours = [PALETTE["amber"] if s < 0 else PALETTE["teal"] for s in composite["score"]]
    which = "" if len(composite) == named else f": the {top} lowest and {top} highest of {named} names"
    fig, ax = bar(
        composite["symbol"],
        composite["score"],
        f"Sentiment composite on {result.trading_date} (-1 most negative, +1 most positive){which}",
        BarStyle(xlabel="composite score", horizontal=True, value_format=lambda v: f"{v:+.2f}", colours=colours),
    )
    ax.axvline(0, color=PALETTE["grey"], linewidth=0.8)
    return fig


# --- T1 features and prediction -------------------------------------------------------------


def features_table(result):  # noqa: ANN001, ANN201
    frame = result.frame("features")
    if frame.empty:
        return _nothing(result, "features")
    return styled(frame, {c: f for c, f in FEATURE_FORMATS.items() if c in frame})


def features_spread_table(result):  # noqa: ANN001, ANN201
    """Each feature's quartiles across the day's instruments, formatted as the feature reads."""
    frame = result.frame("features")
    if frame.empty:
        return _nothing(result, "features")
    numeric = frame.select_dtypes("number")
    spread = numeric.describe(percentiles=[0.25, 0.5, 0.75]).T.rename(columns={"count": "instruments"})
    spread.index.name = "feature"
    spread = spread.reset_index()
    cells = spread.astype(object)
    for i, row in spread.iterrows():
        show = FEATURE_FORMATS.get(row["feature"], fmt_number)
        for column in ("mean", "std", "min", "25%", "50%", "75%", "max"):
            cells.at[i, column] = show(row[column])
        cells.at[i, "instruments"] = fmt_count(row["instruments"])
    return styled(cells)


def features_spread(result):  # noqa: ANN001, ANN201
    frame = result.frame("features")
    if frame.empty:
        return _nothing(result, "features")
    shown = [(c, t, p) for c, t, p in SPREAD_FEATURES if c in frame]
    fig, axes = figure(10, 5.2, ncols=3, nrows=2)
    for ax, (column, title, as_pct) in zip(axes, shown):
        values = frame[column].dropna()
        ax.hist(values, bins=15, color=PALETTE["navy"], edgecolor="white", linewidth=0.5)
        titled(ax, title, "", "instruments")
        if as_pct:
            percent_axis(ax, "x")
    for ax in list(axes)[len(shown) :]:
        ax.set_visible(False)
    fig.suptitle(
        f"Features across the {len(frame)} instruments priced on {result.trading_date}",
        fontsize=11,
        color=PALETTE["navy"],
        x=0.01,
        ha="left",
    )
    fig.tight_layout()
    return fig


def ranking_table(result):  # noqa: ANN001, ANN201
    frame = result.frame("ranking")
    if frame.empty:
        return _nothing(result, "ranking")
    return styled(frame, {"score": lambda v: fmt_number(v, 1)})


def importances(result):  # noqa: ANN001, ANN201
    frame = result.frame("importances")
    if frame.empty:
        return _nothing(result, "feature importances", "No feature importances: no model scored this day.")
    fig, ax = bar(
        frame["feature"],
        frame["gain_share"],
        "What the model leans on: share of total gain per feature",
        BarStyle(xlabel="share of gain", horizontal=True, value_format=lambda v: fmt_pct(v, 1)),
    )
    percent_axis(ax, "x")
    return fig


def metrics_table(result):  # noqa: ANN001, ANN201
    frame = result.frame("metrics")
    if frame.empty:
        return _nothing(
            result,
            "metrics",
            "No out-of-sample record yet: no stored live prediction before this day has a known outcome.",
        )
    rows = [
        {
            "metric": METRIC_LABELS.get(r["metric"], r["metric"].replace("_", " ")),
            "value": metric_value(r["metric"], r["value"]),
            "base rate": metric_value(r["metric"], r["base_rate"]),
            "sample": fmt_count(r["n"]),
        }
        for r in frame.to_dict("records")
    ]
    import pandas as pd

    return styled(pd.DataFrame(rows))


def calibration(result):  # noqa: ANN001, ANN201
    frame = result.frame("calibration")
    if frame.empty or "mean_score" not in frame:
        return _nothing(
            result,
            "calibration",
            "No calibration chart yet: it is drawn from the live out-of-sample "
            "record, which has no prediction with a known outcome before this day.",
        )
    fig, ax = figure(4.5, 4.2)
    ax.plot([0, 100], [0, 1], linestyle="--", color=PALETTE["grey"], linewidth=0.8, label="perfect calibration")
    ax.scatter(frame["mean_score"], frame["up_rate"], color=PALETTE["navy"], zorder=3, label="Score decile")
    percent_axis(ax)
    ax.legend(fontsize=8, frameon=False)
    titled(ax, "Calibration: Score against the share that rose", "mean Score of the decile (0-100)", "rose")
    fig.tight_layout()
    return fig


# --- T1 analysis and trading ----------------------------------------------------------------


def analysis(result):  # noqa: ANN001, ANN201
    """The day's analysis, its paragraphs as the writer wrote them: data (they quote news
    titles and names), shown as text."""
    paragraphs = [markdown_text(row["paragraph"]) for row in result.tables.get("analysis", [])]
    if not paragraphs:
        return _nothing(result, "analysis")
    return markdown("\n\n".join(paragraphs))


def orders(result):  # noqa: ANN001, ANN201
    frame = result.frame("orders")
    if frame.empty:
        return _nothing(result, "orders", "No order filled in this session, so there is nothing to chart.")
    frame = frame.assign(value=frame["quantity"].astype(float) * frame["price"].astype(float))
    frame = frame.assign(signed=frame["value"].where(frame["side"] == "BUY", -frame["value"])).sort_values("signed")
    colours = [PALETTE["teal"] if s == "BUY" else PALETTE["amber"] for s in frame["side"]]
    fig, ax = bar(
        [f"{s} {side}" for s, side in zip(frame["symbol"], frame["side"])],
        frame["signed"],
        f"Orders filled in the session of {result.trading_date}: value bought (+) and sold (-)",
        BarStyle(xlabel="value", horizontal=True, value_format=fmt_money, colours=colours),
    )
    thousands_axis(ax, "x")
    ax.axvline(0, color=PALETTE["grey"], linewidth=0.8)
    return fig


def equity(result):  # noqa: ANN001, ANN201
    summary = result.summary
    if "equity" not in summary:
        return _nothing(result, "portfolio valuation")
    labels = ["cash", "market value", "equity", "liquid equity"]
    values = [float(summary.get(k.replace(" ", "_"), 0) or 0) for k in labels]
    fig, ax = bar(
        labels,
        values,
        f"AI portfolio after the close of {result.trading_date}",
        BarStyle(
            ylabel="currency units",
            value_format=fmt_money,
            colours=[PALETTE["grey"], PALETTE["navy"], PALETTE["teal"], PALETTE["amber"]],
            width=6,
        ),
    )
    thousands_axis(ax)
    return fig


def suggestions(result):  # noqa: ANN001, ANN201
    frame = result.frame("suggestions")
    if frame.empty:
        return _nothing(
            result, "suggestions", "No suggestion for any portfolio on this day, so there is nothing to chart."
        )
    counts = frame.groupby(["symbol", "side"]).size().unstack(fill_value=0)
    fig, ax = figure(7, 3.2)
    bottom = None
    for i, side in enumerate(counts.columns):
        ax.bar(
            counts.index,
            counts[side],
            bottom=bottom,
            label=side,
            color=PALETTE["teal"] if side == "BUY" else PALETTE["amber"] if side == "SELL" else COLOURS[i],
        )
        bottom = counts[side] if bottom is None else bottom + counts[side]
    ax.set_ylim(0, float(counts.sum(axis=1).max()) * 1.3)  # room for the legend above the bars
    ax.legend(fontsize=8, frameon=False, ncols=len(counts.columns), loc="upper right")
    ax.yaxis.get_major_locator().set_params(integer=True)
    titled(
        ax,
        f"Suggestions for {result.trading_date} by instrument and side, over "
        f"{frame['portfolio_id'].nunique()} portfolio(s)",
        "",
        "suggestions",
    )
    fig.tight_layout()
    return fig


def spreads_by_board_table(result):  # noqa: ANN001, ANN201
    """Closing spread quartiles per board (percent of mid)."""
    prices = result.frame("prices")
    if prices.empty or "spread_pct" not in prices:
        return _nothing(result, "prices")
    table = prices.groupby("board")["spread_pct"].describe().rename(columns={"count": "quotes"}).reset_index()
    pct = lambda v: fmt_pct(v, 2, fraction=False)  # noqa: E731
    return styled(table, {"quotes": fmt_count, **{c: pct for c in ("mean", "std", "min", "25%", "50%", "75%", "max")}})


# --- T3 macro -------------------------------------------------------------------------------


def _suptitle(fig, text: str) -> None:  # noqa: ANN001
    fig.suptitle(text, fontsize=11, color=PALETTE["navy"], x=0.01, ha="left")


def _lines(frame, title: str, missing: str = ""):  # noqa: ANN001, ANN202
    """One small chart per column of `frame` (dates down its index), three to a row, under
    `title`; `missing` names what is not drawn."""
    import pandas as pd

    rows = -(-len(frame.columns) // 3)
    fig, axes = figure(12, 2.4 * rows + 0.6, ncols=3, nrows=rows)
    when = pd.to_datetime(frame.index)
    for ax, column in zip(axes, frame.columns):
        ax.plot(when, frame[column], marker=".", color=PALETTE["navy"], linewidth=1)
        titled(ax, str(column))
        ax.tick_params(axis="x", rotation=45)
    for ax in list(axes)[len(frame.columns) :]:
        ax.set_visible(False)
    _suptitle(fig, f"{title}; {missing}" if missing else title)
    fig.tight_layout()
    return fig


def macro_panel(result):  # noqa: ANN001, ANN201
    """Each indicator of the weekly panel as known before each of the last 13 Mondays; an
    indicator not out before any of them (the sources' first weeks) is named, not drawn."""
    import pandas as pd

    frame = result.frame("panel")
    if frame.empty:
        return _nothing(result, "weekly panel")
    panel = frame.set_index("week_start").apply(pd.to_numeric, errors="coerce")
    known = panel.dropna(axis=1, how="all")
    absent = [str(c) for c in panel.columns if c not in known]
    if known.empty:
        return markdown(f"No indicator of the weekly panel was known before any of the last {len(panel)} Mondays.")
    said = f"not known before any of the last {len(panel)} Mondays: {', '.join(absent)}" if absent else ""
    return _lines(known, f"Each indicator as known before each Monday, {panel.index[0]} to {panel.index[-1]}", said)


def revisions_table(result, periods: int = 6):  # noqa: ANN001, ANN201
    """The last `periods` periods of each revised indicator: first release, latest known on
    the run date, and the revision."""
    frame = result.frame("revisions")
    if frame.empty:
        return markdown(f"No NIR or GDP release was known by {result.trading_date}.")
    shown = frame.groupby("indicator_code", sort=False).tail(periods)
    return styled(shown, {c: fmt_number for c in ("first", "latest", "revision")})


def revisions(result):  # noqa: ANN001, ANN201
    """First release against the latest known, per period, for each revised indicator; one
    with no release known by the run date says so in its place."""
    frame = result.frame("revisions")
    if frame.empty:
        return markdown(f"No NIR or GDP release was known by {result.trading_date}.")
    fig, axes = figure(12, 3.5, ncols=2)
    for ax, code in zip(axes, ("NIR", "GDP")):
        recent = frame[frame["indicator_code"] == code]
        if recent.empty:
            ax.set_axis_off()
            titled(ax, f"No {code} release was known by {result.trading_date}.")
            continue
        for column, colour in (("first", PALETTE["grey"]), ("latest", PALETTE["navy"])):
            ax.plot(recent["period"], recent[column], marker="o", color=colour, label=column)
        ax.legend(fontsize=8, frameon=False)
        titled(ax, f"{code}: first release vs latest")
        ax.tick_params(axis="x", rotation=45)
    fig.tight_layout()
    return fig


def parameter_weeks(result):  # noqa: ANN001, ANN201
    """The macro parameters week by week, up to the run date."""
    frame = result.frame("weekly")
    if frame.empty:
        return markdown(f"No week up to {result.trading_date} has a macro parameter yet.")
    weekly = frame.pivot_table(index="week_start", columns="parameter", values="value")
    return _lines(weekly, f"{len(weekly)} weeks, {weekly.index[0]} to {weekly.index[-1]}")
