"""The autopilot style (seed 002): plan, review every diff, a verdict at every Stop."""
