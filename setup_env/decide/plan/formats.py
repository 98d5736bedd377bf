"""A chosen build as the installer's command: pip, uv, a uv project, poetry, a requirements
file, a conda ``environment.yml`` (its ``pip:`` section) or a pixi manifest (its
``[pypi-dependencies]``). Built only from validated parts (versions parsed by packaging,
variants from the data's closed set, URLs checked) as argv, then quoted with shlex for display.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Literal, Optional

from packaging.version import Version

from setup_env.knowledge.variant import Variant

if TYPE_CHECKING:
    from setup_env.knowledge.matrix import Build, Release
from setup_env.decide.model import Plan
from setup_env.decide.plan.context import _Ctx, check_index_url


def _finish(
    ctx: _Ctx,
    rel: Release,
    variant: Variant,
    via_pypi: bool,
    status: Literal["ok", "fallback"],
    build: Optional[Build],
    compat: Optional[str],
    installable: Sequence[Release],
) -> Plan:
    opts = ctx.options
    t = ctx.t
    index_variant = variant.index_variant
    url: Optional[str] = None
    source = "pypi"
    if not via_pypi:
        if opts.index_url:
            url = f"{check_index_url(opts.index_url)}/{index_variant}"
            source = "mirror"
        else:
            url = f"{ctx.matrix.index_url}/{index_variant}"  # validated: no trailing slash
            source = "index"
    elif opts.index_url:
        ctx.warn(
            "mirror-unused",
            "--index-url names a mirror of PyTorch's index, but this plan installs from PyPI",
        )
    requirements = [f"torch=={rel.version}"]
    for name in opts.with_packages:
        comp = rel.companions.get(name)
        if comp is None or comp.spec is None:
            alt = _newest_with_companion(name, installable)
            msg = f"{name}: no {name} release is known for torch {rel.version}"
            if name == "torchvision" and rel.version >= Version("2.15"):
                msg += " (none on PyPI yet)"
            ctx.warn("companion-unknown", msg + "; installing torch without it")
            if alt is not None:
                ctx.fix(
                    8,
                    "pin-torch",
                    f"torch {alt.version} is the newest with a known {name} "
                    f"({alt.companions[name].spec}): --torch {alt.version}",
                )
            continue
        if not _companion_wheel(ctx, name, comp.version):
            ctx.warn(
                "companion-no-wheel",
                f"{name} {comp.version}: no wheel on PyPI for {t.py_label} on {t.platform}; "
                f"pip may try to build it from source",
            )
        requirements.append(f"{name}{comp.spec}")
    _say_inferred(ctx, rel, variant, via_pypi)
    # (only CUDA variants have builds: the matrix loader refuses others)
    cuda = build.cuda if build is not None else None
    argv, command, config = _commands(ctx, requirements, url, cuda=cuda)
    min_driver = None
    if build is not None:
        row = ctx.matrix.cuda_version(build.cuda)
        if row is not None:
            min_driver = row.toolkit_minimum(build.toolkit).for_os(t.driver_os)[1]
            ctx.details["mvc_floor"] = row.mvc.for_os(t.driver_os)[1]
        ctx.details["arches"] = " ".join(build.arch_names())
        ctx.details["arches_source"] = build.measured or build.source
    ctx.details["release_uploaded"] = rel.uploaded
    ctx.details["requires_python"] = str(rel.requires_python)
    return ctx.said(
        Plan(
            status=status,
            torch_version=str(rel.version),
            variant=variant,
            index_url=url,
            requirements=tuple(requirements),
            argv=argv,
            command=command,
            config=config,
            fixes=ctx.ranked(),
            min_driver=min_driver,
            details=dict(ctx.details),
            platform=t.platform,
            cuda=cuda,
            driver_compat=compat,
            newest_torch=str(ctx.matrix.newest.version),
            source=source,
        )
    )


def _say_inferred(ctx: _Ctx, rel: Release, variant: Variant, via_pypi: bool) -> None:
    """The rule (setup_env.knowledge.matrix.plannable) lets a plan rest on an inferred (I) row:
    the plan then says which row and its source."""
    plat = ctx.t.platform
    assert plat is not None  # rel installs here
    if via_pypi:
        pv = rel.pypi_variant.get(plat)
        if pv is not None and pv.confidence == "I":
            ctx.warn(
                "row-inferred",
                f"that plain `pip install torch=={rel.version}` gives the {pv.variant} build on "
                f"{plat} is inferred, not read from PyPI's wheel ({pv.source})",
            )
        return
    # a plan from the index rests on the release's row for the variant and platform
    av = rel.index[variant.index_variant][plat]
    if av.inferred:
        ctx.warn(
            "row-inferred",
            f"that PyTorch's index has torch {rel.version}+{variant.index_variant} for {plat} is "
            f"inferred, not read from the index ({av.source}); `setup-env matrix refresh` "
            "confirms it where download.pytorch.org is reachable",
        )


def _newest_with_companion(name: str, installable: Sequence[Release]) -> Optional[Release]:
    for rel in installable:
        comp = rel.companions.get(name)
        if comp is not None and comp.spec is not None:
            return rel
    return None


def _companion_wheel(ctx: _Ctx, name: str, version: Optional[Version]) -> bool:
    # (ctx.t.tags is never empty here: without tags no release installs, and no plan is made)
    if name != "torchvision" or version is None:
        return True
    files = ctx.matrix.torchvision_files.get(str(version))
    if files is None:
        return True
    from setup_env.knowledge.tags import platform_of_tag

    have = {
        f"{pa}-{tag}"
        for tag, pas in files.items()
        if platform_of_tag(tag) == ctx.t.platform
        for pa in pas
    }
    # py3-none wheels and the like match any interpreter of the platform
    if any(not h.startswith("cp") for h in have):
        return True
    return bool(have & ctx.t.tags) or not have


def _commands(
    ctx: _Ctx,
    requirements: Sequence[str],
    url: Optional[str],
    pre: bool = False,
    cuda: Optional[str] = None,
) -> tuple[tuple[str, ...], str, Optional[str]]:
    """``cuda``: the CUDA version of a CUDA build ("12.9"), for conda-forge's route."""
    inst = ctx.options.installer
    reqs = list(requirements)
    idx = ["--index-url", url] if url else []
    pre_flag = ["--pre"] if pre else []
    config: Optional[str] = None
    if inst == "pip":
        argv = ["pip", "install", *pre_flag, *reqs, *idx]
    elif inst == "uv":
        argv = ["uv", "pip", "install", *pre_flag, *reqs, *idx]
    elif inst == "requirements":
        lines = ([f"--index-url {url}"] if url else []) + (["--pre"] if pre else []) + reqs
        config = "\n".join(lines) + "\n"
        argv = ["pip", "install", "-r", "requirements.txt"]
    elif inst == "uv-project":
        config = _uv_project(reqs, url, ctx)
        argv = ["uv", "sync"] if url else ["uv", "add", *reqs]
    elif inst == "conda":
        config = _conda(reqs, url, pre, ctx) + _conda_forge_route(ctx, cuda, _conda_route)
        argv = ["conda", "env", "create", "--file", "environment.yml"]
    elif inst == "pixi":
        config = _pixi(reqs, url, pre, ctx) + _conda_forge_route(ctx, cuda, _pixi_route)
        argv = ["pixi", "install"]
    else:
        config = _poetry(reqs, url, ctx)
        argv = ["poetry", "install"] if url else ["poetry", "add", *reqs]
    return tuple(argv), " ".join(shlex.quote(a) for a in argv), config


def _index_name(url: str) -> str:
    """The index's name in a uv or poetry project: the URL's last folder, which is the variant
    (a label of the data's closed set: cpu, cu130, rocm7.14; both the bundled index URL and a
    mirror's are validated without a trailing slash), its dots made dashes."""
    return "pytorch-" + url.rpartition("/")[2].replace(".", "-")


def _toml(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _split(req: str) -> tuple[str, str]:
    name, _, spec = req.partition("==")
    return name, spec


def _uv_project(reqs: list[str], url: Optional[str], ctx: _Ctx) -> str:
    deps = ", ".join(_toml(r) for r in reqs)
    out = ["[project]", f"dependencies = [{deps}]"]
    if url:
        name = _index_name(url)
        out += ["", "[[tool.uv.index]]", f"name = {_toml(name)}", f"url = {_toml(url)}"]
        out.append("explicit = true")
        out += ["", "[tool.uv.sources]"]
        for r in reqs:
            out.append(f"{_split(r)[0]} = [{{ index = {_toml(name)} }}]")
    if ctx.options.channel == "nightly":
        out += ["", "[tool.uv]", 'prerelease = "allow"']
    return "\n".join(out) + "\n"


def _poetry(reqs: list[str], url: Optional[str], ctx: _Ctx) -> str:
    out = ["[tool.poetry.dependencies]"]
    name = _index_name(url) if url else ""
    for r in reqs:
        pkg, spec = _split(r)
        spec = spec or "*"
        if name:
            allow = ", allow-prereleases = true" if ctx.options.channel == "nightly" else ""
            out.append(f"{pkg} = {{ version = {_toml(spec)}, source = {_toml(name)}{allow} }}")
        else:
            out.append(f"{pkg} = {_toml(spec)}")
    if url:
        out += ["", "[[tool.poetry.source]]", f"name = {_toml(name)}", f"url = {_toml(url)}"]
        out.append('priority = "explicit"')
    return "\n".join(out) + "\n"


# conda and pixi: PyTorch published its last conda packages with 2.5 (the pytorch channel is
# frozen since 2.6), so the wheel route inside a conda-forge environment is the one that carries
# every release the matrix knows, with the same index and pins as the pip command.
# https://github.com/pytorch/pytorch/issues/138506 (the deprecation of the pytorch channel)
_PIXI_PLATFORMS = {
    "linux_x86_64": "linux-64",
    "linux_aarch64": "linux-aarch64",
    "windows_x86_64": "win-64",
    "macos_arm64": "osx-arm64",
    "macos_x86_64": "osx-64",
}


def _python_spec(ctx: _Ctx) -> tuple[str, Optional[str]]:
    """(conda package, "X.Y") of the target's Python; conda-forge's free-threaded CPython is the
    ``python-freethreading`` metapackage."""
    py = ctx.t.python
    name = "python-freethreading" if ctx.t.free_threaded else "python"
    return name, (f"{py.major}.{py.minor}" if py is not None else None)


def _conda(reqs: list[str], url: Optional[str], pre: bool, ctx: _Ctx) -> str:
    """An environment.yml: Python and pip from conda-forge, torch by pip. conda writes the
    ``pip:`` list to a requirements file and runs ``pip install -r`` on it, so option lines
    (``--index-url``, ``--pre``) mean what they mean in requirements.txt."""
    name, ver = _python_spec(ctx)
    out = ["name: torch", "channels:", "  - conda-forge", "dependencies:"]
    out.append(f"  - {name}={ver}" if ver else f"  - {name}")
    out += ["  - pip", "  - pip:"]
    if url:
        out.append(f"      - --index-url {url}")
    if pre:
        out.append("      - --pre")
    out += [f"      - {r}" for r in reqs]
    return "\n".join(out) + "\n"


def _pixi(reqs: list[str], url: Optional[str], pre: bool, ctx: _Ctx) -> str:
    """A pixi.toml: Python from conda-forge, torch in ``[pypi-dependencies]`` with the index
    named per package (pixi resolves through uv: only these packages come from that index, their
    dependencies from PyPI). https://pixi.sh/latest/python/pytorch/"""
    name, ver = _python_spec(ctx)
    assert ctx.t.platform is not None  # a plan has a platform (_no_platform plans none before)
    out = ["[workspace]", 'name = "torch"', 'channels = ["conda-forge"]']
    out.append(f"platforms = [{_toml(_PIXI_PLATFORMS[ctx.t.platform])}]")
    out += ["", "[dependencies]", f"{name} = {_toml(f'{ver}.*' if ver else '*')}"]
    out += ["", "[pypi-dependencies]"]
    for r in reqs:
        pkg, pin = _split(r)
        spec = f"=={pin}" if pin else "*"
        if url:
            out.append(f"{pkg} = {{ version = {_toml(spec)}, index = {_toml(url)} }}")
        else:
            out.append(f"{pkg} = {_toml(spec)}")
    if pre:
        out += ["", "[pypi-options]", 'prerelease-mode = "allow"']
    return "\n".join(out) + "\n"


# conda-forge's CUDA builds of PyTorch, on the platforms pixi's PyTorch guide shows them for
# (linux-64, win-64: https://pixi.sh/latest/python/pytorch/; others are left out until a source
# shows them). Their CUDA comes from conda-forge's CUDA packages, chosen by the ``cuda-version``
# pin, and their build strings start with ``cuda`` (``cuda129_mkl_py312_...``), which
# ``pytorch=*=cuda*`` selects.
_CONDA_FORGE_CUDA = ("linux_x86_64", "windows_x86_64")


def _conda_forge_route(ctx: _Ctx, cuda: Optional[str], form: Callable[[str], list[str]]) -> str:
    """The other supported route for a CUDA plan, as comment lines the file keeps inert:
    conda-forge's own ``pytorch`` build on the same CUDA, in place of the wheel. Its version is
    left to the solver: conda-forge's releases follow PyTorch's at their own pace, and which
    exist is not in this data. ``form``: the route's lines in the file's own syntax
    (``_conda_route``, ``_pixi_route``)."""
    if not cuda or not re.match(r"^\d{2}\.\d{1,2}$", cuda):
        return ""
    if ctx.t.platform not in _CONDA_FORGE_CUDA:
        return ""
    head = [
        "",
        "# The other route: conda-forge's own PyTorch build in place of the wheel (where",
        f"# conda-forge has one for CUDA {cuda}; its CUDA libraries then come from conda-forge):",
    ]
    return "\n".join(head + form(cuda)) + "\n"


def _conda_route(cuda: str) -> list[str]:
    """conda-forge's route in an environment.yml (``_conda_forge_route``)."""
    return [
        "# in dependencies, in place of the pip: list",
        "#   - pytorch=*=cuda*",
        f"#   - cuda-version={cuda}",
    ]


def _pixi_route(cuda: str) -> list[str]:
    """conda-forge's route in a pixi.toml (``_conda_forge_route``)."""
    return [
        "# drop [pypi-dependencies] and add to [dependencies]",
        '#   pytorch = { version = "*", build = "cuda*" }',
        f'#   cuda-version = "{cuda}.*"',
        "# with the machine's CUDA declared",
        "#   [system-requirements]",
        f'#   cuda = "{cuda.split(".")[0]}"',
    ]
