"""A time budget for work on untrusted input done in the server process (a research note's
text, a GraphQL operation): the work checks it between steps and stops with a clear error
once it is spent, or once someone stopped it (the client went away), so a hostile input
costs at most about the budget, not as long as it likes."""

from __future__ import annotations

import time

from market.errors import BudgetExceededError


class Deadline:
    def __init__(self, seconds: float, what: str, advice: str = "send a shorter text") -> None:
        self.seconds, self.what, self.advice = seconds, what, advice
        self._at = time.monotonic() + seconds
        self._stopped: str | None = None

    def restart(self) -> None:
        """The budget counted from now (work that waited for its turn starts its clock here)."""
        self._at = time.monotonic() + self.seconds

    def remaining(self) -> float:
        """The seconds left of the budget (0 once it is spent): how long a wait inside the
        work may take (a look-up that cannot check the budget itself)."""
        return max(0.0, self._at - time.monotonic())

    def stop(self, why: str) -> None:
        """Make the next `check` raise, from any thread."""
        self._stopped = why

    def check(self) -> None:
        """Raise BudgetExceededError once the budget is spent or the work was stopped."""
        if self._stopped is not None:
            raise BudgetExceededError(f"{self.what} was stopped: {self._stopped}")
        if time.monotonic() > self._at:
            raise BudgetExceededError(f"{self.what} took longer than the {self.seconds:g} s allowed; {self.advice}")
