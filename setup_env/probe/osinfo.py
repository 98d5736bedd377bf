"""Operating system: family, distribution, kernel, C library, WSL, container, virtualisation.

Sources, in order (the first that answers wins, each recorded in ``OSInfo.sources``):

- family, kernel, macOS / Windows version, glibc: what the host interpreter says of itself
  (``platform``), then files and commands (``/proc/sys/kernel/osrelease``,
  ``getconf GNU_LIBC_VERSION``, ``ldd --version``, ``sw_vers -productVersion``).
- distribution: os-release read directly (the standard; fast), else ``distro`` pointed at the
  host's files (``root_dir``) for the legacy release files, so a replayed capture is
  read exactly like a live machine; ``/etc/os-release`` parsed here when the host has no file root.
- WSL: ``/proc/version`` (``microsoft-standard-WSL2`` vs ``-Microsoft``) and
  ``/proc/sys/fs/binfmt_misc/WSLInterop``.
- container: ``KUBERNETES_SERVICE_HOST``, ``/run/.containerenv`` (podman), ``/.dockerenv``,
  ``/proc/1/cgroup``, the ``container`` variable systemd-nspawn/LXC/podman set.
- virtualisation: none on an x86 CPU without the ``hypervisor`` flag (``/proc/cpuinfo``); else
  ``systemd-detect-virt --vm`` (with a timeout), then ``/sys/hypervisor/type``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from setup_env._record import replace
from setup_env.facts import Note, OSInfo
from setup_env.probe.host import Host

_FAMILIES = {"linux": "linux", "darwin": "darwin", "windows": "windows"}
# Files distro considers besides os-release (distro's own pattern and ignore list).
_RELEASE_FILE = re.compile(r"^(\w+)[-_](release|version)$")
_RELEASE_IGNORE = {
    "debian_version",
    "lsb-release",
    "oem-release",
    "os-release",
    "system-release",
    "plesk-release",
    "iredmail-release",
    "board-release",
    "ec2_version",
}


def parse_os_release(text: str) -> dict[str, str]:
    """``/etc/os-release`` (``KEY="value"`` lines, shell quoting) -> {key: value}.

    Example input (Debian 12)::

        PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"
        VERSION_ID="12"
        ID=debian
    """
    out: dict[str, str] = {}
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        key, _, value = line.partition("=")
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
            value = value[1:-1]
        value = re.sub(r"\\(.)", r"\1", value)
        if re.fullmatch(r"[A-Z0-9_]+", key.strip()):
            out[key.strip()] = value
    return out


def parse_glibc(text: str) -> tuple[str | None, str | None]:
    """``getconf GNU_LIBC_VERSION`` or ``ldd --version`` output -> (libc, version).

    Examples: ``glibc 2.36``; ``ldd (GNU libc) 2.17``; ``ldd (Ubuntu GLIBC 2.35-0ubuntu3.8) 2.35``;
    musl's ``musl libc (x86_64)\\nVersion 1.2.4`` -> ("musl", None).
    """
    first = text.strip().splitlines()[0] if text.strip() else ""
    if "musl" in text.lower():
        return "musl", None
    m = re.match(r"^glibc\s+(\d+\.\d+)", first)
    if m:
        return "glibc", m.group(1)
    if first.startswith("ldd") and re.search(r"g(nu )?libc|eglibc", first, re.IGNORECASE):
        m = re.search(r"(\d+\.\d+)\s*$", first)
        if m:
            return "glibc", m.group(1)
    return None, None


def parse_wsl(proc_version: str | None, interop: bool) -> int | None:
    """WSL generation from ``/proc/version`` and the WSLInterop binfmt entry.

    WSL2 kernels say ``microsoft-standard-WSL2`` (older: ``4.19.104-microsoft-standard``); WSL1
    reports the Windows build as ``4.4.0-19041-Microsoft``.
    """
    text = (proc_version or "").lower()
    if "microsoft-standard" in text or "wsl2" in text:
        return 2
    if "microsoft" in text:
        return 1
    if interop:
        return 2  # a WSL2 custom kernel without "microsoft" in its name
    return None


def parse_cgroup_container(text: str) -> str | None:
    """``/proc/1/cgroup`` -> the container runtime named in it, if any.

    cgroup v1 inside Docker: ``12:memory:/docker/3f2a...``; Kubernetes:
    ``/kubepods/burstable/pod...``; LXC: ``/lxc/<name>``. cgroup v2 shows ``0::/``: nothing.
    """
    for line in text.splitlines():
        path = line.split(":", 2)[-1]
        if "kubepods" in path:
            return "kubernetes"
        if "/docker" in path or "docker-" in path:
            return "docker"
        if "libpod" in path:
            return "podman"
        if "/lxc" in path:
            return "lxc"
        if "containerd" in path:
            return "containerd"
    return None


def detect(host: Host) -> tuple[OSInfo, list[Note]]:
    notes: list[Note] = []
    sources: dict[str, str] = {}
    interp = host.interpreter()
    system = str(interp.get("system") or "").lower()
    family = _FAMILIES.get(system)
    if family is not None:
        sources["family"] = "python:platform.system"
    elif host.exists("/proc/version"):
        family = "linux"
        sources["family"] = "/proc/version"
    else:
        family = "other"

    kernel = interp.get("release") if isinstance(interp.get("release"), str) else None
    if kernel:
        sources["kernel"] = "python:platform.release"
    elif family == "linux":
        text = host.read_text("/proc/sys/kernel/osrelease")
        if text and text.strip():
            kernel = text.strip()
            sources["kernel"] = "/proc/sys/kernel/osrelease"

    info = OSInfo(family=family, kernel=kernel or None)  # type: ignore[arg-type]
    fields: dict[str, object] = {}
    if family == "linux":
        fields.update(_linux(host, interp, sources, notes))
    elif family == "darwin":
        fields.update(_darwin(host, interp, sources, notes))
    elif family == "windows":
        build = interp.get("win32_ver")
        if isinstance(build, str) and build:
            fields["windows_build"] = build
            sources["windows_build"] = "python:platform.win32_ver"
    return _replace(info, fields, sources), notes


def _replace(info: OSInfo, fields: dict[str, object], sources: dict[str, str]) -> OSInfo:
    return replace(info, sources=dict(sources), **fields)


def _linux(
    host: Host, interp: Mapping[str, Any], sources: dict[str, str], notes: list[Note]
) -> dict[str, object]:
    fields: dict[str, object] = {}
    fields.update(_distribution(host, sources, notes))
    fields.update(_libc(host, interp, sources, notes))

    proc_version = host.read_text("/proc/version")
    interop = host.exists("/proc/sys/fs/binfmt_misc/WSLInterop")
    wsl = parse_wsl(proc_version, interop)
    if wsl is not None:
        fields["wsl"] = wsl
        sources["wsl"] = (
            "/proc/version"
            if proc_version and "microsoft" in proc_version.lower()
            else ("/proc/sys/fs/binfmt_misc/WSLInterop")
        )

    container, where = _container(host)
    if container:
        fields["container"] = container
        sources["container"] = where

    virt, where = _virtualization(host, notes)
    if virt:
        fields["virtualization"] = virt
        sources["virtualization"] = where
    return fields


# distro.NORMALIZED_OS_ID: the ids distro reports in place of os-release's.
_DISTRO_NORMALISED = {"ol": "oracle", "opensuse-leap": "opensuse"}


def _distribution(host: Host, sources: dict[str, str], notes: list[Note]) -> dict[str, object]:
    # Read through the host what distro will read, so that a capture copies those files.
    os_release_path = "/etc/os-release"
    first = host.read(os_release_path)
    reads = [first]
    text = first.text
    if text is None:
        os_release_path = "/usr/lib/os-release"
        reads.append(host.read(os_release_path))
        text = reads[-1].text
    for name in host.listdir("/etc") or ():
        if _RELEASE_FILE.match(name) and name not in _RELEASE_IGNORE:
            reads.append(host.read(f"/etc/{name}"))
    # distro opens these files itself, without a size cap or a check for FIFOs: it is asked
    # only when every one of them read cleanly through the host (or is simply absent).
    refused = [r for r in reads if r.error not in (None, "missing")]

    root = getattr(host, "files_root", None)
    ident = name_ = version = None
    where = os_release_path
    data = parse_os_release(text) if text is not None else {}
    if data.get("ID"):
        # os-release is the standard every current distribution ships; reading it directly
        # saves importing distro (~30 ms of start-up). distro's own ids normalise these two.
        ident = _DISTRO_NORMALISED.get(data["ID"], data["ID"])
        name_ = data.get("PRETTY_NAME") or data.get("NAME")
        version = data.get("VERSION_ID")
    elif refused:
        notes.append(
            Note(
                "os-release-unreadable",
                f"{refused[0].path} could not be read ({refused[0].error}"
                + (f": {refused[0].detail}" if refused[0].detail else "")
                + "): the Linux distribution is unknown",
                refused[0].path,
            )
        )
    elif callable(root) and root() is not None:
        # No usable os-release (CentOS 6 era, minimal images): distro knows the legacy files.
        try:
            import distro

            dist = distro.LinuxDistribution(
                include_lsb=False, include_uname=False, include_oslevel=False, root_dir=root()
            )
            ident, name_, version = dist.id(), dist.name(pretty=True), dist.version()
            where = f"distro:{os_release_path}" if text is not None else "distro:/etc/*-release"
        except (OSError, UnicodeError, ValueError) as exc:
            notes.append(Note("os-release-unreadable", f"distro could not read: {exc}", "distro"))
    if text is not None and not text.strip():
        notes.append(Note("os-release-empty", f"{os_release_path} is empty", os_release_path))
    if not ident and text is None:
        notes.append(
            Note(
                "os-release-missing",
                "no /etc/os-release: the Linux distribution is unknown",
                os_release_path,
                "info",
            )
        )
    fields: dict[str, object] = {}
    for key, value in (("distro_id", ident), ("distro_name", name_), ("distro_version", version)):
        if value:
            fields[key] = value
            sources[key] = where
    return fields


def _libc(
    host: Host, interp: Mapping[str, Any], sources: dict[str, str], notes: list[Note]
) -> dict[str, object]:
    libc_ver = interp.get("libc_ver")
    if isinstance(libc_ver, list) and len(libc_ver) == 2 and libc_ver[0] == "glibc" and libc_ver[1]:
        return _set(sources, "python:platform.libc_ver", libc="glibc", glibc=str(libc_ver[1]))
    for argv in (("getconf", "GNU_LIBC_VERSION"), ("ldd", "--version")):
        result = host.run(argv, timeout=2.0)
        if result.error == "timeout":
            notes.append(Note("command-timeout", result.describe(), argv[0]))
            continue
        # musl's ldd prints its banner on stderr and exits 1.
        text = result.stdout if result.stdout.strip() else result.stderr
        if result.error is not None or not text.strip():
            continue
        libc, version = parse_glibc(text)
        if libc == "musl":
            return _set(sources, " ".join(argv), libc="musl")
        if libc and version:
            return _set(sources, " ".join(argv), libc=libc, glibc=version)
    return {}


def _set(sources: dict[str, str], where: str, **fields: object) -> dict[str, object]:
    for key in fields:
        sources[key] = where
    return fields


def _container(host: Host) -> tuple[str | None, str]:
    if host.env("KUBERNETES_SERVICE_HOST"):
        return "kubernetes", "env:KUBERNETES_SERVICE_HOST"
    if host.exists("/run/.containerenv"):
        return "podman", "/run/.containerenv"
    if host.exists("/.dockerenv"):
        return "docker", "/.dockerenv"
    cgroup = host.read_text("/proc/1/cgroup")
    found = parse_cgroup_container(cgroup or "")
    if found:
        return found, "/proc/1/cgroup"
    env = host.env("container")
    if env and re.fullmatch(r"[A-Za-z0-9_.-]{1,40}", env):
        return env, "env:container"
    return None, ""


_VIRT = re.compile(r"^[a-z0-9_-]{1,32}$")


def _virtualization(host: Host, notes: list[Note]) -> tuple[str | None, str]:
    cpuinfo = host.read_text("/proc/cpuinfo")
    if (
        cpuinfo
        and re.search(r"^flags\s*:", cpuinfo, re.MULTILINE)
        and not re.search(r"^flags\s*:.*\bhypervisor\b", cpuinfo, re.MULTILINE)
    ):
        # x86 CPUs tell a guest it is one (the "hypervisor" flag); without it this is bare
        # metal, and the ~30 ms of systemd-detect-virt can be spared.
        return None, ""
    if host.which("systemd-detect-virt"):
        result = host.run(("systemd-detect-virt", "--vm"), timeout=2.0)
        answer = result.stdout.strip()
        # Exit 1 with "none": no VM. Anything else is a named hypervisor.
        if result.error == "timeout":
            notes.append(Note("command-timeout", result.describe(), "systemd-detect-virt"))
        elif answer and answer != "none" and _VIRT.match(answer):
            return answer, "systemd-detect-virt --vm"
        elif answer == "none":
            return None, ""
    hv = host.read_text("/sys/hypervisor/type")
    if hv and _VIRT.match(hv.strip()):
        return hv.strip(), "/sys/hypervisor/type"
    return None, ""


def _darwin(
    host: Host, interp: Mapping[str, Any], sources: dict[str, str], notes: list[Note]
) -> dict[str, object]:
    version = interp.get("mac_ver")
    where = "python:platform.mac_ver"
    # A Python built against an old SDK sees macOS 11+ as "10.16" (SYSTEM_VERSION_COMPAT).
    if not isinstance(version, str) or not version or version == "10.16":
        result = host.run(("sw_vers", "-productVersion"), timeout=2.0)
        text = result.stdout.strip()
        if result.ok and re.fullmatch(r"\d+(\.\d+){0,2}", text):
            version, where = text, "sw_vers -productVersion"
        elif not version:
            notes.append(Note("macos-version-unknown", result.describe(), "sw_vers"))
            return {}
    return _set(sources, where, macos_version=version)
