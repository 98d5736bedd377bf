"""The ``SETUP_ENV_*`` variables, checked before a command runs: a bad value fails like the flag
it stands for (exit 2, the variable named), never a warning seen only with ``-v``.

The probes still read the variables themselves (through the Host seam, so a captured machine
replays them) and keep their notes for a replayed value; this is the live command line's check.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

_WORDS = ("1", "0", "true", "false", "yes", "no", "on", "off")


def _switch(value: str) -> str | None:
    if value.strip().lower() in _WORDS:
        return None
    return f"expected one of {', '.join(_WORDS)}"


def _seconds(low: float, high: float) -> Callable[[str], str | None]:
    def check(value: str) -> str | None:
        try:
            number = float(value)
        except ValueError:
            number = float("nan")
        if low < number <= high:
            return None
        return f"expected a number above {low:g} and at most {high:g}"

    return check


def _driver(value: str) -> str | None:
    from setup_env.probe.nvidia.gather import _VERSION

    return None if _VERSION.match(value.strip()) else "expected a driver version like 570.86.10"


def _cuda(value: str) -> str | None:
    from setup_env.probe.nvidia.gather import _CUDA

    return None if _CUDA.match(value.strip()) else "expected a CUDA version like 12.8"


def _probes(value: str) -> str | None:
    from setup_env.probe.detect import PROBES

    names = [p.strip() for p in value.split(",") if p.strip()]
    unknown = [n for n in names if n not in PROBES]
    if unknown:
        return f"no probe named {unknown[0]!r} (known: {', '.join(PROBES)})"
    return None


def _existing(what: str) -> Callable[[str], str | None]:
    def check(value: str) -> str | None:
        from setup_env.probe.host import LiveHost

        return None if LiveHost({}).exists(value) else f"no such {what}"

    return check


def _matrix(value: str) -> str | None:
    from pathlib import Path

    from setup_env.knowledge import matrix

    try:
        matrix._read(Path(value), "env")
    except matrix.MatrixError as exc:
        return str(exc)
    except OSError as exc:
        return exc.strerror or str(exc)
    return None


def _url(value: str) -> str | None:
    from setup_env.commands.matrix import _URL

    return None if _URL.fullmatch(value) else "not a plain http(s) URL"


def _node_name(value: str) -> str | None:
    import re

    # A Kubernetes node name (DNS-1123 subdomain) or any host name.
    ok = re.fullmatch(r"[A-Za-z0-9]([A-Za-z0-9._-]{0,251}[A-Za-z0-9])?", value)
    return None if ok else "expected a node name (letters, digits, '.', '-', '_')"


# name -> check (None: the value is fine, else why not). An empty value means "not set".
CHECKS: dict[str, Callable[[str], str | None]] = {
    "SETUP_ENV_NVIDIA_DRIVER_VERSION": _driver,
    "SETUP_ENV_CUDA_DRIVER_VERSION": _cuda,
    "SETUP_ENV_NVIDIA_SMI": _existing("file"),
    "SETUP_ENV_NVIDIA_SMI_TIMEOUT": _seconds(0, 600),
    "SETUP_ENV_NO_NVML": _switch,
    "SETUP_ENV_SKIP_PROBES": _probes,
    "SETUP_ENV_CLOUD_METADATA": _switch,
    "SETUP_ENV_DISK_PATH": _existing("folder"),
    "SETUP_ENV_MATRIX": _matrix,
    "SETUP_ENV_VERIFY_TIMEOUT_SCALE": _seconds(0, 1000),
    "SETUP_ENV_PYPI_URL": _url,
    "SETUP_ENV_INDEX_URL": _url,
    "SETUP_ENV_NODE_NAME": _node_name,
}


def problem(environ: Mapping[str, str]) -> str | None:
    """The first bad ``SETUP_ENV_*`` value in ``environ``, as a one-line message naming it."""
    from setup_env.bounded import one_line

    for name, check in CHECKS.items():
        value = environ.get(name)
        if not value:
            continue
        why = check(value)
        if why is not None:
            return f"{name}={one_line(value, 120)!r}: {why}"
    return None
