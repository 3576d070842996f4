"""`triton-ocr deploy-check` (`make deploy-check`): every manifest in deploy/ checked against the
schema of its kind, and every NGINX configuration a ConfigMap carries checked by `nginx -t`,
without a cluster.

The Kustomize overlays are rendered by kubectl's built-in Kustomize (the real one), the other
manifests read as they are. Kinds Kubernetes defines are validated with `kubernetes-validate`
against the schemas of each version in KUBERNETES_VERSIONS, strictly (unknown fields are errors,
as `kubectl apply` reports them); the custom resources (ServiceMonitor, InferenceService)
against the openAPIV3Schema their projects publish (deploy/schemas/README.md), made strict the
same way.
"""

from __future__ import annotations

import copy
import getpass
import gzip
import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# the oldest Kubernetes the manifests are meant for, and the newest kubernetes-validate knows
KUBERNETES_VERSIONS = ("1.30", "1.37")
# custom resources: (apiVersion, kind) -> their schema in deploy/schemas
CUSTOM_SCHEMAS = {
    ("monitoring.coreos.com/v1", "ServiceMonitor"): "servicemonitor.monitoring.coreos.com-v1",
    ("serving.kserve.io/v1beta1", "InferenceService"): "inferenceservice.serving.kserve.io-v1beta1",
}
KUSTOMIZATION = "kustomization.yaml"


@dataclass(frozen=True)
class Manifest:
    source: str  # the overlay or file it comes from, relative to deploy/
    document: dict[str, Any]

    @property
    def name(self) -> str:
        return f"{self.document.get('kind')}/{self.document.get('metadata', {}).get('name')}"


@dataclass
class Report:
    checked: list[tuple[Manifest, str]] = field(default_factory=list)  # (manifest, against)
    errors: list[str] = field(default_factory=list)


def kustomize(overlay: Path) -> str:
    """The overlay rendered by kubectl's Kustomize."""
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        raise FileNotFoundError(
            "kubectl renders the Kustomize overlays (kubectl kustomize): install it "
            "(https://kubernetes.io/docs/tasks/tools/), no cluster needed"
        )
    done = subprocess.run(
        [kubectl, "kustomize", str(overlay)], capture_output=True, text=True, timeout=120
    )
    if done.returncode != 0:
        raise ValueError(f"kubectl kustomize {overlay}: {done.stderr.strip()}")
    return done.stdout


def load_documents(text: str) -> list[dict[str, Any]]:
    import yaml

    return [doc for doc in yaml.safe_load_all(text) if doc]


def overlays(deploy: Path) -> list[Path]:
    return sorted(p.parent for p in (deploy / "kubernetes" / "overlays").glob(f"*/{KUSTOMIZATION}"))


def manifests(deploy: Path) -> Iterator[Manifest]:
    """Every object deploy/ would create: each overlay rendered, and the KServe manifests."""
    for overlay in overlays(deploy):
        source = overlay.relative_to(deploy).as_posix()
        for document in load_documents(kustomize(overlay)):
            yield Manifest(source, document)
    for path in sorted((deploy / "kserve").glob("*.yaml")):
        for document in load_documents(path.read_text()):
            yield Manifest(path.relative_to(deploy).as_posix(), document)


def strict(schema: Any) -> Any:
    """A CRD schema that refuses unknown fields, as the API server's strict field validation
    does: objects with listed properties take no others, unless the schema keeps unknown fields
    (x-kubernetes-preserve-unknown-fields) or says what the others are."""
    if isinstance(schema, list):
        return [strict(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out = {key: strict(value) for key, value in schema.items()}
    if (
        "properties" in out
        and "additionalProperties" not in out
        and not out.get("x-kubernetes-preserve-unknown-fields")
    ):
        out["additionalProperties"] = False
    return out


def custom_schema(deploy: Path, name: str) -> dict[str, Any]:
    schema = json.loads(gzip.decompress((deploy / "schemas" / f"{name}.json.gz").read_bytes()))
    schema = strict(copy.deepcopy(schema))
    # metadata is the API server's ObjectMeta, which CRD schemas leave open
    schema.setdefault("properties", {})["metadata"] = {"type": "object"}
    return schema


def validate(manifest: Manifest, deploy: Path) -> tuple[str, list[str]]:
    """(what it was checked against, the errors found)."""
    import jsonschema
    import kubernetes_validate

    document = manifest.document
    key = (document.get("apiVersion"), document.get("kind"))
    if key in CUSTOM_SCHEMAS:
        validator = jsonschema.Draft7Validator(custom_schema(deploy, CUSTOM_SCHEMAS[key]))
        errors = [
            f"{'.'.join(map(str, e.absolute_path)) or '(root)'}: {e.message}"
            for e in sorted(validator.iter_errors(document), key=lambda e: list(e.path))
        ]
        return f"{CUSTOM_SCHEMAS[key]} (published CRD schema)", errors
    errors = []
    for version in KUBERNETES_VERSIONS:
        try:
            kubernetes_validate.validate(document, version, strict=True)
        except kubernetes_validate.ValidationError as exc:
            path = ".".join(map(str, exc.path)) or "(root)"
            errors.append(f"Kubernetes {version}: {path}: {exc.message}")
        except kubernetes_validate.SchemaNotFoundError as exc:
            errors.append(f"Kubernetes {version}: no schema: {exc}")
    return f"Kubernetes {' and '.join(KUBERNETES_VERSIONS)} (strict)", errors


def check_deploy(deploy: Path) -> Report:
    """Validate every manifest of deploy/; each error names its source, kind and name."""
    report = Report()
    for manifest in manifests(deploy):
        against, errors = validate(manifest, deploy)
        report.checked.append((manifest, against))
        report.errors += [f"{manifest.source}: {manifest.name}: {e}" for e in errors]
        for name, text in proxy_configs(manifest).items():
            report.checked.append((manifest, f"nginx -t ({name})"))
            report.errors += [
                f"{manifest.source}: {manifest.name}: {name}: {e}" for e in nginx_errors(text)
            ]
    return report


def nginx() -> str:
    found = shutil.which("nginx", path=f"{os.environ.get('PATH', '')}:/usr/sbin:/sbin")
    if found is None:
        raise FileNotFoundError(
            "nginx checks the proxy's configuration (nginx -t): install it "
            "(apt-get install nginx-light), no server is started"
        )
    return found


def nginx_main(prefix: Path, included: Path) -> str:
    """A main configuration around `included` (a conf.d file, read inside http {}), as the
    proxy image's nginx.conf holds it: everything NGINX writes kept under `prefix`."""
    temp = "\n".join(
        f"    {kind}_temp_path {prefix / kind};" for kind in ("client_body", "proxy", "fastcgi")
    )
    return (
        f"user {getpass.getuser()};\nworker_processes 1;\ndaemon off;\n"
        f"pid {prefix / 'nginx.pid'};\nerror_log {prefix / 'error.log'} warn;\n"
        "events { worker_connections 1024; }\n"
        f"http {{\n    access_log off;\n{temp}\n"
        f"    uwsgi_temp_path {prefix / 'uwsgi'};\n    scgi_temp_path {prefix / 'scgi'};\n"
        f"    include {included};\n}}\n"
    )


def proxy_configs(manifest: Manifest) -> dict[str, str]:
    """A ConfigMap's NGINX server files (name -> text): the ones the proxy container mounts as
    its conf.d. Any other manifest: none."""
    document = manifest.document
    if document.get("kind") != "ConfigMap":
        return {}
    return {k: v for k, v in document.get("data", {}).items() if k.endswith(".conf")}


def nginx_errors(text: str) -> list[str]:
    """What `nginx -t` says is wrong with one conf.d file (none when it is valid)."""
    with tempfile.TemporaryDirectory(prefix="triton-ocr-nginx-") as folder:
        prefix = Path(folder)
        included = prefix / "server.conf"
        included.write_text(text)
        (prefix / "nginx.conf").write_text(nginx_main(prefix, included))
        done = subprocess.run(
            [nginx(), "-t", "-q", "-p", str(prefix), "-c", str(prefix / "nginx.conf")],
            capture_output=True,
            text=True,
            timeout=60,
        )
    said = [line for line in done.stderr.splitlines() if "[emerg]" in line or "[alert]" in line]
    return said or ([done.stderr.strip() or "nginx -t failed"] if done.returncode else [])


def run_deploy_check(deploy: Path) -> int:
    """Print what was checked against what; 0 when every manifest is valid, else 1."""
    report = check_deploy(deploy)
    for manifest, against in report.checked:
        print(f"{manifest.source:36} {manifest.name:38} {against}")
    for error in report.errors:
        print(f"error: {error}")
    print(f"{len(report.checked)} manifests, {len(report.errors)} errors")
    return 1 if report.errors else 0
