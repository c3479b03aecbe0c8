"""Live tasks: an agent acts step by step in a real environment, and the environment's own check scores it.

Plain modules, no pytest: :mod:`.protocol` (what an environment offers), :mod:`.actions`
(the action vocabulary), and the agent loop and its parts beside them.
"""
