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
    # Quantities as strings, requests equal to limits (the Guaranteed class): 2 CPUs per GPU.
    wanted = {"cpu": "8", "memory": "64Gi", "nvidia.com/gpu": "4"}
    assert container["resources"] == {"requests": wanted, "limits": wanted}
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
    assert pod["volumes"][-1] == {"name": "results", "persistentVolumeClaim": {"claimName": "r"}}
    assert {"name": "results", "mountPath": "/results"} in container["volumeMounts"]
    assert 'cp /tmp/node.json "/results/$node.json"' in script


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


# --- the Kubernetes Python client's models --------------------------------------------------
#
# The official client (kubernetes, PyPI) deserializes into typed models (pydantic): a field of
# the wrong type is rejected (the GPU count as an integer where a quantity string is due), and a
# field the model does not know is dropped, which the round trip back to a dict shows.

ARGVS = (
    ("--nodes", "4", "--image", "registry.example.com/ml/train:2026-12"),
    ("--nodes", "64", "--image", "nvcr.io/nvidia/pytorch:25.11-py3", "--namespace", "ml-infra",
     "--results-pvc", "fleet-results", "--rdma", "vpc.amazonaws.com/efa=32"),
    ("--nodes", "2", "--image", "rocm/pytorch:latest", "--gpu-resource", "amd.com/gpu",
     "--as-root", "--gpus-per-node", "0"),
)  # fmt: skip


def client_model(doc: dict[str, Any]) -> Any:
    import json

    kubernetes = pytest.importorskip("kubernetes")
    api = kubernetes.client.ApiClient()
    kind = {"Job": "V1Job", "Service": "V1Service"}[doc["kind"]]
    return api, api.deserialize(json.dumps(doc), kind, "application/json")


@pytest.mark.parametrize("argv", ARGVS)
def test_manifests_pass_the_kubernetes_client_models(
    argv: tuple[str, ...], capsys: pytest.CaptureFixture[str]
) -> None:
    for doc in manifests(capsys, *argv):
        api, model = client_model(doc)
        # Nothing dropped, nothing changed: every field is one the model knows, of its type.
        assert api.sanitize_for_serialization(model) == doc
        for version in VERSIONS:
            kv.validate(doc, version, strict=True)


def test_the_client_models_catch_what_is_wrong(capsys: pytest.CaptureFixture[str]) -> None:
    import pydantic

    _service, job = manifests(capsys, "--nodes", "2", "--image", "img:1")
    as_int = copy.deepcopy(job)
    as_int["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] = 8
    with pytest.raises(pydantic.ValidationError):
        client_model(as_int)
    misspelt = copy.deepcopy(job)
    container = misspelt["spec"]["template"]["spec"]["containers"][0]
    container["resource"] = container.pop("resources")
    api, model = client_model(misspelt)
    assert api.sanitize_for_serialization(model) != misspelt


# --- the "restricted" Pod Security level ----------------------------------------------------
#
# The checks of https://kubernetes.io/docs/concepts/security/pod-security-standards/ that a Job
# like this one can fail (baseline: host namespaces, privileged, capabilities beyond the
# default set, hostPath, host ports; restricted: volume types, privilege escalation, running as
# non-root, seccomp, capabilities dropped to none but NET_BIND_SERVICE).

RESTRICTED_VOLUMES = {"configMap", "csi", "downwardAPI", "emptyDir", "ephemeral",
                      "persistentVolumeClaim", "projected", "secret"}  # fmt: skip


def restricted_violations(job: dict[str, Any]) -> list[str]:
    pod = job["spec"]["template"]["spec"]
    psc = pod.get("securityContext", {})
    out = [f"host namespace {k}" for k in ("hostNetwork", "hostPID", "hostIPC") if pod.get(k)]
    for v in pod.get("volumes", []):
        kinds = set(v) - {"name"}
        if not kinds <= RESTRICTED_VOLUMES:
            out.append(f"volume {v['name']}: {sorted(kinds)}")
    for c in pod["containers"]:
        sc = c.get("securityContext", {})
        if sc.get("privileged"):
            out.append("privileged")
        if sc.get("allowPrivilegeEscalation") is not False:
            out.append("allowPrivilegeEscalation not false")
        if not (sc.get("runAsNonRoot") or psc.get("runAsNonRoot")):
            out.append("runAsNonRoot not true")
        if 0 in (sc.get("runAsUser"), psc.get("runAsUser")):
            out.append("runAsUser 0")
        seccomp = (sc.get("seccompProfile") or psc.get("seccompProfile") or {}).get("type")
        if seccomp not in ("RuntimeDefault", "Localhost"):
            out.append(f"seccompProfile {seccomp}")
        caps = sc.get("capabilities", {})
        if "ALL" not in caps.get("drop", []):
            out.append("capabilities not dropped")
        if set(caps.get("add", [])) - {"NET_BIND_SERVICE"}:
            out.append(f"capabilities added {caps['add']}")
        if any(p.get("hostPort") for p in c.get("ports", [])):
            out.append("hostPort")
    return out


def test_pods_meet_the_restricted_pod_security_level(capsys: pytest.CaptureFixture[str]) -> None:
    _service, job = manifests(capsys, "--nodes", "8", "--image", "img:1", "--results-pvc", "r")
    assert restricted_violations(job) == []
    pod = job["spec"]["template"]["spec"]
    assert (
        pod["securityContext"]["runAsUser"] == 1000 and pod["automountServiceAccountToken"] is False
    )
    assert pod["containers"][0]["securityContext"]["readOnlyRootFilesystem"] is True
    # What the flags give up, said by the same check: root, and RDMA's IPC_LOCK.
    _service, job = manifests(capsys, "--nodes", "8", "--image", "img:1", "--as-root")
    assert restricted_violations(job) == ["runAsNonRoot not true"]
    _service, job = manifests(capsys, "--nodes", "8", "--image", "img:1", "--rdma", "rdma/hca")
    assert restricted_violations(job) == ["capabilities added ['IPC_LOCK']"]
    # The check is not vacuous: a hostPath volume and privilege escalation are caught.
    pod = job["spec"]["template"]["spec"]
    pod["volumes"].append({"name": "dev", "hostPath": {"path": "/dev"}})
    del pod["containers"][0]["securityContext"]["allowPrivilegeEscalation"]
    assert "volume dev: ['hostPath']" in restricted_violations(job)
    assert "allowPrivilegeEscalation not false" in restricted_violations(job)


def test_job_as_admins_run_it(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["--nodes", "16", "--image", "img:1", "--time", "1:00:00", "--keep-hours", "48"]
    _service, job = manifests(
        capsys, *argv, "--rdma", "vpc.amazonaws.com/efa=32", "--rdma", "x.io/ib"
    )
    spec = job["spec"]
    # One bad node fails its own index only: no retry, no job-wide backoff limit.
    assert spec["backoffLimitPerIndex"] == 0 and spec["maxFailedIndexes"] == 16
    assert "backoffLimit" not in spec
    assert spec["activeDeadlineSeconds"] == 3600 and spec["ttlSecondsAfterFinished"] == 48 * 3600
    pod = spec["template"]["spec"]
    (container,) = pod["containers"]
    # The node's name through the downward API: the check records it, the report names rows by it.
    assert {
        "name": "SETUP_ENV_NODE_NAME",
        "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}},
    } in container["env"]
    # /dev/shm as memory, bigger than the runtime's 64 MB.
    assert {"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": "16Gi"}} in pod["volumes"]
    assert {"name": "dshm", "mountPath": "/dev/shm"} in container["volumeMounts"]
    limits = container["resources"]["limits"]
    assert limits["vpc.amazonaws.com/efa"] == "32" and limits["x.io/ib"] == "1"
    assert limits["nvidia.com/gpu"] == "8" and limits["cpu"] == "16"


@pytest.mark.parametrize(
    ("flag", "value"),
    [("--memory", "64 GB"), ("--shm-size", "-1Gi"), ("--rdma", "efa"), ("--rdma", "a.io/b=x"),
     ("--rdma", "a.io/b=0"), ("--time", "0"), ("--keep-hours", "0"), ("--gpu-resource", "gpu")],
)  # fmt: skip
def test_bad_resource_options_are_usage_errors(
    flag: str, value: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["fleet", "k8s", "--nodes", "2", "--image", "img:1", flag, value]) == 2
    assert capsys.readouterr().out == ""
