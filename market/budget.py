"""A time budget for work on untrusted input done in the server process (a research note's
text): the work checks it between steps and stops with a clear error once it is spent, so
a hostile input costs at most about the budget, not as long as it likes."""
from __future__ import annotations

import time

from market.errors import BudgetExceededError


class Deadline:
    def __init__(self, seconds: float, what: str) -> None:
        self.seconds, self.what = seconds, what
        self._at = time.monotonic() + seconds

    def check(self) -> None:
        """Raise BudgetExceededError once the budget is spent."""
        if time.monotonic() > self._at:
            raise BudgetExceededError(f"{self.what} took longer than the {self.seconds:g} s allowed; send a shorter text")
