"""What a report implies beyond its own lines, and what it leaves open.

Three tiers, each fact recorded as :class:`Evidence` with its source:

1. *read*: a field, a torch message (``collect_env:warning``), an Intel GPU list;
2. *inferred* (sound): ``Is CUDA available: True`` with a ``+cu121`` build means an NVIDIA GPU and a
   driver at or above CUDA 12.1's floor (the matrix's minor-version-compatibility floor,
   ``knowledge.cuda.driver_fit``); ``…/python3.12/site-packages/…`` means Python 3.12;
   ``Libc version: glibc-2.31`` means Linux; a two-part driver number from R470 on
   (``546.33``) was only ever released for Windows (Linux drivers are ``550.54.15``); an installed
   ``+xpu`` build that torch did not call unavailable means an Intel GPU;
3. *assumed* (the most likely value, said): a driver current enough for the newest build, Linux
   x86_64 for a report without its OS, Python 3.12 without its Python line, no GPU where nothing
   shows one. Each :class:`Assumption` names the other value, which ``decide.assume`` plans too, so
   the answer it would change is said.

Pure: facts in, facts out. Read facts are never overwritten: ``Report.facts`` holds what the
paste says plus the OS and Python it implies (their sources say "inferred: ..."), and
``Report.planning`` adds the GPUs and driver implied and every assumption: what diagnose plans
from.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Literal, Optional

from setup_env._record import replace
from setup_env.facts import Facts, Gpu, Note, NvidiaInfo, RocmInfo, XpuInfo
from setup_env.knowledge.variant import XPU
from setup_env.probe.report.messages import TorchMessage

if TYPE_CHECKING:
    from setup_env.knowledge.matrix import Matrix
from setup_env.probe.report.model import SOURCE, WARNING_SOURCE, Assumption, Evidence

# A site-packages path: POSIX ".../lib/python3.12/site-packages/..." (3.13t: free-threaded), or
# Windows "...\\Python312\\Lib\\site-packages\\...".
_POSIX_SITE = re.compile(r"/python(3\.\d{1,2})(t?)/site-packages/")
_WIN_SITE = re.compile(r"\\Python3(\d{1,2})\\Lib\\site-packages\\", re.I)
_WIN_PATH = re.compile(r"(?:^|[\s'\"(`])[A-Za-z]:\\")
_MAC_PATH = re.compile(r"(?:^|[\s'\"(])/(?:Users|Library|opt/homebrew)/")
_LINUX_PATH = re.compile(r"(?:^|[\s'\"(])/(?:home|usr|opt|root|data|workspace|mnt|srv|scratch)/")
# torch's messages that only a loaded NVIDIA driver prints (it answered, then refused).
_NVIDIA_RAN = ("driver-too-old", "device-count-error", "no-kernel-image", "arch-not-compatible")
UNKNOWN_NVIDIA = "NVIDIA GPU (model not in the report)"
# An Intel GPU named in the text around a report: "Intel Arc A770", "Intel(R) Arc(TM) B580".
_INTEL_NAMED = re.compile(r"\bIntel(?:\(R\))? Arc(?:\(TM\))? (?:Pro )?[AB]\d{3}[A-Z]?\b")
UNKNOWN_AMD = "AMD GPU (model not in the report)"
_CUDA_LIB = re.compile(r"cudnn|cublas|cudart|cusparse|nccl", re.I)
UNKNOWN_INTEL = "Intel GPU (model not in the report)"
ASSUMED_PYTHON = "3.12"  # the most common CPython in current reports
OLDEST_PYTHON = "3.9"  # the oldest setup-env supports: the alternative that changes the answer


def inferred(why: str) -> str:
    return f"inferred: {why}"


def assumed(why: str) -> str:
    return f"assumed: {why}"


def windows_only_driver(version: Optional[str]) -> bool:
    """A driver number NVIDIA only released for Windows. NVIDIA's Unix driver archive
    (https://www.nvidia.com/en-us/drivers/unix/) has, from R400 on, only branches that are
    multiples of five and R418 (410, 418, 430, 435, 440, 450 ... 570, 575, 580), and from R470 on
    only three-part numbers (``470.57.02``, ``550.54.15``); so ``426.25`` (R426) and ``546.33``
    (two parts) are Windows'."""
    m = re.fullmatch(r"(\d{3})\.(\d{2,3})(\.\d{2,3})?", (version or "").strip())
    if not m:
        return False
    major = int(m.group(1))
    if major >= 400 and major % 5 != 0 and major != 418:
        return True
    return major >= 470 and m.group(3) is None


def infer(
    facts: Facts,
    fields: dict[str, str],
    messages: tuple[TorchMessage, ...],
    cuda_available: Optional[bool],
    xpu_available: Optional[bool],
    paths: list[str],
) -> tuple[Facts, Facts, tuple[Evidence, ...], tuple[Assumption, ...]]:
    """(the facts the paste states or soundly implies, those plus what was assumed: the facts to
    plan from, the evidence for each, what was assumed)."""
    ev: list[Evidence] = []
    out: list[Assumption] = []
    torch = facts.package("torch")
    cuda_build = torch is not None and bool(
        torch.cuda or (torch.variant is not None and torch.variant.is_cuda)
    )

    # --- what the paste states ----------------------------------------------------------
    if torch is not None:
        ev.append(
            Evidence("torch", f"{torch.version} ({torch.variant or 'build unknown'})", torch.source)
        )
    if facts.os.family != "other":
        ev.append(Evidence("os", facts.os.family, facts.os.sources.get("family", SOURCE)))
    if facts.python.version:
        ev.append(
            Evidence("python", facts.python.version, facts.python.sources.get("version", SOURCE))
        )
    for g in facts.gpus:
        ev.append(Evidence("gpus", g.name, g.source or SOURCE))
    nv = facts.nvidia
    if nv is not None and nv.driver_version:
        ev.append(Evidence("driver", nv.driver_version, nv.sources.get("driver_version", SOURCE)))
    if nv is not None and nv.cuda_driver_version:
        ev.append(
            Evidence(
                "driver",
                f"supports CUDA {nv.cuda_driver_version}",
                nv.sources.get("cuda_driver_version", WARNING_SOURCE),
            )
        )
    if cuda_available is not None:
        ev.append(Evidence("cuda_available", str(cuda_available), f"{SOURCE}:Is CUDA available"))
    if xpu_available is not None:
        ev.append(Evidence("xpu_available", str(xpu_available), f"{SOURCE}:Is XPU available"))

    # --- OS ------------------------------------------------------------------------------
    os_info = facts.os
    if os_info.family == "other":
        found = _os_from(fields, facts, messages, paths)
        if found is not None:
            family, why = found
            os_info = replace(
                os_info, family=family, sources={**os_info.sources, "family": inferred(why)}
            )
            ev.append(Evidence("os", family, inferred(why)))

    # --- Python --------------------------------------------------------------------------
    python = facts.python
    if not python.version:
        for p in paths:
            pm = _POSIX_SITE.search(p)
            wm = _WIN_SITE.search(p)
            if pm or wm:
                version = pm.group(1) if pm else f"3.{wm.group(1)}"  # type: ignore[union-attr]
                why = f"a site-packages path names it ({_short(p)})"
                python = replace(
                    python,
                    version=version,
                    free_threaded=bool(pm and pm.group(2)),
                    sources={**python.sources, "version": inferred(why)},
                )
                ev.append(Evidence("python", version, inferred(why)))
                break

    # What the paste says plus what it soundly implies (no assumption): ``Report.facts``.
    implied = replace(facts, os=os_info, python=python)

    # --- OS, when nothing settles it: Linux, the most common ----------------------------
    if os_info.family == "other" and (facts.gpus or torch is not None or messages):
        os_info = replace(
            os_info, family="linux", sources={**os_info.sources, "family": assumed("Linux")}
        )
        out.append(
            Assumption(
                "os",
                "Linux (x86_64)",
                "the report has no OS line and nothing in it names the OS",
                "the machine runs Windows",
                "os:windows",
            )
        )

    # --- GPUs ----------------------------------------------------------------------------
    nvidia = facts.nvidia
    xpu = facts.xpu
    rocm = facts.rocm
    rocm_build = torch is not None and bool(
        torch.hip or (torch.variant is not None and torch.variant.is_rocm)
    )
    has_gpu = bool(facts.gpus)
    ran = [m for m in messages if m.kind in _NVIDIA_RAN]
    # torch.cuda.is_available() is True only where a GPU answered: an NVIDIA one, unless the
    # build is ROCm's (HIP answers the same call).
    cuda_yes = bool(cuda_available) and not rocm_build and torch is not None
    if not has_gpu and (cuda_yes or ran):
        if cuda_yes:
            # (cuda_available is that line read: its words as the paste spells them)
            said = fields["Is CUDA available"].strip()
            why = f"Is CUDA available: {said} with torch {torch.version}"  # type: ignore[union-attr]
        else:
            why = f"torch's message comes from a loaded NVIDIA driver ({ran[0].text[:80]})"
        gpu = Gpu(index=0, name=UNKNOWN_NVIDIA, source=inferred(why))
        nvidia = replace(nvidia or NvidiaInfo(), gpus=(gpu,))
        ev.append(Evidence("gpus", UNKNOWN_NVIDIA, inferred(why)))
        has_gpu = True
    hip_msg = next((m for m in messages if m.kind == "rocm-no-kernel"), None)
    if not has_gpu and hip_msg is not None:
        why = f"torch's HIP message comes from a running AMD GPU ({hip_msg.text[:60]})"
        amd = Gpu(index=0, name=UNKNOWN_AMD, vendor="amd", source=inferred(why))
        rocm = replace(rocm or RocmInfo(), gpus=(amd,))
        ev.append(Evidence("gpus", UNKNOWN_AMD, inferred(why)))
        has_gpu = True
    named_intel = next((m for m in map(_INTEL_NAMED.search, paths) if m), None)
    if not has_gpu and named_intel is not None:
        name = " ".join(named_intel.group(0).split())
        why = f"the text names it ({_short(named_intel.string)})"
        gpu = Gpu(index=0, name=name, vendor="intel", source=inferred(why))
        xpu = replace(xpu or XpuInfo(), gpus=(gpu,))
        ev.append(Evidence("gpus", name, inferred(why)))
        has_gpu = True
    xpu_build = torch is not None and torch.variant == XPU
    if not has_gpu and ((xpu_build and xpu_available is not False) or xpu_available):
        why = (
            "Is XPU available: True"
            if xpu_available
            else f"torch {torch.version} is an XPU build, installed for an Intel GPU"  # type: ignore[union-attr]
        )
        gpu = Gpu(index=0, name=UNKNOWN_INTEL, vendor="intel", source=inferred(why))
        xpu = replace(xpu or XpuInfo(), gpus=(gpu,))
        ev.append(Evidence("gpus", UNKNOWN_INTEL, inferred(why)))
        has_gpu = True
    gpus_listed = "GPU models and configuration" in fields
    if not has_gpu and os_info.family in ("linux", "windows") and not gpus_listed:
        cuda_lib = next(
            (m for m in messages if m.kind == "library-load" and _CUDA_LIB.search(m.library or "")),
            None,
        )
        if (cuda_build and cuda_available is None) or (torch is None and cuda_lib is not None):
            why = (
                f"torch {torch.version} is a CUDA build, installed for an NVIDIA GPU"  # type: ignore[union-attr]
                if cuda_build
                else f"torch failed to load CUDA's {cuda_lib.library}"  # type: ignore[union-attr]
            )
            gpu = Gpu(index=0, name=UNKNOWN_NVIDIA, source=assumed(why))
            nvidia = replace(nvidia or NvidiaInfo(), gpus=(gpu,))
            out.append(
                Assumption(
                    "gpus",
                    "an NVIDIA GPU",
                    why + "; the report has no GPU list",
                    "the machine has no NVIDIA GPU",
                    "gpus:none",
                )
            )
        elif not rocm_build and not any(m.kind == "rocm-no-kernel" for m in messages):
            out.append(
                Assumption(
                    "gpus",
                    "no GPU",
                    "the report has no GPU list and nothing in it names a GPU",
                    "the machine has an NVIDIA GPU",
                    "gpus:nvidia",
                )
            )
    elif (
        not has_gpu
        and gpus_listed
        and cuda_build
        and cuda_available is False
        and "Nvidia driver version" not in fields
    ):
        # torch saw no GPU, and the paste stops before the driver line: a machine without an
        # NVIDIA GPU is the likelier, a GPU whose driver is not loaded the other answer.
        out.append(
            Assumption(
                "gpus",
                "no NVIDIA GPU (torch saw none)",
                "CUDA is unavailable to the CUDA build and the report is cut before its driver "
                "line",
                "the machine has an NVIDIA GPU whose driver is not loaded",
                "gpus:nvidia",
            )
        )

    # --- a missing or unloaded driver: GPU intent, and the report shows no driver ------------
    notes = list(facts.notes)
    no_driver_msg = next((m for m in messages if m.kind == "no-driver"), None)
    driver_line = fields.get("Nvidia driver version")
    shown_absent = no_driver_msg is not None or (
        driver_line is not None and not (facts.nvidia and facts.nvidia.driver_version)
    )
    intent: list[str] = []
    if no_driver_msg is not None:
        intent.append(f"torch says: {no_driver_msg.text} [{WARNING_SOURCE}]")
    labelled = torch is not None and "+cu" in torch.version and cuda_build
    if labelled:
        intent.append(
            f"torch {torch.version} is a CUDA build from PyTorch's index [{torch.source}]"  # type: ignore[union-attr]
        )
    if cuda_build and facts.toolkits:
        tk = facts.toolkits[0]
        if not labelled:
            intent.append(
                f"torch {torch.version} is built with CUDA {torch.cuda or torch.variant} "  # type: ignore[union-attr]
                f"[{SOURCE}:CUDA used to build PyTorch]"
            )
        intent.append(f"a CUDA toolkit {tk.version} (nvcc) is installed [{tk.source}]")
    named = [g.name for g in facts.gpus if g.vendor == "nvidia" and g.source == WARNING_SOURCE]
    if named:
        intent.append(f"torch's warning names the GPU {named[0]} [{WARNING_SOURCE}]")
    strong = (
        no_driver_msg is not None
        or labelled
        or bool(named)
        or (cuda_build and bool(facts.toolkits))
    )
    nvidia_driver = nvidia is not None and bool(nvidia.driver_version or nvidia.cuda_driver_version)
    if (
        shown_absent
        and strong
        and cuda_available is not True
        and not nvidia_driver
        and os_info.family in ("linux", "windows")
    ):
        what = (
            "torch found no NVIDIA driver"
            if no_driver_msg is not None
            else f"Nvidia driver version: {(driver_line or '').strip() or '(empty)'}"
        )
        head = [] if no_driver_msg is not None else [f"{what} [{SOURCE}:Nvidia driver version]"]
        notes.append(
            Note(
                "no-nvidia-driver",
                "; ".join([*head, *intent]),
                f"{SOURCE}:Nvidia driver version" if no_driver_msg is None else WARNING_SOURCE,
                "info",
            )
        )
        ev.append(Evidence("driver", "none (missing or not loaded)", inferred(what)))
        if not (nvidia and nvidia.gpus):
            why = (
                "the report shows GPU intent (" + "; ".join(i.split(" [")[0] for i in intent) + ")"
            )
            gpu = Gpu(index=0, name=UNKNOWN_NVIDIA, source=assumed(why))
            nvidia = replace(nvidia or NvidiaInfo(), gpus=(gpu,))
            out = [a for a in out if a.fact != "gpus"]
            out.append(
                Assumption(
                    "gpus",
                    "an NVIDIA GPU whose driver is missing or not loaded",
                    why,
                    "the machine has no NVIDIA GPU",
                    "gpus:none",
                )
            )

    # --- the driver ----------------------------------------------------------------------
    nv_gpus = nvidia.gpus if nvidia is not None else ()
    driver_known = nvidia is not None and bool(nvidia.driver_version or nvidia.cuda_driver_version)
    no_driver = any(n.code == "no-nvidia-driver" for n in notes)
    if nv_gpus and not driver_known and not no_driver and os_info.family in ("linux", "windows"):
        floor: Optional[str] = None
        if cuda_available and cuda_build and torch is not None:
            cuda = torch.cuda or (torch.variant.cuda if torch.variant else None)
            floor = _floor(cuda, os_info.driver_os) if cuda else None
            if floor:
                why = f"Is CUDA available: True with a CUDA {cuda} build needs driver >= {floor}"
                ev.append(Evidence("driver", f">= {floor}", inferred(why)))
        newest = _newest_cuda()
        if newest is not None:
            nvidia = replace(
                nvidia or NvidiaInfo(),
                cuda_driver_version=newest,
                sources={
                    **(nvidia.sources if nvidia else {}),
                    "cuda_driver_version": assumed("a current driver"),
                },
            )
            out.append(
                Assumption(
                    "driver",
                    f"a current NVIDIA driver (one that runs CUDA {newest})",
                    "the report has no driver version"
                    + (f"; CUDA available with its build means >= {floor}" if floor else ""),
                    "the driver is older than the planned build needs"
                    + (f" (as old as {floor})" if floor else ""),
                    f"driver:{floor}" if floor else "driver-below-plan",
                )
            )

    if not python.machine and not facts.cpu.architecture and os_info.family != "other":
        # The most common machine of each OS (an assumption folded into the OS's).
        machine = {"windows": "AMD64", "darwin": "arm64"}.get(os_info.family, "x86_64")
        python = replace(python, machine=machine)
    if not python.version and os_info.family != "other":
        python = replace(
            python,
            version=ASSUMED_PYTHON,
            sources={**python.sources, "version": assumed(f"Python {ASSUMED_PYTHON}")},
        )
        out.append(
            Assumption(
                "python",
                f"Python {ASSUMED_PYTHON}",
                "the report has no Python line and no site-packages path",
                f"Python is older ({OLDEST_PYTHON})",
                f"python:{OLDEST_PYTHON}",
            )
        )
    planning = replace(
        facts, os=os_info, python=python, nvidia=nvidia, xpu=xpu, rocm=rocm, notes=tuple(notes)
    )
    return implied, planning, tuple(ev), tuple(out)


def _short(line: str) -> str:
    """The path in a line (the line itself when none stands out), at most 90 characters."""
    m = re.search(r"([A-Za-z]:\\|/)\S*site-packages\S*", line)
    path = m.group(0) if m else line
    return path if len(path) <= 90 else path[:40] + "…" + path[-45:]


def _os_from(
    fields: dict[str, str],
    facts: Facts,
    messages: tuple[TorchMessage, ...],
    paths: list[str],
) -> Optional[tuple[Literal["linux", "darwin", "windows"], str]]:
    """The OS a report without an OS line implies, and why; None when nothing settles it."""
    libc = fields.get("Libc version")
    if libc is not None and libc.startswith(("glibc-", "musl")):
        return "linux", f"Libc version: {libc[:20]} (glibc and musl are Linux's)"
    driver = facts.nvidia.driver_version if facts.nvidia else None
    if windows_only_driver(driver):
        return "windows", f"NVIDIA driver {driver} was only released for Windows"
    lib = next((m.library for m in messages if m.library), None)  # a library-load message's
    if lib and ".so" in lib:
        return "linux", f"torch's message names a Linux shared library ({lib})"
    if lib and lib.lower().endswith(".dll"):
        return "windows", f"torch's message names a Windows DLL ({lib})"
    if any(m.kind == "mps-unavailable" for m in messages):
        return "darwin", "torch's MPS message (MPS is macOS's)"
    for p in paths:
        if _WIN_PATH.search(p) or _WIN_SITE.search(p):
            return "windows", f"a Windows path ({_short(p)})"
        if _MAC_PATH.search(p):
            return "darwin", f"a macOS path ({_short(p)})"
        if _LINUX_PATH.search(p) and "/python3" in p:
            return "linux", f"a Linux path ({_short(p)})"
    return None


def _matrix() -> Optional[Matrix]:
    from setup_env.knowledge.matrix import in_use

    return in_use()


def _floor(cuda: str, driver_os: str) -> Optional[str]:
    """The oldest driver that runs a CUDA ``cuda`` build (its minor-version-compatibility floor
    where it has one), by the matrix's CUDA rules."""
    from setup_env.knowledge.cuda import driver_fit

    m = _matrix()
    if m is None:
        return None
    fit = driver_fit(None, cuda, driver_os, m.cuda)
    return fit.mvc_floor or fit.toolkit_min  # both None for a CUDA the table lacks


def _newest_cuda() -> Optional[str]:
    from setup_env.knowledge.cuda import version_tuple

    m = _matrix()
    if m is None or not m.cuda:
        return None
    return str(max(m.cuda, key=lambda k: version_tuple(k) or ()))
