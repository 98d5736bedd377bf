"""The JetPack-matched route for NVIDIA Jetson modules (issue 12 item 1).

A Jetson's GPU driver comes with its L4T release: it is never installed separately, and the fix
for "too old" is a newer JetPack. Before JetPack 7, PyTorch's own aarch64 wheels do not run on a
Jetson (they are SBSA server builds for CUDA 13 without sm_87/sm_72); NVIDIA builds torch for
each JetPack (its redist folder up to JetPack 5, the Jetson AI Lab index from JetPack 6). JetPack
7 (Thor, sm_110, CUDA 13) runs PyTorch's SBSA CUDA 13 wheels where the wheel data lists sm_110.

Every command names exactly one torch and can never fall back to PyPI, whose aarch64 ``torch``
is a CPU build that outranks NVIDIA's pre-release-numbered wheels (``2.1.0a0+41361538.nv23.06``):
NVIDIA's redist wheel by its URL where the data names the file, else ``--no-index --find-links``
on the folder; the Jetson AI Lab index with ``--index-url`` (which replaces PyPI). The requirement
is checked against PEP 440 before it is printed (issue 17: ``torch==2.1.0*`` was not). A row whose
wheel is not confirmed at a source says so in the plan's warnings.

Pure: facts in, a :class:`setup_env.decide.model.Plan` out; the JetPack table is ``gpus.json``
"jetpack" (each row with its sources and confidence).
"""

from __future__ import annotations

import re
import shlex
from typing import TYPE_CHECKING, Callable, Optional

from setup_env._record import Record, record, replace
from setup_env.facts import Facts, JetsonInfo
from setup_env.knowledge import gpus as catalogue
from setup_env.knowledge.cuda import sm_of, version_tuple
from setup_env.knowledge.variant import Variant

if TYPE_CHECKING:
    from setup_env.decide.model import Plan, PlanOptions

NEVER_DRIVER = (
    "never install an NVIDIA driver on a Jetson: its GPU driver is part of the L4T release; "
    "a newer driver means flashing a newer JetPack (SDK Manager or the SD-card image)"
)


def jetson_of(facts: Facts) -> Optional[JetsonInfo]:
    """The Jetson this plan is for: detected, or an embedded GPU named in a spec."""
    if facts.jetson is not None:
        return facts.jetson
    for g in facts.nvidia.gpus if facts.nvidia is not None else ():
        model = catalogue.lookup(g.name)
        if model is not None and model.segment == "embedded":
            # A Jetson's CUDA toolkit is JetPack's own (/usr/local/cuda): its version narrows
            # the JetPack when nothing names the L4T release (a pasted report, a container).
            tk = facts.toolkits[0] if facts.toolkits else None
            return JetsonInfo(
                module=model.name,
                compute_capability=model.compute_capability,
                cuda=tk.version if tk is not None else None,
                sources={"module": g.source or "spec", **({"cuda": tk.source} if tk else {})},
            )
    kernel = facts.os.kernel or ""
    if kernel.endswith("-tegra"):
        # A report with no GPU line (collect_env "Could not collect"): the L4T kernel says Jetson.
        row = catalogue.load().jetpack_for_kernel(kernel)
        if row is not None:
            return JetsonInfo(
                jetpack=row.jetpack,
                l4t=None,
                cuda=row.cuda,
                sources={"jetpack": f"kernel {kernel} (JetPack table, newest for that kernel)"},
            )
    return None


def _row(info: JetsonInfo, cat: catalogue.Catalogue) -> tuple[Optional[catalogue.JetPack], str]:
    """The JetPack row and how it was chosen ("", or a warning that it was assumed)."""
    if info.jetpack:
        row = cat.jetpack(info.jetpack)
        if row is not None:
            return row, ""
    if info.l4t:
        row = cat.jetpack_for_l4t(info.l4t)
        if row is not None:
            return row, ""
    cc = info.compute_capability or ""
    rows = [j for j in cat.jetpacks if j.supports(cc)]
    if not rows:
        return None, ""
    # The CUDA found narrows the JetPack (an unconfirmed row too: the machine's CUDA is evidence);
    # the newest-for-the-module guess takes only rows the table is sure of.
    by_cuda = [j for j in rows if info.cuda and j.cuda == info.cuda]
    if by_cuda:
        row = by_cuda[-1]
        return row, (
            f"the JetPack version is unknown: assumed JetPack {row.jetpack}, the newest with "
            f"CUDA {info.cuda} (the CUDA found); pass --jetpack X.Y to plan for another"
        )
    sure = [j for j in rows if j.assumable]
    if not sure:
        return None, ""
    row = sure[-1]
    return row, (
        f"the JetPack version is unknown: assumed JetPack {row.jetpack} (the newest for "
        f"{info.module or 'this module'}); pass --jetpack X.Y to plan for another"
    )


def plan(
    facts: Facts,
    info: JetsonInfo,
    options: PlanOptions,
    general: Callable[[Facts], Plan],
) -> Plan:
    """The plan for a Jetson. ``general`` plans ordinary (non-Jetson) facts (JetPack 7's route,
    from the matrix the planner was given); the JetPack routes read NVIDIA's table, not the
    matrix."""
    from setup_env.decide.model import Fix, Plan

    cat = catalogue.load()
    row, assumed = _row(info, cat)
    cc = info.compute_capability or ""
    module = info.module or info.model or "this Jetson"
    warnings: list[str] = [assumed] if assumed else []
    # Upgrades go to releases the table is sure of (an unconfirmed row is never advised).
    newest = [j for j in cat.jetpacks if j.supports(cc) and j.assumable]
    if row is None or (cc and not row.supports(cc)):
        sm = sm_of(cc, "its GPU")
        upgrade = newest[-1] if newest else None
        fixes: tuple[Fix, ...] = (
            (Fix(1, "upgrade-jetpack", f"flash JetPack {upgrade.jetpack} (L4T {upgrade.l4t}), "
                 f"the newest in the table for {module}"),)
            if upgrade is not None
            else ()
        )  # fmt: skip
        if row is not None:
            why = (
                f"JetPack {row.jetpack} (L4T {row.l4t}) is for "
                f"{', '.join('sm_' + m.replace('.', '') for m in row.modules)}, not {module} ({sm})"
            )
        elif not (info.l4t or info.jetpack or cc):
            # A pasted report naming neither the module nor the L4T release: NVIDIA's wheel is
            # per JetPack (5.0, 5.1 and 5.1.2 all ship CUDA 11.4), so no command is guessed.
            why = (
                "a Jetson, but its JetPack release and module are unknown (no L4T release, no "
                "GPU name): NVIDIA's torch wheel is built per JetPack"
            )
            fixes = (
                Fix(1, "describe-jetpack", "run `setup-env plan` on the Jetson itself (it reads "
                    "/etc/nv_tegra_release), or pass --gpu \"Jetson AGX Orin\" --jetpack X.Y"),
            )  # fmt: skip
        else:
            why = f"L4T/JetPack {info.l4t or info.jetpack or '?'} is not in the JetPack table"
        return Plan(
            status="none",
            reasons=(why,),
            warnings=(*warnings, NEVER_DRIVER),
            fixes=fixes,
            details={"route": "jetson"},
            platform="linux_aarch64",
            source="",
        )  # fmt: skip
    label = f"JetPack {row.jetpack} (L4T {row.l4t}, CUDA {row.cuda})"
    later = [j for j in newest if _newer(j.jetpack, row.jetpack)]
    upgrade_fix: Optional[str] = None
    if later and (
        (later[-1].torch and later[-1].torch != row.torch) or (later[-1].sbsa and not row.sbsa)
    ):
        top = later[-1]
        what = f"torch {top.torch}" if top.torch else "PyTorch's own CUDA 13 wheels"
        upgrade_fix = f"flash JetPack {top.jetpack} (L4T {top.l4t}, CUDA {top.cuda}) for {what}"
    if row.sbsa:
        return _sbsa(facts, info, row, label, module, warnings, general, upgrade_fix)
    return _nvidia_build(facts, options, row, label, module, cc, warnings, upgrade_fix)


def _newer(a: str, b: str) -> bool:
    return (version_tuple(a) or ()) > (version_tuple(b) or ())


def _nvidia_build(
    facts: Facts,
    options: PlanOptions,
    row: catalogue.JetPack,
    label: str,
    module: str,
    cc: str,
    warnings: list[str],
    upgrade_fix: Optional[str],
) -> Plan:
    from setup_env.decide.model import Fix, Plan

    sm = sm_of(cc, "the Jetson's GPU arch")
    reasons = [
        f"{module} on {label}: NVIDIA's Jetson build of torch {row.torch}, matched to "
        f"JetPack's CUDA {row.cuda} (route: jetson)",
        f"PyTorch's own linux_aarch64 CUDA wheels are SBSA server builds (CUDA 12.8+/13, no "
        f"{sm}): on this JetPack they find no usable GPU",
    ]
    fixes: list[Fix] = []
    py = ".".join((facts.python.version or "").split(".")[:2])
    if py and py != row.python:
        warnings.append(
            f"NVIDIA builds these wheels for JetPack {row.jetpack}'s system Python {row.python}; "
            f"this is Python {py}: pip will find no matching wheel"
        )
        fixes.append(Fix(0, "change-python", f"use JetPack's python{row.python} (a venv "
                                              f"from /usr/bin/python{row.python})"))  # fmt: skip
    if options.torch and not (row.torch or "").startswith(options.torch.lstrip("=")):
        warnings.append(
            f"--torch {options.torch}: NVIDIA's build for JetPack {row.jetpack} is torch "
            f"{row.torch}; other releases need a source build or another JetPack"
        )
    assert row.index is not None and row.torch is not None
    argv, requirement, index_url, where = _jetson_command(row)
    reasons.append(where)
    warnings.extend(_unconfirmed(row))
    warnings.append(NEVER_DRIVER)
    if upgrade_fix:
        fixes.append(Fix(0, "upgrade-jetpack", upgrade_fix))
    ranked = tuple(
        replace(f, rank=i + 1) for i, f in enumerate(sorted(fixes, key=lambda f: f.rank))
    )
    return Plan(
        status="ok",
        torch_version=row.torch,
        variant=Variant.cuda_of(row.cuda),
        index_url=index_url,
        requirements=(requirement,),
        argv=argv,
        command=" ".join(shlex.quote(a) for a in argv),
        reasons=tuple(reasons),
        warnings=tuple(warnings),
        fixes=ranked,
        details={
            "route": "jetson",
            "jetpack": row.jetpack,
            "l4t": row.l4t,
            "torch_confidence": row.torch_confidence,
        },
        platform="linux_aarch64",
        cuda=row.cuda,
        source="jetson",
    )


def _jetson_command(row: catalogue.JetPack) -> tuple[tuple[str, ...], str, Optional[str], str]:
    """(argv, requirement, index URL or None, the reason naming where the wheel is) of a row.

    Never a form that can reach PyPI's CPU torch: the wheel's URL, ``--no-index --find-links`` on
    NVIDIA's folder, or ``--index-url`` on the Jetson AI Lab index (which replaces PyPI). The
    requirement is parsed as PEP 508 before it is printed."""
    from packaging.requirements import InvalidRequirement, Requirement

    assert row.index is not None and row.torch is not None
    url = row.wheel_url
    if "pypi.jetson-ai-lab" in row.index:
        requirement = f"torch=={row.torch}"
        argv: tuple[str, ...] = ("pip", "install", requirement, "--index-url", row.index)
        where = f"the Jetson AI Lab index NVIDIA points to for JetPack 6: {row.index}"
        index_url: Optional[str] = row.index
    elif url is not None:
        requirement = f"torch @ {url}"
        argv = ("pip", "install", url)
        where = (
            f"NVIDIA's wheel for JetPack {row.jetpack}, by its URL (pip cannot take PyPI's "
            f"CPU-only aarch64 torch instead): {url}"
        )
        index_url = None
    else:
        # No file named: the folder is the only place pip may look. ``==X.Y.Z.*`` with --pre
        # matches NVIDIA's pre-release and local-labelled builds of that release.
        release = row.torch.split("+", 1)[0]
        release = re.sub(r"(a|b|rc)\d+$", "", release)
        requirement = f"torch=={release}.*"
        # The folder with its trailing slash: the listing's links are relative to it (uv resolves
        # them against the URL as given, so `.../pytorch` would look in `.../jp/v46/`).
        folder = row.index.rstrip("/") + "/"
        argv = ("pip", "install", "--no-index", "--find-links", folder, "--pre", requirement)
        where = (
            f"the wheel is in NVIDIA's folder for JetPack {row.jetpack}: {folder} "
            "(--no-index: pip looks nowhere else)"
        )
        index_url = None
    try:
        Requirement(requirement)
    except InvalidRequirement as exc:  # the data names a version pip would refuse
        raise ValueError(f"JetPack {row.jetpack}: {requirement!r} is not PEP 508: {exc}") from exc
    return argv, requirement, index_url, where


def _unconfirmed(row: catalogue.JetPack) -> list[str]:
    """Warnings for a wheel the data is not sure of, and for the --no-index form's dependencies."""
    out: list[str] = []
    what = f"NVIDIA's torch {row.torch} for JetPack {row.jetpack}"
    if row.torch_confidence == "?":
        out.append(f"{what} is not confirmed at a source: {row.note}")
    elif row.torch_confidence == "I":
        out.append(f"{what} is inferred, not published for it: {row.note}")
    elif row.torch and not _pep440(row.torch):
        out.append(f"{what}: {row.note}")
    if row.wheel_url is None and "pypi.jetson-ai-lab" not in (row.index or ""):
        out.append(
            "--no-index: pip takes nothing from PyPI, so torch's own dependencies "
            "(typing-extensions; dataclasses on Python 3.6) must be installed first"
        )
    return out


def _pep440(version: str) -> bool:
    from packaging.version import InvalidVersion, Version

    try:
        Version(version)
    except InvalidVersion:
        return False
    return True


def _sbsa(
    facts: Facts,
    info: JetsonInfo,
    row: catalogue.JetPack,
    label: str,
    module: str,
    warnings: list[str],
    general: Callable[[Facts], Plan],
    upgrade_fix: Optional[str],
) -> Plan:
    """JetPack 7: PyTorch's SBSA CUDA 13 wheels, planned like any aarch64 machine with the
    driver L4T reports; driver fixes become JetPack upgrades."""
    from setup_env.decide.model import Fix
    from setup_env.facts import Gpu, NvidiaInfo

    cc = info.compute_capability or row.modules[0]
    nv = facts.nvidia
    gpus_ = nv.gpus if nv is not None and nv.gpus else (
        Gpu(index=0, name=module, compute_capability=cc, source="jetson"),
    )  # fmt: skip
    driver = (nv.driver_version if nv is not None else None) or row.driver
    plain = replace(
        facts,
        jetson=None,
        nvidia=NvidiaInfo(
            driver_version=driver,
            cuda_driver_version=(nv.cuda_driver_version if nv else None) or row.cuda,
            gpus=gpus_,
            sources={"driver_version": "L4T (JetPack table)", "gpus": "jetson"},
        ),
    )
    p = general(plain)
    fixes = [f for f in p.fixes if f.kind != "upgrade-driver"]
    dropped = len(fixes) != len(p.fixes)
    if upgrade_fix or dropped:
        fixes.insert(0, Fix(0, "upgrade-jetpack", upgrade_fix or "flash a newer JetPack 7.x"))
    reasons = [
        f"{module} on {label}: PyTorch's SBSA CUDA 13 wheels carry sm_{cc.replace('.', '')} "
        f"(route: jetson, JetPack 7)",
        *p.reasons,
    ]
    ranked = tuple(replace(f, rank=i + 1) for i, f in enumerate(fixes))
    return replace(
        p,
        reasons=tuple(reasons),
        warnings=(*warnings, *(w for w in p.warnings if "install one >=" not in w), NEVER_DRIVER),
        fixes=ranked,
        details={**p.details, "route": "jetson", "jetpack": row.jetpack, "l4t": row.l4t},
    )


# --- doctor: what is installed on a Jetson ----------------------------------------------------


@record
class JetsonFinding(Record):
    """One finding about the torch installed on a Jetson."""

    code: str  # "jetson-nvidia-build" | "jetson-desktop-wheel"
    severity: str  # "info" | "error"
    title: str
    evidence: tuple[str, ...]
    fix: Optional[str] = None


_NV_BUILD = re.compile(r"\.nv(\d{2})\.(\d{2})")


def installed_finding(
    facts: Facts, torch_version: str, variant: Optional[Variant]
) -> Optional[JetsonFinding]:
    """A ``+nvYY.MM`` torch is NVIDIA's Jetson build; a PyPI/PyTorch CUDA wheel on JetPack <= 6 is
    an SBSA server build that cannot use the Jetson's GPU."""
    info = jetson_of(facts)
    if info is None and "tegra" in (facts.os.kernel or ""):
        info = JetsonInfo(sources={"kernel": facts.os.kernel or ""})  # an L4T kernel, no more
    if info is None:
        return None
    module = info.module or info.model or "this Jetson"
    m = _NV_BUILD.search(torch_version)
    if m:
        return JetsonFinding(
            "jetson-nvidia-build",
            "info",
            f"torch {torch_version} is NVIDIA's Jetson build (NGC/JetPack release "
            f"{m.group(1)}.{m.group(2)})",
            (f"{module}: '.nv{m.group(1)}.{m.group(2)}' in the version",),
        )
    row, _assumed = _row(info, catalogue.load())
    if row is not None and row.sbsa and variant is not None and variant.is_cuda:
        return None  # JetPack 7 runs PyTorch's SBSA CUDA 13 wheels
    where = f"JetPack {row.jetpack} (CUDA {row.cuda})" if row is not None else "this JetPack"
    fix = "install NVIDIA's Jetson build of torch for this JetPack (see `setup-env plan`)"
    if row is not None and row.index and row.torch and not row.sbsa:
        argv = _jetson_command(row)[0]
        fix = f"install NVIDIA's Jetson build: {' '.join(shlex.quote(a) for a in argv)}"
    return JetsonFinding(
        "jetson-desktop-wheel",
        "error",
        (
            f"torch {torch_version} is PyTorch's linux_aarch64 ({variant}) wheel, an SBSA server "
            f"build: on {where} it finds no usable GPU"
            if variant is not None and variant.is_cuda
            else f"torch {torch_version} is a desktop (CPU) build: on a Jetson only NVIDIA's "
            f"JetPack builds use the GPU"
        ),
        (f"{module} (sm_{(info.compute_capability or '?').replace('.', '')}) on {where}",),
        fix,
    )
