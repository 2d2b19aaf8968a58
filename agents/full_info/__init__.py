"""Full-information learners (private and non-private); importing registers them."""
