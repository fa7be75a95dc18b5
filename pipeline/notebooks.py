"""Runs a stage through its papermill notebook: `notebooks/<stage>.ipynb` in, the executed
copy out at `runs/<trading-date>/<stage>.ipynb` for reviewers, listed in `runs/index.md`.
A re-run of a stage whose notebook there succeeded runs beside it
(`<stage>.<run id>.ipynb`, `rerun_path`) and replaces it only when it succeeds too: a
failed re-run leaves the day's succeeded notebook, as it leaves the store.

The notebook reads settings from the environment like every other process (so a database
URL with a password never lands in an output notebook): its kernel, started in the
notebooks' folder, gets the settings of the process that runs it in its environment (the
`.env` that process read, a relative path made absolute: `kernel_environment`), so it
reads the store and folders that process reads; the only parameters are the
trading date, who triggered the run, and `write=True`: a stage notebook opened by hand
defaults to a preview that stores nothing (`write: bool = False` in its parameters cell,
pipeline/runner.py); a run through here (the CLI, Airflow's tasks, the demo) stores.

The kernel talks to papermill over TCP on localhost with CurveZMQ transport encryption:
the kernel manager provisions the kernel's Curve keys (jupyter_client's
`transport_encryption`, "auto": used whenever pyzmq has Curve and the kernelspec declares
it, as ipykernel's does), so no other local user can read or inject a stage's code and
outputs, and ipykernel has no reason to warn "Kernel is running over TCP without
encryption".

A sequence of stages in one process (`marketintel run-day`, the demo) runs inside
`one_kernel()`: its stages share one kernel instead of starting one each, which saves the
kernel's start and the imports every stage notebook makes (about 2 s a stage on 2 cores,
most of a small stage's time), and talk to it through one client (`_KeptClient`: no new
channels and no readiness wait per stage, 0.4 s a stage). The kernel is launched before
papermill is imported, so it boots meanwhile. What a stage inherits from the one before is the modules
a fresh kernel would import anyway, and the process-wide caches that are keyed by what
they read (the trading calendar by its file's path, the report fonts), which a fresh
kernel would build the same from the same environment:

- after each notebook the kernel forgets: IPython's `reset(new_session=True)` empties the
  namespace and restarts the execution count at 1 (an executed notebook reads as a fresh
  kernel's), the settings read from the environment are read again and the database
  connections are closed, so an idle kernel holds none between stages
  (`forget_stage_state`);
- the kernel is started again when the environment it was started with changed (the
  demo sets the exchange's address between its stages), so a stage always reads the
  environment of the moment it runs, as its own kernel would;
- after a stage fails, times out or is interrupted, its kernel is shut down and the next
  stage gets a fresh one;
- the kernel is shut down when the block ends, however it ends.

Airflow's tasks and `marketintel stage run` run one stage per process, in a kernel of its
own, as before.
"""

from __future__ import annotations

import asyncio
import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import date
from functools import cache
from pathlib import Path

from jupyter_client.asynchronous import AsyncKernelClient
from jupyter_client.manager import AsyncKernelManager
from jupyter_core.utils import run_sync
from traitlets import default

from market.clock import default_calendar, parse_trading_date
from market.errors import ConfigurationError, StageFailedError
from market.settings import Settings, get_settings, settings_environment
from pipeline.registry import day_rule, known_stage
from pipeline.run_index import succeeded, write_index
from pipeline.runner import refuse_to_start
from store.engine import dispose_engines


def kernel_environment() -> dict[str, str]:
    """The environment a stage's kernel starts with: this process's, with the settings it
    reads (`market.settings.settings_environment`: the `.env` it read, a relative path made
    absolute). The kernel starts in the notebooks' folder, where it would read neither this
    process's `.env` nor its relative paths as this process does (a run-day started beside
    its `.env` ran its stages on the default store); starting it in this process's working
    directory instead put that directory first on its import path, where a folder named
    like a package of the project (the demo's models/ or reports/) shadowed the package.
    The kernel reads no `.env` of its own (MARKETINTEL_NO_DOTENV): what it is given is
    what this process read."""
    return {**os.environ, **settings_environment(), "MARKETINTEL_NO_DOTENV": "1"}


class EncryptedKernelManager(AsyncKernelManager):
    """A kernel manager that provisions CurveZMQ keys when the kernel supports them, and
    starts its kernel with this process's settings (`kernel_environment`)."""

    @default("transport_encryption")
    def _encrypted(self) -> str:
        return "auto"

    async def start_kernel(self, **kwargs: object) -> None:
        kwargs.setdefault("env", kernel_environment())
        await super().start_kernel(**kwargs)


KERNEL_NAME = "python3"
KERNEL_ARGUMENTS = ("--HistoryManager.hist_file=:memory:",)  # what nbclient adds to a kernel it starts
FORGET_TIMEOUT_SECONDS = 60
# Run in a shared kernel after each stage notebook: what `forget_stage_state` forgets, then
# the namespace and execution count (the order matters: the import would otherwise stay),
# then `gc.freeze()`: what survives the reset's full collection is what every later stage
# keeps too (modules, process-wide caches), so it is taken out of the collector's later
# passes, and each later reset walks only the objects made since (the reset's collections
# took 1.4 s of a 60-name day of 11 s; a frozen object is still freed when nothing refers
# to it, and the kernel ends with its block: 7 MiB more at the peak of a 60-name day).
_FORGET = (
    "__import__('pipeline.notebooks', fromlist=['forget_stage_state']).forget_stage_state()\n"
    "get_ipython().reset(new_session=True)\n"
    "__import__('gc').freeze()"
)


def forget_stage_state() -> None:
    """What a stage notebook's process keeps that the next stage in a shared kernel must
    not inherit: the settings (read from the environment once per process) and the pooled
    database connections."""
    get_settings.cache_clear()
    dispose_engines()


class _KeptClient(AsyncKernelClient):
    """The one client of a shared kernel: its channels, once started, stay connected until
    the kernel is shut down, and once the kernel has answered on them it is not asked
    again whether it is ready, only whether its process is alive. So each stage's notebook
    (papermill) and the forget after it neither connect new channels nor wait: jupyter_client's
    `wait_for_ready` (8.10), once the kernel has answered, drains IOPub until 0.2 s pass
    without a message, so every call costs at least 0.2 s, on a new client or a connected
    one (0.205 s measured), twice a stage: 0.45 s of each stage of a 60-name day, 3.6 s of
    the day. The kernel's answers are
    still awaited as before: nbclient asks for its kernel_info before the first cell and
    waits for every reply with its timeouts, and messages left from an earlier request
    are skipped by their parent's id."""

    ready = False

    def start_channels(self, *args: object, **kwargs: object) -> None:
        if not self.channels_running:
            super().start_channels(*args, **kwargs)

    async def wait_for_ready(self, timeout: float | None = None) -> None:
        if self.ready and await self.is_alive():
            return
        await super().wait_for_ready(timeout=timeout)
        self.ready = True


class _SharedKernelManager(EncryptedKernelManager):
    """The kernel manager of a `one_kernel()` block. Every client papermill or the forget
    asks it for is its one `_KeptClient` (papermill closes a client only with a kernel it
    started itself), closed with the kernel, so no channel or heartbeat thread is left
    behind."""

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)
        self.environment = kernel_environment()
        self.kept: _KeptClient | None = None

    @default("client_factory")
    def _kept_client(self) -> type:
        return _KeptClient

    def client(self, **kwargs: object) -> AsyncKernelClient:
        if self.kept is None:
            self.kept = super().client(**kwargs)
        return self.kept

    def close_clients(self) -> None:
        kept, self.kept = self.kept, None
        if kept is not None:
            kept.stop_channels()


@dataclass
class _SharedKernel:
    """The kernel of a `one_kernel()` block, started by papermill on its first stage."""

    manager: _SharedKernelManager | None = None

    def for_stage(self, cwd: Path) -> _SharedKernelManager:
        """The kernel manager a stage runs in: the current one, unless the environment it
        was started with has changed since (then a new one). A new one's kernel is launched
        here, as nbclient would launch it (same arguments, the notebooks' folder as its
        working directory), so that it boots while this process imports papermill and
        prepares the notebook (papermill finds it started and only connects)."""
        if self.manager is not None and self.manager.environment != kernel_environment():
            self.shut_down()
        if self.manager is None:
            self.manager = _SharedKernelManager(kernel_name=KERNEL_NAME)
        if not self.manager.has_kernel:
            try:
                run_sync(self.manager.start_kernel)(extra_arguments=list(KERNEL_ARGUMENTS), cwd=str(cwd))
            except BaseException:
                self.shut_down()
                raise
        return self.manager

    def forget(self) -> None:
        """Empty the kernel's namespace and caches after a stage; a kernel that does not do
        so within the timeout is shut down instead."""
        manager = self.manager
        if manager is None:
            return
        try:
            run_sync(_execute_quietly)(manager, _FORGET)
        except Exception:  # noqa: BLE001 - any failure to forget: a fresh kernel for the next stage
            self.shut_down()

    def shut_down(self) -> None:
        manager, self.manager = self.manager, None
        if manager is None:
            return
        manager.close_clients()
        if manager.has_kernel:
            run_sync(manager.shutdown_kernel)(now=True)


async def _execute_quietly(manager: _SharedKernelManager, code: str) -> None:
    client = manager.client()
    client.start_channels()
    await client.wait_for_ready(timeout=FORGET_TIMEOUT_SECONDS)
    reply = await client.execute(code, silent=True, store_history=False, reply=True, timeout=FORGET_TIMEOUT_SECONDS)
    if reply["content"]["status"] != "ok":
        raise RuntimeError(f"the shared kernel did not forget the last stage: {reply['content'].get('evalue')}")


_shared: ContextVar[_SharedKernel | None] = ContextVar("shared_stage_kernel", default=None)


@contextmanager
def one_kernel() -> Iterator[None]:
    """Run the stage notebooks of this block in one kernel (see the module's docstring)."""
    kernel = _SharedKernel()
    token = _shared.set(kernel)
    try:
        yield
    finally:
        _shared.reset(token)
        kernel.shut_down()


SAVE_EVERY_SECONDS = 10.0
AUTOSAVE_SECONDS = 30  # papermill writes a notebook at least this often during a long cell
ENGINE = "marketintel"  # papermill's nbclient engine, the executed notebook written less often (`_engine`)


@cache
def _engine() -> str:
    """The papermill engine the stages run under, registered on first use (papermill is
    imported only where a notebook runs): papermill's own nbclient engine, except that the
    executed notebook is written at a cell's start and end only when SAVE_EVERY_SECONDS
    have passed since it was last written, not at both ends of every cell. It is still
    written when the notebook starts and ends, on a failure, and during a long cell
    (papermill's autosave); a 2,000-name notebook of several MB was written whole about
    fifteen times, 1.3 s of a day's 22 s, 0.5 s of a 60-name day's 10 s."""
    from papermill.engines import NBClientEngine, NotebookExecutionManager, papermill_engines

    class Manager(NotebookExecutionManager):
        in_cell_callback = False

        def save(self, **kwargs: object) -> None:
            waited = (self.now() - self.last_save_time).total_seconds()
            if not self.in_cell_callback or waited >= SAVE_EVERY_SECONDS:
                super().save(**kwargs)

        def cell_start(self, cell: object, cell_index: int | None = None, **kwargs: object) -> None:
            self.in_cell_callback = True
            try:
                super().cell_start(cell, cell_index, **kwargs)
            finally:
                self.in_cell_callback = False

        def cell_complete(self, cell: object, cell_index: int | None = None, **kwargs: object) -> None:
            self.in_cell_callback = True
            try:
                super().cell_complete(cell, cell_index, **kwargs)
            finally:
                self.in_cell_callback = False

    class Engine(NBClientEngine):
        @classmethod
        def execute_notebook(cls, nb: object, kernel_name: str, **kwargs: object) -> object:
            options = {k: kwargs.pop(k) for k in ("output_path", "progress_bar", "log_output") if k in kwargs}
            manager = Manager(nb, autosave_cell_every=kwargs.pop("autosave_cell_every", AUTOSAVE_SECONDS), **options)
            manager.notebook_start()
            try:
                cls.execute_managed_notebook(
                    manager, kernel_name, log_output=options.get("log_output", False), **kwargs
                )
            except BaseException:  # a cell past its time limit, a dead kernel: papermill marks no failure
                manager.nb.metadata.papermill["exception"] = True  # so runs/index.md says FAILED, not SUCCEEDED
                raise
            finally:
                manager.cleanup_pbar()
                manager.notebook_complete()
            return manager.nb

    papermill_engines.register(ENGINE, Engine)
    return ENGINE


def notebook_paths(stage_name: str, trading_date: date, settings: Settings) -> tuple[Path, Path]:
    name = known_stage(stage_name)
    source = settings.notebooks_dir / f"{name}.ipynb"
    output = settings.runs_dir / trading_date.isoformat() / f"{name}.ipynb"
    return source, output


def rerun_path(output: Path, run_id: str | None) -> Path:
    """Where a re-run of a stage whose notebook `output` succeeded is executed: beside it,
    named with the run's id (`runs/<date>/<stage>.<run id>.ipynb`), so that a failed
    re-run leaves the succeeded notebook as it was (the store keeps what the success
    stored: each stage is a transaction); one that succeeds replaces it."""
    return output.with_name(f"{output.stem}.{run_id or uuid.uuid4().hex}{output.suffix}")


def executed_notebook(stage_name: str, trading_date: date, settings: Settings, run_id: str | None) -> Path:
    """The notebook the run `run_id` of the stage left: its failed re-run beside the day's
    succeeded notebook, if there is one, else the day's notebook."""
    output = notebook_paths(stage_name, trading_date, settings)[1]
    rerun = rerun_path(output, run_id) if run_id else None
    return rerun if rerun is not None and rerun.is_file() else output


def _why_failed(exc: BaseException, timeout_seconds: float) -> str:
    """Why a stage notebook failed, in a few words: the cell's error, the time limit it ran
    past, or that its kernel died (and the first line of why)."""
    from nbclient.exceptions import CellTimeoutError
    from papermill.exceptions import PapermillExecutionError

    if isinstance(exc, PapermillExecutionError):
        return f"{exc.ename}: {exc.evalue}"
    if isinstance(exc, CellTimeoutError):
        return f"timed out after {timeout_seconds} s, MARKETINTEL_STAGE_TIMEOUT_SECONDS"
    said = str(exc).strip()
    return f"its kernel died: {said.splitlines()[0] if said else 'no reason given'}"


def _stranded_tasks() -> list[asyncio.Task]:
    """The tasks an interrupt raised inside nbclient's event loop left pending there (the
    interrupted cell's, which fails "Kernel died" once its kernel is shut down)."""
    from jupyter_core.utils import ensure_event_loop

    return list(asyncio.all_tasks(ensure_event_loop()))


def _retrieved(tasks: list[asyncio.Task]) -> None:
    """Each ended task's exception read, so that it is not logged as "Task exception was
    never retrieved" when the process exits: the interrupt is the failure reported."""
    for task in tasks:
        if task.done() and not task.cancelled():
            task.exception()


def _execute(source: Path, attempt: Path, parameters: dict[str, object], settings: Settings, shared: object) -> None:
    """papermill runs the stage notebook `source` into `attempt` with `parameters`, on the
    shared kernel where one is kept (`shared`), else on a kernel of its own."""
    kernel = {"km": shared.for_stage(source.parent)} if shared is not None else {}
    import papermill  # after a shared kernel's launch: it boots meanwhile

    papermill.execute_notebook(
        str(source),
        str(attempt),
        parameters=parameters,
        kernel_name=KERNEL_NAME,
        kernel_manager_class=EncryptedKernelManager,
        progress_bar=False,
        execution_timeout=settings.stage_timeout_seconds,
        cwd=str(source.parent),
        engine_name=_engine(),
        **kernel,
    )


def run_stage_notebook(
    stage_name: str,
    trading_date: date | str,
    *,
    settings: Settings | None = None,
    trigger: str = "notebook",
    run_id: str | None = None,
) -> Path:
    """Execute the stage's notebook for the date; return the output notebook's path.
    `run_id`: the id the stage's `stage_runs` records carry (`runner.run_stage`)."""
    settings = settings or get_settings()
    day = parse_trading_date(trading_date)
    source, output = notebook_paths(stage_name, day, settings)
    attempt = rerun_path(output, run_id) if succeeded(output) else output
    if not source.is_file():
        raise ConfigurationError(f"stage notebook {source} does not exist")
    # a day the exchange has not reached, or notification settings a delivery would refuse, are
    # refused here, as the runner refuses them, before a notebook is written: the kernel's
    # refusal left a FAILED notebook listed in runs/index.md
    refuse_to_start(day, default_calendar(), day_rule(stage_name), settings)
    output.parent.mkdir(parents=True, exist_ok=True)
    shared = _shared.get()
    from nbclient.exceptions import CellTimeoutError, DeadKernelError
    from papermill.exceptions import PapermillExecutionError

    parameters = {"run_date": day.isoformat(), "trigger": trigger, "write": True, "run_id": run_id or ""}
    try:
        _execute(source, attempt, parameters, settings, shared)
    except (PapermillExecutionError, CellTimeoutError, DeadKernelError) as exc:  # unfinished: failed too
        if shared is not None:
            shared.shut_down()
        why = _why_failed(exc, settings.stage_timeout_seconds)
        raise StageFailedError(
            f"stage notebook '{stage_name}' for {day.isoformat()} failed ({why}); see {attempt}"
        ) from exc
    except BaseException:  # an interrupt (Ctrl-C, SIGTERM as pipeline.day.Terminated)
        stranded = _stranded_tasks()
        if shared is not None:
            shared.shut_down()
        _retrieved(stranded)
        raise
    else:  # a re-run that succeeded is the day's notebook now
        if attempt != output:
            os.replace(attempt, output)
    finally:
        write_index(settings.runs_dir, quiet_after=settings.stage_timeout_seconds + AUTOSAVE_SECONDS)
    if shared is not None:
        shared.forget()
    return output
