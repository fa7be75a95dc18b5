"""Runs a stage through its papermill notebook: `notebooks/<stage>.ipynb` in, the executed
copy out at `runs/<trading-date>/<stage>.ipynb` for reviewers, listed in `runs/index.md`.

The notebook reads settings from the environment like every other process (so a database
URL with a password never lands in an output notebook); the only parameters are the
trading date, who triggered the run, and `write=True`: a stage notebook opened by hand
defaults to a preview that stores nothing (`write: bool = False` in its parameters cell,
pipeline/runner.py); a run through here (the CLI, Airflow's tasks, the demo) stores.

The kernel talks to papermill over TCP on localhost with CurveZMQ transport encryption:
the kernel manager provisions the kernel's Curve keys (jupyter_client's
`transport_encryption`, "auto": used whenever pyzmq has Curve and the kernelspec declares
it, as ipykernel's does), so no other local user can read or inject a stage's code and
outputs, and ipykernel has no reason to warn "Kernel is running over TCP without
encryption".
"""

from __future__ import annotations

from datetime import date
from pathlib import Path

from jupyter_client.manager import AsyncKernelManager
from traitlets import default

from market.clock import parse_trading_date
from market.errors import ConfigurationError, StageFailedError
from market.settings import Settings, get_settings
from pipeline.registry import get_stage
from pipeline.run_index import write_index


class EncryptedKernelManager(AsyncKernelManager):
    """A kernel manager that provisions CurveZMQ keys when the kernel supports them."""

    @default("transport_encryption")
    def _encrypted(self) -> str:
        return "auto"


def notebook_paths(stage_name: str, trading_date: date, settings: Settings) -> tuple[Path, Path]:
    stage = get_stage(stage_name)
    source = settings.notebooks_dir / f"{stage.name}.ipynb"
    output = settings.runs_dir / trading_date.isoformat() / f"{stage.name}.ipynb"
    return source, output


def run_stage_notebook(
    stage_name: str,
    trading_date: date | str,
    *,
    settings: Settings | None = None,
    trigger: str = "notebook",
) -> Path:
    """Execute the stage's notebook for the date; return the output notebook's path."""
    import papermill
    from papermill.exceptions import PapermillExecutionError

    settings = settings or get_settings()
    day = parse_trading_date(trading_date) if isinstance(trading_date, str) else trading_date
    source, output = notebook_paths(stage_name, day, settings)
    if not source.is_file():
        raise ConfigurationError(f"stage notebook {source} does not exist")
    output.parent.mkdir(parents=True, exist_ok=True)
    try:
        papermill.execute_notebook(
            str(source),
            str(output),
            parameters={"run_date": day.isoformat(), "trigger": trigger, "write": True},
            kernel_name="python3",
            kernel_manager_class=EncryptedKernelManager,
            progress_bar=False,
            execution_timeout=settings.stage_timeout_seconds,
            cwd=str(source.parent),
        )
    except PapermillExecutionError as exc:
        raise StageFailedError(
            f"stage notebook '{stage_name}' for {day.isoformat()} failed ({exc.ename}: {exc.evalue}); see {output}"
        ) from exc
    finally:
        write_index(settings.runs_dir)
    return output
