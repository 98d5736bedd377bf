"""`setup-env fleet k8s`: the manifests validate against Kubernetes' published schemas.

The validator is kubernetes-validate (PyPI, pinned in the test extras), which bundles the
OpenAPI-derived JSON schemas of each Kubernetes release and validates offline; ``strict`` rejects
any field the schema does not have. The YAML is parsed by PyYAML, as kubectl's own YAML reader
would see it, not compared as strings.
"""

from __future__ import annotations

import copy
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from setup_env.cli import main

try:
    import kubernetes_validate as kv
    import yaml
except ImportError:  # the Python 3.9 leg installs no test extras
    if os.environ.get("CI", "").lower() == "true" and sys.version_info >= (3, 10):
        raise  # CI's main leg has the test extras: a missing validator is a failure
    pytest.skip(
        "kubernetes-validate is not installed (pip install -e '.[test]')", allow_module_level=True
    )

# Kubernetes releases to validate against: an older supported one and the newest bundled.
VERSIONS = ("1.30.0", "1.34.0")


def manifests(capsys: pytest.CaptureFixture[str], *argv: str) -> list[dict[str, Any]]:
    assert main(["fleet", "k8s", *argv]) == 0
    docs = [d for d in yaml.safe_load_all(capsys.readouterr().out) if d is not None]
    return docs


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize(
    "argv",
    [
        ("--nodes", "4", "--image", "registry.example.com/ml/train:2026-12"),
        ("--nodes", "64", "--image", "nvcr.io/nvidia/pytorch:25.11-py3", "--gpus-per-node", "8",
         "--namespace", "ml-infra", "--results-pvc", "fleet-results", "--name", "h100-burn-in"),
    ],
)  # fmt: skip
def test_manifests_pass_schema_validation(
    argv: tuple[str, ...], version: str, capsys: pytest.CaptureFixture[str]
) -> None:
    docs = manifests(capsys, *argv)
    assert [d["kind"] for d in docs] == ["Service", "Job"]
    for doc in docs:
        kv.validate(doc, version, strict=True)  # raises ValidationError on any mismatch


def test_indexed_job_one_pod_per_gpu_node(capsys: pytest.CaptureFixture[str]) -> None:
    service, job = manifests(
        capsys, "--nodes", "16", "--image", "img:1", "--gpus-per-node", "4", "--results-pvc", "r"
    )
    spec = job["spec"]
    assert spec["completionMode"] == "Indexed"
    assert spec["completions"] == spec["parallelism"] == 16
    pod = spec["template"]["spec"]
    (container,) = pod["containers"]
    assert container["resources"]["limits"] == {"nvidia.com/gpu": 4}
    # One pod per node: no two pods of this job on one hostname.
    (rule,) = pod["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    assert rule["topologyKey"] == "kubernetes.io/hostname"
    assert rule["labelSelector"]["matchLabels"] == spec["template"]["metadata"]["labels"]
    # The rendezvous: pod 0's stable name through the headless Service of the same name.
    assert (
        pod["subdomain"] == service["metadata"]["name"] and service["spec"]["clusterIP"] == "None"
    )
    script = container["command"][2]
    assert "--rdzv-endpoint setup-env-fleet-0.setup-env-fleet:29500" in script
    assert "--nnodes 16" in script
    # Results: the pod's log is its documents (check, all-reduce, its record of both); also a
    # file per node on the volume.
    assert pod["volumes"] == [{"name": "results", "persistentVolumeClaim": {"claimName": "r"}}]
    assert 'cp /tmp/node.json "/results/$(hostname).json"' in script


def test_validator_catches_what_is_wrong(capsys: pytest.CaptureFixture[str]) -> None:
    # The check is not vacuous: a misspelt field or a wrong type fails the same validation.
    _service, job = manifests(capsys, "--nodes", "2", "--image", "img:1")
    misspelt = copy.deepcopy(job)
    container = misspelt["spec"]["template"]["spec"]["containers"][0]
    container["resource"] = container.pop("resources")
    wrong_type = copy.deepcopy(job)
    wrong_type["spec"]["completions"] = "two"
    for bad in (misspelt, wrong_type):
        with pytest.raises(kv.ValidationError):
            kv.validate(bad, VERSIONS[-1], strict=True)


@pytest.mark.parametrize(
    ("flag", "value"),
    [
        ("--name", "Bad_Name"),
        ("--image", "img 1"),
        ("--namespace", "a;b"),
        ("--gpus-per-node", "99"),
    ],
)
def test_bad_options_are_usage_errors(
    flag: str, value: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["fleet", "k8s", "--nodes", "2", "--image", "img:1", flag, value]) == 2
    assert capsys.readouterr().out == ""


def test_written_to_a_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "fleet.yaml"
    assert main(["fleet", "k8s", "--nodes", "2", "--image", "img:1", "-o", str(out)]) == 0
    assert capsys.readouterr().out == ""
    assert [d["kind"] for d in yaml.safe_load_all(out.read_text()) if d] == ["Service", "Job"]
