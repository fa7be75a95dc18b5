"""Machine learning: the feature registry, the foundation-model layer, the LightGBM risk
model, walk-forward training, metrics and the model registry."""
