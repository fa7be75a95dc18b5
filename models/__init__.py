"""Machine learning: the feature registry, the foundation-model layer, the LightGBM risk
model, walk-forward training and the validation record, sentiment scoring, the macro
model, metrics, and the mapping from model outputs to Score, Action, Weight and Tercile.
What the API reads about them lives in views/.

May import: market, store, ingest."""
