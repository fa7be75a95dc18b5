"""Everything that comes from outside the service: the exchange client and its parsers, the
exchange simulator and real-history replay (ingest/markets.py picks one), historical
importers, news feeds, disclosure PDFs, account statements and macro sources. Each ingester
validates what it reads and writes through store/.

May import: market, store."""
