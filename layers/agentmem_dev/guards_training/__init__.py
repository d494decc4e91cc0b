"""Training data and the trainer of the injection gate's directive head (docs/guards.md "Detection")."""
