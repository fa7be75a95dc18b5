"""The `marketintel` command line. Every command is a thin adapter over a service
function; a domain error is printed as one line (`error: ...`) with exit status 1."""
from __future__ import annotations

import functools
import json
import secrets
from typing import Callable, Optional

import typer

from market.errors import MarketIntelError
from market.logging import configure_logging
from market.settings import get_settings

app = typer.Typer(help="Market intelligence service for a small stock exchange.", no_args_is_help=True)
db_app = typer.Typer(help="The database: apply migrations, show their state.", no_args_is_help=True)
stage_app = typer.Typer(help="Run the stages of the trading day.", no_args_is_help=True)
keys_app = typer.Typer(help="API keys.", no_args_is_help=True)
app.add_typer(db_app, name="db")
app.add_typer(stage_app, name="stage")
app.add_typer(keys_app, name="keys")


def one_line_errors(command: Callable) -> Callable:
    """Turn a domain error into `error: <message>` on stderr and exit status 1."""

    @functools.wraps(command)
    def wrapper(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        try:
            return command(*args, **kwargs)
        except MarketIntelError as exc:
            typer.echo(f"error: {exc.detail}", err=True)
            raise typer.Exit(1) from None

    return wrapper


@app.callback()
def _setup() -> None:
    configure_logging(get_settings().log_level)


@db_app.command("upgrade")
@one_line_errors
def db_upgrade() -> None:
    """Apply every pending migration in sql/ (safe to repeat)."""
    from store.engine import migration_engine
    from store.migrations import upgrade

    applied = upgrade(migration_engine(get_settings()))
    if applied:
        for migration in applied:
            typer.echo(f"applied {migration.version:04d}_{migration.name}")
    else:
        typer.echo("schema is up to date; nothing to apply")


@db_app.command("status")
@one_line_errors
def db_status() -> None:
    """List migrations with their state: applied, pending or modified."""
    from store.engine import migration_engine
    from store.migrations import status

    settings = get_settings()
    typer.echo(f"database: {_redacted(settings.database_url)}")
    for state in status(migration_engine(settings)):
        when = state.applied_at.isoformat(timespec="seconds") if state.applied_at else "-"
        typer.echo(f"{state.version:04d}  {state.name:<24} {state.state:<9} {when}")


@stage_app.command("list")
def stage_list() -> None:
    """Show the stages the runner knows."""
    from pipeline.registry import STAGES

    for stage in STAGES.values():
        typer.echo(f"{stage.name:<16} {stage.description}")


@stage_app.command("run")
@one_line_errors
def stage_run(
    name: str = typer.Argument(..., help="Stage name (see `marketintel stage list`)."),
    date: Optional[str] = typer.Option(
        None, "--date", help="Trading date, YYYY-MM-DD (exchange time); default: the latest closed trading day."
    ),
    notebook: bool = typer.Option(False, "--notebook", help="Run through the stage's papermill notebook."),
) -> None:
    """Run one stage for one trading date."""
    if date is None:
        from market.clock import exchange_now, latest_closed_trading_day

        date = latest_closed_trading_day(exchange_now()).isoformat()
    if notebook:
        from pipeline.notebooks import run_stage_notebook

        output = run_stage_notebook(name, date, trigger="cli")
        typer.echo(f"stage {name} for {date} succeeded; output notebook: {output}")
        return
    from pipeline.runner import run_stage

    result = run_stage(name, date, trigger="cli")
    typer.echo(f"stage {name} for {date}: {result.status}")
    typer.echo(json.dumps(result.summary, indent=2, default=str))


@keys_app.command("new-admin")
def keys_new_admin() -> None:
    """Print a fresh admin key for MARKETINTEL_ADMIN_KEY (nothing is stored)."""
    typer.echo(f"svc-admin-{secrets.token_hex(16)}")


@app.command("serve")
@one_line_errors
def serve(
    host: str = typer.Option("127.0.0.1", help="Interface to listen on."),
    port: int = typer.Option(8000, help="TCP port."),
    workers: int = typer.Option(1, min=1, help="Worker processes."),
) -> None:
    """Start the HTTP API (uvicorn). Refuses to start without a valid admin key."""
    import uvicorn

    get_settings().checked_admin_key()
    uvicorn.run("api.app:create_app", factory=True, host=host, port=port, workers=workers)


def _redacted(url: str) -> str:
    from sqlalchemy.engine import make_url

    return make_url(url).render_as_string(hide_password=True)


def main(argv: Optional[list[str]] = None) -> None:
    app(args=argv)
