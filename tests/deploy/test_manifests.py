"""deploy/ tied to the code it runs: every manifest valid for its kind, the pod's containers
(`triton-ocr serve` and the REST gateway beside it) started with arguments their commands accept,
on the ports they bind, probed where they answer, given the time their stop takes. (The HPA's
metrics against a real scrape: tests/e2e/test_deploy_metrics.py.)
"""

from __future__ import annotations

import asyncio
import json
import re
import shutil
from pathlib import Path

import pytest
import typer.main
import uvicorn
import yaml
from typer.testing import CliRunner

from tests.conftest import ROOT
from triton_ocr.cli import app
from triton_ocr.contract import REST_PORT
from triton_ocr.gateway import app as gateway_app
from triton_ocr.gateway.settings import GatewaySettings
from triton_ocr.serving.flags import (
    ADMIN_KEY_ENV,
    EXIT_TIMEOUT_S,
    ServerOptions,
    free_ports,
)
from triton_ocr.serving.server import DRAIN_TIMEOUT_S, STOP_TIMEOUT_S
from triton_ocr.tools.deploy_check import (
    CUSTOM_SCHEMAS,
    Manifest,
    check_deploy,
    kustomize,
    load_documents,
    overlays,
    validate,
)

DEPLOY = ROOT / "deploy"
OVERLAYS = [p.name for p in overlays(DEPLOY)]
HEALTH = {"readinessProbe": "/v2/health/ready", "livenessProbe": "/v2/health/live"}
SERVER, GATEWAY, PROXY = "triton-ocr", "gateway", "proxy"  # the pod's containers
PROXY_CONF = DEPLOY / "kubernetes" / "base" / "proxy" / "rest.conf"

pytestmark = pytest.mark.skipif(
    shutil.which("kubectl") is None, reason="kubectl renders the Kustomize overlays"
)


def rendered(overlay: str) -> dict[str, dict]:
    documents = load_documents(kustomize(DEPLOY / "kubernetes" / "overlays" / overlay))
    return {doc["kind"]: doc for doc in documents}


def container(deployment: dict, name: str = SERVER) -> dict:
    containers = deployment["spec"]["template"]["spec"]["containers"]
    assert sorted(c["name"] for c in containers) == sorted([SERVER, GATEWAY, PROXY])
    (found,) = [c for c in containers if c["name"] == name]
    return found


def entrypoint() -> list[str]:
    """The Dockerfile's ENTRYPOINT (exec form)."""
    (line,) = [x for x in (ROOT / "Dockerfile").read_text().splitlines() if x.startswith("ENTRY")]
    return json.loads(line.split(None, 1)[1])


def parse(command: list[str], env: dict[str, str], monkeypatch) -> tuple[str, dict]:
    """What `triton-ocr` makes of a command line in the pod's environment: (command, params)."""
    assert command[0] == "triton-ocr", command
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    group = typer.main.get_command(app)
    name, *arguments = command[1:]
    return name, group.commands[name].make_context(name, list(arguments)).params


def pod_env(spec: dict) -> dict[str, str]:
    return {e["name"]: e.get("value", "<from a secret>") for e in spec.get("env", [])}


def gateway_get(path: str) -> int:
    """The status the gateway's app answers a GET of `path` with, through its own routing and
    middleware (ASGI, in-process; the server it would ask is not there)."""
    (port,) = free_ports(1)
    made = gateway_app.make_app(gateway_app.GatewaySettings(f"127.0.0.1:{port}", timeout_s=5))
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "GET",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": [(b"host", b"gateway")],
        "client": ("127.0.0.1", 40000),
        "server": ("127.0.0.1", 8081),
    }
    statuses = []

    async def receive():
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message):
        if message["type"] == "http.response.start":
            statuses.append(message["status"])

    asyncio.run(made(scope, receive, send))
    return statuses[0]


def run_gateway(command: list[str], env: dict[str, str | None], monkeypatch) -> tuple:
    """What `triton-ocr gateway` hands uvicorn for a command line: (settings, host, port)."""
    assert command[:2] == ["triton-ocr", "gateway"], command
    ran = []
    monkeypatch.setattr(gateway_app, "make_app", lambda settings: settings)
    monkeypatch.setattr(uvicorn, "run", lambda settings, **kw: ran.append((settings, kw)))
    result = CliRunner().invoke(app, command[1:], env=env)
    assert result.exit_code == 0, result.output
    ((settings, kw),) = ran
    return settings, kw["host"], kw["port"]


def test_every_manifest_is_valid_for_its_kind():
    report = check_deploy(DEPLOY)
    assert report.errors == []
    kinds = {manifest.document["kind"] for manifest, _ in report.checked}
    assert kinds >= {
        "Deployment", "Service", "PodDisruptionBudget", "HorizontalPodAutoscaler",
        "ServiceMonitor", "InferenceService",
    }  # fmt: skip
    assert set(OVERLAYS) == {"cpu", "gpu", "object-storage"}


@pytest.mark.parametrize(
    ("document", "error"),
    [
        (
            {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "x"},
             "spec": {"portz": []}},
            "'portz' was unexpected",
        ),
        (
            {"apiVersion": "monitoring.coreos.com/v1", "kind": "ServiceMonitor",
             "metadata": {"name": "x"}, "spec": {"selector": {}, "endpoint": []}},
            "'endpoint' was unexpected",
        ),
        (
            {"apiVersion": "serving.kserve.io/v1beta1", "kind": "InferenceService",
             "metadata": {"name": "x"}, "spec": {"predictor": {"model": {"storageURI": "s3://"}}}},
            "'storageURI' was unexpected",
        ),
    ],
)  # fmt: skip
def test_a_misspelt_field_is_an_error(document, error):
    """Strict, as kubectl apply is: an unknown field is not silently dropped."""
    _, errors = validate(Manifest("test", document), DEPLOY)
    assert any(error in e for e in errors), errors


def test_the_custom_schemas_are_the_kinds_deployed():
    for (api_version, kind), name in CUSTOM_SCHEMAS.items():
        assert (DEPLOY / "schemas" / f"{name}.json.gz").is_file()
        assert api_version.split("/")[1] in name and kind.lower() in name


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_ports_and_probes_are_what_serve_binds_and_answers(overlay):
    found = rendered(overlay)
    spec = container(found["Deployment"])
    defaults = ServerOptions(Path("."))
    ports = {p["name"]: p["containerPort"] for p in spec["ports"]}
    assert ports == {
        "http": defaults.http_port, "grpc": defaults.grpc_port, "metrics": defaults.metrics_port,
    }  # fmt: skip
    for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
        get = spec[probe]["httpGet"]
        assert get["port"] == "http", probe
        assert get["path"] == HEALTH.get(probe, HEALTH["readinessProbe"]), probe
    proxy = container(found["Deployment"], PROXY)
    rest = {p["name"]: p["containerPort"] for p in proxy["ports"]}
    assert rest == {"rest": REST_PORT}  # callers reach the gateway through the proxy only
    service = {p["name"]: (p["port"], p["targetPort"]) for p in found["Service"]["spec"]["ports"]}
    assert service == {name: (port, name) for name, port in {**ports, **rest}.items()}
    selector = found["Service"]["spec"]["selector"].items()
    assert selector <= found["Deployment"]["spec"]["template"]["metadata"]["labels"].items()
    monitor = found["ServiceMonitor"]["spec"]
    scraped = [(e["port"], e["path"]) for e in monitor["endpoints"]]
    assert scraped == [("metrics", "/metrics"), ("rest", "/metrics")]
    assert gateway_get("/metrics") == 200
    assert (
        monitor["selector"]["matchLabels"].items() <= found["Service"]["metadata"]["labels"].items()
    )
    pdb = found["PodDisruptionBudget"]["spec"]["selector"]["matchLabels"]
    assert pdb == found["Deployment"]["spec"]["selector"]["matchLabels"]


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_the_pod_runs_serve_container_as_docker_run_does(overlay, monkeypatch):
    deployment = rendered(overlay)["Deployment"]
    spec = container(deployment)
    assert "command" not in spec  # the image's entrypoint
    env = pod_env(spec)
    assert env["TRITON_OCR_HOST"] == "0.0.0.0" and ADMIN_KEY_ENV in env
    secret = next(e for e in spec["env"] if e["name"] == ADMIN_KEY_ENV)["valueFrom"]
    assert secret["secretKeyRef"]["key"] == "admin-key"
    name, params = parse(entrypoint() + spec.get("args", []), env, monkeypatch)
    assert name == "serve" and params["container"] is True
    assert params["host"] == "0.0.0.0" and params["repository"] == Path("/models")
    assert params["http_port"] == ServerOptions(Path(".")).http_port
    assert params["gpu"] is (overlay == "gpu")
    assert params["rest_port"] == 0  # the gateway container has the port (same network namespace)
    gpus = spec["resources"]["limits"].get("nvidia.com/gpu")
    assert gpus == (1 if overlay == "gpu" else None)
    mounts = {m["mountPath"]: m["name"] for m in spec["volumeMounts"]}
    volumes = {v["name"]: v for v in deployment["spec"]["template"]["spec"]["volumes"]}
    assert volumes[mounts["/dev/shm"]]["emptyDir"]["medium"] == "Memory"
    if overlay == "object-storage":  # the synced repository is where serve reads it
        (init,) = deployment["spec"]["template"]["spec"]["initContainers"]
        target = init["args"][-1]
        assert mounts[str(params["repository"])] == "repository" and target == "/models"


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_the_gateway_calls_the_server_over_the_pods_loopback(overlay, monkeypatch):
    deployment = rendered(overlay)["Deployment"]
    server, spec = container(deployment), container(deployment, GATEWAY)
    assert spec["image"] == server["image"]
    grpc = next(p["containerPort"] for p in server["ports"] if p["name"] == "grpc")
    _, served = parse(entrypoint() + server.get("args", []), pod_env(server), monkeypatch)
    token = next(e for e in spec["env"] if e["name"] == "TRITON_OCR_REST_TOKEN")["valueFrom"]
    assert token["secretKeyRef"]["optional"] is True  # no Secret: no token, the pod still starts
    command = spec["command"] + spec["args"]
    for given in ("s3cret", None):
        env = {"TRITON_OCR_REST_TOKEN": given, "TRITON_OCR_HOST": None}
        settings, host, port = run_gateway(command, env, monkeypatch)
        assert settings.token == given
    assert settings.triton_url == f"127.0.0.1:{grpc}" and grpc == served["grpc_port"]
    assert host == "0.0.0.0" and port == behind_the_proxy()
    assert {p["name"]: p["containerPort"] for p in spec["ports"]} == {"gateway": port}
    assert "nvidia.com/gpu" not in spec["resources"]["limits"]


def behind_the_proxy() -> int:
    """The gateway's port, as the proxy's configuration passes to it over the pod's loopback."""
    (port,) = re.findall(r"server 127\.0\.0\.1:(\d+);", PROXY_CONF.read_text())
    return int(port)


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_the_proxy_serves_its_configuration_on_the_rest_port_with_the_gateways_bounds(overlay):
    """The ConfigMap made from proxy/rest.conf is the whole of NGINX's conf.d (the image's own
    default server would listen on 8080 too); it listens where the Service sends REST callers,
    limits a caller to the uploads the gateway lets one caller have, and tells refused callers
    when to come back."""
    found = load_documents(kustomize(DEPLOY / "kubernetes" / "overlays" / overlay))
    deployment = next(d for d in found if d["kind"] == "Deployment")
    proxy = container(deployment, PROXY)
    (mount,) = proxy["volumeMounts"]
    assert mount["mountPath"] == "/etc/nginx/conf.d" and mount["readOnly"] is True
    volumes = {v["name"]: v for v in deployment["spec"]["template"]["spec"]["volumes"]}
    name = volumes[mount["name"]]["configMap"]["name"]
    (config_map,) = [d for d in found if d["kind"] == "ConfigMap"]
    assert config_map["metadata"]["name"] == name
    assert config_map["data"] == {"rest.conf": PROXY_CONF.read_text()}
    conf = PROXY_CONF.read_text()
    assert re.search(rf"^\s*listen {REST_PORT};", conf, re.M)
    (per_caller,) = re.findall(r"limit_conn triton_ocr_callers (\d+);", conf)
    assert int(per_caller) == GatewaySettings.max_per_client
    assert "add_header Retry-After" in conf and "proxy_request_buffering off;" in conf


def test_the_gateway_is_probed_where_it_answers():
    """Startup and liveness on /healthz (the gateway itself), readiness on /readyz (503 until
    the server's `ocr` is ready), in every overlay; the paths are the gateway app's routes."""
    answers = {"/healthz": 200, "/readyz": 503}  # no server: not ready
    assert {path: gateway_get(path) for path in answers} == answers
    assert gateway_get("/no-such-probe") == 404
    paths = {"startupProbe": "/healthz", "readinessProbe": "/readyz", "livenessProbe": "/healthz"}
    for overlay in OVERLAYS:
        spec = container(rendered(overlay)["Deployment"], GATEWAY)
        for probe, path in paths.items():
            assert spec[probe]["httpGet"] == {"path": path, "port": "gateway"}, (overlay, probe)
            assert path in answers


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_every_container_requests_its_limits(overlay):
    """The Guaranteed QoS class (evicted last) needs it of every container, init ones too."""
    pod = rendered(overlay)["Deployment"]["spec"]["template"]["spec"]
    for spec in pod["containers"] + pod.get("initContainers", []):
        resources = spec["resources"]
        assert resources["requests"] == resources["limits"], spec["name"]
        assert {"cpu", "memory"} <= resources["limits"].keys(), spec["name"]


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_the_grace_period_outlasts_the_drain_and_the_stop(overlay, monkeypatch):
    pod = rendered(overlay)["Deployment"]["spec"]["template"]["spec"]
    spec = container({"spec": {"template": {"spec": pod}}})
    name, params = parse(spec["lifecycle"]["preStop"]["exec"]["command"], {}, monkeypatch)
    assert name == "drain" and params["http_port"] == ServerOptions(Path(".")).http_port
    # the gateway accepts requests as long as the server does (its drain's delay), then stops
    # at SIGTERM once the requests inside are answered, which they are before the server stops
    gateway = container({"spec": {"template": {"spec": pod}}}, GATEWAY)
    sleep, seconds = gateway["lifecycle"]["preStop"]["exec"]["command"]
    assert sleep == "sleep" and params["delay"] <= int(seconds) < DRAIN_TIMEOUT_S
    # preStop: the delay, then the drain; SIGTERM: serve drains again (nothing left by then,
    # but bounded the same), then Triton gets STOP_TIMEOUT_S, which outlasts its exit timeout
    assert STOP_TIMEOUT_S > EXIT_TIMEOUT_S
    longest = params["delay"] + DRAIN_TIMEOUT_S + DRAIN_TIMEOUT_S + STOP_TIMEOUT_S
    assert pod["terminationGracePeriodSeconds"] > longest


def test_kserve_runs_serve_on_the_runtime_ports_with_the_repository_it_downloads(monkeypatch):
    (service,) = load_documents((DEPLOY / "kserve" / "inferenceservice.yaml").read_text())
    predictor = service["spec"]["predictor"]
    model = predictor["model"]
    assert model["modelFormat"]["name"] == "triton" and model["storageUri"].startswith("s3://")
    env = pod_env(model)
    name, params = parse(model["command"] + model["args"], env, monkeypatch)
    assert name == "serve" and params["container"] is True and params["host"] == "0.0.0.0"
    # KServe's storage initializer downloads to /mnt/models; its Triton runtime serves 8080/9000
    assert params["repository"] == Path("/mnt/models")
    assert (params["http_port"], params["grpc_port"]) == (8080, 9000)
    assert params["rest_port"] == 0  # KServe speaks Triton's own protocol; 8080 is Triton's
    drain, drained = parse(model["lifecycle"]["preStop"]["exec"]["command"], {}, monkeypatch)
    assert drain == "drain" and drained["http_port"] == params["http_port"]
    longest = drained["delay"] + 2 * DRAIN_TIMEOUT_S + STOP_TIMEOUT_S
    assert predictor["terminationGracePeriodSeconds"] > longest
    (shm,) = [m for m in model["volumeMounts"] if m["mountPath"] == "/dev/shm"]
    volume = next(v for v in predictor["volumes"] if v["name"] == shm["name"])
    assert volume["emptyDir"]["medium"] == "Memory"


def adapter_rules() -> dict[str, dict]:
    values = yaml.safe_load(
        (DEPLOY / "kubernetes" / "monitoring" / "prometheus-adapter-values.yaml").read_text()
    )
    return {rule["name"]["as"]: rule for rule in values["rules"]["custom"]}


def test_the_hpa_scales_on_metrics_the_adapter_makes():
    metrics = rendered("cpu")["HorizontalPodAutoscaler"]["spec"]["metrics"]
    rules = adapter_rules()
    names = [metric["pods"]["metric"]["name"] for metric in metrics]
    assert all(metric["type"] == "Pods" for metric in metrics) and set(names) <= set(rules)
    # the load inside the pods, and the demand they turn away beyond their bounds
    assert names == ["triton_ocr_requests_in_flight", "triton_ocr_shed_per_second"]
    for rule in rules.values():  # per pod, so the HPA can average over its pods
        series = re.match(r"([a-z_]+)\{", rule["seriesQuery"]).group(1)
        assert re.fullmatch(rule["name"]["matches"], series)
        assert rule["resources"]["overrides"]["pod"] == {"resource": "pod"}
        assert "<<.GroupBy>>" in rule["metricsQuery"]
