"""The machine side: a real Linux desktop on this machine and guitest's own server of the machine protocol, which
runs ON the machine; :mod:`guitest.desktopenv` is the client side that drives it (or an OSWorld / WAA VM) over HTTP.

For live desktop tasks without a VM:

- :mod:`.xvfb`: start and stop one desktop (Xvfb at 1920x1080x24, openbox, a D-Bus session, the
  accessibility bus when installed) and its protocol server; several at once on :99, :100, ...
- :mod:`.server`: guitest's own server of the OSWorld / Windows Agent Arena machine protocol,
  bound to 127.0.0.1 and taking only requests that carry the desktop's secret (:mod:`.warm_python` runs pyautogui code fast, :mod:`.a11y_dump` reads the
  accessibility tree with the system Python's pyatspi).
- :mod:`.state`: this user's state folder (``/tmp/guitest-desktops-<uid>``, trusted only when it is this user's
  alone), the private files in it (each desktop's secret and X authority), the checks before ``down`` signals a
  process, and the lookup of a local desktop's secret for guitest's client.
- :mod:`.commands`: ``guitest desktop up | down | status``.
"""
