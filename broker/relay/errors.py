"""What the command line and the relay tell a person when they cannot do what was asked: one error
class, kept apart from the HTTP client so a command that fails this way need not load it."""

from __future__ import annotations

__all__ = ["ClientError"]


class ClientError(Exception):
    """A command cannot do what was asked; the message is for a person."""
