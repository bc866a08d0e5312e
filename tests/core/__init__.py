"""The core's rules without an event loop, and the layering of broker/."""
