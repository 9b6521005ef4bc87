"""Every shipped config passes the built Collector's own ``validate``; a broken one does not."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import yaml
from processes import MANIFEST, SHIPPED, binary


def validate(config: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(binary()), "validate", "--config", f"file:{config}"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_the_binary_is_the_manifest_release() -> None:
    """The binary reports the release builder-config.yaml pins, and holds its components."""
    version = subprocess.run(
        [str(binary()), "--version"], capture_output=True, text=True, timeout=30, check=True
    )
    release = yaml.safe_load(MANIFEST.read_text())["dist"]["version"]
    assert version.stdout.strip() == f"otelcol-groundplane version {release}"
    components = subprocess.run(
        [str(binary()), "components"], capture_output=True, text=True, timeout=30, check=True
    )
    listed = yaml.safe_load(components.stdout)
    names = {kind: {c["name"] for c in listed[kind]} for kind in ("receivers", "exporters")}
    assert names["receivers"] == {"otlp"}
    assert {"otlp_grpc", "otlp_http", "debug", "load_balancing", "file", "prometheus"} <= names[
        "exporters"
    ]
    assert {c["name"] for c in listed["processors"]} == {"batch", "memory_limiter"}


def test_three_configs_are_shipped() -> None:
    assert [p.name for p in SHIPPED] == [
        "agent-gateway.yaml",
        "loadbalancing.yaml",
        "verifier.yaml",
    ]


@pytest.mark.parametrize("config", SHIPPED, ids=lambda p: p.name)
def test_shipped_config_validates(config: Path) -> None:
    """``otelcol-groundplane validate`` accepts the shipped config as it is (its defaults)."""
    result = validate(config)
    assert result.returncode == 0, result.stdout + result.stderr


def test_a_wrong_key_is_refused(tmp_path: Path) -> None:
    """The same check refuses a config with a misspelt key: exit 1, the key named."""
    config = yaml.safe_load(SHIPPED[2].read_text())
    config["exporters"]["load_balancing/verifier"]["routing_keys"] = "traceID"
    broken = tmp_path / "broken.yaml"
    broken.write_text(yaml.safe_dump(config))
    result = validate(broken)
    assert result.returncode == 1
    assert "has invalid keys: routing_keys" in result.stderr
