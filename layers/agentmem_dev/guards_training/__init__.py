"""Training data and the trainer of the injection gate's directive head (issue 37)."""
