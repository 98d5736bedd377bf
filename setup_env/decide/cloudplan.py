"""Planning for a cloud instance: the facts of an instance type, and the advice that goes with it.

Contract used by `setup-env plan` and `setup-env check`:
- ``add_plan_arguments(parser)`` adds --cloud, --instance-type, --image, --cloud-metadata to `plan`;
- ``apply(args, facts) -> (facts, CloudAdvice | None)``: with --cloud/--instance-type, returns the
  facts of that instance type (what-if); without, advice for the detected cloud (facts.cloud), or
  None. Bad input (unknown cloud, instance type or image) raises :class:`CloudPlanError`, whose
  message lists the close matches: the command prints it and exits 2.
- ``gpu_visibility(facts) -> str | None``: a finding when fewer GPUs are visible than the instance
  type has (a p4d.24xlarge showing 7 of its 8 A100s).
- ``CloudAdvice.plan_lines(plan)``: the lines that need the plan (the driver the wheel needs).

Pure: nothing here reads the machine; the instance data comes from ``cloud_catalog``.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Optional

from setup_env._record import Record, record
from setup_env.facts import (
    CloudInfo,
    CpuInfo,
    Facts,
    Gpu,
    NvidiaInfo,
    OSInfo,
    PythonInfo,
    RocmInfo,
)
from setup_env.knowledge import tags as wheel_tags
from setup_env.knowledge.variant import CPU

if TYPE_CHECKING:
    from setup_env.decide.model import Plan
    from setup_env.knowledge.cloud_catalog import Catalog, Image, Instance

DEFAULT_IMAGE = "ubuntu-24.04"
# Kernel-module flavour and last driver branch by GPU generation: the driver windows of the GPU
# knowledge base (setup_env/data/gpus.json "driver_windows", each with its source).
UBUNTU_SERVER_BRANCH = "580"  # ubuntu-drivers' current server branch (535-server -> 580) [S35]


class CloudPlanError(ValueError):
    """Bad --cloud/--instance-type/--image input; the message is one line for the user."""


@record
class CloudAdvice(Record):
    """What a cloud instance type needs before torch works on it: GPU, driver route, image."""

    provider: str
    instance_type: str | None = None
    lines: tuple[str, ...] = ()  # human sentences: the GPU, the driver route, fabric manager...
    gpu: Optional[str] = None  # "NVIDIA A10G"
    gpu_count: Optional[int] = None
    host_arch: Optional[str] = None
    image: Optional[str] = None  # catalogue image key the advice assumes
    image_assumed: bool = False  # no --image given: DEFAULT_IMAGE was assumed
    driver_route: Optional[str] = None  # "dlami" | "dlvm" | "azure-extension" | "ubuntu-drivers"
    # | "nvidia-repo" | "image" | "grid" | "rocm" | "none"
    kernel_modules: Optional[str] = None  # "open" | "proprietary"
    fabric_manager: bool = False
    image_driver_branch: Optional[str] = None  # the driver branch the image ships: "595"

    def plan_lines(self, plan: Plan) -> tuple[str, ...]:
        """Lines that depend on the chosen wheel: the driver it needs, a CPU fallback."""
        out: list[str] = []
        variant = plan.variant
        if plan.min_driver and variant is not None and variant.is_cuda:
            what = f"torch {plan.torch_version} ({variant})" if plan.torch_version else str(variant)
            line = f"{what} needs NVIDIA driver >= {plan.min_driver}"
            branch = self.image_driver_branch
            if branch and _major(plan.min_driver) > int(branch):
                line += f"; the image's R{branch} driver is older: upgrade it first"
            elif branch:
                line += f"; the image's R{branch} driver is new enough"
            out.append(line)
            wanted = _major(plan.min_driver)
            if (
                self.driver_route == "ubuntu-drivers"
                or any("ubuntu-drivers" in x for x in self.lines)
            ) and wanted > int(UBUNTU_SERVER_BRANCH):
                # The route above names the current server branch; say what it means for this
                # wheel instead of leaving two driver numbers side by side.
                out.append(
                    f"ubuntu-drivers' {UBUNTU_SERVER_BRANCH}-server branch runs this wheel only "
                    f"through CUDA minor-version compatibility; for the full minimum install "
                    f"branch {wanted} or newer where offered (`ubuntu-drivers list --gpgpu`)"
                )
        if variant == CPU and self.gpu and self.gpu_count:
            out.append(
                f"the plan is the CPU wheel: no PyTorch GPU build fits {self.gpu} on "
                f"{self.host_arch or 'this host'} with these constraints"
            )
        return tuple(out)

    def to_dict(self) -> dict[str, Any]:
        from setup_env.facts import to_jsonable

        return to_jsonable(self)  # type: ignore[no-any-return]


def fit_plan(plan: Plan, advice: CloudAdvice | None) -> Plan:
    """The plan as it applies on this instance: on a GRID (vGPU / SR-IOV) instance the driver is
    the provider's GRID build, so a fix that installs the data-centre driver (which finds no GPU
    there) becomes the GRID step, without the data-centre command."""
    if advice is None or advice.driver_route != "grid" or not plan.fixes:
        return plan
    import re

    from setup_env._record import replace

    who = {"aws": "AWS", "azure": "Azure", "gcp": "Google"}.get(advice.provider, advice.provider)
    fixes = []
    for fx in plan.fixes:
        if fx.kind == "upgrade-driver":
            need = re.search(r">= ([0-9.]+)", fx.summary)
            fx = replace(
                fx,
                summary=f"Install NVIDIA's GRID (vGPU) driver as {who} distributes it for "
                f"{advice.instance_type or 'this instance'} (see the cloud advice), not the "
                "data-centre driver, which finds no GPU here"
                + (f"; the wheel needs >= {need.group(1)}" if need else ""),
                command=None,
            )
        fixes.append(fx)
    return replace(plan, fixes=tuple(fixes))


def _major(version: str) -> int:
    try:
        return int(version.split(".")[0])
    except ValueError:
        return 0


# --- CLI seam -----------------------------------------------------------------------------


def add_plan_arguments(parser: argparse.ArgumentParser) -> None:
    """Cheap: no catalogue load here (the parser is built on every run)."""
    group = parser.add_argument_group("cloud instance (plan for a machine that need not exist)")
    group.add_argument(
        "--cloud",
        metavar="PROVIDER",
        help="cloud provider: aws, gcp, azure, oci, lambda (see the catalogue)",
    )
    group.add_argument(
        "--instance-type", metavar="TYPE", help="instance type, e.g. g5.xlarge, a3-highgpu-8g"
    )
    group.add_argument(
        "--image",
        metavar="IMAGE",
        help=f"OS image of the instance, e.g. ubuntu-22.04, dlami-ubuntu-24.04 "
        f"(default {DEFAULT_IMAGE})",
    )
    group.add_argument(
        "--cloud-metadata",
        action="store_const",
        const=True,
        default=None,
        help="ask the cloud's metadata service even when DMI names no cloud",
    )


def apply(args: argparse.Namespace, facts: Facts) -> tuple[Facts, CloudAdvice | None]:
    provider = _arg(args, "cloud")
    itype = _arg(args, "instance_type")
    image_key = _arg(args, "image")
    if provider is None and itype is None:
        if image_key is not None:
            raise CloudPlanError("--image needs --instance-type (and --cloud)")
        if facts.cloud is not None and facts.cloud.provider:
            return with_expected_gpus(facts, advice_for_detected(facts))
        return facts, None
    from setup_env.knowledge import cloud_catalog

    catalog = cloud_catalog.load()
    inst = _attached(catalog, provider, itype, getattr(args, "gpu", None) or ())
    if inst is None:
        inst = resolve_instance(catalog, provider, itype)
    image = resolve_image(catalog, image_key)
    python_version = _arg(args, "python")
    new_facts = instance_facts(facts, inst, image, python_version)
    return new_facts, advise(inst, image, assumed=image_key is None)


def _attached(
    catalog: Catalog, provider: str | None, itype: str | None, gpu_args: Sequence[str]
) -> Instance | None:
    """``--instance-type n1-standard-8 --gpu "Tesla T4"``: a machine type that takes attached GPUs
    (GCP N1), with the GPUs named (repeat --gpu for more than one)."""
    if itype is None:
        return None
    fam = catalog.attachable_family(provider, itype)
    if fam is None:
        if gpu_args:
            raise CloudPlanError(
                f"--gpu with --instance-type {itype}: its GPUs come with the instance type; "
                f"--gpu is for machine types that take attached GPUs (GCP n1-*)"
            )
        return None
    names = ", ".join(catalog.gpus[k].name for k in fam.gpus)
    if not gpu_args:
        raise CloudPlanError(
            f"{fam.provider} {itype} has no GPU of its own: name the attached one with --gpu "
            f"(one of {names}; repeat --gpu for 2 or 4)"
        )
    keys: list[str] = []
    for name in gpu_args:
        key = next((k for k in fam.gpus if _same_model(catalog.gpus[k].name, name)), None)
        if key is None:
            shown = name if len(name) <= 60 else name[:57] + "..."
            raise CloudPlanError(f"--gpu {shown!r}: {fam.provider} {fam.family} takes {names}")
        keys.append(key)
    if len(set(keys)) > 1:
        raise CloudPlanError("--gpu: the GPUs attached to one VM are all of one model")
    try:
        return catalog.attach(fam, itype, keys[0], len(keys))
    except ValueError as exc:
        raise CloudPlanError(f"--instance-type {itype}: {exc}") from exc


def _same_model(catalog_name: str, name: str) -> bool:
    """ "Tesla T4" / "T4" / "nvidia-tesla-t4" name the catalogue's "Tesla T4"; "V100" names the
    one V100 a family takes (a generic match of the same compute capability)."""
    from setup_env.knowledge import gpus

    a = gpus.lookup(catalog_name)
    b = gpus.lookup(name.replace("nvidia-tesla-", "").replace("nvidia-", ""))
    if a is None or b is None:
        return False
    if a.key == b.key:
        return True
    return b.match != "exact" and b.compute_capability == a.compute_capability


def _arg(args: argparse.Namespace, name: str) -> str | None:
    value = getattr(args, name, None)
    if value is None:
        return None
    value = str(value).strip()
    return value or None


def resolve_instance(catalog: Catalog, provider: str | None, itype: str | None) -> Instance:
    if provider is not None and provider.lower() not in catalog.providers:
        raise CloudPlanError(
            f"unknown cloud {provider!r}: choose one of {', '.join(catalog.providers)}"
        )
    if itype is None:
        raise CloudPlanError(
            f"--cloud {provider} needs --instance-type (e.g. {_example(catalog, provider)})"
        )
    if provider is not None:
        inst = catalog.lookup(provider, itype)
        if inst is not None:
            return inst
    else:
        found = catalog.find(itype)
        if len(found) == 1:
            return found[0]
        if len(found) > 1:
            clouds = ", ".join(i.provider for i in found)
            raise CloudPlanError(f"{itype} exists on several clouds ({clouds}): add --cloud")
    close = catalog.close_matches(provider, itype)
    where = f"{provider} " if provider else ""
    hint = f"; did you mean {', '.join(close)}?" if close else ""
    raise CloudPlanError(
        f"{where}instance type {itype!r} is not in the GPU instance catalogue{hint}"
    )


def _example(catalog: Catalog, provider: str | None) -> str:
    for inst in catalog.instances:
        if provider is None or inst.provider == provider.lower():
            return inst.instance_type
    return "g5.xlarge"


def resolve_image(catalog: Catalog, key: str | None) -> Image:
    key = (key or DEFAULT_IMAGE).lower()
    image = catalog.images.get(key)
    if image is None:
        raise CloudPlanError(
            f"unknown image {key!r}: choose one of {', '.join(sorted(catalog.images))}"
        )
    return image


# --- the facts of an instance ----------------------------------------------------------------


def catalogue_gpus(inst: Instance) -> tuple[Gpu, ...]:
    """The GPUs the catalogue says an instance of this type has, as the detector would list them."""
    src = f"cloud_catalog:{inst.provider}/{inst.instance_type}"
    mem = int(inst.gpu.memory_gb * 1024**3) if inst.gpu.memory_gb else None
    return tuple(
        Gpu(
            index=i,
            name=inst.gpu.name,
            vendor="amd" if inst.gpu.vendor == "amd" else "nvidia",
            compute_capability=inst.gpu.compute_capability,
            gfx_arch=inst.gpu.gfx_arch,
            memory_bytes=mem,
            source=src,
        )
        for i in range(inst.gpu_count)
    )


def with_expected_gpus(
    facts: Facts, advice: CloudAdvice | None
) -> tuple[Facts, CloudAdvice | None]:
    """On a detected GPU instance where no GPU is visible yet (no driver: the usual state right
    after launch), the facts to plan with: these facts plus the GPUs the instance type has. The
    plan then names the GPU build and the driver it needs instead of a CPU wheel."""
    cloud = facts.cloud
    if advice is None or cloud is None or not cloud.provider or not cloud.instance_type:
        return facts, advice
    if facts.gpus:
        return facts, advice
    from setup_env._record import replace
    from setup_env.knowledge import cloud_catalog

    try:
        inst = cloud_catalog.load().lookup(cloud.provider, cloud.instance_type)
    except cloud_catalog.CatalogError:
        return facts, advice
    if inst is None or inst.gpu_count < 1:
        return facts, advice
    gpus = catalogue_gpus(inst)
    src = gpus[0].source
    if inst.gpu.vendor == "nvidia":
        base = facts.nvidia or NvidiaInfo()
        facts = replace(
            facts, nvidia=replace(base, gpus=gpus, sources={**base.sources, "gpus": src})
        )
    else:
        rocm = facts.rocm or RocmInfo()
        facts = replace(facts, rocm=replace(rocm, gpus=gpus, sources={**rocm.sources, "gpus": src}))
    line = (
        f"planned for the {inst.gpu_count} x {inst.gpu.name} a {inst.instance_type} has: "
        "not visible yet, so the driver comes first"
    )
    return facts, replace(advice, lines=(*advice.lines, line))


def instance_facts(
    facts: Facts, inst: Instance, image: Image, python_version: str | None = None
) -> Facts:
    """A fresh instance of that type, as the detector would see it after boot."""
    src = f"cloud_catalog:{inst.provider}/{inst.instance_type}"
    img_src = f"image:{image.key}"
    version = python_version or facts.python.version or "3.12"
    free = facts.python.free_threaded and python_version is None

    plats = wheel_tags.platform_tags("linux", inst.host_arch, libc_version=image.glibc)
    tags = tuple(wheel_tags.cpython_tags(version, plats, free_threaded=free))
    python = PythonInfo(
        version=version,
        implementation="cpython",
        free_threaded=free,
        machine=inst.host_arch,
        is_64bit=True,
        tags=tags,
        sources={
            "version": "--python" if python_version else "local interpreter",
            "machine": src,
            "tags": f"{src} + {img_src}",
        },
    )
    os_info = OSInfo(
        family="linux",
        distro_id=image.distro_id,
        distro_name=image.description,
        distro_version=image.version,
        libc="glibc",
        glibc=image.glibc,
        sources={k: img_src for k in ("distro_id", "distro_version", "glibc")},
    )
    cpu = CpuInfo(architecture=inst.host_arch, sources={"architecture": src})
    gpus = catalogue_gpus(inst)
    nvidia = rocm = None
    if inst.gpu.vendor == "nvidia":
        nvidia = NvidiaInfo(
            driver_version=None,  # a fresh instance: no driver, or the image's (branch only)
            cuda_driver_version=image.cuda_driver_version,
            kernel_module=None,
            gpus=gpus,
            sources={"gpus": src, "cuda_driver_version": img_src},
        )
    else:
        rocm = RocmInfo(version=None, gpus=gpus, sources={"gpus": src})
    cloud = CloudInfo(
        provider=inst.provider,
        instance_type=inst.instance_type,
        image=image.description,
        expected_gpus=inst.gpu_count,
        expected_gpu_model=inst.gpu.name,
        bare_metal=".metal" in inst.instance_type or inst.instance_type.startswith("BM."),
        expected_host_arch=inst.host_arch,
        fabric_manager=inst.fabric_manager,
        sources={"provider": "--cloud", "instance_type": "--instance-type", "image": img_src},
    )
    return Facts(
        os=os_info,
        python=python,
        cpu=cpu,
        nvidia=nvidia,
        rocm=rocm,
        cloud=cloud,
        notes=(),
    )


# --- advice ----------------------------------------------------------------------------------


def _window(gpu: Any) -> Any:
    from setup_env.knowledge import gpus

    cc = getattr(gpu, "compute_capability", None)
    win = gpus.driver_window(cc) if cc else None
    return win or gpus.driver_window_for_arch(str(getattr(gpu, "architecture", "")))


def kernel_modules(architecture: str, cc: str | None = None) -> str:
    """ "proprietary" (pre-Turing) or "open" (supported from Turing, required for Blackwell)."""
    from setup_env.knowledge import gpus

    win = (gpus.driver_window(cc) if cc else None) or gpus.driver_window_for_arch(architecture)
    return "proprietary" if win is not None and win.kernel_modules == "proprietary" else "open"


def advise(inst: Instance, image: Image, assumed: bool = False) -> CloudAdvice:
    gpu = inst.gpu
    lines: list[str] = []
    count = f"{inst.gpu_count} x " if inst.gpu_count > 1 else ""
    share = f" (a {inst.gpu_fraction} vGPU slice)" if inst.gpu_fraction else ""
    detail = (
        f"compute capability {gpu.compute_capability}"
        if gpu.compute_capability
        else (gpu.gfx_arch or gpu.architecture)
    )
    mem = f", {gpu.memory_gb:g} GB each" if gpu.memory_gb else ""
    lines.append(
        f"{inst.provider} {inst.instance_type}: {count}{gpu.name}{share} ({detail}{mem}); "
        f"host CPU {inst.host_arch}"
    )
    if assumed:
        lines.append(f"image: {image.description} assumed (pass --image to choose)")
    route, route_lines = _driver_route(inst, image)
    lines.extend(route_lines)
    modules: str | None = None
    if gpu.vendor == "nvidia" and route not in ("grid", "none"):
        modules = kernel_modules(gpu.architecture, gpu.compute_capability)
        win = _window(gpu)
        if modules == "proprietary":
            last = f"R{win.last_branch}" if win is not None and win.last_branch else "R580"
            lines.append(
                f"kernel modules: proprietary ({gpu.architecture} is not supported by the open "
                f"modules); stay on driver branch {last} or older, the last for "
                f"{gpu.architecture} GPUs"
            )
        elif win is not None and win.kernel_modules == "open":
            lines.append(f"kernel modules: open (required for {gpu.architecture})")
        else:
            lines.append(
                f"kernel modules: open (recommended from Turing on; {gpu.architecture} "
                f"works with both)"
            )
    if inst.fabric_manager and route == "image" and inst.provider == "aws":
        lines.append(
            "NVSwitch system: the image runs NVIDIA Fabric Manager; if CUDA finds no GPU, check "
            "`systemctl status nvidia-fabricmanager`"
        )
    elif inst.fabric_manager:
        lines.append(
            "NVSwitch system: install NVIDIA Fabric Manager of exactly the driver's version "
            "(package nvidia-fabricmanager-<branch>) and `sudo systemctl enable --now "
            "nvidia-fabricmanager`; without it CUDA finds no usable GPU "
            "('system not yet initialized')"
        )
    if inst.note and not inst.note.startswith("Xen-based"):  # that one is for detection
        lines.append(f"note: {inst.note}")
    from setup_env.knowledge.cuda import parse_cc, sm

    cc = parse_cc(gpu.compute_capability) or (0, 0)
    if gpu.vendor == "nvidia" and inst.host_arch == "aarch64" and cc < (8, 0):
        # VERIFIED.md section 3: aarch64 CUDA wheels of 2.14/2.15 carry sm_80 and newer only.
        lines.append(
            f"{gpu.name} is {sm(cc)} on an aarch64 "
            f"host: PyTorch's aarch64 CUDA wheels start at sm_80, so none runs on it; use the "
            f"CPU wheel or build PyTorch from source with TORCH_CUDA_ARCH_LIST="
            f"{gpu.compute_capability}"
        )
    if gpu.vendor == "nvidia" and gpu.architecture in ("Maxwell", "Pascal", "Volta"):
        lines.append(
            f"{gpu.name} ({gpu.compute_capability}) is not in the CUDA 12.8+/13 wheels: only "
            f"cu126 builds (torch 2.14 and older) still carry {sm(cc)}"
        )
    if gpu.vendor == "nvidia" and gpu.architecture == "Kepler":
        lines.append(f"{gpu.name} (sm_37) is not supported by any current PyTorch CUDA wheel")
    return CloudAdvice(
        provider=inst.provider,
        instance_type=inst.instance_type,
        lines=tuple(lines),
        gpu=gpu.name,
        gpu_count=inst.gpu_count,
        host_arch=inst.host_arch,
        image=image.key,
        image_assumed=assumed,
        driver_route=route,
        kernel_modules=modules,
        fabric_manager=inst.fabric_manager,
        image_driver_branch=image.driver_branch,
    )


def _driver_route(inst: Instance, image: Image) -> tuple[str, list[str]]:
    gpu = inst.gpu
    arch_dir = "arm64" if inst.host_arch == "aarch64" else "x86_64"
    ubuntu = image.distro_id == "ubuntu"
    win = _window(gpu)
    pre_turing = win is not None and win.kernel_modules == "proprietary"
    last = str(win.last_branch) if win is not None and win.last_branch else "580"
    ubuntu_cmd = f"sudo ubuntu-drivers install --gpgpu nvidia:{UBUNTU_SERVER_BRANCH}-server"
    ubuntu_line = (
        f"driver: `{ubuntu_cmd}` (Canonical's signed modules for the cloud kernel; Secure Boot "
        f"works), then reboot"
    )
    repo_line = (
        "driver: NVIDIA's CUDA repository for this distribution "
        f"({'open' if not pre_turing else 'proprietary, branch ' + last} kernel modules"
        f"{'; arm64 servers use the sbsa repository' if inst.host_arch == 'aarch64' else ''})"
    )
    if gpu.vendor == "amd":
        if inst.driver == "amd-graphics":
            return "none", [
                f"driver: AMD's graphics driver; no PyTorch GPU build supports {gpu.name}: "
                f"the CPU wheel is the honest answer"
            ]
        return "rocm", [
            f"driver: AMD's amdgpu kernel driver with ROCm (AMD's repository); PyTorch's ROCm "
            f"wheels support {gpu.name} ({gpu.gfx_arch})"
        ]
    if inst.driver == "grid" and inst.provider == "aws":
        return "grid", [
            "driver: NVIDIA GRID (vGPU) only, as AWS distributes it (the ec2-linux-nvidia-drivers "
            "S3 bucket, 'GRID drivers for G6f/Gr6f' in AWS's driver guide); the datacenter CUDA "
            "driver finds no GPU on a fractional slice"
        ]
    if inst.driver == "grid":
        return "grid", [
            "driver: NVIDIA GRID (vGPU) only, as Azure redistributes it ('Install GRID drivers' "
            f"for the {inst.family} series in Azure's N-series driver setup; on NV sizes the "
            "NvidiaGpuDriverLinux extension installs it); the datacenter CUDA driver finds no GPU "
            "behind vGPU / SR-IOV"
        ]
    if image.driver_branch:
        fm = " and Fabric Manager" if inst.fabric_manager and inst.provider == "aws" else ""
        return "image", [
            f"driver: {image.description} ships NVIDIA driver R{image.driver_branch} "
            f"(CUDA {image.cuda_driver_version}){fm}: nothing to install"
        ]
    lines: list[str] = []
    route = "ubuntu-drivers" if ubuntu else "nvidia-repo"
    if inst.provider == "aws":
        if pre_turing:
            lines.append(
                "driver: current Deep Learning AMIs no longer list this family (their GPU list "
                "starts at G4dn)"
            )
        else:
            distro = "ubuntu-24.04" if image.key != "ubuntu-22.04" else "ubuntu-22.04"
            lines.append(
                "driver: easiest is a Deep Learning AMI with the driver installed: SSM parameter "
                f"/aws/service/deeplearning/ami/{arch_dir}/base-oss-nvidia-driver-gpu-{distro}"
                "/latest/ami-id"
            )
            route = "dlami"
    elif inst.provider == "gcp":
        if inst.host_arch == "x86_64":
            lines.append(
                "driver: easiest is a Deep Learning VM (--image-project="
                "deeplearning-platform-release, e.g. family common-cu129-ubuntu-2404-nvidia-580, "
                "--metadata=install-nvidia-driver=True); on this image: "
                "`sudo python3 cuda_installer.pyz install_driver` from "
                "GoogleCloudPlatform/compute-gpu-installation (re-run after each reboot until "
                "it reports completion)"
            )
            route = "dlvm"
        else:
            lines.append("driver: Google's cuda_installer is x86_64 only")
    elif inst.provider == "azure":
        lines.append(
            "driver: the NVIDIA GPU driver extension: `az vm extension set --resource-group <rg> "
            "--vm-name <vm> --name NvidiaGpuDriverLinux --publisher Microsoft.HpcCompute` "
            "(not with Secure Boot)"
        )
        route = "azure-extension"
    elif inst.provider == "oci":
        lines.append("driver: Oracle's GPU platform images ship the driver (inferred)")
    elif inst.provider == "lambda":
        lines.append(
            "driver: Lambda Stack images ship the driver, CUDA and a system PyTorch (inferred): "
            "install into a virtual environment so the two PyTorch builds do not mix"
        )
    line = ubuntu_line if ubuntu else repo_line
    lines.append(line.replace("driver: ", "otherwise: ", 1) if lines else line)
    return route, lines


def advice_for_detected(facts: Facts) -> CloudAdvice | None:
    """Advice for the cloud VM this is (facts.cloud set by detection)."""
    cloud = facts.cloud
    if cloud is None or not cloud.provider:
        return None
    provider = cloud.provider
    finding = gpu_visibility(facts)
    extra = (finding,) if finding else ()
    if not cloud.instance_type:
        return CloudAdvice(
            provider,
            None,
            (
                f"{provider} VM, instance type unknown (run with --cloud-metadata to ask the "
                "metadata service)",
                *extra,
            ),
        )
    from setup_env.knowledge import cloud_catalog

    try:
        catalog = cloud_catalog.load()
    except cloud_catalog.CatalogError as exc:
        return CloudAdvice(provider, cloud.instance_type, (str(exc), *extra))
    inst = catalog.lookup(provider, cloud.instance_type)
    fam = catalog.attachable_family(provider, cloud.instance_type) if inst is None else None
    if fam is not None and facts.gpus:
        # GCP N1: the GPUs the driver sees are the attached ones.
        try:
            inst = _attached(catalog, provider, cloud.instance_type, [g.name for g in facts.gpus])
        except CloudPlanError as exc:
            extra = (*extra, str(exc))
    if inst is None:
        why = (
            "its GPUs are attached separately and none is visible"
            if fam is not None
            else "not a GPU instance in the catalogue"
        )
        return CloudAdvice(
            provider, cloud.instance_type, (f"{provider} {cloud.instance_type}: {why}", *extra)
        )
    image = _image_of(catalog, facts)
    advice = advise(inst, image)
    if extra:
        advice = CloudAdvice(**{**_fields(advice), "lines": (*advice.lines, *extra)})
    return advice


def _fields(advice: CloudAdvice) -> dict[str, Any]:
    import dataclasses

    return {f.name: getattr(advice, f.name) for f in dataclasses.fields(advice)}


def _image_of(catalog: Catalog, facts: Facts) -> Image:
    """The catalogue image closest to the running OS (for the driver route)."""
    from setup_env.knowledge.cloud_catalog import Image

    cloud_image = (facts.cloud.image or "") if facts.cloud else ""
    did, ver = facts.os.distro_id or "", facts.os.distro_version or ""
    prefix = ""
    if "Deep Learning AMI" in cloud_image:
        prefix = "dlami-"
    elif "Deep Learning VM" in cloud_image:
        prefix = "dlvm-"
    names = {"amzn": "amazon-linux"}
    key = f"{prefix}{names.get(did, did)}-{ver}"
    if key in catalog.images:
        return catalog.images[key]
    return Image(
        key=key,
        distro_id=did or "unknown",
        version=ver,
        glibc=facts.os.glibc or "",
        description=facts.os.distro_name or (did or "this OS"),
    )


def gpu_visibility(facts: Facts) -> str | None:
    """A finding when the instance shows fewer (or other) GPUs than its type has; else None."""
    cloud = facts.cloud
    if cloud is None or not cloud.expected_gpus:
        return None
    expected = cloud.expected_gpus
    model = cloud.expected_gpu_model or "GPU"
    seen = facts.gpus
    where = f"{cloud.instance_type or 'this instance'}"
    if not seen:
        if facts.nvidia is not None and facts.nvidia.error:
            why = f"the NVIDIA driver is unusable: {facts.nvidia.error}"
        elif model.startswith(("NVIDIA", "Tesla")) and facts.nvidia is None:
            why = "no NVIDIA driver is loaded"
        else:
            why = "none is visible"
        return f"{where} should have {expected} x {model}; 0 visible ({why})"
    if len(seen) < expected:
        msg = f"{where} should have {expected} x {model}; only {len(seen)} visible"
        masks = [
            k
            for k in ("CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES")
            if k in facts.environment
        ]
        if masks:
            msg += f" ({', '.join(masks)} is set)"
        elif facts.os.container:
            msg += f" (inside {facts.os.container}: check the GPUs given to the container)"
        else:
            msg += " (a GPU fell off the bus or is held by another driver: check dmesg for Xid)"
        return msg
    if len(seen) > expected:
        return (
            f"{where} should have {expected} x {model} but {len(seen)} are visible: the "
            "instance type may be misdetected"
        )
    return None
