"""The market a world trades: the simulator, or a replay of real history
(`ingest/replay.py`) when MARKETINTEL_REPLAY_PATH is set. `pipeline/backfill.py` delivers
its past days through the T0 and T1 code paths."""

from __future__ import annotations

from ingest.replay import ReplayMarket, replay_for
from ingest.simulator.market import SimulatedMarket
from market.settings import Settings


def simulator_for(settings: Settings, **options) -> SimulatedMarket:  # noqa: ANN003
    return SimulatedMarket(seed=settings.simulator_seed, size=settings.simulator_instruments, **options)


def market_for(settings: Settings, **options) -> SimulatedMarket | ReplayMarket:  # noqa: ANN003
    """The market this world trades: the replay of MARKETINTEL_REPLAY_PATH when it is set
    (which also records its calendar for every other process), else the simulator
    (`options` are the simulator's, e.g. news_signal)."""
    if settings.replay_path is not None:
        return replay_for(settings)
    return simulator_for(settings, **options)
