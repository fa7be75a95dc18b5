"""Vocabulary shared by every package: settings, the exchange clock, errors and logging."""
