"""A real Linux desktop on this machine, for live desktop tasks without a VM.

- :mod:`.xvfb`: start and stop one desktop (Xvfb at 1920x1080x24, openbox, a D-Bus session, the
  accessibility bus when installed) and its protocol server; several at once on :99, :100, ...
- :mod:`.server`: guitest's own server of the OSWorld / Windows Agent Arena machine protocol,
  bound to 127.0.0.1 (:mod:`.warm_python` runs pyautogui code fast, :mod:`.a11y_dump` reads the
  accessibility tree with the system Python's pyatspi).
- :mod:`.cli`: ``guitest desktop up | down | status``.
"""
