"""The day's written analysis and what follows from it: the day's facts (from the views),
the analysis writers (template or language model), the signed webhook notifications, and
the intake of a client's research note (read, tagged, sentiment-scored).

May import: market, store, ingest, models, portfolio, views."""
