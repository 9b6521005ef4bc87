"""docker-compose.yaml is structurally sound: pinned images, mounted paths exist, services agree.

Images cannot be pulled where the tests run, so the wiring between files is what we check."""

from __future__ import annotations

import copy
import posixpath
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pytest
import yaml

REPO = Path(__file__).parents[1]
COMPOSE = REPO / "docker-compose.yaml"
PROM_CONFIG = REPO / "dashboards" / "prometheus.yaml"
GATEWAY = REPO / "collector_config" / "agent-gateway.yaml"
DATASOURCES = REPO / "dashboards" / "provisioning" / "datasources" / "datasources.yaml"
PROVIDERS = REPO / "dashboards" / "provisioning" / "dashboards" / "dashboards.yaml"
TEMPO_CONFIG = REPO / "dashboards" / "tempo.yaml"
COLLECTOR_IMAGE = "otel/opentelemetry-collector-contrib:0.159.0"


def _load(path: Path) -> Any:
    return yaml.safe_load(path.read_text())


def mounts(service: dict[str, Any]) -> dict[str, str]:
    """Container path -> host path (relative to the repo) for short-syntax bind mounts."""
    out = {}
    for volume in service.get("volumes", []):
        host, container = volume.split(":")[:2]
        out[container] = host
    return out


def _service_with_mount(compose: dict[str, Any], host: str) -> tuple[str, str]:
    for name, service in compose["services"].items():
        for container, source in mounts(service).items():
            if Path(source) == Path(host):
                return name, container
    raise AssertionError(f"no service mounts {host}")


def _default_port(endpoint: str) -> str:
    """Port of an endpoint like ``${env:X:-0.0.0.0:8889}`` or ``tempo:4317``."""
    return endpoint.rstrip("}").rsplit(":", 1)[-1]


def compose_problems(compose: dict[str, Any]) -> list[str]:
    """Everything wrong with the compose file's images and mounts."""
    problems = []
    for name, service in compose["services"].items():
        image = service.get("image", "")
        tag = image.rsplit(":", 1)[1] if ":" in image.split("/")[-1] else ""
        if not tag or tag == "latest":
            problems.append(f"{name}: image {image!r} is not pinned")
        for container, host in mounts(service).items():
            if not host.startswith("./"):
                problems.append(f"{name}: {host} is not a repo-relative bind mount")
            elif not (REPO / host).exists():
                problems.append(f"{name}: mounted path {host} does not exist")
            if not container.startswith("/"):
                problems.append(f"{name}: container path {container} is not absolute")
    return problems


def _compose() -> dict[str, Any]:
    compose: dict[str, Any] = _load(COMPOSE)
    return compose


def test_compose_is_clean() -> None:
    """Every image is pinned and every mounted host path exists in the repo."""
    assert compose_problems(_compose()) == []


def test_compose_problems_catch_latest_and_missing_paths() -> None:
    """An unpinned image, a latest tag and a missing mount are each reported."""
    compose = copy.deepcopy(_compose())
    compose["services"]["grafana"]["image"] = "grafana/grafana"
    compose["services"]["tempo"]["image"] = "grafana/tempo:latest"
    compose["services"]["prometheus"]["volumes"].append("./dashboards/missing.yaml:/etc/x:ro")
    assert compose_problems(compose) == [
        "tempo: image 'grafana/tempo:latest' is not pinned",
        "prometheus: mounted path ./dashboards/missing.yaml does not exist",
        "grafana: image 'grafana/grafana' is not pinned",
    ]


def test_services_and_ports() -> None:
    """The four services exist, the collector is the pinned contrib build, ports are published."""
    services = _compose()["services"]
    assert set(services) >= {"otel-collector", "prometheus", "tempo", "grafana"}
    assert services["otel-collector"]["image"] == COLLECTOR_IMAGE
    assert {"4317:4317", "4318:4318"} <= set(services["otel-collector"]["ports"])
    assert "9090:9090" in services["prometheus"]["ports"]
    assert "3000:3000" in services["grafana"]["ports"]


def test_collector_runs_gateway_config() -> None:
    """The collector mounts agent-gateway.yaml where its --config flag points."""
    compose = _compose()
    name, container = _service_with_mount(compose, "collector_config/agent-gateway.yaml")
    assert name == "otel-collector"
    assert f"--config={container}" in compose["services"][name]["command"]
    tempo_port = _default_port(compose["services"][name]["environment"]["TEMPO_ENDPOINT"])
    tempo_grpc = _load(TEMPO_CONFIG)["distributor"]["receivers"]["otlp"]["protocols"]["grpc"]
    assert _default_port(tempo_grpc["endpoint"]) == tempo_port


def test_prometheus_scrapes_collector_exporter() -> None:
    """Prometheus scrapes the collector on the prometheus exporter's port, honoring labels."""
    collector, _ = _service_with_mount(_compose(), "collector_config/agent-gateway.yaml")
    port = _default_port(_load(GATEWAY)["exporters"]["prometheus"]["endpoint"])
    jobs = _load(PROM_CONFIG)["scrape_configs"]
    scraping = [
        job
        for job in jobs
        for static in job.get("static_configs", [])
        if f"{collector}:{port}" in static["targets"]
    ]
    assert len(scraping) == 1, jobs
    assert scraping[0]["honor_labels"] is True


def test_prometheus_mounts_config_and_rules_consistently() -> None:
    """--config.file points at the mounted config; rule files resolve in the container too."""
    compose = _compose()
    prometheus = compose["services"]["prometheus"]
    container_mounts = mounts(prometheus)
    config_flag = next(a for a in prometheus["command"] if a.startswith("--config.file="))
    container_config = config_flag.split("=", 1)[1]
    assert Path(container_mounts[container_config]) == Path("dashboards/prometheus.yaml")
    assert "--enable-feature=exemplar-storage" in prometheus["command"]
    for rule_file in _load(PROM_CONFIG)["rule_files"]:
        in_container = posixpath.join(posixpath.dirname(container_config), rule_file)
        assert in_container in container_mounts, f"{rule_file} not mounted at {in_container}"
        host = REPO / container_mounts[in_container]
        assert host.resolve() == (PROM_CONFIG.parent / rule_file).resolve()


def test_promtool_check_config() -> None:
    """promtool accepts the compose Prometheus config, including its rule files."""
    promtool = shutil.which("promtool")
    if promtool is None:
        pytest.fail("promtool not found: apt-get install -y prometheus (Debian package)")
    result = subprocess.run(
        [promtool, "check", "config", str(PROM_CONFIG)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "SUCCESS: 1 rule files found" in output
    assert re.search(r"SUCCESS: \d+ rules found", output)


def test_grafana_provisioning_mounted() -> None:
    """Grafana gets both provisioning folders and the dashboard inside the provider's path."""
    compose = _compose()
    grafana = mounts(compose["services"]["grafana"])
    assert Path(grafana["/etc/grafana/provisioning/datasources"]) == Path(
        "dashboards/provisioning/datasources"
    )
    assert Path(grafana["/etc/grafana/provisioning/dashboards"]) == Path(
        "dashboards/provisioning/dashboards"
    )
    provider_path = _load(PROVIDERS)["providers"][0]["options"]["path"]
    boards = [c for c, h in grafana.items() if Path(h) == Path("dashboards/groundplane.json")]
    assert len(boards) == 1
    assert posixpath.dirname(boards[0]) == provider_path


def test_datasource_urls_point_at_compose_services() -> None:
    """The provisioned data source URLs name compose services and the ports they listen on."""
    services = _compose()["services"]
    by_type = {d["type"]: d for d in _load(DATASOURCES)["datasources"]}
    prom_url = urlparse(by_type["prometheus"]["url"])
    assert prom_url.hostname in services
    assert prom_url.port == 9090
    tempo_url = urlparse(by_type["tempo"]["url"])
    assert tempo_url.hostname in services
    assert tempo_url.port == _load(TEMPO_CONFIG)["server"]["http_listen_port"]


def test_verifier_sits_behind_a_trace_id_router() -> None:
    """The verifier-router Collector runs verifier.yaml and resolves the verifier service by
    the name compose gives it; the verifier exports to the gateway Collector."""
    compose = _compose()
    name, container = _service_with_mount(compose, "collector_config/verifier.yaml")
    assert name == "verifier-router"
    router = compose["services"][name]
    assert f"--config={container}" in router["command"]
    assert router["environment"]["VERIFIER_HOSTNAME"] in compose["services"]
    verifier = compose["services"]["groundplane-verifier"]
    assert "groundplane-otel serve --policy /etc/groundplane/policy.yaml" in verifier["command"][-1]
    assert mounts(verifier)["/etc/groundplane/policy.yaml"] == "./examples/policy.yaml"
    assert verifier["environment"]["OTEL_EXPORTER_OTLP_ENDPOINT"] == "http://otel-collector:4317"
