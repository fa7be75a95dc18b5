"""One logging set-up for CLI, API, notebooks and Airflow tasks."""
from __future__ import annotations

import logging

_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


def configure_logging(level: str = "INFO") -> None:
    """Configure the root logger once; later calls only change the level."""
    root = logging.getLogger()
    if not any(getattr(h, "_marketintel", False) for h in root.handlers):
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter(_FORMAT))
        handler._marketintel = True  # type: ignore[attr-defined]
        root.addHandler(handler)
    root.setLevel(level.upper())
