"""The `marketintel` command line (Typer): the day's stages, backfill, bootstrap, the demo,
portfolios, keys, reports and the exchange simulator. Thin: each command parses its
arguments and calls the layer that does the work; errors print as one line.

May import: every other package (it is a top layer, beside api/ and dags/)."""
