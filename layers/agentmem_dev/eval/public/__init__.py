"""Development sets converted mechanically from public dialogue corpora written by other people
(``python -m agentmem_dev.eval.public.sgd`` / ``.crosswoz``): update probes where a user changes a
value they stated earlier. Only train/dev/validation splits are ever read; test splits stay unopened."""
