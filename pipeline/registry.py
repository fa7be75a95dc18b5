"""Every stage the runner knows, by name. A new stage is one entry here."""
from __future__ import annotations

from market.errors import InvalidInputError
from pipeline.health import HEALTH
from pipeline.stage import Stage

STAGES: dict[str, Stage] = {stage.name: stage for stage in [HEALTH]}


def get_stage(name: str) -> Stage:
    try:
        return STAGES[name]
    except KeyError:
        known = ", ".join(sorted(STAGES))
        raise InvalidInputError(f"unknown stage '{name}'; known stages: {known}") from None
