"""The Kubernetes pod's proxy for real: Debian's NGINX running deploy/'s configuration on
loopback in front of a real gateway and the real server, as the pod's proxy container runs it.
A page goes through and is read as without it; a caller with its share of uploads in flight is
refused with a 429 that says when to come back, before its body is read, while another caller
(another loopback address) is answered, which the gateway behind can only do when it counts
callers by the proxy's X-Forwarded-For; a caller sending as fast as it can is paced.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import re
import subprocess
import time

import pytest

from tests.deploy.test_manifests import PROXY_CONF
from tests.e2e.test_gateway import call, running_gateway, slow_upload
from tests.samples import ENGLISH_LINES
from triton_ocr.gateway.settings import GatewaySettings
from triton_ocr.serving.flags import free_ports
from triton_ocr.serving.server import wait_until_ready
from triton_ocr.tools.deploy_check import nginx, nginx_main
from triton_ocr.tools.samples import render

PAGE = render(ENGLISH_LINES, size=(900, 500)).png
OTHER_CALLER = "127.0.0.2"  # Linux answers on the whole of 127/8: a second caller's address


def nginx_or_skip() -> str:
    try:
        return nginx()
    except FileNotFoundError as exc:
        if os.environ.get("CI"):
            pytest.fail(f"CI must run the proxy's tests: {exc}")
        pytest.skip(str(exc))


@contextlib.contextmanager
def running_proxy(gateway: str, folder):
    """NGINX with PROXY_CONF, listening on a free loopback port and passing to `gateway`."""
    binary = nginx_or_skip()
    (port,) = free_ports(1)
    conf = PROXY_CONF.read_text()
    upstream = re.sub(r"^http://", "", gateway)
    served, passes = "listen 8080;", "server 127.0.0.1:8081;"
    assert served in conf and passes in conf  # the test moves the ports it knows
    conf = conf.replace(served, f"listen 127.0.0.1:{port};").replace(passes, f"server {upstream};")
    included = folder / "rest.conf"
    included.write_text(conf)
    (folder / "nginx.conf").write_text(nginx_main(folder, included))
    command = [binary, "-p", str(folder), "-c", str(folder / "nginx.conf")]
    process = subprocess.Popen(command)
    base = f"http://127.0.0.1:{port}"
    try:
        wait_until_ready(process, base)  # the gateway's /readyz, through NGINX
        yield base
    finally:
        process.terminate()
        process.wait(timeout=30)


@pytest.fixture(scope="module")
def proxy(server, tmp_path_factory):
    with (
        running_gateway(server.grpc) as gateway,
        running_proxy(gateway, tmp_path_factory.mktemp("proxy")) as base,
    ):
        yield base


def post_from(base: str, source: str, data: bytes) -> tuple[int, dict, bytes]:
    """One upload from the loopback address `source`: (status, headers, body)."""
    host, port = base.removeprefix("http://").split(":")
    connection = http.client.HTTPConnection(
        host, int(port), timeout=120, source_address=(source, 0)
    )
    try:
        connection.request(
            "POST", "/v1/ocr?format=text", body=data, headers={"Content-Type": "image/png"}
        )
        response = connection.getresponse()
        headers = {k.lower(): v for k, v in response.getheaders()}
        return response.status, headers, response.read()
    finally:
        connection.close()


def test_a_page_through_the_proxy_is_read_as_without_it(proxy, server):
    through = call(f"{proxy}/v1/ocr?format=text", PAGE, "image/png")
    with running_gateway(server.grpc) as gateway:
        direct = call(f"{gateway}/v1/ocr?format=text", PAGE, "image/png")
    assert through[0] == direct[0] == 200
    assert through[2] == direct[2] and b"quick brown fox" in through[2].lower()


def test_a_caller_beyond_its_share_is_refused_and_another_caller_answered(proxy):
    share = GatewaySettings.max_per_client  # the proxy's limit_conn: test_manifests ties them
    held = [slow_upload(proxy) for _ in range(share)]
    try:
        time.sleep(1.0)  # paced at 10 a second: all in flight by now
        start = time.monotonic()
        status, headers, body = post_from(proxy, "127.0.0.1", PAGE)
        assert status == 429 and int(headers["retry-after"]) > 0
        assert "too many requests from one caller" in json.loads(body)["error"]
        assert time.monotonic() - start < 1.0  # refused by the proxy, before the body is read
        # the gateway behind also holds `share` uploads of 127.0.0.1: it answers another
        # caller only if it counts callers by the proxy's X-Forwarded-For
        status, _, body = post_from(proxy, OTHER_CALLER, PAGE)
        assert status == 200 and b"quick brown fox" in body.lower()
    finally:
        for sock in held:
            sock.close()
    time.sleep(0.5)
    assert post_from(proxy, "127.0.0.1", PAGE)[0] == 200  # its share is free again


def test_a_caller_sending_as_fast_as_it_can_is_paced(proxy):
    """Ten requests a second begin per caller; the rest of a burst wait their turn in the
    proxy: 30 back to back take at least two seconds (an empty body: the gateway's 400)."""
    start = time.monotonic()
    statuses = {post_from(proxy, "127.0.0.1", b"")[0] for _ in range(30)}
    assert statuses == {400}
    assert time.monotonic() - start >= 2.0
