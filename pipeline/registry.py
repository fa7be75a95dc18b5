"""Every stage the runner knows, by name. A new stage is one entry here: its name and
where its definition lives.

A stage's module is imported when the stage is first looked up, not when the registry
is: a process that runs one stage (an Airflow task's kernel) loads that stage's code
only, and one that only names stages (`marketintel run-day`'s own process, which hands
each stage to a notebook kernel) loads none of it (about 1 s of a run-day's start on 2
cores: the stages bring pandas, the models and the ingest readers). `STAGES` is a
read-only mapping; iterating its names imports nothing, reading a value imports the
stage's module."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from importlib import import_module
from typing import TYPE_CHECKING

from market.errors import InvalidInputError

if TYPE_CHECKING:
    from pipeline.stage import Stage

_DEFINED_IN: dict[str, str] = {  # stage name -> "module:attribute" of its Stage
    "health": "pipeline.health:HEALTH",
    "t0_scrape": "pipeline.t0:T0_SCRAPE",
    "t1_preflight": "pipeline.preflight:PREFLIGHT",
    "t1_ingest_text": "pipeline.text_stages:INGEST_TEXT",
    "t1_sentiment": "pipeline.text_stages:SENTIMENT",
    "t1_features": "pipeline.predict_stages:FEATURES_STAGE",
    "t1_predict": "pipeline.predict_stages:PREDICT",
    "t1_monitor": "pipeline.monitor_stage:MONITOR",
    "t1_analysis": "pipeline.analysis_stage:ANALYSIS",
    "t1_trade": "pipeline.portfolio_stages:EXECUTE",
    "t1_reports": "pipeline.report_stage:REPORTS",
    "t2_suggestions": "pipeline.portfolio_stages:SUGGEST",
    "t3_macro": "pipeline.macro_stage:T3_MACRO",
}

# When a stage may run for a day, for the processes that must not load its code but refuse
# a day before its notebook runs (run-day, `stage run --notebook`, Airflow's tasks:
# pipeline/runner.py `refuse_unreached`): (trading_days_only, after_close), the Stage's own
# two flags, which a test holds equal to these. A stage not listed is a trading-day stage
# run after its close.
_DAY_RULES: dict[str, tuple[bool, bool]] = {
    "health": (False, True),  # any calendar day up to the exchange's today
    "t3_macro": (False, True),
    "t2_suggestions": (True, False),  # the session ahead, before its close
}


def day_rule(name: str) -> tuple[bool, bool]:
    """(trading_days_only, after_close) of the stage `name`, without loading its code."""
    return _DAY_RULES.get(known_stage(name), (True, True))


class _Stages(Mapping[str, "Stage"]):
    """The stages by name, each imported on first read."""

    def __getitem__(self, name: str) -> Stage:
        module, attribute = _DEFINED_IN[name].split(":")
        return getattr(import_module(module), attribute)

    def __contains__(self, name: object) -> bool:
        return name in _DEFINED_IN

    def __iter__(self) -> Iterator[str]:
        return iter(_DEFINED_IN)

    def __len__(self) -> int:
        return len(_DEFINED_IN)


STAGES: Mapping[str, Stage] = _Stages()


def known_stage(name: str) -> str:
    """`name`, if a stage of that name exists (its code is not loaded)."""
    if name not in STAGES:
        known = ", ".join(sorted(STAGES))
        raise InvalidInputError(f"unknown stage '{name}'; known stages: {known}")
    return name


def get_stage(name: str) -> Stage:
    return STAGES[known_stage(name)]
