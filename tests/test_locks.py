"""The locks in locks/: exact versions with hashes, in step with pyproject.toml's ranges, and the
only way the Makefile and the Dockerfile install anything."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: pytest's own dependency
    import tomli as tomllib

from tests.conftest import ROOT

LOCKS = ROOT / "locks"
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
PROJECT = canonicalize_name(PYPROJECT["project"]["name"])
# lock -> the extras of this project it holds (besides the base dependencies)
CONTENTS = {
    "client.txt": (),
    "runtime.txt": ("server",),
    "dev.txt": ("dev",),
    "bench.txt": ("serve", "bench"),
    "export.txt": ("dev", "export"),
}


def locked(name: str) -> dict[str, list[tuple[str, Requirement]]]:
    """package -> [(version, requirement with its marker)] (a universal lock may hold one
    version per Python)."""
    text = (LOCKS / name).read_text()
    entries: dict[str, list[tuple[str, Requirement]]] = {}
    for block in re.split(r"\n(?=\S)", text):
        line = block.split(" \\", 1)[0].strip()
        if not line or line.startswith("#"):
            continue
        requirement = Requirement(line)
        (spec,) = requirement.specifier
        assert spec.operator == "==", f"{name}: {line} is not an exact pin"
        assert "--hash=sha256:" in block, f"{name}: {line} has no hash"
        entries.setdefault(canonicalize_name(requirement.name), []).append(
            (spec.version, requirement)
        )
    return entries


def direct_requirements(extras: tuple[str, ...]) -> list[Requirement]:
    """pyproject's base dependencies plus those of `extras`, self-references expanded."""
    optional = PYPROJECT["project"]["optional-dependencies"]
    wanted, seen, found = list(extras), set(), []
    found += [Requirement(r) for r in PYPROJECT["project"]["dependencies"]]
    while wanted:
        extra = wanted.pop()
        if extra in seen:
            continue
        seen.add(extra)
        for text in optional[extra]:
            requirement = Requirement(text)
            if canonicalize_name(requirement.name) == PROJECT:
                wanted += sorted(requirement.extras)
            else:
                found.append(requirement)
    found += [Requirement(r) for r in PYPROJECT["build-system"]["requires"]]
    return found


@pytest.mark.parametrize("name", [*CONTENTS, "bench-no-deps.txt", "uv.txt"])
def test_every_lock_pins_exact_versions_with_hashes(name):
    assert locked(name)


@pytest.mark.parametrize(("name", "extras"), CONTENTS.items())
def test_each_lock_satisfies_pyproject(name, extras):
    """A lock generated from other ranges than pyproject.toml's would install something else
    than `pip install .` promises: refresh it with `make lock`."""
    entries = locked(name)
    for requirement in direct_requirements(extras):
        versions = entries.get(canonicalize_name(requirement.name))
        assert versions, f"{name} lacks {requirement} (run `make lock`)"
        for version, pin in versions:
            assert requirement.specifier.contains(version, prereleases=True), (
                f"{name}: {pin} does not satisfy pyproject's {requirement} (run `make lock`)"
            )


def test_the_bench_baseline_is_locked_without_its_dependencies():
    inputs = (LOCKS / "bench-no-deps.in").read_text()
    (pin,) = [line for line in inputs.splitlines() if line and not line.startswith("#")]
    entries = locked("bench-no-deps.txt")
    requirement = Requirement(pin)
    assert list(entries) == [canonicalize_name(requirement.name)]
    ((version, _),) = entries[canonicalize_name(requirement.name)]
    assert requirement.specifier.contains(version)


def pip_installs(path: Path) -> list[str]:
    text = path.read_text().replace("\\\n", " ")
    commands = [part for line in text.splitlines() for part in line.split("&&")]
    return [command for command in commands if re.search(r"pip install\b", command)]


@pytest.mark.parametrize("name", ["Makefile", "Dockerfile"])
def test_installs_come_from_the_locks_only(name):
    """Everything is hash-checked from a lock without resolving, then the project itself is
    installed on top without dependencies: nothing picks a version on the day it runs."""
    lines = pip_installs(ROOT / name)
    assert lines
    for line in lines:
        from_lock = (
            "--require-hashes" in line and "--no-deps" in line and re.search(r"-r \S+", line)
        )
        project_only = "--no-deps" in line and re.search(r"(^|\s)(-e )?\.(\s|$)", line)
        assert from_lock or project_only, f"{name}: {line.strip()}"


def test_the_client_lock_holds_no_server_package():
    """locks/client.txt is the light client (`pip install triton-ocr`): the base dependencies and
    theirs, none of the server extra's."""
    server = PYPROJECT["project"]["optional-dependencies"]["server"]
    names = {canonicalize_name(Requirement(r).name) for r in server}
    assert names, "pyproject.toml has no server extra"
    assert not names & set(locked("client.txt"))
