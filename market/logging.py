"""One logging set-up for CLI, API, notebooks and Airflow tasks.

Our own packages log at the configured level (`MARKETINTEL_LOG_LEVEL`, INFO by default);
every library (httpx's line per request, papermill's lines per notebook, nbclient,
traitlets, ...) logs at WARNING unless `verbose` is asked for (`marketintel --verbose`),
so a long job prints its progress and its result, not a line per HTTP request. The rule
is by package, not a list of noisy libraries, so a new dependency is quiet too.
"""

from __future__ import annotations

import logging

_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"

# The project's own top-level packages, lowest layer first: the `include` list of
# pyproject.toml's [tool.setuptools.packages.find] and the import contract's
# root_packages (tests/market/test_logging.py and tests/test_layers.py keep them equal).
OWN_PACKAGES = (
    "market",
    "store",
    "ingest",
    "models",
    "portfolio",
    "views",
    "analysis",
    "reports",
    "desk",
    "pipeline",
    "api",
    "cli",
)
LIBRARY_LEVEL = "WARNING"


def configure_logging(level: str = "INFO", *, verbose: bool = False) -> None:
    """Configure the root logger once; later calls only change the levels.

    Libraries (the root logger) log at WARNING, or at `level` when `verbose`; our own
    packages always log at `level`."""
    root = logging.getLogger()
    if not any(getattr(h, "_marketintel", False) for h in root.handlers):
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter(_FORMAT))
        handler._marketintel = True  # type: ignore[attr-defined]  # noqa: SLF001 - our marker on our own handler
        root.addHandler(handler)
    level = level.upper()
    root.setLevel(level if verbose else _coarser(level, LIBRARY_LEVEL))
    for package in OWN_PACKAGES:
        logging.getLogger(package).setLevel(level)


def _coarser(a: str, b: str) -> str:
    """The less talkative of two level names (ERROR beats WARNING beats INFO)."""
    return a if logging.getLevelName(a) >= logging.getLevelName(b) else b
