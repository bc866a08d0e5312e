"""The client side: the stdio relay, the token only for a proven broker."""
