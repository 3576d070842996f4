"""What answers at an address: HTTP/1.1, HTTP/2 (gRPC), something else, or nothing, told apart
by one HTTP/1.1 request to local sockets that answer as each kind of server does."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from triton_ocr.client.address import (
    NothingAnswers,
    WrongAddress,
    check_protocol,
    host_port,
    spoken_at,
)
from triton_ocr.serving.flags import free_ports

# an HTTP/2 server's first frame: length 0, type SETTINGS, no flags, stream 0
HTTP2_SETTINGS = b"\x00\x00\x00\x04\x00\x00\x00\x00\x00"


@contextmanager
def answering(reply: bytes | None) -> Iterator[str]:
    """A local server that reads one request and sends `reply` (None: says nothing)."""
    listener = socket.create_server(("127.0.0.1", 0))
    stop = threading.Event()

    def serve() -> None:
        connection, _ = listener.accept()
        with connection:
            connection.recv(1024)
            if reply is not None:
                connection.sendall(reply)
                connection.close()
            else:
                stop.wait(5)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"127.0.0.1:{listener.getsockname()[1]}"
    finally:
        stop.set()
        listener.close()
        thread.join(5)


@pytest.mark.parametrize(
    ("reply", "spoken"),
    [
        (b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", "http"),
        (b"HTTP/1.1 400 Bad Request\r\n\r\n", "http"),  # Triton not ready yet
        (HTTP2_SETTINGS + b"\x00\x00\x08\x07\x00\x00\x00\x00\x00", "grpc"),
    ],
)
def test_http_and_grpc_are_told_apart(reply, spoken):
    with answering(reply) as url:
        assert spoken_at(url) == spoken


@pytest.mark.parametrize(
    ("reply", "says"),
    [
        (b"HTTP/1.1 404 Not Found\r\n\r\n", "has no /v2/health/ready: not Triton's HTTP port"),
        (b"SSH-2.0-OpenSSH_9.2\r\n", "answered neither as HTTP/1.1 or gRPC"),
        (b"", "closed the connection without a word"),
    ],
)
def test_something_else_is_named(reply, says):
    with answering(reply) as url, pytest.raises(WrongAddress, match=says) as raised:
        spoken_at(url)
    assert not isinstance(raised.value, NothingAnswers)


def test_nothing_answering_is_told_in_bounded_time():
    (port,) = free_ports(1)
    with pytest.raises(NothingAnswers, match="connection refused.*HTTP 8000, gRPC 8001"):
        spoken_at(f"127.0.0.1:{port}")
    with answering(None) as url:
        started = time.monotonic()
        with pytest.raises(NothingAnswers, match="no answer from .* within 0.3 s"):
            spoken_at(url, timeout=0.3)
        assert time.monotonic() - started < 2
    with pytest.raises(NothingAnswers, match="not a host"):
        spoken_at("no-such-host.invalid:8000")


def test_the_address_is_read_as_host_and_port():
    assert host_port("localhost:8001") == ("localhost", 8001)
    assert host_port("http://10.0.0.1:8000/") == ("10.0.0.1", 8000)
    assert host_port("[::1]:8001") == ("::1", 8001)
    for bad in ("localhost", "localhost:http", ":8000"):
        with pytest.raises(WrongAddress, match="is not host:port"):
            host_port(bad)


def test_the_other_protocols_port_says_what_to_pass():
    with answering(HTTP2_SETTINGS) as url, pytest.raises(WrongAddress) as raised:
        check_protocol(url, "http", "--protocol {}")
    assert str(raised.value) == (
        f"{url} speaks gRPC (HTTP/2), not HTTP/1.1: pass --protocol grpc, or the server's "
        "HTTP/1.1 port (Triton's default: 8000)"
    )
    with answering(b"HTTP/1.1 200 OK\r\n\r\n") as url, pytest.raises(WrongAddress) as raised:
        check_protocol(url, "grpc", None)
    assert str(raised.value).endswith(
        "not gRPC (HTTP/2): pass the server's gRPC (HTTP/2) port (Triton's default: 8001)"
    )
    with answering(b"HTTP/1.1 200 OK\r\n\r\n") as url:
        check_protocol(url, "http", "--protocol {}")  # the protocol asked for: nothing raised
