"""`setup-env diagnose` on real reports copied from public issue threads
(tests/fixtures/collect_env/, each with a .source file), against the diagnosis written in
EXPECTED.json from each report before the tool was run on it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from setup_env.cli import main

FIXTURES = Path(__file__).parent / "fixtures" / "collect_env"
EXPECTED: dict[str, Any] = {
    k: v
    for k, v in json.loads((FIXTURES / "EXPECTED.json").read_text(encoding="utf-8")).items()
    if not k.startswith("_")
}


def diagnose(capsys: pytest.CaptureFixture[str], name: str) -> tuple[int, dict[str, Any]]:
    code = main(["diagnose", "--json", str(FIXTURES / name)])
    doc = json.loads(capsys.readouterr().out)
    assert doc["schema"] == "setup-env/diagnose"
    return code, doc["diagnose"]


def _facts(body: dict[str, Any]) -> dict[str, Any]:
    """The facts EXPECTED.json names, read from diagnose's JSON."""
    f = body["facts"]
    torch = next((p for p in f["packages"] if p["name"] == "torch" and not p["shadowed"]), None)
    nv = f.get("nvidia") or {}
    amd = (f.get("rocm") or {}).get("gpus", [])
    intel = (f.get("xpu") or {}).get("gpus", [])
    notes = f.get("notes", [])
    family = f["os"]["family"]
    return {
        "torch": torch["version"] if torch else None,
        "torch_variant": torch["variant"] if torch else None,
        "os": None if family == "other" else family,
        "glibc": f["os"].get("glibc"),
        "wsl": f["os"].get("wsl"),
        "macos": f["os"].get("macos_version"),
        "python": f["python"]["version"] or None,
        "machine": f["python"]["machine"] or None,
        "rosetta": f["python"].get("rosetta"),
        "gpus": [g["name"] for g in [*nv.get("gpus", []), *amd, *intel] if g["name"]],
        "gpu_cc": [g["compute_capability"] for g in nv.get("gpus", [])],
        "gfx": [g["gfx_arch"] for g in amd if g.get("gfx_arch")],
        "driver": nv.get("driver_version"),
        "cuda_driver": nv.get("cuda_driver_version"),
        "cuda_available": body["report"]["cuda_available"],
        "xpu_available": body["report"]["xpu_available"],
        "jetson": any(n["code"] == "jetson" for n in notes),
        "warnings": [m["kind"] for m in body["report"]["messages"]],
    }


def test_the_collection() -> None:
    """At least 30 reports, in the mix issue 10 asks for, each with its source."""
    assert len(EXPECTED) >= 30
    kinds = [w["platform"] for w in EXPECTED.values()]
    layouts = [w["layout"] for w in EXPECTED.values()]
    assert layouts.count("vllm") >= 8
    for platform, at_least in (
        ("jetson", 3),
        ("intel-xpu", 3),
        ("windows", 3),
        ("macos", 2),
        ("amd-consumer", 3),
    ):
        assert sum(platform in k for k in kinds) >= at_least, platform
    assert sum("too-old" in k for k in kinds) >= 3
    # Issue 18's mix: Intel XPU on Linux and Windows, machines whose driver is missing, DGX Spark,
    # RTX 50 on Windows, ROCm on WSL 2, and reports cut before the GPU list or the Python line.
    for tag, at_least in (
        ("intel-xpu", 6),
        ("driver-missing", 4),
        ("dgx-spark", 1),
        ("cut-before", 7),
    ):
        assert sum(tag in k for k in kinds) >= at_least, tag
    assert any("intel-xpu windows" in k for k in kinds)
    assert any("windows rtx50" in k for k in kinds)
    assert sum("amd" in k and "windows-wsl" in k for k in kinds) >= 2
    for name in EXPECTED:
        source = (FIXTURES / (name + ".source")).read_text(encoding="utf-8")
        assert source.startswith("SOURCE: https://github.com/")


def _cases() -> list[Any]:
    """Every report; one whose expectation the tool does not meet yet, because the work that
    will make it is still open, carries ``"_pending": "<issue and item>"`` in EXPECTED.json and
    runs as a strict xfail naming that work: it fails as soon as the tool gets the report right,
    and then the marker must go. The expectation itself is never bent to the tool."""
    return [
        pytest.param(
            name,
            marks=pytest.mark.xfail(strict=True, reason=f"pending: {EXPECTED[name]['_pending']}"),
        )
        if "_pending" in EXPECTED[name]
        else name
        for name in sorted(EXPECTED)
    ]


@pytest.mark.parametrize("name", _cases())
def test_real_report(capsys: pytest.CaptureFixture[str], name: str) -> None:
    want = EXPECTED[name]
    code, body = diagnose(capsys, name)
    assert body["report"]["layout"] == want["layout"]
    got = _facts(body)
    for key, value in want["facts"].items():
        assert got[key] == value, key
    assert set(want.get("missing", [])) <= set(body["report"]["missing"])
    codes = [f["code"] for f in body["findings"]]
    for c in want.get("findings", []):
        assert c in codes, (c, codes)
    for c in want.get("absent", []):
        assert c not in codes, (c, codes)
    if "first" in want:
        assert codes[0] == want["first"], codes
    errors = [f for f in body["findings"] if f["severity"] == "error"]
    if "errors" in want:
        assert len(errors) == want["errors"], codes
    assert code == (1 if errors else 0)
    plan = body["plan"]
    if "variant" in want:
        assert (plan["variant"] if plan and plan["command"] else None) == want["variant"]
    if "variant_prefix" in want:
        assert plan is not None and plan["variant"].startswith(want["variant_prefix"])
    keep = body["keep"]
    if "keep" in want:
        assert keep is not None
        assert (keep["torch"], keep["variant"]) == (want["keep"]["torch"], want["keep"]["variant"])
    else:
        assert keep is None, keep
    if keep is not None:
        assert plan is None  # the kept build is the answer: no install command is offered
    if "route" in want:
        route = body["route"]
        assert route is not None
        assert [s["kind"] for s in route["steps"]] == [*want["route"]["steps"], "torch"]
        assert (route["torch"], route["variant"]) == (
            want["route"]["torch"],
            want["route"]["variant"],
        )
    if "assumed" in want:
        assert sorted(a["fact"] for a in body["assumptions"]) == sorted(want["assumed"])
    # Every finding from a message in the paste says where it came from.
    for f in body["findings"]:
        for ev in f["evidence"]:
            if ev.startswith("torch says:"):
                assert ev.endswith("[collect_env:warning]")


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_no_cpu_build_over_a_working_gpu_build(
    capsys: pytest.CaptureFixture[str], name: str
) -> None:
    """Issue 17, item 5: a report whose CUDA build of torch works (CUDA available, no finding
    against it) is never answered with a CPU build's install command."""
    _code, body = diagnose(capsys, name)
    f = body["facts"]
    torch = next((p for p in f["packages"] if p["name"] == "torch" and not p["shadowed"]), None)
    gpu_build = torch is not None and (
        torch["cuda"] or (torch["variant"] or "").startswith(("cu", "rocm", "xpu"))
    )
    if not (gpu_build and body["report"]["cuda_available"]):
        return
    if any(x["severity"] == "error" for x in body["findings"]):
        return
    plan = body["plan"]
    assert not (plan and plan["command"] and plan["variant"] == "cpu"), plan["command"]
