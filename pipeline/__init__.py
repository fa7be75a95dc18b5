"""One function per stage of the trading day, the runner that records every run, the
papermill notebook runner and the `marketintel` CLI."""
from pipeline.runner import run_stage

__all__ = ["run_stage"]
