"""The verdict of ``setup-env check``: pure functions from what check learned to one result.

``check`` detects (or is told) a machine, plans, runs the doctor and verify; everything it then
decides lives here, apart from the command (``setup_env.commands.check``, which only gathers) and
from the renderer (``setup_env.output.render_check``: text, Markdown, JUnit, the JSON payload):

* :func:`decide`: facts + plan + findings + verify report -> one :class:`Verdict`
  ("READY: …", "ACTION NEEDED: …", "BROKEN: …");
* :func:`target_arch_findings`: a target machine's GPUs against the architectures *read from the
  installed torch's binaries* (``setup_env.probe.torch_arches``), not the matrix's list;
* :class:`Expect` / :func:`expectation_findings`: ``--expect "torch>=2.14" --expect variant=cu130``,
  an image policy turned into checks;
* :class:`CheckReport`: the result object the renderer prints.

The small helpers ``doctor`` and ``diagnose`` share (``counts``, ``headline``, ``finding_json``,
``plan_json``, ``safe_plan``) live in ``setup_env.decide.summary``, so that those commands do not
load the verdict. Nothing here touches the machine or prints.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal, Optional

from setup_env._record import Record, field, record
from setup_env.decide.summary import counts, finding_json, plan_json
from setup_env.exitcodes import ExitCode
from setup_env.knowledge.variant import Variant
from setup_env.probe.torch_arches import TorchArches

if TYPE_CHECKING:
    from setup_env.decide.cloudplan import CloudAdvice
    from setup_env.decide.model import Finding, Plan
    from setup_env.decide.smoke_model import VerifyReport
    from setup_env.facts import Facts

State = Literal["ready", "action-needed", "broken", "unexaminable"]


@record
class Verdict(Record):
    """The one-line answer on an environment: its state and what to run."""

    state: State
    line: str  # the one line people read: "READY: torch 2.13.0+cpu works on cpu"
    command: Optional[str] = None  # what to run, when something is to be done

    @property
    def exit_code(self) -> int:
        if self.state == "ready":
            return int(ExitCode.OK)
        if self.state == "unexaminable":
            return int(ExitCode.UNEXAMINABLE)
        return int(ExitCode.CHECK_FAILED)

    @property
    def headline(self) -> str:
        """The line without its " — run: COMMAND" tail: for displays that show the command
        on a line of its own (the text report prints ``$ COMMAND`` right under it)."""
        if not self.command:
            return self.line
        return self.line.replace(_run_hint(self.command), "")


# --- the verdict ---------------------------------------------------------------------------------


def _run_hint(command: Optional[str]) -> str:
    return f" — run: {command}" if command else ""


def decide(
    facts: Facts,
    plan: Optional[Plan],
    findings: tuple[Finding, ...],
    verify: Optional[VerifyReport],
    verify_skipped: Optional[str] = None,
    target: Optional[str] = None,
) -> Verdict:
    """One verdict from everything check learned. ``verify_skipped`` says why verify did not run;
    ``target`` names the machine judged when it is not this one ("for NVIDIA H100, driver …")."""
    torch = facts.package("torch")
    errors = [f for f in findings if f.severity == "error"]
    if torch is None or (verify is not None and verify.torch_missing):
        if errors:
            first = errors[0]
            then = "; then install torch" + _run_hint(plan.command if plan else None)
            return Verdict(
                "action-needed",
                f"ACTION NEEDED: {first.title}" + (f" — {first.fix}" if first.fix else "") + then,
                first.command or (plan.command if plan else None),
            )
        if plan is not None and plan.status != "none" and plan.command:
            what = f"install torch {plan.torch_version or ''}".rstrip()
            if plan.variant:
                what += f" ({plan.variant})"
            return Verdict(
                "action-needed", f"ACTION NEEDED: {what}{_run_hint(plan.command)}", plan.command
            )
        if plan is not None and plan.fixes:
            fix = sorted(plan.fixes, key=lambda x: x.rank)[0]
            return Verdict(
                "action-needed",
                f"ACTION NEEDED: no PyTorch build fits this machine; {fix.summary}"
                + _run_hint(fix.command),
                fix.command,
            )
        return Verdict(
            "action-needed",
            "ACTION NEEDED: install torch — run `setup-env plan` for the exact command",
        )
    if verify is not None and (verify.error or not verify.ok):
        failed = [c.id for c in verify.failed]
        first_fix = next((c.fix for c in verify.failed if c.fix), None)
        command = next((f.command for f in errors if f.command), None)
        what = verify.error or ("fails its checks (" + ", ".join(failed[:4]) + ")")
        hint = _run_hint(command) if command else (f" — {first_fix}" if first_fix else "")
        return Verdict("broken", f"BROKEN: torch {torch.version} {what}{hint}", command)
    if errors:
        first = errors[0]
        more = f" (+{len(errors) - 1} more)" if len(errors) > 1 else ""
        return Verdict(
            "action-needed",
            f"ACTION NEEDED: {first.title}{more}"
            + (_run_hint(first.command) if first.command else f" — {first.fix or ''}".rstrip(" —")),
            first.command,
        )
    if target is not None:
        how = f"; its CPU checks pass on {verify.device or 'cpu'}" if verify is not None else ""
        return Verdict("ready", f"READY: torch {torch.version} fits {target}{how}")
    if verify is not None:
        device = verify.device or "cpu"
        return Verdict("ready", f"READY: torch {torch.version} works on {device}")
    why = f" ({verify_skipped})" if verify_skipped else ""
    return Verdict("ready", f"READY: torch {torch.version} is installed and fits this machine{why}")


# --- a target machine: the installed torch's real architectures -------------------------------


_ARCH_CODES = ("gpu-arch-not-in-wheel", "gpu-arch-ptx-only")


def target_arch_findings(
    facts: Facts, arches: Optional[TorchArches]
) -> tuple[tuple[Finding, ...], bool]:
    """Each NVIDIA GPU of ``facts`` against the architectures read from the installed torch.

    Returns (findings, replaces): ``replaces`` is True when the binaries were read, so the
    doctor's matrix-based arch findings (a list from the data, possibly inferred) give way."""
    from setup_env.decide.model import Finding
    from setup_env.knowledge.cuda import parse_cc, runs_on, sm

    torch = facts.package("torch")
    gpus = [g for g in (facts.nvidia.gpus if facts.nvidia else ()) if g.vendor == "nvidia"]
    cuda_build = bool(torch and (torch.cuda or (torch.variant and torch.variant.is_cuda)))
    if torch is None or arches is None or not gpus or not (cuda_build or arches.files):
        return (), False
    where = ", ".join(arches.files) or "the installed torch"
    if arches.error or not arches.arches:
        why = arches.error or f"no CUDA fat binaries in {where}"
        return (
            Finding(
                "gpu-arch-unread",
                "warning",
                "could not read the GPU architectures compiled into the installed torch",
                evidence=(why,),
                fix="the doctor falls back to the wheel matrix's list",
            ),
        ), False
    missing: list[str] = []
    ptx: list[str] = []
    for gpu in gpus:
        cc = parse_cc(gpu.compute_capability)
        if cc is None:
            continue
        label = f"{gpu.name} ({sm(cc)})"
        how = runs_on(cc, arches.arches)
        if how is None:
            missing.append(label)
        elif how == "ptx":
            ptx.append(label)
    have = f"read from {where}: " + " ".join(arches.arches)
    out: list[Finding] = []
    if missing:
        out.append(
            Finding(
                "gpu-arch-not-in-wheel",
                "error",
                "the installed torch has no kernels for " + ", ".join(sorted(set(missing))),
                evidence=(f"torch {torch.version}", have),
                fix="install a build whose architectures include this GPU: "
                "`setup-env plan` with the same machine flags names it",
            )
        )
    if ptx:
        out.append(
            Finding(
                "gpu-arch-ptx-only",
                "warning",
                "only PTX (JIT-compiled at first use) serves " + ", ".join(sorted(set(ptx))),
                evidence=(f"torch {torch.version}", have),
                fix="works, but the first start is slow; a build with native kernels avoids it",
            )
        )
    return tuple(out), True


def merge_target_findings(
    findings: tuple[Finding, ...], extra: tuple[Finding, ...], replaces_arch: bool
) -> tuple[Finding, ...]:
    """The doctor's findings with ``extra`` added (and its arch findings dropped when the real
    arch list replaced them), most severe first."""
    from setup_env.decide.doctor import SEVERITY_ORDER

    kept = [f for f in findings if not (replaces_arch and f.code in _ARCH_CODES)]
    return tuple(sorted([*kept, *extra], key=lambda f: SEVERITY_ORDER[f.severity]))


def _platform_of(tag: str) -> tuple[str, Optional[tuple[int, int]], str]:
    """ "cp311-cp311-manylinux_2_28_x86_64" -> ("linux", (2, 28), "x86_64"), by the wheel-tag
    rules in ``knowledge.tags``; a tag for no OS (``any``) or a musllinux one (no torch wheel
    is) -> ("any", None, "any"), which is not judged."""
    from setup_env.knowledge.tags import floor_of_tag, platform_of_tag

    plat = tag.rsplit("-", 1)[-1]
    family = platform_of_tag(plat)
    floor = floor_of_tag(plat)
    if family is None or (floor is not None and floor[0] == "musl"):
        return "any", None, "any"
    os_name, _, arch = family.partition("_")
    return os_name, floor[1] if floor is not None and floor[0] == "glibc" else None, arch


def target_platform_findings(
    facts: Facts, wheel_tags: Sequence[str], arch: Optional[str]
) -> tuple[Finding, ...]:
    """Does the installed torch wheel (its WHEEL tags) run on the target's OS, CPU and glibc?"""
    from setup_env.decide.model import Finding

    if not wheel_tags:
        return ()
    plats = [_platform_of(t) for t in wheel_tags]
    if any(p[0] == "any" for p in plats):
        return ()
    family = {"darwin": "macos"}.get(facts.os.family, facts.os.family)
    from setup_env.knowledge.tags import linux_arch

    want_arch = linux_arch(arch or "")
    glibc = facts.os.glibc
    problems: list[str] = []
    fits = []
    for os_name, floor, tag_arch in plats:
        tag_arch = linux_arch(tag_arch)
        if family in ("linux", "macos", "windows") and os_name != family:
            problems.append(f"built for {os_name}, the target runs {family}")
            continue
        if want_arch and tag_arch not in (want_arch, "universal2"):
            problems.append(f"built for {tag_arch}, the target's CPU is {want_arch}")
            continue
        if floor is not None and glibc:
            have = tuple(int(p) for p in re.findall(r"\d+", glibc)[:2])
            if len(have) == 2 and have < floor:
                problems.append(f"needs glibc >= {floor[0]}.{floor[1]}, the target has {glibc}")
                continue
        fits.append(os_name)
    if fits or not problems:
        return ()
    return (
        Finding(
            "wheel-platform-mismatch",
            "error",
            f"the installed torch wheel does not run on the target: {problems[0]}",
            evidence=tuple(f"WHEEL tag {t}" for t in wheel_tags),
            fix="build the image for the target's platform (`setup-env plan` with the same "
            "machine flags)",
        ),
    )


def target_python_findings(facts: Facts, wanted: Optional[str]) -> tuple[Finding, ...]:
    """``--python X.Y`` names the target's Python; the environment judged runs its own."""
    from setup_env.decide.model import Finding

    have = facts.python.version or ""
    if not wanted or not have:
        return ()
    want = wanted.strip().rstrip("t")
    if have == want or have.startswith(want + "."):
        return ()
    return (
        Finding(
            "python-not-target",
            "error",
            f"this environment runs Python {have}, the target {wanted.strip()}",
            evidence=(f"{facts.python.executable or 'this interpreter'}: Python {have}",),
            fix="check the environment that will run on the target (its interpreter), or "
            "leave --python out",
        ),
    )


# --- image policies: --expect -------------------------------------------------------------------

# "torch>=2.14", "torchvision==0.29.*": a requirement on an installed distribution.
# "variant=cu130", "cuda=13.0", "python=3.12": a property of the environment.
EXPECT_KEYS = ("variant", "cuda", "python")
_KEY_VALUE = re.compile(r"^\s*(variant|cuda|python)\s*(==|=|!=)\s*([A-Za-z0-9.+_-]{1,40})\s*$")


class ExpectError(ValueError):
    """An --expect that can't be understood (a usage error)."""


@record
class Expect(Record):
    """One --expect condition as parsed: a key, an operator and a wanted value."""

    text: str  # as given
    key: str  # a distribution name ("torch") or one of EXPECT_KEYS
    op: str  # "spec" (a version specifier), "==" or "!="
    value: str  # the specifier ("<2.16,>=2.14") or the wanted value


def parse_expect(text: str) -> Expect:
    m = _KEY_VALUE.match(text)
    if m:
        op = "==" if m.group(2) in ("=", "==") else "!="
        return Expect(text, m.group(1), op, m.group(3))
    from packaging.requirements import InvalidRequirement, Requirement

    try:
        req = Requirement(text)
    except InvalidRequirement as exc:
        raise ExpectError(
            f"--expect {text!r}: expected a requirement (torch>=2.14) or "
            f"KEY=VALUE with KEY one of {', '.join(EXPECT_KEYS)} ({exc})"
        ) from None
    if req.marker or req.url or req.extras:
        raise ExpectError(f"--expect {text!r}: markers, URLs and extras are not supported")
    return Expect(text, req.name.lower().replace("_", "-"), "spec", str(req.specifier))


@record
class ExpectResult(Record):
    """One --expect condition checked against the environment."""

    expect: Expect
    ok: bool
    actual: Optional[str]  # what the environment has (None: not there)


def _actual(facts: Facts, key: str) -> Optional[str]:
    torch = facts.package("torch")
    if key == "variant":
        return str(torch.variant) if torch and torch.variant else None
    if key == "cuda":
        return (torch.cuda or None) if torch else None
    if key == "python":
        return facts.python.version or None
    pkg = facts.package(key)
    return pkg.version if pkg else None


def evaluate_expectations(facts: Facts, expects: Sequence[Expect]) -> tuple[ExpectResult, ...]:
    from packaging.specifiers import SpecifierSet
    from packaging.version import InvalidVersion, Version

    out: list[ExpectResult] = []
    for e in expects:
        actual = _actual(facts, e.key)
        if e.op == "spec":
            ok = False
            if actual is not None:
                try:
                    ok = Version(actual) in SpecifierSet(e.value, prereleases=True)
                except InvalidVersion:
                    ok = False
            out.append(ExpectResult(e, ok, actual))
            continue
        same = actual is not None and _same(e.key, actual, e.value)
        out.append(ExpectResult(e, same if e.op == "==" else not same, actual))
    return tuple(out)


def _same(key: str, actual: str, wanted: str) -> bool:
    if key == "python":  # python=3.12 matches 3.12.7
        return actual == wanted or actual.startswith(wanted + ".")
    if key == "variant":  # as variants (Variant.parse("CU130") == cu130), never as text
        want = Variant.find(wanted)
        return want is not None and want == Variant.find(actual)
    return actual.lower() == wanted.lower()


def expectation_findings(results: Sequence[ExpectResult]) -> tuple[Finding, ...]:
    from setup_env.decide.model import Finding

    out: list[Finding] = []
    for r in results:
        if r.ok:
            continue
        has = f"{r.expect.key} is {r.actual}" if r.actual else f"no {r.expect.key} installed"
        out.append(
            Finding(
                "expectation-not-met",
                "error",
                f"expected {r.expect.text}, but {has}",
                evidence=(f"--expect {r.expect.text}",),
                fix="install what the policy names, or change the policy",
            )
        )
    return tuple(out)


# --- the result object -----------------------------------------------------------------------


@record
class CheckReport(Record):
    """Everything ``check`` learned and decided; ``setup_env.output.render_check`` prints it."""

    label: str  # "live", "replay:NAME", or the described target
    facts: Facts
    verdict: Verdict
    plan: Optional[Plan] = None
    plan_error: Optional[str] = None
    findings: tuple[Finding, ...] = ()
    verify: Optional[VerifyReport] = None
    verify_skipped: Optional[str] = None
    advice: Optional[CloudAdvice] = None
    target: Optional[str] = None  # the machine judged, when not this one
    arches: Optional[TorchArches] = None
    expectations: tuple[ExpectResult, ...] = ()
    node: dict[str, Any] = field(default_factory=dict)  # hostname etc. (fleet reports)

    @property
    def exit_code(self) -> int:
        return self.verdict.exit_code

    def payload(self) -> dict[str, Any]:
        """The body of the ``setup-env/check`` JSON envelope."""
        out: dict[str, Any] = {
            "machine": self.label,
            "verdict": {
                "state": self.verdict.state,
                "line": self.verdict.line,
                "command": self.verdict.command,
            },
            "facts": self.facts,
            "plan": plan_json(self.plan),
            "plan_error": self.plan_error,
            "counts": counts(self.findings),
            "findings": [finding_json(f) for f in self.findings],
            "verify": self.verify,
            "verify_skipped": self.verify_skipped,
            "cloud": self.advice,
            "node": self.node,
        }
        if self.target is not None:
            out["target"] = self.target
        if self.arches is not None:
            out["torch_arches"] = {
                "sass": list(self.arches.sass),
                "ptx": list(self.arches.ptx),
                "files": list(self.arches.files),
                "error": self.arches.error,
                "wheel_tags": list(self.arches.wheel_tags),
            }
        if self.expectations:
            out["expectations"] = [
                {"expect": r.expect.text, "ok": r.ok, "actual": r.actual} for r in self.expectations
            ]
        return out
