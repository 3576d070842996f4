"""The one error the runtime raises for a server it cannot start, so callers catch one type."""


class ServerError(RuntimeError):
    """The server could not be started or did not become ready."""
