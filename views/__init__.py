"""Read models: what the API and the reports read, and nothing writes: market views
(latest day, history with indicators, symbol detail), instrument and liquidity views,
breadth, the model performance records, macro indicators point in time, portfolio and AI
portfolio summaries and valuations, and the stored day analysis. Each view takes an open
connection and returns plain dicts that REST, GraphQL and the PDFs share.

May import: market, store, ingest, models, portfolio."""
