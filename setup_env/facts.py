"""The picture of a machine: frozen dataclasses, serialisable to and from JSON.

Every section records where its values came from in ``sources`` (field name -> source such as
``nvml``, ``nvidia-smi``, ``/proc/driver/nvidia/version``, ``env:SETUP_ENV_...``). Absent is
``None``; present but garbled becomes a :class:`Note` in ``Facts.notes``, never an exception.

Nothing here touches the machine: probes (``setup_env.probe``) build these objects, deciders
(planner, doctor) read them.
"""

from __future__ import annotations

import json
import sys
import types
import typing
from collections.abc import Mapping
from typing import Any, Literal, Optional, TypeVar, Union

from setup_env._record import Record, field, fields, record, replace
from setup_env.knowledge.variant import Variant, VariantError

SCHEMA_VERSION = 1

Severity = Literal["info", "warning", "error"]


class FactsError(ValueError):
    """A facts document could not be read (wrong schema, wrong types)."""


@record
class Note(Record):
    """Something a probe noticed: garbled output, a failed tool, a GPU the driver can't reach."""

    code: str  # stable machine-readable id, e.g. "nvidia-smi-failed", "driver-library-mismatch"
    message: str
    source: str = ""
    severity: Severity = "warning"


@record
class OSInfo(Record):
    """The operating system: family, distribution, kernel, libc, WSL, container, VM."""

    family: Literal["linux", "darwin", "windows", "other"] = "other"
    distro_id: Optional[str] = None  # "ubuntu", "debian", "centos", "amzn"
    distro_name: Optional[str] = None  # "Ubuntu 22.04.4 LTS"
    distro_version: Optional[str] = None  # "22.04"
    kernel: Optional[str] = None  # "5.15.0-105-generic"
    libc: Optional[str] = None  # "glibc" | "musl"
    glibc: Optional[str] = None  # "2.35"
    macos_version: Optional[str] = None  # "14.4.1"
    windows_build: Optional[str] = None  # "10.0.22631"
    wsl: Optional[int] = None  # 1 or 2
    container: Optional[str] = None  # "docker" | "podman" | "kubernetes" | "lxc" | ...
    virtualization: Optional[str] = None  # "kvm", "xen", "hyperv", ...
    sources: Mapping[str, str] = field(default_factory=dict)

    @property
    def driver_os(self) -> str:
        """Whose NVIDIA driver numbering applies: Windows', also under WSL2 (the driver is the
        Windows host's; WSL1 has no GPU access, so it counts as Linux)."""
        return "windows" if self.family == "windows" or (self.wsl or 0) >= 2 else "linux"


@record
class PythonInfo(Record):
    """The interpreter setup-env runs in: version, build, machine, wheel tags."""

    version: str = ""  # "3.11.7"
    implementation: str = "cpython"
    free_threaded: bool = False
    machine: str = ""  # platform.machine() as the interpreter sees it: x86_64, arm64, AMD64
    is_64bit: bool = True
    executable: Optional[str] = None
    tags: tuple[str, ...] = ()  # most specific first, from packaging.tags.sys_tags()
    rosetta: Optional[bool] = None  # x86_64 Python translated by Rosetta 2 on an arm64 Mac
    sources: Mapping[str, str] = field(default_factory=dict)


@record
class CpuInfo(Record):
    """The CPU, memory and free disk of the machine."""

    model: Optional[str] = None
    vendor: Optional[str] = None
    architecture: Optional[str] = None  # the hardware's: x86_64, aarch64, arm64
    physical_cores: Optional[int] = None
    logical_cores: Optional[int] = None
    isa_level: Optional[str] = None  # "x86-64-v3", "x86-64-v4", "armv8.2-a"...
    flags: tuple[str, ...] = ()  # the ISA extensions that matter: avx2, avx512f, amx_tile, sve...
    ram_bytes: Optional[int] = None
    disk_path: Optional[str] = None
    disk_free_bytes: Optional[int] = None
    sources: Mapping[str, str] = field(default_factory=dict)


@record
class Gpu(Record):
    """One GPU as a probe saw it (NVIDIA, AMD, Intel or Apple)."""

    index: int
    name: str
    vendor: Literal["nvidia", "amd", "intel", "apple"] = "nvidia"
    compute_capability: Optional[str] = None  # NVIDIA: "9.0"
    gfx_arch: Optional[str] = None  # AMD: "gfx942"
    memory_bytes: Optional[int] = None
    pci_bus_id: Optional[str] = None
    uuid: Optional[str] = None  # redacted in captures
    mig_mode: Optional[bool] = None
    persistence_mode: Optional[bool] = None
    ecc_errors_uncorrected: Optional[int] = None
    pcie_gen_current: Optional[int] = None
    pcie_gen_max: Optional[int] = None
    pcie_width_current: Optional[int] = None
    pcie_width_max: Optional[int] = None
    throttle_reasons: tuple[str, ...] = ()
    source: str = ""


@record
class NvidiaInfo(Record):
    """The NVIDIA driver and its GPUs, or why the driver is unusable."""

    driver_version: Optional[str] = None  # "550.54.15"
    cuda_driver_version: Optional[str] = None  # highest CUDA the driver supports, "12.4"
    kernel_module: Optional[Literal["open", "proprietary"]] = None
    gpus: tuple[Gpu, ...] = ()
    error: Optional[str] = None  # the driver is there but unusable: "driver/library mismatch"...
    sources: Mapping[str, str] = field(default_factory=dict)
    # The user-space NVML library's version when it differs from the kernel module's (printed by
    # nvidia-smi after "Driver/library version mismatch": "580.178").
    library_version: Optional[str] = None
    # The code of ``error`` (deciders test this, never the prose): "driver-library-mismatch",
    # "driver-not-loaded", "no-devices", "no-permission" ... (setup_env.probe.nvidia).
    error_code: Optional[str] = field(default=None, metadata={"omit_if_none": True})


@record
class AppleInfo(Record):
    """An Apple silicon chip and whether MPS can run on it."""

    chip: Optional[str] = None  # "Apple M3 Pro"
    generation: Optional[int] = None  # 3 for M3
    variant: Optional[str] = None  # "Pro" | "Max" | "Ultra" | None
    gpu_cores: Optional[int] = None
    mps_eligible: bool = False  # arm64 hardware + macOS >= 12.3 (torch >= 2.12 needs macOS 14)
    sources: Mapping[str, str] = field(default_factory=dict)


@record
class RocmInfo(Record):
    """The ROCm runtime and its AMD GPUs."""

    version: Optional[str] = None  # "6.2.4"
    gpus: tuple[Gpu, ...] = ()
    driver_version: Optional[str] = None  # amdgpu/ROCk kernel module, "6.10.5"
    sources: Mapping[str, str] = field(default_factory=dict)


@record
class XpuInfo(Record):
    """Intel GPUs and their driver."""

    gpus: tuple[Gpu, ...] = ()
    driver_version: Optional[str] = None
    kernel_driver: Optional[str] = None  # the kernel driver bound to the GPU: "i915" | "xe"
    sources: Mapping[str, str] = field(default_factory=dict)


@record
class CudaToolkit(Record):
    """One CUDA toolkit found on the machine (nvcc, CUDA_HOME, /usr/local/cuda...)."""

    version: str  # "13.0"
    full_version: Optional[str] = None  # "13.0.88"
    path: Optional[str] = None  # "/usr/local/cuda-13.0"
    nvcc: Optional[str] = None
    cudnn_version: Optional[str] = None
    source: str = ""
    found_by: tuple[str, ...] = ()  # "nvcc on PATH", "env:CUDA_HOME", "/usr/local/cuda"...


@record
class InstalledPackage(Record):
    """torch / torchvision / torchaudio found on sys.path, read from metadata, never imported."""

    name: str
    version: str  # "2.13.0+cpu"
    location: Optional[str] = None
    variant: Optional[Variant] = None  # cpu | cu130 | rocm6.2 | xpu (local label or inferred)
    cuda: Optional[str] = None  # "13.0" from torch/version.py
    hip: Optional[str] = None
    xpu: Optional[bool] = None
    installer: Optional[str] = None  # pip | uv | conda (INSTALLER file)
    shadowed: bool = False  # another install of the same name comes first on sys.path
    source: str = ""
    variant_source: str = ""  # how the variant was known: "local version label", ...


@record
class CloudInfo(Record):
    """The cloud instance this runs on, and what its catalogue says it has."""

    provider: Optional[str] = None  # "aws" | "gcp" | "azure" | "oci" | ...
    instance_type: Optional[str] = None
    region: Optional[str] = None
    zone: Optional[str] = None
    image: Optional[str] = None  # image hint, e.g. "Deep Learning AMI"
    expected_gpus: Optional[int] = None  # what the catalogue says this instance type has
    expected_gpu_model: Optional[str] = None
    bare_metal: Optional[bool] = None  # AWS "*.metal*" / OCI "BM.*" instance types
    expected_host_arch: Optional[str] = None  # the catalogue's host CPU: x86_64 | aarch64
    fabric_manager: Optional[bool] = None  # an NVSwitch baseboard: NVIDIA Fabric Manager needed
    sources: Mapping[str, str] = field(default_factory=dict)


@record
class JetsonInfo(Record):
    """An NVIDIA Jetson (Tegra SoC with an integrated GPU): its driver comes with the L4T
    release, never separately; JetPack names the L4T + CUDA bundle (setup_env.probe.jetson)."""

    model: Optional[str] = None  # /proc/device-tree/model: "NVIDIA Jetson AGX Orin Developer Kit"
    module: Optional[str] = None  # the catalogue's GPU name: "Orin", "NVIDIA Thor"
    soc: Optional[str] = None  # from /proc/device-tree/compatible: "tegra234"
    l4t: Optional[str] = None  # "36.4.3" (/etc/nv_tegra_release or nvidia-l4t-core)
    l4t_core: Optional[str] = None  # the nvidia-l4t-core package version
    jetpack: Optional[str] = None  # "6.2", from the JetPack table (or --jetpack)
    cuda: Optional[str] = None  # "12.6" (/usr/local/cuda/version.json, else the JetPack table)
    compute_capability: Optional[str] = None  # the iGPU's: "8.7"
    sources: Mapping[str, str] = field(default_factory=dict)


# Fields written to JSON only when set (so documents of machines without them keep their shape).
_OMIT_NONE = {"omit_if_none": True}


@record
class Facts(Record):
    """Everything detection learned about one machine."""

    schema_version: int = SCHEMA_VERSION
    os: OSInfo = field(default_factory=OSInfo)
    python: PythonInfo = field(default_factory=PythonInfo)
    cpu: CpuInfo = field(default_factory=CpuInfo)
    nvidia: Optional[NvidiaInfo] = None  # None: no NVIDIA driver or GPU seen at all
    apple: Optional[AppleInfo] = None
    rocm: Optional[RocmInfo] = None
    xpu: Optional[XpuInfo] = None
    toolkits: tuple[CudaToolkit, ...] = ()
    packages: tuple[InstalledPackage, ...] = ()
    cloud: Optional[CloudInfo] = None
    # Environment variables that change what torch sees or loads (CUDA_VISIBLE_DEVICES,
    # LD_LIBRARY_PATH, CUDA_HOME, PYTORCH_*, HIP_VISIBLE_DEVICES, ...), as found.
    environment: Mapping[str, str] = field(default_factory=dict)
    notes: tuple[Note, ...] = ()
    jetson: Optional[JetsonInfo] = field(default=None, metadata=_OMIT_NONE)

    # Convenience views for deciders.
    @property
    def gpus(self) -> tuple[Gpu, ...]:
        out: list[Gpu] = []
        for part in (self.nvidia, self.rocm, self.xpu):
            if part is not None:
                out.extend(part.gpus)
        return tuple(out)

    def package(self, name: str) -> InstalledPackage | None:
        """The installed package that wins on sys.path (not shadowed), if any."""
        for pkg in self.packages:
            if pkg.name == name and not pkg.shadowed:
                return pkg
        return None

    def to_dict(self) -> dict[str, Any]:
        return to_jsonable(self)  # type: ignore[no-any-return]

    def to_json(self, indent: Optional[int] = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent, sort_keys=False)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Facts:
        if not isinstance(data, Mapping):
            raise FactsError("a facts document must be a JSON object")
        version = data.get("schema_version")
        if version != SCHEMA_VERSION:
            raise FactsError(
                f"facts schema_version {version!r} is not supported (this setup-env reads "
                f"{SCHEMA_VERSION})"
            )
        facts: Facts = from_jsonable(cls, data, "facts")
        return facts

    @classmethod
    def from_json(cls, text: str | bytes) -> Facts:
        """A facts document (bytes: UTF-8, or UTF-16 / UTF-8 with a BOM) -> Facts; every
        problem, from bad JSON to a wrong type deep inside, is a FactsError."""
        from setup_env.bounded import InputError, parse_json

        try:
            data = parse_json(text, "the document")
        except InputError as exc:
            raise FactsError(str(exc)) from None
        # Accept the CLI's envelope ({"schema": ..., "facts": {...}}) as well as bare facts.
        if isinstance(data, dict) and "facts" in data and isinstance(data["facts"], dict):
            data = data["facts"]
        return cls.from_dict(data)


# --- generic (de)serialisation -------------------------------------------------------------

T = TypeVar("T")


def to_jsonable(obj: Any) -> Any:
    """Dataclasses -> dicts (declared field order), tuples -> lists, mappings -> dicts, a
    :class:`Variant` -> its label."""
    if isinstance(obj, Variant):
        return obj.label
    fs = _fields_of(obj)
    if fs is not None:
        return {
            f.name: to_jsonable(getattr(obj, f.name))
            for f in fs
            if not (f.metadata.get("omit_if_none") and getattr(obj, f.name) is None)
        }
    if isinstance(obj, Mapping):
        return {str(k): to_jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [to_jsonable(v) for v in obj]
    return obj


_HINTS: dict[type, dict[str, Any]] = {}


def _hints(cls: type) -> dict[str, Any]:
    if cls not in _HINTS:
        _HINTS[cls] = typing.get_type_hints(cls, vars(sys.modules[cls.__module__]))
    return _HINTS[cls]


def from_jsonable(tp: Any, value: Any, where: str) -> Any:
    """Rebuild ``tp`` from JSON data, checking types; raises FactsError naming the bad path."""
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if tp is Any:
        return value
    if tp is Variant:
        if not isinstance(value, str):
            raise FactsError(f"{where}: expected a variant label, got {type(value).__name__}")
        try:
            return Variant.parse(value)
        except VariantError as exc:
            raise FactsError(f"{where}: {exc}") from exc
    if origin is Union or (sys.version_info >= (3, 10) and origin is types.UnionType):
        if value is None and type(None) in args:
            return None
        errors = []
        for arm in args:
            if arm is type(None):
                continue
            try:
                return from_jsonable(arm, value, where)
            except FactsError as exc:
                errors.append(str(exc))
        raise FactsError(errors[0] if errors else f"{where}: unexpected null")
    if origin is Literal:
        if value not in args:
            raise FactsError(f"{where}: {value!r} is not one of {list(args)}")
        return value
    tp_fields = _fields_of(tp) if isinstance(tp, type) else None
    if tp_fields is not None:
        if not isinstance(value, Mapping):
            raise FactsError(f"{where}: expected an object")
        hints = _hints(tp)
        kwargs = {}
        names = {f.name for f in tp_fields if f.init}
        for key, item in value.items():
            if key in names:
                kwargs[key] = from_jsonable(hints[key], item, f"{where}.{key}")
            # Unknown keys are ignored: a newer minor writer may add fields.
        try:
            return tp(**kwargs)
        except (TypeError, ValueError) as exc:
            raise FactsError(f"{where}: {exc}") from exc
    if origin in (tuple, list):
        if not isinstance(value, list):
            raise FactsError(f"{where}: expected a list")
        inner = args[0] if args else Any
        items = [from_jsonable(inner, v, f"{where}[{i}]") for i, v in enumerate(value)]
        return tuple(items) if origin is tuple else items
    if origin in (Mapping, dict) or tp in (dict, Mapping):
        if not isinstance(value, Mapping):
            raise FactsError(f"{where}: expected an object")
        vt = args[1] if len(args) == 2 else Any
        return {str(k): from_jsonable(vt, v, f"{where}.{k}") for k, v in value.items()}
    if tp is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if tp in (int, float) and isinstance(value, bool):
        raise FactsError(f"{where}: expected {tp.__name__}, got a boolean")
    if isinstance(tp, type) and not isinstance(value, tp):
        raise FactsError(f"{where}: expected {tp.__name__}, got {type(value).__name__}")
    if isinstance(value, str):
        # A facts file is input: a newline in a GPU name must not print as a line of its own
        # (a spoofed `$ curl ... | sh` beside the real command). Shown escaped instead.
        return printable(value)
    return value


def printable(value: T) -> T:
    """``value`` with every string in it one printable line (control characters shown escaped,
    as a facts file's are on load): what a probe read from the machine (an nvidia-smi name, a
    replayed host.json) is text that gets printed beside commands. Unchanged objects are returned
    as they are (the common case costs a walk, no copies)."""
    if isinstance(value, str):
        if value.isprintable():
            return value
        from setup_env.bounded import one_line

        return one_line(value, limit=len(value) * 6)  # type: ignore[return-value]
    if isinstance(value, tuple):
        items = tuple(printable(v) for v in value)
        return value if all(a is b for a, b in zip(items, value)) else items  # type: ignore[return-value]
    if isinstance(value, Mapping):
        pairs = {printable(k): printable(v) for k, v in value.items()}
        same = all(k in value and value[k] is v for k, v in pairs.items())
        return value if same else pairs  # type: ignore[return-value]
    fs = None if isinstance(value, type) else _fields_of(value)
    if fs is not None:
        changes = {}
        for f in fs:
            old = getattr(value, f.name)
            new = printable(old)
            if new is not old:
                changes[f.name] = new
        if not changes:
            return value
        if isinstance(value, Record):
            return replace(value, **changes)
        import dataclasses

        return dataclasses.replace(value, **changes)  # type: ignore[type-var]
    return value


def _fields_of(obj: Any) -> Any:
    """The fields of a record or dataclass (instance or class), else None. A record's come
    from :mod:`setup_env._record` (no ``dataclasses`` import on the start-up path)."""
    cls = obj if isinstance(obj, type) else type(obj)
    if issubclass(cls, Record):
        return fields(cls)
    if hasattr(cls, "__dataclass_fields__"):
        import dataclasses

        return dataclasses.fields(cls)  # type: ignore[arg-type]
    return None
