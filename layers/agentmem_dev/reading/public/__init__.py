"""Training rows derived mechanically from public dialogue corpora (see ``NOTICE.md`` beside the
data files for each source's licence and attribution)."""
