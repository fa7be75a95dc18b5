"""T1 step 4: features, then layer 1 and the risk model (retraining when due)."""

from __future__ import annotations

from datetime import date
from typing import TYPE_CHECKING

from sqlalchemy import Connection, func, select

from market.errors import NotReadyError
from models.decisions import HORIZON
from models.features import FEATURE_NAMES
from models.layer1 import load_layer1
from models.reasons import served as served_reasons
from pipeline.scoring import feature_rows, score_day, store_features
from pipeline.stage import Stage, StageContext, StageOutcome
from store import tables
from views.bars import refresh_bars

if TYPE_CHECKING:
    import pandas as pd

HORIZON_DAYS = HORIZON  # the label's holding horizon (models/decisions.py)


def require_prices(conn: Connection, day: date) -> None:
    """NotReadyError for a day without stored closes: T0 has not delivered it (or failed),
    and a T1 stage run on it would report SUCCEEDED for 0 instruments."""
    c = tables.eod_prices.c
    if not conn.execute(select(func.count()).where(c.trading_date == day)).scalar():
        raise NotReadyError(
            f"no closes are stored for {day.isoformat()}: T0 has not delivered the day "
            f"(marketintel scrape --date {day.isoformat()})"
        )


def run_features(ctx: StageContext) -> StageOutcome:
    backend = load_layer1(ctx.settings.foundation_model, ctx.settings.foundation_model_offline)
    with ctx.transaction() as conn:
        require_prices(conn, ctx.trading_date)
        panel = feature_rows(conn, ctx.trading_date, backend, HORIZON_DAYS)
        written = store_features(conn, panel, ctx.trading_date)
        bars = refresh_bars(conn)  # the API's daily bars and indicators, if T0's refresh has not built them
    today = panel[panel["date"] == ctx.trading_date]
    return StageOutcome(
        summary={
            "instruments": len(today),
            "feature_rows_written": written,
            "daily_bars_written": bars,
            "layer1": backend.model_id,
            "layer1_is_fallback": backend.is_fallback,
        },
        tables={"features": today[["symbol", *FEATURE_NAMES]].round(4).to_dict("records")},
    )


def run_predict(ctx: StageContext) -> StageOutcome:
    backend = load_layer1(ctx.settings.foundation_model, ctx.settings.foundation_model_offline)
    with ctx.transaction() as conn:
        require_prices(conn, ctx.trading_date)
        result = score_day(conn, ctx.settings, ctx.trading_date, ctx.calendar, backend, HORIZON_DAYS)
    day = result.predictions.sort_values("score", ascending=False)
    metrics = result.track_record.get("metrics", {})
    return StageOutcome(
        summary={
            "model_id": result.model_id,
            "retrained": result.trained is not None,
            "warm_start": bool(result.trained and result.trained["warm_start"]),
            "layer1": backend.model_id,
            "layer1_is_fallback": backend.is_fallback,
            "calibration_rows": result.calibration_rows,
            "actions": day["action"].value_counts().to_dict(),
            "terciles": day["tercile"].value_counts().to_dict(),
        },
        tables={
            "ranking": day[["symbol", "score", "action", "weight", "tercile", "predicted_return", "layer1_p_up"]]
            .round(4)
            .to_dict("records"),
            "reasons": reasons_table(day),
            "importances": [
                {"feature": k, "gain_share": v} for k, v in sorted(result.importances.items(), key=lambda x: -x[1])
            ],
            "metrics": [
                {
                    "metric": k,
                    "value": m["value"],
                    "base_rate": m["base_rate"],
                    "n": m["sample_size"],
                    **{f"baseline_{b}": v for b, v in m["baselines"].items()},
                }
                for k, m in metrics.items()
            ],
            "calibration": result.track_record.get("calibration", []),
        },
    )


TOP_NAMES = 10  # names in the notebook's table of reasons


def reasons_table(day: pd.DataFrame, top: int = TOP_NAMES) -> list[dict]:
    """The day's `top` names by Score (ranked as `ranking`) with the three inputs that moved
    each prediction most: label and signed contribution to the raw score (models/reasons.py)."""
    rows = []
    for r in day.head(top).itertuples():
        reasons = served_reasons(getattr(r, "reasons", None))
        inputs = reasons["inputs"] if reasons else []
        rows.append(
            {
                "symbol": r.symbol,
                "score": r.score,
                "action": r.action,
                **{f"reason_{i + 1}": f"{x['input']} {x['contribution']:+.3f}" for i, x in enumerate(inputs)},
                "base_value": round(reasons["base_value"], 3) if reasons else None,
            }
        )
    return rows


FEATURES_STAGE = Stage("t1_features", run_features, "Compute the 14 features of every instrument for the day.")
PREDICT = Stage(
    "t1_predict", run_predict, "Layer 1 and the risk model: Score, Action, Weight, Tercile (retrain when due)."
)
