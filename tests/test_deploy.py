"""The deployment recipe (deploy/) holds together: nginx accepts its configuration, the Compose
file and the Kubernetes manifests parse and agree with each other and with the instances'
settings. (No container engine or cluster runs here; the nginx configuration itself is run by
test_scale_cluster.py.)"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from mcpkit.server.settings import Settings
from scale_support import NGINX, NGINX_RECIPE, nginx_conf
from support import ROOT

DEPLOY = ROOT / "deploy"


def documents(name: str) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all((DEPLOY / name).read_text()) if d]


@pytest.mark.skipif(NGINX is None, reason="nginx is not installed (.ci/run installs it)")
def test_nginx_accepts_the_configuration(tmp_path: Path) -> None:
    assert NGINX is not None
    conf = nginx_conf(tmp_path, 18080, {"a": 18081, "b": 18082, "c": 18083})
    done = subprocess.run(
        [NGINX, "-t", "-p", str(tmp_path), "-c", str(conf)], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert "test is successful" in done.stderr


def test_each_instance_of_the_compose_file_is_routed_by_its_prefix() -> None:
    (compose,) = documents("compose.yaml")
    services = compose["services"]
    routes = dict(re.findall(r'"~\^(\w)\\\.\"\s+(\w+);', NGINX_RECIPE.read_text()))
    assert routes == {"a": "mcpkit_a", "b": "mcpkit_b", "c": "mcpkit_c"}
    for name in routes:
        service = services[f"mcpkit-{name}"]
        env = service["environment"]
        assert env["MCPKIT_SESSION_ID_PREFIX"] == f"{name}."
        assert Settings.from_env({k: str(v) for k, v in env.items() if "${" not in str(v)})
        grace = int(service["stop_grace_period"].rstrip("s"))
        assert grace > float(env["MCPKIT_DRAIN_TIMEOUT"])  # the drain is never cut short
        assert f"mcpkit-{name}:8000" in NGINX_RECIPE.read_text()
    assert "--appendonly" in services["redis"]["command"]
    assert services["nginx"]["volumes"] == ["./nginx/mcpkit.conf:/etc/nginx/conf.d/default.conf:ro"]


def test_the_kubernetes_manifests_agree() -> None:
    by_kind = {d["kind"]: d for d in documents("kubernetes/mcpkit.yaml")}
    deployment, service, budget = (
        by_kind["Deployment"],
        by_kind["Service"],
        by_kind["PodDisruptionBudget"],
    )
    labels = deployment["spec"]["template"]["metadata"]["labels"]
    assert deployment["spec"]["selector"]["matchLabels"] == labels
    assert service["spec"]["selector"] == labels == budget["spec"]["selector"]["matchLabels"]
    pod = deployment["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    assert container["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert container["livenessProbe"]["httpGet"]["path"] == "/healthz"
    port_names = {p["name"] for p in container["ports"]}
    assert container["readinessProbe"]["httpGet"]["port"] in port_names
    assert service["spec"]["ports"][0]["targetPort"] in port_names
    env = {e["name"]: e.get("value") for e in container["env"]}
    assert env["MCPKIT_REDIS_URL"].startswith("redis://redis:")
    assert Settings.from_env({k: v for k, v in env.items() if v is not None})
    pre_stop = int(container["lifecycle"]["preStop"]["exec"]["command"][-1])
    assert pod["terminationGracePeriodSeconds"] > pre_stop + float(env["MCPKIT_DRAIN_TIMEOUT"])
    assert deployment["spec"]["strategy"]["rollingUpdate"]["maxUnavailable"] == 0
    redis = {d["kind"]: d for d in documents("kubernetes/redis.yaml")}
    args = redis["StatefulSet"]["spec"]["template"]["spec"]["containers"][0]["args"]
    assert args[args.index("--appendonly") + 1] == "yes"
    assert redis["Service"]["metadata"]["name"] == "redis"
