"""The detection orchestrator: every probe, concurrency, crash containment, overrides."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from test_probe_host import make_replay

from setup_env.facts import Facts
from setup_env.probe import cloud, detect, nvidia, rocm
from setup_env.probe.host import ReplayHost

HOSTS = Path(__file__).parent / "fixtures" / "hosts"


def test_a_crashing_probe_becomes_an_error_note(monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("parser bug")

    monkeypatch.setattr(rocm, "detect", boom)
    facts = detect.detect(ReplayHost(HOSTS / "ubuntu2204-rocm623-8x-mi300x"))
    assert facts.rocm is None
    crashed = [n for n in facts.notes if n.code == "probe-crashed"]
    assert [(n.source, n.severity) for n in crashed] == [("rocm", "error")]
    assert "RuntimeError: parser bug" in crashed[0].message
    # Everything else is still there.
    assert facts.os.distro_id == "ubuntu"


def test_a_crash_in_a_threaded_probe_is_contained(monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(*args: Any, **kwargs: Any) -> Any:
        raise KeyError("metadata")

    monkeypatch.setattr(cloud, "detect", boom)
    facts = detect.detect(ReplayHost(HOSTS / "linux-aws-g5-nitro-nodriver"))
    assert [n.source for n in facts.notes if n.code == "probe-crashed"] == ["cloud"]
    assert facts.os.family == "linux" and facts.notes[-1].severity == "error"


def test_cloud_metadata_flag_and_env_override(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    seen: list[bool | None] = []

    def fake(host: Any, metadata: bool | None = None) -> Any:
        seen.append(metadata)
        return None, []

    monkeypatch.setattr(cloud, "detect", fake)
    dmi = {"/sys/class/dmi/id/sys_vendor": "Amazon EC2\n"}
    host = make_replay(tmp_path / "a", {"interpreter": {"system": "Linux"}}, dmi)
    detect.detect(host)
    detect.detect(host, cloud_metadata=True)
    env_host = make_replay(
        tmp_path / "b",
        {"interpreter": {"system": "Linux"}, "env": {"SETUP_ENV_CLOUD_METADATA": "0"}},
        dmi,
    )
    detect.detect(env_host)
    detect.detect(env_host, cloud_metadata=True)  # the flag beats the variable
    assert seen == [None, True, False, True]


def test_no_dmi_and_no_nvidia_trace_skip_those_probes(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # This CI image: Linux, no /sys/class/dmi/id, no NVIDIA files: neither probe is even imported,
    # unless the metadata service is asked for by name.
    called: list[str] = []
    monkeypatch.setattr(
        cloud, "detect", lambda host, metadata=None: called.append("cloud") or (None, [])
    )
    monkeypatch.setattr(nvidia, "detect", lambda host: called.append("nvidia") or (None, []))
    host = make_replay(tmp_path, {"interpreter": {"system": "Linux"}})
    facts = detect.detect(host)
    assert called == [] and facts.cloud is None and facts.nvidia is None
    detect.detect(host, cloud_metadata=True)
    assert called == ["cloud"]
    seen_smi = make_replay(
        tmp_path / "smi",
        {"interpreter": {"system": "Linux"}, "which": {"nvidia-smi": "/usr/bin/nvidia-smi"}},
    )
    called.clear()
    detect.detect(seen_smi)
    assert called == ["nvidia"]


def test_skipping_probes(tmp_path: Path) -> None:
    host = make_replay(
        tmp_path,
        {"interpreter": {"system": "Linux"}, "env": {"SETUP_ENV_SKIP_PROBES": "rocm, toolkit,gpu"}},
    )
    facts = detect.detect(host)
    assert [(n.code, n.severity) for n in facts.notes if n.code.startswith("probe-")] == [
        ("probe-unknown", "warning"),
        ("probe-skipped", "info"),
        ("probe-skipped", "info"),
    ]


def test_relevant_environment_is_whitelisted_and_masks_credentials() -> None:
    env = {
        "CUDA_VISIBLE_DEVICES": "0,1",
        "PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True",
        "TORCH_HOME": "/data/torch",
        "PIP_INDEX_URL": "https://alice:s3cr3t@pypi.example.com/simple",
        "HOME": "/root",
        "AWS_SECRET_ACCESS_KEY": "nope",
        "HF_TOKEN": "nope",
    }
    assert detect.relevant_environment(env) == {
        "CUDA_VISIBLE_DEVICES": "0,1",
        "PIP_INDEX_URL": "https://***@pypi.example.com/simple",
        "PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True",
        "TORCH_HOME": "/data/torch",
    }


def test_container_without_gpu_note() -> None:
    facts = detect.detect(ReplayHost(HOSTS / "docker-ubuntu2204-nogpu-visible"))
    assert [n.code for n in facts.notes] == ["container-gpu-not-visible"]
    assert facts.environment["NVIDIA_VISIBLE_DEVICES"] == "all"


def test_an_empty_capture_still_gives_facts(tmp_path: Path) -> None:
    facts = detect.detect(make_replay(tmp_path, {}))
    assert isinstance(facts, Facts)
    assert facts.os.family == "other"
    assert [n.code for n in facts.notes] == ["interpreter-unknown"]
    assert Facts.from_json(facts.to_json()) == facts
