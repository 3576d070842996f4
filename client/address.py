"""What answers at a server address, told in one line before any request is sent.

Triton listens for HTTP/1.1 (8000) and gRPC (8001, HTTP/2) on ports of their own; given the
other one's port, tritonclient fails deep in its stack (http.client.BadStatusLine, or a gRPC
UNAVAILABLE after its own retries). One HTTP/1.1 request tells them apart: an HTTP server
answers with a status line, a gRPC server with HTTP/2 frames (SETTINGS, then GOAWAY).
"""

from __future__ import annotations

import socket

from triton_ocr.contract import TRITON_PORTS

PROBE_S = 3.0  # the connect and the first answer each, well under the 5 s a user waits
NAMES = {"http": "HTTP/1.1", "grpc": "gRPC (HTTP/2)"}
HTTP2_FRAME_TYPES = (0x04, 0x07)  # SETTINGS, GOAWAY: what an HTTP/2 server sends first


class WrongAddress(ConnectionError):
    """Nothing answers at the address, or not the protocol asked for (the message says which
    and what to pass instead)."""


class NothingAnswers(WrongAddress):
    """No server at the address (yet): refused, unknown host, or no answer in time."""


def host_port(url: str) -> tuple[str, int]:
    """`host:port` (an `http://` or `grpc://` prefix and a trailing `/` allowed)."""
    bare = url.split("://", 1)[-1].rstrip("/")
    host, colon, port = bare.rpartition(":")
    if not colon or not port.isdigit() or not host:
        raise WrongAddress(f"{url!r} is not host:port (e.g. localhost:{TRITON_PORTS['http']})")
    return host.strip("[]"), int(port)


def spoken_at(url: str, timeout: float = PROBE_S) -> str:
    """ "http" or "grpc": what answers at `url`. Raises NothingAnswers when no server does,
    WrongAddress when something else does."""
    host, port = host_port(url)
    request = f"GET /v2/health/ready HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
    try:
        with socket.create_connection((host, port), timeout=timeout) as connection:
            connection.settimeout(timeout)
            connection.sendall(request.encode("ascii"))
            head = connection.recv(64)
    except socket.gaierror:
        raise NothingAnswers(f"{host!r} is not a host this machine can find") from None
    except ConnectionRefusedError:
        raise NothingAnswers(
            f"nothing listens at {host}:{port} (connection refused): is the server up? "
            f"Triton's defaults: HTTP {TRITON_PORTS['http']}, gRPC {TRITON_PORTS['grpc']}"
        ) from None
    except TimeoutError:
        raise NothingAnswers(f"no answer from {host}:{port} within {timeout:g} s") from None
    except OSError as exc:
        raise NothingAnswers(f"{host}:{port} cannot be reached: {exc.strerror or exc}") from None
    if head.startswith(b"HTTP/1."):
        if head.split(b" ", 2)[1:2] == [b"404"]:  # Triton answers 200 or 400 (not ready yet)
            raise WrongAddress(
                f"{host}:{port} answers HTTP/1.1 but has no /v2/health/ready: not Triton's "
                f"HTTP port (the REST gateway's? Triton's default: {TRITON_PORTS['http']})"
            )
        return "http"
    if len(head) >= 9 and head[3] in HTTP2_FRAME_TYPES:
        return "grpc"
    found = "closed the connection without a word" if not head else "answered neither"
    raise WrongAddress(f"{host}:{port} {found} as HTTP/1.1 or gRPC: is it Triton's port?")


def check_protocol(url: str, protocol: str, option: str | None, timeout: float = PROBE_S) -> None:
    """Raise WrongAddress, naming what answers and what to pass (`option`: how the caller sets
    the protocol, its value as {}, e.g. `--protocol {}`; None where only one protocol is spoken),
    unless `protocol` answers at `url`."""
    found = spoken_at(url, timeout)
    if found != protocol:
        port = f"the server's {NAMES[protocol]} port (Triton's default: {TRITON_PORTS[protocol]})"
        instead = f"{option.format(found)}, or {port}" if option else port
        raise WrongAddress(f"{url} speaks {NAMES[found]}, not {NAMES[protocol]}: pass {instead}")
