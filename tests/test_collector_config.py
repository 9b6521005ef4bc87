"""Collector configs are linted against the project's own distribution (builder-config.yaml, the
components build/otelcol-groundplane holds) and the pinned otelcol-contrib 0.159.0 manifests.

The lint checks conventions a Collector accepts anyway (memory_limiter first, batch last, every
component used, ``${env:VAR}`` syntax); tests/collector/ runs the real binary's ``validate``
and the configs end to end.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml
from collector_lint import (
    Distribution,
    lint_config,
    lint_env_syntax,
    lint_file,
    load_distribution,
    type_name,
)

REPO = Path(__file__).parents[1]
DATA = REPO / "tests" / "data"  # shipped with the repo: see tests/data/README.md
CONTRIB = DATA / "otelcol-contrib-manifest-v0.159.0.yaml"
CORE = DATA / "otelcol-core-manifest-v0.159.0.yaml"
MANIFEST = REPO / "collector_config" / "builder-config.yaml"  # the project's distribution
CONFIGS = sorted(p for p in (REPO / "collector_config").glob("*.y*ml") if p != MANIFEST)


@pytest.fixture(scope="module")
def contrib() -> Distribution:
    assert CONTRIB.is_file(), f"pinned manifest missing: {CONTRIB} (see tests/data/README.md)"
    return load_distribution(CONTRIB)


@pytest.fixture(scope="module")
def core() -> Distribution:
    return load_distribution(CORE)


def _good() -> dict[str, Any]:
    return {
        "receivers": {"otlp": {"protocols": {"grpc": {"endpoint": "${env:GRPC:-0.0.0.0:4317}"}}}},
        "processors": {"memory_limiter": {"limit_percentage": 80}, "batch": {}},
        "exporters": {
            "otlp_grpc/tempo": {"endpoint": "${env:TEMPO_ENDPOINT:-tempo:4317}"},
            "prometheus": {"endpoint": "0.0.0.0:8889", "enable_open_metrics": True},
        },
        "service": {
            "pipelines": {
                "traces": {
                    "receivers": ["otlp"],
                    "processors": ["memory_limiter", "batch"],
                    "exporters": ["otlp_grpc/tempo"],
                },
                "metrics": {
                    "receivers": ["otlp"],
                    "processors": ["memory_limiter", "batch"],
                    "exporters": ["prometheus"],
                },
            }
        },
    }


def _lb() -> dict[str, Any]:
    config = _good()
    config["exporters"] = {
        "load_balancing": {
            "routing_key": "traceID",
            "protocol": {"otlp": {"timeout": "5s"}},
            "resolver": {"dns": {"hostname": "gw"}},
        }
    }
    config["service"]["pipelines"] = {
        "traces": {
            "receivers": ["otlp"],
            "processors": ["memory_limiter", "batch"],
            "exporters": ["load_balancing"],
        }
    }
    return config


def test_shipped_configs_exist() -> None:
    """Both the agent/gateway config and the scale-out tier are shipped."""
    assert {"agent-gateway.yaml", "loadbalancing.yaml", "verifier.yaml"} <= {
        p.name for p in CONFIGS
    }


@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: p.name)
def test_shipped_config_is_clean(path: Path, contrib: Distribution) -> None:
    """Every shipped collector config passes the linter against otelcol-contrib 0.159.0."""
    assert lint_file(path, contrib) == []


@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: p.name)
def test_shipped_config_uses_only_the_distributions_components(path: Path) -> None:
    """Every component a shipped config names is in the project's own Collector build."""
    assert lint_file(path, load_distribution(MANIFEST)) == []


def test_the_distribution_is_one_release() -> None:
    """builder-config.yaml pins every component at the release it names (contrib and core
    v0.N, no stray version)."""
    manifest = yaml.safe_load(MANIFEST.read_text())
    release = f"v{manifest['dist']['version']}"
    versions = {
        entry["gomod"].split()[1]
        for kind in ("receivers", "processors", "exporters")
        for entry in manifest[kind]
    }
    assert versions == {release}


def test_verifier_tier_routes_whole_traces_to_the_verifier() -> None:
    """verifier.yaml exports every trace to the backend and, by trace id, to the verifier."""
    config = yaml.safe_load((REPO / "collector_config" / "verifier.yaml").read_text())
    balancer = config["exporters"]["load_balancing/verifier"]
    assert balancer["routing_key"] == "traceID"
    assert list(balancer["resolver"]) == ["dns"]
    assert config["service"]["pipelines"]["traces"]["exporters"] == [
        "otlp_grpc/tempo",
        "load_balancing/verifier",
    ]
    assert set(config["service"]["pipelines"]) == {"traces"}


def test_gateway_keeps_exemplars_and_service_label() -> None:
    """The gateway exposes OpenMetrics (exemplars) and copies resource attributes to labels."""
    config = yaml.safe_load((REPO / "collector_config" / "agent-gateway.yaml").read_text())
    prom = config["exporters"]["prometheus"]
    assert prom["enable_open_metrics"] is True
    assert prom["resource_to_telemetry_conversion"]["enabled"] is True
    assert set(config["receivers"]["otlp"]["protocols"]) == {"grpc", "http"}
    assert config["exporters"]["otlp_grpc/tempo"]["endpoint"] == "${env:TEMPO_ENDPOINT:-tempo:4317}"


def test_good_fixture_is_clean(contrib: Distribution) -> None:
    """The base configs the negative tests mutate are clean: each error below is the mutation's."""
    assert lint_config(_good(), contrib) == []
    assert lint_config(_lb(), contrib) == []


def test_manifest_type_names(contrib: Distribution) -> None:
    """Module paths map to component type names, including renamed components and aliases."""
    mod = "github.com/open-telemetry/opentelemetry-collector-contrib/exporter/"
    assert type_name("exporters", mod + "loadbalancingexporter v0.159.0") == (
        "load_balancing",
        ("loadbalancing",),
    )
    assert type_name("receivers", "go.opentelemetry.io/collector/receiver/otlpreceiver v1") == (
        "otlp",
        (),
    )
    assert {"otlp_grpc", "otlp_http", "prometheus", "load_balancing", "debug"} <= contrib.types[
        "exporters"
    ]
    assert {"memory_limiter", "batch", "tail_sampling"} <= contrib.types["processors"]
    assert contrib.aliases[("exporters", "otlp")] == "otlp_grpc"


def test_contrib_only_component_rejected_by_core(core: Distribution) -> None:
    """The load-balancing exporter is contrib-only: linting against core reports it."""
    assert lint_config(_lb(), core) == [
        "exporter 'load_balancing': type 'load_balancing' is not in otelcol 0.159.0"
    ]


def test_unknown_component(contrib: Distribution) -> None:
    """A component type absent from the distribution is reported."""
    config = _good()
    config["exporters"]["jaeger"] = config["exporters"].pop("otlp_grpc/tempo")
    config["service"]["pipelines"]["traces"]["exporters"] = ["jaeger"]
    assert lint_config(config, contrib) == [
        "exporter 'jaeger': type 'jaeger' is not in otelcol-contrib 0.159.0"
    ]


def test_deprecated_alias(contrib: Distribution) -> None:
    """A deprecated alias (otlp exporter) is reported with the current name."""
    config = _good()
    config["exporters"]["otlp/tempo"] = config["exporters"].pop("otlp_grpc/tempo")
    config["service"]["pipelines"]["traces"]["exporters"] = ["otlp/tempo"]
    assert lint_config(config, contrib) == [
        "exporter 'otlp/tempo' uses deprecated name 'otlp'; use 'otlp_grpc'"
    ]


def test_signal_support_unknown(contrib: Distribution) -> None:
    """A real component missing from the signal table is reported, not assumed to work."""
    config = _good()
    config["exporters"]["zipkin"] = {"endpoint": "http://zipkin:9411"}
    config["service"]["pipelines"]["traces"]["exporters"] = ["zipkin"]
    del config["exporters"]["otlp_grpc/tempo"]
    assert lint_config(config, contrib) == [
        "exporter 'zipkin': signal support unknown, add it to the table"
    ]


def test_wrong_signal(contrib: Distribution) -> None:
    """A metrics-only exporter in a traces pipeline is reported."""
    config = _good()
    config["service"]["pipelines"]["traces"]["exporters"].append("prometheus")
    assert lint_config(config, contrib) == [
        "pipeline 'traces': exporter 'prometheus' does not support traces"
    ]


def test_undefined_component(contrib: Distribution) -> None:
    """A pipeline naming a component that is not defined is reported."""
    config = _good()
    config["service"]["pipelines"]["metrics"]["exporters"] = ["prometheus", "debug"]
    assert lint_config(config, contrib) == ["pipeline 'metrics': exporter 'debug' is not defined"]


def test_unused_component(contrib: Distribution) -> None:
    """A defined component that no pipeline uses is reported."""
    config = _good()
    config["exporters"]["debug"] = {}
    assert lint_config(config, contrib) == [
        "exporter 'debug' is defined but not used in any pipeline"
    ]


def test_undefined_and_unused_extension(contrib: Distribution) -> None:
    """Extensions must be both defined and enabled in service.extensions."""
    config = _good()
    config["extensions"] = {"health_check": {}}
    config["service"]["extensions"] = ["pprof"]
    assert lint_config(config, contrib) == [
        "service.extensions: extension 'pprof' is not defined",
        "extension 'health_check' is defined but not enabled in service.extensions",
    ]


def test_memory_limiter_not_first(contrib: Distribution) -> None:
    """memory_limiter must be the first processor of every pipeline."""
    config = _good()
    config["service"]["pipelines"]["traces"]["processors"] = ["batch", "memory_limiter"]
    assert lint_config(config, contrib) == [
        "pipeline 'traces': memory_limiter must be the first processor",
        "pipeline 'traces': batch must be the last processor",
    ]


def test_batch_missing(contrib: Distribution) -> None:
    """A pipeline without batch last is reported."""
    config = _good()
    config["service"]["pipelines"]["metrics"]["processors"] = ["memory_limiter"]
    assert lint_config(config, contrib) == ["pipeline 'metrics': batch must be the last processor"]


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("$TEMPO", ["exporters.otlp_grpc/tempo.endpoint: '$TEMPO' is not ${env:VAR} syntax"]),
        (
            "${TEMPO:-tempo:4317}",
            ["exporters.otlp_grpc/tempo.endpoint: '${TEMPO:-tempo:4317}' is not ${env:VAR} syntax"],
        ),
        ("${env:TEMPO:-tempo:4317}", []),
        ("$${literal}", []),
    ],
)
def test_env_syntax(value: str, expected: list[str]) -> None:
    """Bare $VAR and ${VAR} are flagged; ${env:VAR[:-default]} and the $$ escape are accepted."""
    config = _good()
    config["exporters"]["otlp_grpc/tempo"]["endpoint"] = value
    assert lint_env_syntax(config) == expected


def test_traceid_routing_in_metrics_pipeline(contrib: Distribution) -> None:
    """routing_key traceID on a load-balancing exporter in a metrics pipeline is reported."""
    config = _lb()
    config["service"]["pipelines"]["metrics"] = copy.deepcopy(
        config["service"]["pipelines"]["traces"]
    )
    assert lint_config(config, contrib) == [
        "exporter 'load_balancing': routing_key traceID is only valid in traces pipelines "
        "(used in 'metrics')"
    ]


def test_two_resolvers(contrib: Distribution) -> None:
    """The load-balancing exporter needs exactly one resolver."""
    config = _lb()
    config["exporters"]["load_balancing"]["resolver"]["static"] = {"hostnames": ["gw-1:4317"]}
    assert lint_config(config, contrib) == [
        "exporter 'load_balancing': exactly one resolver required, found 2 ['static', 'dns']"
    ]


def test_no_resolver(contrib: Distribution) -> None:
    """A load-balancing exporter without a resolver is reported."""
    config = _lb()
    del config["exporters"]["load_balancing"]["resolver"]
    assert lint_config(config, contrib) == [
        "exporter 'load_balancing': exactly one resolver required, found 0 []"
    ]


def test_lb_protocol_endpoint(contrib: Distribution) -> None:
    """protocol.otlp.endpoint must not be set: the resolver supplies the backends."""
    config = _lb()
    config["exporters"]["load_balancing"]["protocol"]["otlp"]["endpoint"] = "gw:4317"
    assert lint_config(config, contrib) == [
        "exporter 'load_balancing': protocol.otlp.endpoint must not be set"
    ]


def test_connector_signal_pair(contrib: Distribution) -> None:
    """A connector is checked on the signal pair it joins (spanmetrics: traces to metrics only)."""
    config = _good()
    config["connectors"] = {"spanmetrics": {}}
    pipelines = config["service"]["pipelines"]
    pipelines["traces"]["exporters"].append("spanmetrics")
    pipelines["metrics"]["receivers"].append("spanmetrics")
    assert lint_config(config, contrib) == []
    pipelines["logs"] = {
        "receivers": ["spanmetrics"],
        "processors": ["memory_limiter", "batch"],
        "exporters": ["otlp_grpc/tempo"],
    }
    assert lint_config(config, contrib) == ["connector 'spanmetrics' cannot connect traces to logs"]
