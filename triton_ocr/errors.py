"""The one line between the caller's mistakes and the server's.

An `InvalidRequest` is the caller's input at fault (bad bytes, a parameter out of range, too
many images): the adapters answer it with INVALID_ARG and its message. Any other exception is
the server's own failure, answered INTERNAL (and logged without the request's content), so a bug
is never reported as the caller's fault. No dependencies: every part may raise it.
"""


class InvalidRequest(ValueError):
    """The request is at fault; the message names what is wrong and, where it has one, the
    limit or range it broke."""
