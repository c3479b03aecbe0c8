"""MiniWoB++ in one place: what guitest knows about the benchmark. Nothing is imported eagerly: collecting a
MiniWoB++ suite (:mod:`.reader`, on the controller) loads neither Playwright nor the environment.

- :mod:`.reader`: the task lists (suite.yaml ``format: miniwob``), one live case per task and seed.
- :mod:`.env`: the environment (suite.yaml ``env: miniwob``): the ``miniwob`` package's task pages in Chromium,
  scored by each task's own reward.
- :mod:`.rules`: when an episode counts as a success (``success_rule``: ``binary``, ``browsergym``).
- :mod:`.oracle`: the scripted solutions the ``oracle`` baseline plays.
"""
