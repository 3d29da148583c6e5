"""Output formats for `qlin check` results."""
