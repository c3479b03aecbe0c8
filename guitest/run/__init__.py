"""One process's part of a run, without pytest: the session, a case's flow and its attempts, a live case's flow, concurrency, signals, and the controller's reports."""
