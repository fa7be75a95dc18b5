"""T0's price band (MARKETINTEL_PRICE_BAND, 50% by default): how far a close may move from
the previous one without a SPLIT notice. One test (`beyond_band`), read by T0's validation
(`validation._check_row`), the replay's CONFIRMED MOVE (`ingest.replay`) and the importer's
report of the moves no corporate action explains (`ingest.importers.actions.band_moves`).

The band is a factor either way, in log terms: a close more than 1 + band times the
previous one, or less than the previous one over 1 + band, is beyond it; so a 2-for-1
split the notices do not carry (a halving) is caught as a doubling is, where the band was
once a fraction of the previous close and a fall (at most 100%) never passed a 50% band
by much. A 50% band is a rise of 50% or a fall of a third: a move of exactly the factor is
within it, a 1-for-2 bonus issue's fall to 2/3 as a 50% rise, so a capital change of a
ratio of 1.5 or less needs its notice or corporate-actions row (or, in an import, the
market's stated daily limit, MARKETINTEL_DAILY_PRICE_LIMIT) to be seen.

`split_explains` is T0's test of a capital change against the closes either side of its
ex-date, read by T0's validation, the importer (a corporate-actions row whose ratio the
closes do not show is refused: prices already adjusted) and the replay alike.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

BAND_EDGE = 1e-9  # float rounding: a close at exactly the band's factor (6.8 after 10.2) is within it


def beyond_band(previous: ArrayLike, close: ArrayLike, band: float) -> ArrayLike:
    """Whether `close` is beyond the band around `previous` (module docstring): numbers, or
    numpy or pandas arrays of them, positive."""
    return np.abs(np.log(np.divide(close, previous))) > np.log1p(band) + BAND_EDGE


def split_explains(previous: float, close: float, factor: float, band: float) -> bool:
    """Whether a capital change of `factor` (shares after per share before) explains the
    move from `previous` to `close`, the first close on the new count: on the new count the
    close is within the band of the previous one and nearer to it than without the change.
    Prices already adjusted for it (no move of its ratio) are not explained."""
    moved = abs(np.log(close / previous))
    return bool(not beyond_band(previous, close * factor, band) and abs(np.log(close * factor / previous)) < moved)


def band_text(band: float) -> str:
    """The band as a move up and down: '50% up or 33% down'."""
    return f"{band:.0%} up or {1 - 1 / (1 + band):.0%} down"
