"""Detection: run every probe against one host and assemble the ``Facts``.

``detect(host, cloud_metadata=None) -> Facts``. The probes that wait on other programs (NVIDIA:
NVML/nvidia-smi; cloud: the metadata service; OS: systemd-detect-virt; toolkits: nvcc; AMD and
Intel: rocminfo, xpu-smi) run in threads, side by side; the rest read files in this thread. A probe
that raises is caught and becomes an error ``Note`` (defence in depth: probes are written to
turn bad input into notes themselves), so detection always returns facts.

Environment overrides (read through the host, so a replayed capture honours its own):

- ``SETUP_ENV_SKIP_PROBES=nvidia,cloud,...``: do not run these probes (names:
  ``nvidia cloud rocm xpu toolkit packages apple jetson``); each skip is an info note.
- ``SETUP_ENV_CLOUD_METADATA=1|0``: ask (or never ask) the cloud metadata service, when the
  caller (``--cloud-metadata``) did not say.
- ``SETUP_ENV_DISK_PATH=DIR``: where free disk space is measured (default: the interpreter prefix).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Mapping
from typing import Any, Optional

from setup_env.facts import (
    CloudInfo,
    CudaToolkit,
    Facts,
    Gpu,
    InstalledPackage,
    Note,
    NvidiaInfo,
    OSInfo,
    RocmInfo,
    XpuInfo,
    printable,
)
from setup_env.probe.host import Host

PROBES = ("nvidia", "cloud", "rocm", "xpu", "toolkit", "packages", "apple", "jetson")

# Environment variables that change what torch sees, loads or installs.
ENV_NAMES = frozenset(
    {
        "CUDA_VISIBLE_DEVICES",
        "NVIDIA_VISIBLE_DEVICES",
        "NVIDIA_DRIVER_CAPABILITIES",
        "LD_LIBRARY_PATH",
        "LD_PRELOAD",
        "DYLD_LIBRARY_PATH",
        "CUDA_HOME",
        "CUDA_PATH",
        "CUDA_LAUNCH_BLOCKING",
        "CUDA_MODULE_LOADING",
        "HIP_VISIBLE_DEVICES",
        "ROCR_VISIBLE_DEVICES",
        "HSA_OVERRIDE_GFX_VERSION",
        "ROCM_PATH",
        "ZE_AFFINITY_MASK",
        "ONEAPI_DEVICE_SELECTOR",
        "PIP_INDEX_URL",
        "PIP_EXTRA_INDEX_URL",
        "UV_INDEX_URL",
        "UV_EXTRA_INDEX_URL",
        "UV_TORCH_BACKEND",
        "CONDA_PREFIX",
        "CONDA_DEFAULT_ENV",
        "PIXI_ENVIRONMENT_NAME",
        "PIXI_PROJECT_ROOT",
        "VIRTUAL_ENV",
        "PYTHONPATH",
    }
)
ENV_PREFIXES = ("PYTORCH_", "TORCH_")
_URL_CREDENTIALS = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*://)[^/@\s]+@")


def relevant_environment(environ: Mapping[str, str]) -> dict[str, str]:
    """The whitelisted variables, sorted, with credentials in index URLs masked."""
    out: dict[str, str] = {}
    for name in sorted(environ):
        if name in ENV_NAMES or name.startswith(ENV_PREFIXES):
            out[name] = _URL_CREDENTIALS.sub(r"\g<scheme>***@", environ[name])
    return out


def _flag(value: str | None) -> bool | None:
    if value is None:
        return None
    value = value.strip().lower()
    if value in ("1", "true", "yes", "on"):
        return True
    if value in ("0", "false", "no", "off"):
        return False
    return None


class _Job:
    """One probe in a thread; its result or the exception it raised."""

    def __init__(self, name: str, fn: Callable[[], Any]) -> None:
        self.name = name
        self.fn = fn
        self.result: Any = None
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, name=f"probe-{name}", daemon=True)

    def _run(self) -> None:
        try:
            self.result = self.fn()
        except Exception as exc:
            self.error = exc


def _crash_note(name: str, exc: BaseException) -> Note:
    return Note(
        "probe-crashed",
        f"the {name} probe failed unexpectedly ({type(exc).__name__}: {exc}); "
        "its facts are missing. Please report this with `setup-env detect --json`.",
        name,
        "error",
    )


def detect(host: Host, *, cloud_metadata: bool | None = None) -> Facts:
    import importlib

    from setup_env.probe import apple, cpu, interp, osinfo, packages

    def probe(name: str) -> Any:
        # Threaded probes import their modules in their own thread: those imports then
        # overlap with the other threads' waits on subprocesses.
        return importlib.import_module(f"setup_env.probe.{name}")

    notes: list[Note] = []
    skip = {p.strip() for p in (host.env("SETUP_ENV_SKIP_PROBES") or "").split(",") if p.strip()}
    for name in sorted(skip):
        if name in PROBES:
            notes.append(
                Note("probe-skipped", f"{name} not examined", "env:SETUP_ENV_SKIP_PROBES", "info")
            )
        else:
            notes.append(
                Note(
                    "probe-unknown",
                    f"SETUP_ENV_SKIP_PROBES names {name!r}; known: {', '.join(PROBES)}",
                    "env:SETUP_ENV_SKIP_PROBES",
                )
            )
    if cloud_metadata is None:
        cloud_metadata = _flag(host.env("SETUP_ENV_CLOUD_METADATA"))

    interpreter = _guard("interpreter", host.interpreter, {}, notes)
    system = str(interpreter.get("system") or "").lower()

    def gpu_others() -> tuple[Optional[RocmInfo], Optional[XpuInfo], list[Note]]:
        pci, rocm, xpu_probe = probe("pci"), probe("rocm"), probe("xpu")
        devices = pci.display_devices(host) if system in ("linux", "") else []
        out_notes: list[Note] = []
        rocm_info = xpu_info = None
        if "rocm" not in skip:
            rocm_info, n = _guard_pair("rocm", lambda: rocm.detect(host, devices), out_notes)
            out_notes.extend(n)
        if "xpu" not in skip:
            xpu_info, n = _guard_pair("xpu", lambda: xpu_probe.detect(host, devices), out_notes)
            out_notes.extend(n)
        return rocm_info, xpu_info, out_notes

    jobs: dict[str, _Job] = {}

    def start(name: str, fn: Callable[[], Any]) -> None:
        jobs[name] = _Job(name, fn)
        jobs[name].thread.start()

    start("os", lambda: osinfo.detect(host))
    # On a Linux machine with no trace of NVIDIA or of DMI, the nvidia and cloud probes would find
    # nothing: not importing them saves ~12 ms of start-up (what every CI image without a GPU pays).
    if "nvidia" not in skip and not _nvidia_absent(host, system):
        start("nvidia", lambda: probe("nvidia").detect(host))
    if "cloud" not in skip and not (cloud_metadata is not True and _dmi_absent(host, system)):
        start("cloud", lambda: probe("cloud").detect(host, metadata=cloud_metadata))
    if "toolkit" not in skip:
        start("toolkit", lambda: probe("toolkit").detect(host))
    if "rocm" not in skip or "xpu" not in skip:
        start("gpu-others", gpu_others)

    # This thread: the file-reading probes.
    sysctl: dict[str, str] | None = None
    if system == "darwin":
        sysctl, n = _guard_pair("sysctl", lambda: apple.darwin_sysctl(host), notes, ({}, []))
        notes.extend(n)
    pkgs: list[InstalledPackage] = []
    if "packages" not in skip:
        pkgs, n = _guard_pair("packages", lambda: packages.detect(host), notes, ([], []))
        notes.extend(n)
    environment = _guard("environment", lambda: relevant_environment(host.environ()), {}, notes)
    conda_env, n = _guard_pair("conda", lambda: probe("condaenv").detect(host), notes)
    notes.extend(n)

    def result(name: str, default: Any) -> Any:
        job = jobs.get(name)
        if job is None:
            return default
        job.thread.join()
        if job.error is not None:
            notes.append(_crash_note(name, job.error))
            return default
        return job.result

    os_info, n = result("os", (OSInfo(), []))
    notes.extend(n)
    libc = (os_info.libc, os_info.glibc)
    python_info, n = _guard_pair(
        "python",
        lambda: interp.detect(host, sysctl, libc, os_info.macos_version),
        notes,
        (None, []),
    )
    notes.extend(n)
    hw_arch = None
    if sysctl and sysctl.get("hw.optional.arm64") == "1":
        hw_arch = "arm64"
    cpu_info, n = _guard_pair("cpu", lambda: cpu.detect(host, sysctl, hw_arch), notes, (None, []))
    notes.extend(n)
    apple_info = None
    if "apple" not in skip:
        apple_info, n = _guard_pair(
            "apple", lambda: apple.detect(host, sysctl, os_info.macos_version), notes
        )
        notes.extend(n)

    nvidia_info: NvidiaInfo | None
    nvidia_info, n = result("nvidia", (None, []))
    notes.extend(n)
    cloud_info: CloudInfo | None
    cloud_info, n = result("cloud", (None, []))
    notes.extend(n)
    toolkits: list[CudaToolkit]
    toolkits, n = result("toolkit", ([], []))
    notes.extend(n)
    rocm_info, xpu_info, n = result("gpu-others", (None, None, []))
    notes.extend(n)

    jetson_info = None
    if system in ("linux", "") and "jetson" not in skip:
        jetson_info, n = _guard_pair("jetson", lambda: probe("jetson").detect(host), notes)
        notes.extend(n)
        if jetson_info is not None and nvidia_info is None and jetson_info.compute_capability:
            # Before JetPack 7 no nvidia-smi or NVML: the iGPU is known from the device tree.
            nvidia_info = NvidiaInfo(
                gpus=(
                    Gpu(
                        index=0,
                        name=jetson_info.module or "NVIDIA Tegra",
                        compute_capability=jetson_info.compute_capability,
                        source=jetson_info.sources.get("soc", "jetson"),
                    ),
                ),
                sources={"gpus": "jetson (device tree)"},
            )

    notes.extend(_cross_notes(os_info, nvidia_info, environment))
    kwargs: dict[str, Any] = {}
    if python_info is not None:
        kwargs["python"] = python_info
    if cpu_info is not None:
        kwargs["cpu"] = cpu_info
    return printable(
        Facts(
            os=os_info,
            nvidia=nvidia_info,
            apple=apple_info,
            rocm=rocm_info,
            xpu=xpu_info,
            toolkits=tuple(toolkits),
            packages=tuple(pkgs),
            cloud=cloud_info,
            environment=environment,
            notes=tuple(notes),
            jetson=jetson_info,
            conda_env=conda_env,
            **kwargs,
        )
    )


# Where an NVIDIA driver or nvidia-smi shows itself on Linux (WSL2: /dev/dxg and the lib folder).
_NVIDIA_TRACES = (
    "/proc/driver/nvidia/version",
    "/sys/module/nvidia/version",
    "/dev/nvidiactl",
    "/dev/dxg",
    "/usr/lib/wsl/lib/nvidia-smi",
)


def _nvidia_absent(host: Host, system: str) -> bool:
    """True only when the nvidia probe could not find anything: Linux, no override variables,
    no driver files or device nodes, no nvidia-smi on PATH."""
    if system != "linux":
        return False
    if any(k.startswith(("SETUP_ENV_NVIDIA", "SETUP_ENV_CUDA_DRIVER")) for k in host.environ()):
        return False
    if any(host.exists(path) for path in _NVIDIA_TRACES):
        return False
    return host.which("nvidia-smi") is None


def _dmi_absent(host: Host, system: str) -> bool:
    """True when a Linux host has neither DMI (/sys/class/dmi/id) nor a Xen hypervisor uuid:
    the cloud probe's offline signals are all missing (containers without /sys, this CI image)."""
    if system != "linux":
        return False
    return host.listdir("/sys/class/dmi/id") is None and not host.exists("/sys/hypervisor/uuid")


def _guard(name: str, fn: Callable[[], Any], default: Any, notes: list[Note]) -> Any:
    try:
        return fn()
    except Exception as exc:
        notes.append(_crash_note(name, exc))
        return default


def _guard_pair(
    name: str, fn: Callable[[], Any], notes: list[Note], default: Any = (None, [])
) -> Any:
    return _guard(name, fn, default, notes)


def _cross_notes(
    os_info: OSInfo, nvidia_info: NvidiaInfo | None, environment: Mapping[str, str]
) -> list[Note]:
    """Findings that need two probes' answers side by side (still observations, not advice)."""
    out: list[Note] = []
    wanted = environment.get("NVIDIA_VISIBLE_DEVICES", "")
    if os_info.container and nvidia_info is None and wanted and wanted not in ("void", "none"):
        out.append(
            Note(
                "container-gpu-not-visible",
                f"this {os_info.container} container asks for NVIDIA GPUs "
                f"(NVIDIA_VISIBLE_DEVICES={wanted}) but none is visible: it was started without "
                "the NVIDIA container runtime (`docker run --gpus all`, or the device plugin "
                "on Kubernetes)",
                "env:NVIDIA_VISIBLE_DEVICES",
            )
        )
    return out
