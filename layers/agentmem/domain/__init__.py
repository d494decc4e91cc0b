"""Pure domain: models, scoring, guards, extraction, classification, context assembly, planning.

Nothing here does I/O, reads the environment or the clock: time is always an argument.
"""
