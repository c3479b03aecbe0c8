"""What model calls cost: the tokens each call used (usage), their prices (pricing), and a run's spending against its budget (spending)."""
