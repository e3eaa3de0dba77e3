"""The ralph style: one prompt fed back at every Stop until a completion promise or a cap."""
