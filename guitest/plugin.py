"""pytest glue (work in progress)."""
