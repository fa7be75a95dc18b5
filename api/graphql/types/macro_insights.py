from __future__ import annotations

from datetime import date

import strawberry
from strawberry.scalars import JSON

from desk import domain as macro_model  # the domain's MacroInsights, through the desk


@strawberry.type(description="One of the week's national speculation parameters.")
class MacroParameter:
    parameter: str
    value: float
    reading: str
    inputs: JSON


@strawberry.type(description="A national source the parameters draw on.")
class MacroSource:
    code: str
    name: str
    role: str
    latest_release: date | None


@strawberry.type(description="The week's macro parameters with their sources (GET /api/macro_insights).")
class MacroInsights:
    generation: str
    week_start: date
    model_version: str
    parameters: list[MacroParameter]
    sources: list[MacroSource]

    @classmethod
    def from_record(cls, record: macro_model.MacroInsights) -> MacroInsights:
        return cls(
            generation=record.generation,
            week_start=record.week_start,
            model_version=record.model_version,
            parameters=[
                MacroParameter(parameter=p.parameter, value=p.value, reading=p.reading, inputs=p.inputs)
                for p in record.parameters
            ],
            sources=[
                MacroSource(code=s.code, name=s.name, role=s.role, latest_release=s.latest_release)
                for s in record.sources
            ],
        )
