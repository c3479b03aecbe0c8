"""The plan of a run: its configuration (runconfig), the suites it reads and how their cases are selected (limiting, sharding,
pysuite)."""
