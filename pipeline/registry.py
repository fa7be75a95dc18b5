"""Every stage the runner knows, by name. A new stage is one entry here."""

from __future__ import annotations

from market.errors import InvalidInputError
from pipeline.analysis_stage import ANALYSIS
from pipeline.health import HEALTH
from pipeline.macro_stage import T3_MACRO
from pipeline.monitor_stage import MONITOR
from pipeline.portfolio_stages import EXECUTE, SUGGEST
from pipeline.predict_stages import FEATURES_STAGE, PREDICT
from pipeline.preflight import PREFLIGHT
from pipeline.stage import Stage
from pipeline.t0 import T0_SCRAPE
from pipeline.text_stages import INGEST_TEXT, SENTIMENT

STAGES: dict[str, Stage] = {
    stage.name: stage
    for stage in [
        HEALTH,
        T0_SCRAPE,
        PREFLIGHT,
        INGEST_TEXT,
        SENTIMENT,
        FEATURES_STAGE,
        PREDICT,
        MONITOR,
        ANALYSIS,
        EXECUTE,
        SUGGEST,
        T3_MACRO,
    ]
}


def get_stage(name: str) -> Stage:
    try:
        return STAGES[name]
    except KeyError:
        known = ", ".join(sorted(STAGES))
        raise InvalidInputError(f"unknown stage '{name}'; known stages: {known}") from None
