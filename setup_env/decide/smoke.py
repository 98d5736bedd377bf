"""Pure decisions for verify: no torch, no machine access.

* :func:`classify_error` turns the text of a failure (an ``import torch`` traceback, a CUDA
  runtime error, a worker killed by a signal) into a one-line cause and the fix.
* :func:`decide_build`, :func:`decide_device`, :func:`decide_arch` judge the worker's build report
  (plain data the worker read from torch) against the machine facts.
* the speed and dependency judgements are in :mod:`setup_env.decide.smoke_speed`.

The worker reports what it saw; these functions decide what it means.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from setup_env._record import Record, record
from setup_env.decide.smoke_model import CheckResult, Status, result
from setup_env.knowledge.cuda import coverage, driver_fit, parse_cc, sm
from setup_env.knowledge.variant import Variant

if TYPE_CHECKING:
    from setup_env.facts import CpuInfo, Facts
    from setup_env.knowledge.matrix import Matrix

PLAN_FIX = "run `setup-env plan` for the install command that fits this machine"


@record
class Diagnosis(Record):
    """What a failed check's output means: the cause and the fix."""

    cause: str  # one line: what is wrong
    fix: str  # the exact thing to do
    code: str  # stable id: "missing-library", "numpy-abi", ...


# Which pip package ships a library torch loads (Linux names; the wheel deps of a CUDA torch).
_LIB_PACKAGES: tuple[tuple[str, str], ...] = (
    ("libcudnn", "nvidia-cudnn"),
    ("libnccl", "nvidia-nccl"),
    ("libcublas", "nvidia-cublas"),
    ("libcusparse", "nvidia-cusparse"),
    ("libcufft", "nvidia-cufft"),
    ("libcurand", "nvidia-curand"),
    ("libcusolver", "nvidia-cusolver"),
    ("libnvJitLink", "nvidia-nvjitlink"),
    ("libcudart", "nvidia-cuda-runtime"),
    ("libnvrtc", "nvidia-cuda-nvrtc"),
    ("libcupti", "nvidia-cuda-cupti"),
    ("libcufile", "nvidia-cufile"),
    ("libnvshmem", "nvidia-nvshmem"),
)

# What torch's x86_64 wheels execute without asking the CPU first. ATen picks its AVX2/AVX-512
# kernels at run time from CPUID (ATEN_CPU_CAPABILITY: default, avx2, avx512), so those are not
# required; the rest of the code is compiled for a baseline that has needed SSE4.1/SSE4.2
# (pytorch/pytorch#116623: 2.1 SIGILL at import on a CPU without SSE4.1; oneDNN needs SSE4.1,
# NixOS/nixpkgs#94220) and has carried AVX in the default path (pytorch/pytorch#43300, #37577:
# SIGILL from libtorch_cpu.so at import on CPUs without AVX). /proc/cpuinfo flag names; SSE4.1
# comes with every SSE4.2 CPU.
X86_BASELINE = ("sse4_2", "avx")
# The extensions a SIGILL report names as present (beyond the baseline), strongest last.
_X86_SHOWN = ("avx2", "fma", "avx512f", "avx512_bf16", "amx_tile")

_ISA_NAMES = {"sse4_2": "SSE4.2", "avx512f": "AVX-512F", "avx512_bf16": "AVX-512 BF16"}


def _isa(flag: str) -> str:
    return _ISA_NAMES.get(flag, "AMX" if flag == "amx_tile" else flag.upper())


_SIGNALS = {4: "SIGILL", 6: "SIGABRT", 7: "SIGBUS", 8: "SIGFPE", 9: "SIGKILL", 11: "SIGSEGV"}


def _cuda_suffix(torch_version: str | None) -> str:
    m = re.search(r"\+cu(\d+?)(\d)$", torch_version or "")
    return f"-cu{m.group(1)}" if m else "-cu12 / -cu13 (the one matching torch's CUDA)"


def classify_error(
    text: str,
    *,
    torch_version: str | None = None,
    returncode: int | None = None,
    source_checkout: bool | None = None,
    cpu: CpuInfo | None = None,
    numpy_version: str | None = None,
) -> Diagnosis | None:
    """Cause and fix for a failure's text (traceback, warning, stderr tail), or None if unknown.

    ``returncode`` is the worker's exit status when it died (negative: killed by that signal).
    ``source_checkout``: whether the working directory holds a PyTorch source tree (None: not
    known); torch's "Failed to load PyTorch C extensions" blames one, but a deleted or truncated
    ``torch/_C*.so`` in an installed torch says the same. ``cpu``: the machine's CPU (its ISA
    level and flags from /proc/cpuinfo; None: not known), which an illegal instruction is
    judged against before the CPU is blamed. ``numpy_version``: the NumPy that imports in
    that interpreter (None: none does), which makes torch's "Numpy is not available" an ABI
    mismatch rather than a missing NumPy.
    """
    t = text or ""
    if returncode == -4 or "Illegal instruction" in t:
        return _illegal_instruction(cpu)
    if (
        "can't start new thread" in t
        or "Thread creation failed" in t
        or re.search(r"pthread_create.*(Resource temporarily unavailable|EAGAIN)", t)
        or re.search(r"(\[Errno 11\]|fork: retry:?) Resource temporarily unavailable", t)
    ):
        return Diagnosis(
            "this machine refuses new threads or processes (the process/thread limit is "
            "reached: EAGAIN)",
            "raise the limit: `ulimit -u` (RLIMIT_NPROC; /etc/security/limits.conf), a "
            "container's pids limit (`docker run --pids-limit`, Kubernetes podPidsLimit, "
            "systemd TasksMax), or end stray processes (`ps -eLf | wc -l` counts threads); "
            "fewer threads per process with OMP_NUM_THREADS",
            "process-limit",
        )
    abi = _numpy_abi(t, torch_version, numpy_version)
    if abi is not None:
        return abi
    if "Numpy is not available" in t:
        return Diagnosis(
            "torch cannot reach NumPy (not installed in this environment)",
            "pip install numpy",
            "numpy-missing",
        )
    m = re.search(r"([\w.+\-]+\.so[.\d]*): cannot open shared object file", t)
    if m:
        lib = m.group(1)
        pkg = next((p for prefix, p in _LIB_PACKAGES if lib.startswith(prefix)), None)
        if pkg:
            return Diagnosis(
                f"{lib} cannot be loaded: the {pkg} wheel torch depends on is missing or not "
                "on the loader's path",
                f"pip install --force-reinstall {pkg}{_cuda_suffix(torch_version)} matching "
                "torch's requirements (`pip show torch` lists them), or reinstall torch with "
                "its dependencies; " + PLAN_FIX,
                "missing-library",
            )
        if lib.startswith(("libtorch", "libc10", "libshm")):
            return Diagnosis(
                f"{lib} is missing from the torch install itself (a broken or partial install)",
                "pip install --force-reinstall --no-cache-dir torch (same version and index)",
                "broken-install",
            )
        return Diagnosis(
            f"the system library {lib} is missing",
            f"install the OS package that provides {lib} (e.g. libgomp1 for libgomp.so.1)",
            "missing-system-library",
        )
    m = re.search(r"undefined symbol: (\S+?)(?:, version (\S+))?\s*$", t, re.MULTILINE)
    if m:
        sym, ver = m.group(1), m.group(2)
        where = f" (from {ver})" if ver else ""
        hint = ""
        if "nvJitLink" in sym or (ver or "").startswith("libnvJitLink"):
            hint = " an older libnvJitLink (often a system CUDA on LD_LIBRARY_PATH) is loaded"
        elif sym.startswith("nccl"):
            hint = " an older NCCL (a system one, or a second nvidia-nccl wheel) is loaded"
        return Diagnosis(
            f"undefined symbol {sym}{where}: a library torch loads is not the version it was "
            f"built against;{hint or ' another copy of a CUDA library is found first'}",
            "unset LD_LIBRARY_PATH (or remove system CUDA paths from it) so torch loads its own "
            "nvidia-* wheels; uninstall duplicate nvidia-*-cu12/-cu13 packages "
            "(`pip list | grep nvidia`)",
            "undefined-symbol",
        )
    m = re.search(r"version `(GLIBC(?:XX)?_[\d.]+)' not found", t)
    if m:
        return Diagnosis(
            f"the system C/C++ runtime is older than this build needs ({m.group(1)} not found)",
            "use a newer OS image (manylinux_2_28 wheels need glibc >= 2.28) or a conda "
            "environment that ships a newer libstdc++",
            "old-libc",
        )
    if "WinError 126" in t or "WinError 1114" in t or "DLL load failed" in t:
        return Diagnosis(
            "a DLL torch loads could not be loaded (missing Microsoft Visual C++ runtime, or a "
            "conflicting DLL earlier on PATH)",
            "install the latest Microsoft Visual C++ Redistributable (x64) "
            "(https://aka.ms/vs/17/release/vc_redist.x64.exe), then reinstall torch",
            "windows-dll",
        )
    if "Library not loaded" in t or "Symbol not found" in t:
        return Diagnosis(
            "a dynamic library torch loads is missing or incompatible (macOS)",
            "pip install --force-reinstall torch; " + PLAN_FIX,
            "macos-dylib",
        )
    if "Failed to load PyTorch C extensions" in t and source_checkout is False:
        return Diagnosis(
            "torch's compiled extension (torch/_C) is missing or cannot be loaded: a broken or "
            "partial install (the working directory is not a PyTorch source checkout)",
            "pip install --force-reinstall --no-cache-dir torch (same version and index)",
            "broken-install",
        )
    if "Failed to load PyTorch C extensions" in t:
        return Diagnosis(
            "the current directory is a PyTorch source checkout, whose torch/ folder shadows "
            "the installed one",
            "run from another directory",
            "source-tree",
        )
    if "partially initialized module 'torch'" in t:
        return Diagnosis(
            "a file or folder named torch shadows the installed torch",
            "rename the local torch.py / torch/ and delete its __pycache__",
            "shadowed",
        )
    if "no kernel image is available for execution on the device" in t or re.search(
        r"with CUDA capability sm_\d+ is not compatible with the current PyTorch", t
    ):
        return Diagnosis(
            "this torch build has no kernels for this GPU's architecture",
            "install a build whose arch list includes this GPU; " + PLAN_FIX,
            "arch-missing",
        )
    m = re.search(r"NVIDIA driver on your system is too old \(found version (\d+)\)", t)
    if m or "CUDA driver version is insufficient for CUDA runtime version" in t:
        found = ""
        if m:
            n = int(m.group(1))
            found = f" (it supports CUDA {n // 1000}.{n % 1000 // 10})"
        return Diagnosis(
            f"the NVIDIA driver is too old for this torch's CUDA{found}",
            "upgrade the NVIDIA driver, or install a torch built for an older CUDA; " + PLAN_FIX,
            "driver-too-old",
        )
    if "Found no NVIDIA driver" in t or "CUDA driver initialization failed" in t:
        return Diagnosis(
            "the NVIDIA driver is not loaded or not reachable (container without --gpus?)",
            "check `nvidia-smi`; in Docker run with `--gpus all` (NVIDIA Container Toolkit)",
            "no-driver",
        )
    if "out of memory" in t and "CUDA" in t:
        return Diagnosis(
            "the GPU ran out of memory (another process may hold it)",
            "free the GPU (`nvidia-smi` lists its processes) and run verify again",
            "oom",
        )
    if "InvalidCxxCompiler" in t or "No working C compiler found" in t:
        return Diagnosis(
            "torch.compile needs a C++ compiler and none works",
            "install a C++ compiler (e.g. `apt-get install g++`) or set CXX",
            "no-compiler",
        )
    if "Python.h: No such file" in t:
        return Diagnosis(
            "torch.compile needs the Python development headers",
            "install them (e.g. `apt-get install python3-dev`)",
            "no-python-headers",
        )
    if "Cannot find a working triton installation" in t:
        return Diagnosis(
            "torch.compile on the GPU needs Triton, which is missing or broken",
            "pip install the triton version torch requires (`pip show torch`)",
            "no-triton",
        )
    if returncode is not None and returncode < 0:
        sig = _SIGNALS.get(-returncode, f"signal {-returncode}")
        return Diagnosis(
            f"the process was killed by {sig}",
            "rerun with -v to see its output; a crash inside torch or the driver is a bug to "
            "report with `python -m torch.utils.collect_env`",
            "crashed",
        )
    return None


# NumPy's C ABI version: 0x1000009 for every NumPy 1.x since 1.0, 0x2000000 for 2.x (numpy's
# numpy/_core/code_generators/cversions.txt; the RuntimeError numpy/numpy#25865 shows).
_ABI_TEXT = re.compile(
    r"module compiled against ABI version 0x([0-9a-fA-F]+) "
    r"but this version of numpy is 0x([0-9a-fA-F]+)"
)
# The first torch built against NumPy 2 (pytorch/pytorch#107302: 2.3.0 validated with
# numpy 2.0.0rc1 and 1.26.4); builds before it need NumPy 1.x.
_TORCH_NUMPY2 = (2, 3)


def _numpy_fix(constraint: str) -> str:
    spec = f'"numpy{constraint}"' if constraint else "numpy"
    return (
        f"pip install --force-reinstall {spec}  (reinstall NumPy, not torch; or upgrade the "
        "module built for the other NumPy)"
    )


def _numpy_abi(text: str, torch_version: str | None, numpy_version: str | None) -> Diagnosis | None:
    """A NumPy whose C ABI is not the one a module (torch's NumPy bridge, or another) was
    built against: the cause, and the NumPy to reinstall."""
    have = f"NumPy {numpy_version}" if numpy_version else None
    m = _ABI_TEXT.search(text)
    if m:
        built, running = int(m.group(1), 16) >> 24, int(m.group(2), 16) >> 24
        if built != running:
            return Diagnosis(
                f"NumPy ABI mismatch: a module built against NumPy {built}.x is loaded with "
                f"{have or f'NumPy {running}.x'}",
                _numpy_fix("<2" if built < running else ">=2"),
                "numpy-abi",
            )
    if (
        "compiled using NumPy 1.x cannot be run in" in text
        or "_ARRAY_API not found" in text
        or "numpy.core.multiarray failed to import" in text
    ):
        return Diagnosis(
            f"NumPy ABI mismatch: a module built against NumPy 1.x is loaded with "
            f"{have or 'NumPy 2.x'}",
            _numpy_fix("<2"),
            "numpy-abi",
        )
    if "Numpy is not available" in text and numpy_version:
        # NumPy imports, yet torch's bridge to it did not initialise: the ABI torch was built
        # against is not this NumPy's.
        major = _leading_int(numpy_version)
        old_torch = _version_pair(torch_version) < _TORCH_NUMPY2
        return Diagnosis(
            f"{have} imports but torch cannot use it (Numpy is not available): the NumPy ABI "
            "is not the one this torch was built against",
            _numpy_fix("<2" if (major >= 2 and old_torch) else ""),
            "numpy-abi",
        )
    return None


def _leading_int(text: str) -> int:
    m = re.match(r"\d+", text or "")
    return int(m.group(0)) if m else 0


def _version_pair(text: str | None) -> tuple[int, int]:
    m = re.match(r"(\d+)\.(\d+)", text or "")
    return (int(m.group(1)), int(m.group(2))) if m else (99, 0)


def _illegal_instruction(cpu: CpuInfo | None) -> Diagnosis:
    """SIGILL: the CPU lacks what the build runs, or (when it has it) the build is at fault."""
    flags = set(cpu.flags) if cpu is not None else set()
    if cpu is None or not (cpu.isa_level or "").startswith("x86-64"):
        # Not an x86 CPU whose flags were read: no comparison to make.
        return Diagnosis(
            "illegal instruction inside torch: the CPU may lack an instruction set this build "
            "uses (not checked: no x86 CPU flags to compare)",
            "compare `grep -m1 flags /proc/cpuinfo` with the build (x86_64 wheels need "
            f"{', '.join(_isa(f) for f in X86_BASELINE)}); " + PLAN_FIX,
            "illegal-instruction",
        )
    missing = [f for f in X86_BASELINE if f not in flags]
    if missing:
        names = ", ".join(_isa(f) for f in missing)
        return Diagnosis(
            f"the CPU lacks {names}, which torch's x86_64 wheels run without checking "
            "(illegal instruction)",
            "run on a CPU with "
            + ", ".join(_isa(f) for f in X86_BASELINE)
            + " (a VM: expose the host CPU's flags, e.g. QEMU `-cpu host`), or build torch from "
            "source for this CPU",
            "cpu-lacks-isa",
        )
    has = [_isa(f) for f in (*X86_BASELINE, *_X86_SHOWN) if f in flags]
    return Diagnosis(
        f"illegal instruction inside torch although the CPU has {'/'.join(has)}: a build "
        "compiled for another CPU (a source or conda build with -march=native elsewhere, a "
        "library on LD_PRELOAD/LD_LIBRARY_PATH built for a newer CPU) or a corrupt install, "
        "not the CPU",
        "pip install --force-reinstall --no-cache-dir torch (the official wheel for this "
        "machine: " + PLAN_FIX + "); check LD_PRELOAD and LD_LIBRARY_PATH; "
        "ATEN_CPU_CAPABILITY=default narrows it to ATen's vector kernels if it then passes",
        "illegal-instruction-build",
    )


def last_line(text: str) -> str:
    """The line of a traceback that says what happened."""
    lines = [ln.strip() for ln in (text or "").strip().splitlines() if ln.strip()]
    for ln in reversed(lines):
        if re.match(r"^[\w.]*(Error|Exception|Warning)\b", ln) or ": " in ln:
            return ln[:300]
    return lines[-1][:300] if lines else ""


def decide_build(
    info: Mapping[str, Any], facts: Facts | None, same_interpreter: bool
) -> CheckResult:
    """The torch that imported vs what the facts (read without importing torch) say."""
    ev: dict[str, Any] = {
        k: info.get(k)
        for k in (
            "torch_version",
            "torch_file",
            "cuda",
            "hip",
            "xpu",
            "cudnn",
            "nccl",
            "mps_built",
            "debug",
        )
        if info.get(k) is not None
    }
    problems: list[tuple[Status, str, str | None]] = []
    version = str(info.get("torch_version") or "")
    build = (
        ("CUDA " + str(info["cuda"]))
        if info.get("cuda")
        else (
            ("ROCm " + str(info["hip"]))
            if info.get("hip")
            else ("XPU" if info.get("xpu") else "CPU")
        )
    )
    parts = [f"torch {version}", build]
    if info.get("cudnn"):
        parts.append(f"cuDNN {info['cudnn']}")
    if info.get("nccl"):
        parts.append(f"NCCL {info['nccl']}")
    if info.get("cudnn_error"):
        problems.append(
            (
                "fail",
                f"cuDNN: {info['cudnn_error']}",
                "unset LD_LIBRARY_PATH so torch loads the cuDNN it was built with",
            )
        )
    # The cuDNN / NCCL wheels on disk should be the libraries torch really loaded.
    for lib, key in (("cudnn", "cudnn_wheels"), ("nccl", "nccl_wheels")):
        loaded = str(info.get(lib) or "")
        wheels = info.get(key) or {}
        if loaded and isinstance(wheels, Mapping):
            for dist, wver in wheels.items():
                if not str(wver).startswith(loaded):
                    problems.append(
                        (
                            "warn",
                            f"{dist} {wver} is installed but torch loaded "
                            f"{lib} {loaded} (another copy is found first)",
                            "unset LD_LIBRARY_PATH or remove the other copy",
                        )
                    )
    if facts is not None and same_interpreter:
        pkg = facts.package("torch")
        if pkg is not None:
            ev["metadata_version"] = pkg.version
            if pkg.version and version and pkg.version != version:
                problems.append(
                    (
                        "fail",
                        f"the installed metadata says torch {pkg.version} but torch {version} "
                        f"imported (from {info.get('torch_file')}): another torch shadows it",
                        "remove the shadowing copy (user site, a local torch/ folder, a second "
                        "site-packages on PYTHONPATH)",
                    )
                )
            if pkg.cuda and info.get("cuda") and pkg.cuda != info.get("cuda"):
                problems.append(
                    (
                        "fail",
                        f"metadata says CUDA {pkg.cuda}, torch reports CUDA {info.get('cuda')}",
                        "reinstall torch",
                    )
                )
    status: Status = "pass"
    if any(p[0] == "fail" for p in problems):
        status = "fail"
    elif problems:
        status = "warn"
    msg = ", ".join(parts)
    if problems:
        msg += "; " + "; ".join(p[1] for p in problems)
    fix = next((p[2] for p in problems if p[2]), None)
    return result("build", status, msg, ev, fix)


def _facts_accelerators(facts: Facts | None) -> list[str]:
    """Kinds of accelerator the machine facts say exist: "cuda" (NVIDIA or AMD), "xpu", "mps"."""
    if facts is None:
        return []
    kinds = []
    if facts.nvidia is not None and facts.nvidia.gpus:
        kinds.append("cuda")
    if facts.rocm is not None and facts.rocm.gpus:
        kinds.append("rocm")
    if facts.xpu is not None and facts.xpu.gpus:
        kinds.append("xpu")
    if facts.apple is not None and facts.apple.mps_eligible:
        kinds.append("mps")
    return kinds


def decide_device(
    info: Mapping[str, Any], facts: Facts | None, requested: str | None
) -> CheckResult:
    """The chosen device is usable, and is the best the machine has."""
    devices = list(info.get("devices") or [])
    ev: dict[str, Any] = {"devices": devices, "names": info.get("device_names") or {}}
    if info.get("device_error"):
        diag = classify_error(
            str(info.get("device_error")), torch_version=info.get("torch_version")
        )
        fix = diag.fix if diag else PLAN_FIX
        msg = str(info["device_error"])
        if diag:
            msg += f" ({diag.cause})"
        return result("device", "fail", msg, ev, fix)
    if not devices:
        return result("device", "fail", "no usable device", ev, PLAN_FIX)
    chosen = devices[0]
    kind = chosen.split(":")[0]
    names = info.get("device_names") or {}
    label = ", ".join(f"{d} ({names.get(d)})" if names.get(d) else d for d in devices)
    have = _facts_accelerators(facts)
    if kind == "cpu" and have and requested in (None, "", "auto"):
        why = info.get("accelerator_unavailable") or ""
        build = info.get("cuda") or info.get("hip") or info.get("xpu")
        wanted = {
            "cuda": "NVIDIA GPU",
            "rocm": "AMD GPU",
            "xpu": "Intel GPU",
            "mps": "Apple GPU (MPS)",
        }[have[0]]
        if not build and have[0] != "mps":
            reason = f"torch {info.get('torch_version')} is a CPU-only build"
        else:
            reason = "torch cannot use it"
        if why:
            reason += f": {why}"
        diag = classify_error(why, torch_version=info.get("torch_version")) if why else None
        return result(
            "device",
            "fail",
            f"this machine has an {wanted} but verify runs on the CPU; {reason}",
            ev,
            diag.fix if diag else PLAN_FIX,
        )
    nvidia = facts.nvidia if facts is not None else None
    wedged = nvidia is not None and nvidia.error_code == "gpu-unexaminable"
    if kind == "cpu" and nvidia is not None and wedged and requested in (None, "", "auto"):
        # An NVIDIA GPU on the bus whose nvidia-smi does not answer: not a CPU machine.
        ev["nvidia_error"] = nvidia.error
        return result(
            "device",
            "fail",
            f"{nvidia.error}; verify ran on the CPU only",
            ev,
            "look for Xid errors in `sudo dmesg | grep -i xid`; reset the GPU (`sudo nvidia-smi "
            "-r -i <gpu>`) or reboot, then verify again",
        )
    note = ""
    if kind == "cpu" and (have or wedged):
        note = " (chosen with --device; this machine also has a GPU)"
    return result("device", "pass", f"running on {label}{note}", ev)


def decide_arch(
    info: Mapping[str, Any], facts: Facts | None, matrix: Matrix | None = None
) -> CheckResult:
    """The wheel's arch list covers every GPU; the driver runs the wheel's CUDA. The rules are
    :mod:`knowledge.cuda`'s; ``matrix`` (the wheel data) adds the driver minimums of the wheel's
    own toolkit, judged against the driver version in ``facts``."""
    from setup_env.decide.model import driver_os, wheel_platform

    cuda = info.get("cuda")
    hip = info.get("hip")
    arch_list = [str(a) for a in (info.get("arch_list") or [])]
    gpus: list[tuple[str, str]] = []  # (name, capability "9.0" or gfx arch)
    for g in info.get("gpus") or []:
        gpus.append((str(g.get("name")), str(g.get("capability") or g.get("gfx") or "")))
    if not gpus and facts is not None:  # torch could not see them: use the facts
        for fg in facts.gpus:
            if fg.vendor == "nvidia" and fg.compute_capability:
                gpus.append((fg.name, fg.compute_capability))
            elif fg.vendor == "amd" and fg.gfx_arch:
                gpus.append((fg.name, fg.gfx_arch))
    ev: dict[str, Any] = {"arch_list": arch_list, "gpus": [{"name": n, "arch": a} for n, a in gpus]}
    if not cuda and not hip:
        return result("arch", "skip", "not a CUDA or ROCm build", ev)
    if not gpus:
        return result("arch", "skip", "no GPU to check", ev)
    fails: list[str] = []
    warns: list[str] = []
    covered: list[str] = []
    ptx_only = False
    for name, arch in gpus:
        if hip:
            base = arch.split(":")[0]
            if arch_list and base not in arch_list:
                fails.append(f"{name} ({base}) is not in the wheel's {' '.join(arch_list)}")
            else:
                covered.append(f"{name} {base}")
            continue
        cap = parse_cc(arch)
        if cap is None:
            continue
        cov = coverage(cap, arch_list)
        label = f"{name} ({sm(cap)})"
        ev.setdefault("coverage", {})[label] = cov.how or "none"
        if cov.how is None:
            fails.append(f"{label} is not served by the wheel's {' '.join(arch_list) or '(empty)'}")
        elif cov.how == "ptx":
            ptx_only = True
            warns.append(f"{label} runs only through PTX JIT from {cov.by} (slow first start)")
        else:
            covered.append(f"{label} by {cov.by}")
    # Driver vs the wheel's CUDA (setup_env.knowledge.cuda.driver_fit).
    driver_cuda = info.get("driver_cuda")
    source = "libcuda"
    if not driver_cuda and facts is not None and facts.nvidia is not None:
        driver_cuda = facts.nvidia.cuda_driver_version
        source = "facts"
    ev["driver_cuda"] = driver_cuda
    ev["driver_cuda_source"] = source if driver_cuda else None
    fit = None
    if cuda and not hip:
        driver = facts.nvidia.driver_version if facts is not None and facts.nvidia else None
        build = None
        variant = Variant.cuda_of(str(cuda))
        if matrix is not None and facts is not None and variant is not None:
            torch_version = str(info.get("torch_version") or "")
            build = matrix.wheel_build(torch_version, variant, wheel_platform(facts))
        fit = driver_fit(
            driver,
            str(build.toolkit) if build is not None else str(cuda),
            driver_os(facts) if facts is not None else "linux",
            matrix.cuda if matrix is not None else {},
            driver_cuda=str(driver_cuda) if driver_cuda else None,
            needs_ptx=ptx_only,
        )
        ev["driver_fit"] = fit.code
        shown = driver_cuda if fit.judged_by == "cuda" else f"{driver} (CUDA {driver_cuda or '?'})"
        if fit.too_old:
            fails.append(
                f"the driver supports CUDA {driver_cuda}, older than the wheel's CUDA {cuda}"
                if fit.judged_by == "cuda"
                else f"driver {driver} is older than the wheel's CUDA {cuda} needs "
                f"({fit.why_not()})"
            )
        elif fit.compat == "mvc":
            warns.append(
                f"the driver {shown} is older than the wheel's CUDA {cuda} "
                f"(full support from {fit.toolkit_min or 'a newer driver'}): runs by "
                "minor-version compatibility, but PTX JIT and newer features need a newer "
                "driver"
            )
    parts = []
    if covered:
        parts.append("covered: " + ", ".join(covered))
    if fit is not None and fit.compat == "full" and not fails:
        parts.append(f"driver CUDA {driver_cuda} >= wheel CUDA {cuda}" if driver_cuda else "")
    msg = "; ".join(p for p in fails + warns + parts if p)
    if fails:
        return result(
            "arch",
            "fail",
            msg,
            ev,
            "upgrade the NVIDIA driver"
            if fit is not None and fit.too_old and len(fails) == 1
            else PLAN_FIX,
        )
    if warns:
        return result("arch", "warn", msg, ev, "upgrade the NVIDIA driver")
    return result("arch", "pass", msg or "covered", ev)
