"""AMD GPUs and ROCm: gfx architecture, marketing name, memory, bus id; ROCm and driver versions.

Sources, in order:

1. ``rocminfo`` (``/opt/rocm/bin/rocminfo`` or on PATH, 10 s timeout): one block per HSA agent;
   GPU agents give ``Name: gfx90a``, ``Marketing Name``, ``BDFID`` (bus id) and the first GLOBAL
   pool's size (memory). Its first line names the kernel driver (``ROCk module version 6.10.5``).
2. ``rocm_agent_enumerator``: one gfx name per line (``gfx000`` is the CPU), when rocminfo fails.
3. PCI sysfs (vendor 0x1002, display class): the GPU is there even with no ROCm installed.

ROCm version: ``$ROCM_PATH/.info/version`` then ``/opt/rocm/.info/version`` (``6.2.4-120``), then
the name of the folder ``/opt/rocm`` links to (``/opt/rocm-6.2.4``). amd-smi and rocm-smi are not
run: they are Python programs that take seconds to start and add nothing the above lacks.
"""

from __future__ import annotations

import re

from setup_env._record import MutableRecord, field, mutable_record
from setup_env.facts import Gpu, Note, RocmInfo
from setup_env.probe import pci
from setup_env.probe.host import Host

_GFX = re.compile(r"^gfx[0-9a-f]{3,5}$")


@mutable_record
class RocmAgent(MutableRecord):
    """One agent rocminfo lists (a CPU or a GPU)."""

    name: str
    marketing_name: str | None = None
    device_type: str | None = None
    bdfid: int | None = None
    uuid: str | None = None
    memory_bytes: int | None = None
    extra: dict[str, str] = field(default_factory=dict)


def parse_rocminfo(text: str) -> tuple[list[RocmAgent], str | None]:
    """``rocminfo`` output -> (agents, ROCk kernel module version).

    Example (one GPU agent, abridged; indentation matters: agent fields are indented 2 spaces)::

        *******
        Agent 2
        *******
          Name:                    gfx90a
          Marketing Name:          AMD Instinct MI250X/MI250
          Device Type:             GPU
          BDFID:                   37632
          Pool Info:
            Pool 1
              Segment:                 GLOBAL; FLAGS: COARSE GRAINED
              Size:                    67092480(0x3ffc000) KB
    """
    module = None
    m = re.search(r"ROCk module(?: version)? ([0-9][0-9.]*)? ?is loaded", text)
    if m and m.group(1):
        module = m.group(1)
    agents: list[RocmAgent] = []
    current: RocmAgent | None = None
    pool_segment: str | None = None
    for line in text.splitlines():
        if re.match(r"^Agent \d+\s*$", line.strip()) and not line.startswith(" "):
            current = RocmAgent(name="")
            agents.append(current)
            pool_segment = None
            continue
        if current is None or ":" not in line:
            continue
        indent = len(line) - len(line.lstrip(" "))
        key, _, value = line.strip().partition(":")
        key, value = key.strip(), value.strip()
        if indent == 2:
            if key == "Name" and not current.name:
                current.name = value
            elif key == "Marketing Name":
                current.marketing_name = value or None
            elif key == "Device Type":
                current.device_type = value
            elif key == "BDFID" and value.isdigit():
                current.bdfid = int(value)
            elif key == "Uuid":
                current.uuid = value
            else:
                current.extra[key] = value
        elif key == "Segment":
            pool_segment = value
        elif key == "Size" and current.memory_bytes is None and pool_segment:
            size = re.match(r"^(\d+)(?:\(0x[0-9a-f]+\))?\s*KB$", value, re.IGNORECASE)
            if size and pool_segment.startswith("GLOBAL") and "COARSE" in pool_segment:
                current.memory_bytes = int(size.group(1)) * 1024
    return [a for a in agents if a.name], module


def parse_agent_enumerator(text: str) -> list[str]:
    """``rocm_agent_enumerator`` -> gfx names of the GPUs (``gfx000``, the CPU, dropped)."""
    names = [line.strip() for line in text.splitlines()]
    return [n for n in names if _GFX.match(n) and n != "gfx000"]


def parse_rocm_version(text: str) -> str | None:
    """``/opt/rocm/.info/version`` (``6.2.4-120``) -> ``6.2.4``."""
    m = re.match(r"^\s*(\d+\.\d+(?:\.\d+)?)", text)
    return m.group(1) if m else None


def bdfid_to_bus_id(bdfid: int) -> str:
    """rocminfo's BDFID packs bus, device and function: 37632 = 0x9300 -> ``0000:93:00.0``."""
    return f"0000:{(bdfid >> 8) & 0xFF:02x}:{(bdfid >> 3) & 0x1F:02x}.{bdfid & 0x7}"


def detect(
    host: Host, pci_devices: list[pci.PciDevice] | None = None
) -> tuple[RocmInfo | None, list[Note]]:
    interp = host.interpreter()
    if str(interp.get("system") or "linux").lower() != "linux":
        return None, []
    notes: list[Note] = []
    sources: dict[str, str] = {}
    version, where = _version(host)
    if version:
        sources["version"] = where

    gpus: list[Gpu] = []
    driver = None
    rocminfo = host.which("rocminfo") or (
        "/opt/rocm/bin/rocminfo" if host.exists("/opt/rocm/bin/rocminfo") else None
    )
    if rocminfo:
        result = host.run((rocminfo,), timeout=10.0)
        if result.ok:
            agents, driver = parse_rocminfo(result.stdout)
            for agent in agents:
                if agent.device_type != "GPU":
                    continue
                gpus.append(
                    Gpu(
                        index=len(gpus),
                        name=agent.marketing_name or agent.name,
                        vendor="amd",
                        gfx_arch=agent.name if _GFX.match(agent.name) else None,
                        memory_bytes=agent.memory_bytes,
                        pci_bus_id=bdfid_to_bus_id(agent.bdfid) if agent.bdfid else None,
                        source="rocminfo",
                    )
                )
            if not agents:
                notes.append(Note("rocminfo-garbled", "rocminfo listed no agents", "rocminfo"))
        else:
            notes.append(Note("rocminfo-failed", result.describe(), "rocminfo"))
    if not gpus:
        enum = host.which("rocm_agent_enumerator")
        if enum:
            result = host.run((enum,), timeout=10.0)
            if result.ok:
                for arch in parse_agent_enumerator(result.stdout):
                    gpus.append(
                        Gpu(
                            index=len(gpus),
                            name=arch,
                            vendor="amd",
                            gfx_arch=arch,
                            source="rocm_agent_enumerator",
                        )
                    )
    if driver:
        sources["driver_version"] = "rocminfo"
    else:
        text = host.read_text("/sys/module/amdgpu/version")
        if text and re.fullmatch(r"\d+(\.\d+)+", text.strip()):
            driver = text.strip()
            sources["driver_version"] = "/sys/module/amdgpu/version"

    devices = pci.display_devices(host) if pci_devices is None else pci_devices
    amd = [d for d in devices if d.vendor == pci.VENDOR_AMD]
    if not gpus and amd:
        for dev in amd:
            gpus.append(
                Gpu(
                    index=len(gpus),
                    name=f"AMD GPU {dev.device or ''}".strip(),
                    vendor="amd",
                    pci_bus_id=dev.bus_id,
                    source="pci",
                )
            )
        if not host.exists("/dev/kfd"):
            notes.append(
                Note(
                    "amd-gpu-no-kfd",
                    "an AMD GPU is on the PCI bus but /dev/kfd is absent: the amdgpu kernel "
                    "driver (ROCm's KFD) is not loaded, so ROCm builds of torch cannot use it",
                    "pci",
                    "info",
                )
            )
        elif not version:
            notes.append(
                Note(
                    "amd-gpu-no-rocm",
                    "an AMD GPU is present but no ROCm installation was found "
                    "(rocminfo, /opt/rocm): its gfx architecture is unknown",
                    "pci",
                    "info",
                )
            )
    if not gpus and not version:
        return None, notes
    if gpus:
        sources["gpus"] = gpus[0].source
    return RocmInfo(
        version=version, gpus=tuple(gpus), driver_version=driver, sources=sources
    ), notes


def _version(host: Host) -> tuple[str | None, str]:
    roots = []
    env_root = host.env("ROCM_PATH")
    if env_root:
        roots.append(env_root.rstrip("/"))
    roots.append("/opt/rocm")
    for root in roots:
        text = host.read_text(f"{root}/.info/version")
        if text:
            version = parse_rocm_version(text)
            if version:
                return version, f"{root}/.info/version"
    real = host.realpath("/opt/rocm")
    m = re.search(r"/rocm-(\d+\.\d+(?:\.\d+)?)$", real)
    if m:
        return m.group(1), f"/opt/rocm -> {real}"
    return None, ""
