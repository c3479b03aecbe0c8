"""The plan of a run, decided before its first case: its configuration (runconfig), each suite read once into its plan
at collection (suite_plan), and which of its cases run (limiting, sharding, pysuite)."""
