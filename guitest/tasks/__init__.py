"""Tasks: what a case asks (prompt) and how its answer is judged (parse and score)."""
