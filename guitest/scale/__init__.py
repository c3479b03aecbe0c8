"""Runs spread over processes and machines: xdist's scheduling, and one report merged from a run's shards."""
