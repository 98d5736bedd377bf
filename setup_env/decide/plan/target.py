"""The machine a plan is for: the target read from facts (OS, architecture, Python, wheel tags,
glibc, macOS), and the facts of a machine described on the command line (``spec_facts``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Optional

from packaging.version import InvalidVersion, Version

from setup_env._record import Record, record
from setup_env.decide.model import PlanError
from setup_env.facts import (
    AppleInfo,
    CpuInfo,
    Facts,
    Gpu,
    JetsonInfo,
    NvidiaInfo,
    OSInfo,
    PythonInfo,
    RocmInfo,
    XpuInfo,
)

if TYPE_CHECKING:
    from setup_env.knowledge.gpus import GpuModel


@record
class _Target(Record):
    """The platform a plan is for: OS, architecture, Python, wheel tags, libc."""

    os: str  # linux | windows | macos | other
    arch: str  # the interpreter's: x86_64 | aarch64 | arm64 | ...
    platform: Optional[str]
    python: Optional[Version]
    free_threaded: bool
    tags: frozenset[str]
    pyabis: frozenset[str]  # "cp311-cp311"
    glibc: Optional[Version]
    macos: Optional[Version]
    musl: bool  # a musl libc (Alpine): PyTorch publishes no musllinux wheels
    rosetta: bool
    wsl: bool
    driver_os: str  # whose driver numbering applies: linux | windows

    @property
    def py_label(self) -> str:
        if self.python is None:
            return "this Python"
        return f"Python {self.python.major}.{self.python.minor}{'t' if self.free_threaded else ''}"


def _v(text: Optional[str]) -> Optional[Version]:
    if not text:
        return None
    m = re.match(r"^\s*(\d+(?:\.\d+){0,3})", text)
    if not m:
        return None
    try:
        return Version(m.group(1))
    except InvalidVersion:
        return None


def _platform(os_name: str, arch: str) -> Optional[str]:
    """The matrix platform of a target, None where PyTorch publishes no wheels."""
    from setup_env.knowledge.matrix import PLATFORMS
    from setup_env.knowledge.tags import platform_key

    key = platform_key(os_name, arch)
    return key if key in PLATFORMS else None


# A described or thinly captured machine whose glibc / macOS version is unknown is planned for
# these (a current distribution, the macOS torch's newest wheels need).
_ASSUMED_GLIBC = "2.35"


_ASSUMED_MACOS = "14.0"


def interpreter_tags(
    python: str, free_threaded: bool, os_name: str, arch: str, glibc: str | None, macos: str | None
) -> tuple[str, ...]:
    """``cp312-cp312-manylinux_2_28_x86_64``...: the tags of a CPython of that version."""
    from setup_env.knowledge import tags

    plats = tags.platform_tags(
        os_name, arch, libc_version=glibc or _ASSUMED_GLIBC, macos=macos or _ASSUMED_MACOS
    )
    return tuple(tags.cpython_tags(python, plats, free_threaded=free_threaded))


def _target(facts: Facts) -> _Target:
    fam = facts.os.family
    os_name = {"darwin": "macos"}.get(fam, fam)
    from setup_env.knowledge.tags import machine_name

    # (Linux's "arm64" is aarch64 to platform_key and platform_tags; t.arch itself is said
    # only where there is no platform)
    arch = machine_name(facts.python.machine or facts.cpu.architecture or "")
    hw = machine_name(facts.cpu.architecture or "")
    rosetta = bool(facts.python.rosetta) or (
        os_name == "macos" and arch == "x86_64" and hw in ("arm64", "aarch64")
    )
    pv = _v(facts.python.version)
    tags = tuple(facts.python.tags)
    if not tags and pv is not None:
        tags = interpreter_tags(
            facts.python.version,
            facts.python.free_threaded,
            os_name,
            arch,
            facts.os.glibc,
            facts.os.macos_version,
        )
    # packaging's cpython_tags() also accepts "<interp>-none-<platform>" for every platform tag;
    # a detector may list only the interpreter's own ABI.
    from setup_env.knowledge.tags import none_tags

    tagset = frozenset(tags) | frozenset(none_tags(tags))
    wsl = (facts.os.wsl or 0) >= 2
    musl = os_name == "linux" and facts.os.libc == "musl"
    return _Target(
        os=os_name,
        arch=arch,
        platform=None if musl else _platform(os_name, arch),
        python=pv,
        free_threaded=facts.python.free_threaded,
        tags=tagset,
        pyabis=frozenset("-".join(t.split("-")[:2]) for t in tagset),
        glibc=_v(facts.os.glibc),
        macos=_v(facts.os.macos_version),
        musl=musl,
        rosetta=rosetta,
        wsl=wsl,
        driver_os=facts.os.driver_os,
    )


def spec_facts(
    *,
    os: str,
    arch: str | None = None,
    python: str | None = None,
    gpus: Sequence[str] = (),
    driver: str | None = None,
    glibc: str | None = None,
    macos: str | None = None,
    wsl: bool = False,
    jetpack: str | None = None,
) -> Facts:
    """The facts of a machine described by a spec (``--os linux --gpu "RTX 5090" ...``)."""
    from setup_env.knowledge.gpus import identify

    named = [identify(n.strip()) for n in gpus if n.strip() and len(n.strip()) <= 100]
    jetson_model = next(
        (f.nvidia for f in named if f.nvidia is not None and f.nvidia.segment == "embedded"), None
    )
    if jetson_model is not None and os.lower() not in ("linux", "macos", "darwin", "mac", "osx"):
        raise PlanError(f"--gpu {jetson_model.name!r}: a Jetson runs Linux (L4T): use --os linux")
    if arch is None and jetson_model is not None:
        arch = "aarch64"  # a Jetson is an aarch64 machine
    os_name = {"darwin": "macos", "mac": "macos", "osx": "macos", "win": "windows"}.get(
        os.lower(), os.lower()
    )
    if os_name not in ("linux", "windows", "macos"):
        raise PlanError(f"--os {os!r}: choose linux, windows or macos")
    from setup_env.knowledge.tags import machine_name

    a = machine_name(arch or ("arm64" if os_name == "macos" else "x86_64"))
    if a not in ("x86_64", "aarch64", "arm64"):
        raise PlanError(f"--arch {arch!r}: choose x86_64, aarch64 or arm64")
    if os_name == "linux" and a == "arm64":
        a = "aarch64"
    if os_name == "macos" and a == "aarch64":
        a = "arm64"
    py = (python or "3.12").strip()
    m = re.fullmatch(r"(3)\.(\d{1,2})(t?)", py)
    if not m:
        raise PlanError(f"--python {python!r}: expected a version like 3.12 or 3.13t")
    free = bool(m.group(3))
    pyver = f"3.{m.group(2)}"
    if glibc is not None and not re.fullmatch(r"2\.\d{1,2}", glibc):
        raise PlanError(f"--glibc {glibc!r}: expected a version like 2.17 or 2.35")
    if macos is not None and not re.fullmatch(r"\d{2}(?:\.\d{1,2}){0,2}", macos):
        raise PlanError(f"--macos {macos!r}: expected a version like 13.6 or 14")
    if driver is not None and not re.fullmatch(r"\d{3,4}(?:\.\d{1,3}){0,2}", driver):
        raise PlanError(f"--driver {driver!r}: expected a version like 570.86.10")
    if glibc is not None and os_name != "linux":
        raise PlanError("--glibc applies to --os linux only")
    if macos is not None and os_name != "macos":
        raise PlanError("--macos applies to --os macos only")
    src = "spec"
    tags = interpreter_tags(pyver, free, os_name, a, glibc, macos)
    nv: list[Gpu] = []
    amd: list[Gpu] = []
    intel: list[Gpu] = []
    apple: Optional[AppleInfo] = None
    for i, name in enumerate(gpus):
        name = name.strip()
        if not name or len(name) > 100:
            raise PlanError(f"--gpu {name!r}: empty or too long")
        found = identify(name)
        if found.vendor == "amd" and found.amd is not None:
            amd.append(Gpu(index=i, name=name, vendor="amd", gfx_arch=found.amd.gfx, source=src))
        elif found.vendor == "intel":
            intel.append(Gpu(index=i, name=name, vendor="intel", source=src))
        elif found.vendor == "apple":
            gen, variant = found.apple_generation, found.apple_variant
            apple = AppleInfo(
                chip=f"Apple M{gen}" + (f" {variant}" if variant else ""),
                generation=gen,
                variant=variant,
                mps_eligible=True,
                sources={"chip": src},
            )
        elif found.nvidia is not None:
            cc = found.nvidia.compute_capability
            nv.append(Gpu(index=i, name=name, vendor="nvidia", compute_capability=cc, source=src))
        else:
            close = f"; closest known: {', '.join(found.suggestions)}" if found.suggestions else ""
            raise PlanError(
                f"--gpu {name!r}: not a GPU the catalogue knows ({found.code}){close}; give a "
                f'model ("RTX 5090", "MI300X") or an architecture (sm_120, gfx1100)'
            )
    if (amd or intel) and os_name == "macos":
        raise PlanError("--gpu: AMD/Intel GPUs are planned on linux or windows")
    if nv and os_name == "macos":
        raise PlanError("--gpu: NVIDIA GPUs are not supported on macOS by PyTorch")
    nvidia = None
    if nv or driver:
        nvidia = NvidiaInfo(
            driver_version=driver, gpus=tuple(nv), sources={"driver_version": src, "gpus": src}
        )
    jetson = _spec_jetson(jetpack, jetson_model, os_name, a)
    return Facts(
        os=OSInfo(
            family="darwin" if os_name == "macos" else os_name,  # type: ignore[arg-type]
            libc="glibc" if os_name == "linux" else None,
            glibc=glibc if os_name == "linux" else None,
            macos_version=macos,
            wsl=2 if wsl else None,
            sources={"family": src},
        ),
        python=PythonInfo(
            version=pyver,
            free_threaded=free,
            machine=a,
            tags=tags,
            sources={"version": src, "tags": "derived from the spec"},
        ),
        cpu=CpuInfo(architecture=a, sources={"architecture": src}),
        nvidia=nvidia,
        apple=apple,
        rocm=RocmInfo(gpus=tuple(amd), sources={"gpus": src}) if amd else None,
        xpu=XpuInfo(gpus=tuple(intel), sources={"gpus": src}) if intel else None,
        jetson=jetson,
    )


def _spec_jetson(
    jetpack: str | None, model: GpuModel | None, os_name: str, arch: str
) -> JetsonInfo | None:
    """``--jetpack 6.2`` with ``--gpu "Jetson AGX Orin"``: the Jetson of a what-if."""
    from setup_env.knowledge import gpus

    if jetpack is None:
        return None
    if model is None:
        raise PlanError('--jetpack needs --gpu naming a Jetson module ("Jetson AGX Orin")')
    if os_name != "linux" or arch != "aarch64":
        raise PlanError("--jetpack: a Jetson is --os linux --arch aarch64")
    if not re.fullmatch(r"\d{1,2}(?:\.\d{1,2}){0,2}", jetpack.strip()):
        raise PlanError(f"--jetpack {jetpack!r}: expected a version like 6.2")
    row = gpus.load().jetpack(jetpack.strip())
    if row is None:
        known = ", ".join(j.jetpack for j in gpus.load().jetpacks)
        raise PlanError(f"--jetpack {jetpack!r}: not in the JetPack table (known: {known})")
    return JetsonInfo(
        module=model.name,
        l4t=row.l4t,
        jetpack=row.jetpack,
        cuda=row.cuda,
        compute_capability=model.compute_capability,
        sources={"jetpack": "spec", "l4t": "JetPack table", "cuda": "JetPack table"},
    )


def facts_summary(facts: Facts) -> dict[str, object]:
    """The parts of the facts the plan used, for the JSON output."""
    nv = facts.nvidia
    gpus_ = []
    for g in facts.gpus:
        from setup_env.probe.resolve import resolve_gpu  # the catalogue loads only for a GPU

        r = resolve_gpu(g)  # what the GPU knowledge base adds, each field with its source
        w = r.window
        gpus_.append(
            {
                "index": g.index,
                "name": g.name,
                "vendor": g.vendor,
                "compute_capability": r.compute_capability if g.vendor == "nvidia" else None,
                "gfx_arch": r.gfx,
                "mig_mode": g.mig_mode,
                "catalogue_match": r.match,
                "driver_window": (
                    {
                        "first_branch": w.first_branch,
                        "last_branch": w.last_branch,
                        **({"first_driver": w.first_driver} if w.first_driver else {}),
                    }
                    if w is not None
                    else None
                ),
                "sources": dict(r.sources),
            }
        )
    return {
        "os": facts.os.family,
        "distro": facts.os.distro_id,
        "glibc": facts.os.glibc,
        "macos": facts.os.macos_version,
        "wsl": facts.os.wsl,
        "arch": facts.python.machine or facts.cpu.architecture,
        "cpu_arch": facts.cpu.architecture,
        "python": facts.python.version,
        "free_threaded": facts.python.free_threaded,
        "rosetta": facts.python.rosetta,
        "nvidia_driver": nv.driver_version if nv else None,
        "cuda_driver": nv.cuda_driver_version if nv else None,
        "apple_chip": facts.apple.chip if facts.apple else None,
        "gpus": gpus_,
    }
