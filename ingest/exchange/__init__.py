"""The end-of-day exchange source: HTTP client, page parsers, validation and delivery."""
