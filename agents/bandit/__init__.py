"""Bandit learners (private and non-private); importing registers them."""
