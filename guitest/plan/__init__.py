"""The plan of a run: what a run does, decided before its first case (a suite read once into its plan, at collection)."""
