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
    pytest.importorskip("kubernetes")  # its models are pydantic's (the main leg has both)
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
        pod["securityContext"]["runAsUser"] == 10000
        and pod["automountServiceAccountToken"] is False
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


# --- the collection recipe in the YAML's header, run as written -------------------------------
#
# The pods' logs are made by the pod's own script (from the Job, run under sh with its /tmp
# files moved into the test's folder), its setup-env a stand-in that runs the real `check`
# (--no-verify) with the node name the downward API would give, and prints an all-reduce
# result. A stand-in kubectl on PATH serves those logs: it answers exactly the calls the recipe
# makes (apply, the Job's condition, the pods by label, each pod's log) and fails on any other,
# or on a namespace that is not the one the manifests were written for.

STUB_KUBECTL = r"""#!/bin/bash
echo "$*" >>"$STUB_CALLS"
ns="" args=()
while [ $# -gt 0 ]; do
  case "$1" in
    -n) ns=$2; shift 2 ;;
    *) args+=("$1"); shift ;;
  esac
done
if [ "$ns" != "${STUB_NS:-}" ]; then
  echo "error: namespace '$ns', not '${STUB_NS:-}'" >&2
  exit 1
fi
set -- "${args[@]}"
case "$*" in
  "apply -f "*) [ -f "$3" ] && echo "job.batch/$STUB_JOB created" ;;
  "get job/$STUB_JOB -o jsonpath={.status.conditions[?(@.status==\"True\")].type}")
    printf '%s' "$STUB_CONDITION" ;;
  "get pods -l job-name=$STUB_JOB -o name") for f in "$STUB_LOGS"/*; do echo "pod/${f##*/}"; done ;;
  "logs pod/"*) cat "$STUB_LOGS/${2#pod/}" ;;
  *) echo "error: unexpected kubectl $*" >&2; exit 1 ;;
esac
"""

STUB_SETUP_ENV = """#!/bin/bash
case "$1" in
  check) exec "$STUB_PYTHON" -m setup_env "$@" --no-verify ;;
  verify)
    result=pass
    if [ "$SETUP_ENV_NODE_NAME" = "${STUB_FAIL:-}" ]; then result=fail; fi
    cat "$STUB_DOCS/verify-$result.json"
    [ "$result" = pass ] ;;
  fleet) exec "$STUB_PYTHON" -m setup_env "$@" ;;
esac
"""


def _recipe(yaml_text: str) -> str:
    lines = yaml_text.split("---\n", 1)[0].splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.startswith("# Run, wait, collect"))
    steps = [ln[len("#   ") :] for ln in lines[start + 1 :] if ln.startswith("#   ")]
    return "set -euo pipefail\n" + "\n".join(steps) + "\n"


# The pods run this machine's real `setup-env check --no-verify`, which is ready only where torch
# is installed (the main leg; the Python 3.9 leg has no torch).
@pytest.mark.torch
@pytest.mark.parametrize(("namespace", "fail"), [("ml-infra", None), (None, "gpu-node-b")])
def test_the_collection_recipe_runs_as_written(
    tmp_path: Path, namespace: str | None, fail: str | None
) -> None:
    import json
    import re
    import shutil
    import subprocess

    if shutil.which("bash") is None or shutil.which("sh") is None:
        pytest.skip("needs bash and sh")
    from setup_env.act import launchers

    root = str(Path(__file__).resolve().parent.parent)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, text in (("kubectl", STUB_KUBECTL), ("setup-env", STUB_SETUP_ENV)):
        (bin_dir / name).write_text(text)
        (bin_dir / name).chmod(0o755)
    docs = tmp_path / "docs"
    docs.mkdir()
    for status, message in (("pass", "2 ranks (gloo): all-reduce exact"), ("fail", "rank 1 died")):
        checks = [{"name": "distributed", "status": status, "message": message}]
        doc = {"schema": "setup-env/verify", "schema_version": 1, "verify": {"checks": checks}}
        (docs / f"verify-{status}.json").write_text(json.dumps(doc))
    env = {
        **os.environ,
        "PATH": f"{bin_dir}:{os.environ['PATH']}",
        "PYTHONPATH": root,
        "STUB_PYTHON": sys.executable,
        "STUB_FAIL": fail or "",
        "STUB_DOCS": str(docs),
    }
    # The pods: the Job's own script, three nodes.
    options = launchers.K8sOptions(nodes=3, image="img:1", namespace=namespace)
    _service, job = launchers.k8s_manifests(options)
    script = job["spec"]["template"]["spec"]["containers"][0]["command"][2]
    logs = tmp_path / "logs"
    logs.mkdir()
    for i, node_name in enumerate(("gpu-node-a", "gpu-node-b", "gpu-node-c")):
        work = tmp_path / f"pod-{i}"
        work.mkdir()
        pod_script = re.sub(r"/tmp/(?=(check|allreduce|node)\.)", f"{work}/", script)
        proc = subprocess.run(
            ["sh", "-c", pod_script], capture_output=True, text=True, timeout=120, check=False,
            env={**env, "SETUP_ENV_NODE_NAME": node_name},
        )  # fmt: skip
        assert proc.returncode == (1 if node_name == fail else 0), proc.stderr
        (logs / f"setup-env-fleet-{i}-{'xk7pq'[: i + 3]}").write_text(proc.stdout)
    # The recipe, from the header of the file as written with -o.
    yaml_file = tmp_path / "fleet.yaml"
    argv = ["fleet", "k8s", "--nodes", "3", "--image", "img:1", "-o", str(yaml_file)]
    assert main([*argv, *(["--namespace", namespace] if namespace else [])]) == 0
    recipe = _recipe(yaml_file.read_text())
    work_dir = tmp_path / "collect"
    work_dir.mkdir()
    proc = subprocess.run(
        ["bash", "-c", recipe], capture_output=True, text=True, timeout=120, cwd=work_dir,
        env={**env, "STUB_NS": namespace or "", "STUB_JOB": "setup-env-fleet",
             "STUB_LOGS": str(logs), "STUB_CALLS": str(tmp_path / "calls"),
             "STUB_CONDITION": "Failed" if fail else "Complete"},
    )  # fmt: skip
    calls = (tmp_path / "calls").read_text().splitlines()
    assert calls[0].startswith("apply") and calls[0].endswith(f"-f {yaml_file}")
    assert sum(c.startswith("logs ") for c in calls) == 3
    assert proc.returncode == (1 if fail else 0), proc.stdout + proc.stderr
    assert sorted(p.name for p in (work_dir / "nodes").iterdir()) == [
        "setup-env-fleet-0-xk7.json", "setup-env-fleet-1-xk7p.json", "setup-env-fleet-2-xk7pq.json",
    ]  # fmt: skip
    out = subprocess.run(
        [sys.executable, "-m", "setup_env", "fleet", "report", "--json", "nodes/"],
        capture_output=True, text=True, timeout=120, cwd=work_dir, env=env, check=False,
    )  # fmt: skip
    rep = json.loads(out.stdout)["fleet"]
    # Rows keyed by the node each pod ran on, not by the pod.
    assert [n["name"] for n in rep["nodes"]] == ["gpu-node-a", "gpu-node-b", "gpu-node-c"]
    assert rep["unreadable"] == [] and rep["expected_nodes"] == 3
    if fail:
        assert rep["ok"] is False and "FLEET NEEDS ATTENTION" in proc.stdout
        assert [(r["node"], r["status"]) for r in rep["allreduce"] if r["status"] != "pass"] == [
            ("gpu-node-b", "fail")
        ]
    else:
        assert rep["ok"] is True and "FLEET OK: 3 nodes" in proc.stdout
