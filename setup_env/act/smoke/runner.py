"""The verify parent: starts the worker, enforces deadlines, restarts past a hung check.

The parent never imports torch. It starts ``python -m setup_env.act.smoke.worker`` (the same
interpreter, or ``VerifyOptions.python``), reads one JSON event per line from the worker's stdout,
and gives each check its deadline. A check that passes its deadline gets its worker killed (the
whole process group: torch.compile spawns helpers) and a fresh worker runs the remaining checks;
a worker that dies mid-check is reported the same way. The distributed check is its own torchrun
launch. Machine facts are detected in a thread while the worker imports torch.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Optional

from setup_env import bounded
from setup_env.act.smoke.child import MAX_RANK_FILE, Child, FactsThread, child_env
from setup_env.decide import smoke as decide
from setup_env.decide import smoke_speed
from setup_env.decide.smoke_model import (
    CHECKS,
    TEST_CHECKS,
    CheckResult,
    VerifyOptions,
    VerifyReport,
    count_statuses,
    spec,
)

if TYPE_CHECKING:
    from setup_env.facts import CpuInfo

Progress = Callable[[CheckResult], None]

TEST_CHECKS_ENV = "SETUP_ENV_VERIFY_TEST_CHECKS"
# After torch imports, the worker probes the devices (the first CUDA/XPU/MPS initialisation).
DEVICE_PROBE_TIMEOUT_S = 120.0


def selected_checks(options: VerifyOptions) -> list[str]:
    """Check names to run, in order (import always runs: everything else needs it)."""
    only = set(options.only)
    names: list[str] = []
    for c in CHECKS:
        if c.name != "import":
            if c.flag == "compile" and not options.compile and c.name not in only:
                continue
            if c.flag == "distributed" and not options.distributed and c.name not in only:
                continue
            if only and c.name not in only:
                continue
            if c.name in options.skip:
                continue
        names.append(c.name)
    tests = list(options.test_checks) or [
        t for t in os.environ.get(TEST_CHECKS_ENV, "").split(",") if t.strip()
    ]
    if tests:
        known = {t.name[1:] for t in TEST_CHECKS}
        extra = [f"_{t.strip()}" for t in tests if t.strip() in known]
        at = names.index("roundtrip") + 1 if "roundtrip" in names else len(names)
        names[at:at] = extra
    return names


def _gpu_peaks(name: str) -> Any:
    try:
        from setup_env.knowledge.gpus import lookup  # type: ignore[import-not-found,unused-ignore]
    except Exception:
        return None
    try:
        return lookup(name)
    except Exception:
        return None


def _tail(text: str, lines: int = 6) -> str:
    kept = [ln for ln in text.strip().splitlines() if ln.strip()]
    return "\n".join(kept[-lines:])


class _Run:
    def __init__(self, options: VerifyOptions, progress: Progress | None) -> None:
        self.options = options
        self.progress = progress
        self.results: list[CheckResult] = []
        self.python = os.path.abspath(options.python or sys.executable)
        self.scale = options.timeout_scale if options.timeout_scale > 0 else 1.0
        self.workers = 0
        self.info: dict[str, Any] = {}
        self.facts_thread = FactsThread(options)
        self.env = child_env()
        self.children: list[Child] = []

    def report(self, res: CheckResult) -> None:
        self.results.append(res)
        if self.progress is not None:
            self.progress(res)

    def timeout(self, name: str) -> float:
        return spec(name).timeout_s * self.scale

    def start_worker(self, payload: dict[str, Any]) -> Child:
        self.workers += 1
        argv = [self.python, "-m", "setup_env.act.smoke.worker", "--spec", json.dumps(payload)]
        return self.spawn(argv, self.env)

    def spawn(self, argv: Sequence[str], env: Mapping[str, str]) -> Child:
        child = Child(argv, env)
        self.children.append(child)
        return child

    def kill_all(self) -> None:
        for child in self.children:
            child.kill()

    def wait_ready(self, child: Child) -> tuple[str, dict[str, Any]]:
        """Until the worker has imported torch: ("info", ev) | ("import_failed", ev) |
        ("timeout", {}) | ("died", {"returncode", "stderr"})."""
        deadline = time.monotonic() + self.timeout("import")
        hello = False
        imported: dict[str, Any] | None = None
        while True:
            kind, ev = child.next_event(deadline)
            if kind == "timeout":
                child.kill()
                return "timeout", {
                    "hello": hello,
                    "imported": imported,
                    "stderr": child.stderr_text(),
                }
            if kind == "eof":
                rc = child.returncode()
                return "died", {
                    "returncode": rc,
                    "stderr": child.stderr_text(),
                    "hello": hello,
                    "imported": imported,
                }
            assert ev is not None
            if ev["event"] == "hello":
                hello = True
            elif ev["event"] == "imported":
                imported = ev
                deadline = time.monotonic() + DEVICE_PROBE_TIMEOUT_S * self.scale
            elif ev["event"] in ("info", "import_failed"):
                return ev["event"], ev


def run_verify(options: VerifyOptions, progress: Progress | None = None) -> VerifyReport:
    """Run the checks; ``progress`` gets each CheckResult as it finishes."""
    run = _Run(options, progress)
    t0 = time.monotonic()
    try:
        return _verify(run, options)
    except (RuntimeError, OSError) as exc:
        # No thread or process could be started (the process/thread limit, EAGAIN): a finding
        # about this machine, reported on the check that could not run; anything else is a bug.
        diag = decide.classify_error(f"{type(exc).__name__}: {exc}")
        if diag is None or diag.code != "process-limit":
            raise
        done = {r.name for r in run.results}
        name = next((n for n in selected_checks(options) if n not in done), "import")
        run.report(
            CheckResult(
                name,
                "fail",
                0.0,
                f"could not start the verify worker or its threads: {diag.cause}",
                None,
                {"error": f"{type(exc).__name__}: {exc}"},
                diag.fix,
            )
        )
        return _finish(run, t0)
    finally:  # Ctrl-C or an error in a progress callback: no worker outlives us
        run.kill_all()


def _verify(run: _Run, options: VerifyOptions) -> VerifyReport:
    t0 = time.monotonic()
    names = selected_checks(options)
    device_checks = [n for n in names if spec(n).where == "worker" and spec(n).scope == "device"]
    torch_missing = False
    error: str | None = None

    if not os.path.exists(run.python):
        error = f"no interpreter at {run.python}"
    elif not os.access(run.python, os.X_OK) or os.path.isdir(run.python):
        error = f"{run.python} is not an executable interpreter"
    if error is not None:
        return _finish(run, t0, error=error)

    spec_payload = {
        "device": options.device or "auto",
        "all_devices": options.all_devices,
        "checks": device_checks,
    }
    child = run.start_worker(spec_payload)
    state, ev = run.wait_ready(child)
    if state != "info":
        torch_missing, error = _import_failed(run, state, ev, names)
        child.kill()
        return _finish(run, t0, error=error, torch_missing=torch_missing)

    run.info = info = ev
    imp_msg = f"torch {info.get('torch_version')} imported in {float(info.get('import_s', 0)):.2f}s"
    imp_ev = {
        k: info.get(k)
        for k in ("torch_version", "torch_file", "import_s", "numpy", "numpy_error")
        if info.get(k) is not None
    }
    imp_ev["python"] = run.python
    status: Any = "pass"
    fix = None
    for text in [*info.get("import_warnings", []), str(info.get("numpy_error") or "")]:
        diag = decide.classify_error(
            text, torch_version=info.get("torch_version"), numpy_version=info.get("numpy")
        )
        if diag is not None:
            status, fix = "warn", diag.fix
            imp_msg += f"; {diag.cause}"
            break
    else:
        if info.get("numpy_error"):
            status = "warn"
            imp_msg += f"; NumPy does not import: {info['numpy_error']}"
    run.report(
        CheckResult("import", status, float(info.get("import_s", 0)), imp_msg, None, imp_ev, fix)
    )

    facts = run.facts_thread.get() if any(n in names for n in ("build", "device", "arch")) else None
    same = os.path.realpath(run.python) == os.path.realpath(sys.executable)
    if "build" in names:
        run.report(decide.decide_build(info, facts, same_interpreter=same))
    if "deps" in names:
        run.report(smoke_speed.decide_deps(info))
    if "device" in names:
        run.report(decide.decide_device(info, facts, options.device))
    if "arch" in names:
        from setup_env.knowledge.matrix import in_use

        run.report(decide.decide_arch(info, facts, in_use()))

    # The plan: which (check, device) pairs the worker will run.
    kind, pev = child.next_event(time.monotonic() + 30 * run.scale)
    items: list[tuple[str, str]] = []
    if kind == "event" and pev is not None and pev.get("event") == "plan":
        items = [(str(a), str(b)) for a, b in pev.get("items", [])]
    if not info.get("devices"):
        for n in device_checks:
            run.report(CheckResult(n, "skip", 0.0, "no usable device (see the device check)"))
        child.kill()
    else:
        _run_items(run, child, items, spec_payload)

    if "distributed" in names:
        run.report(_run_distributed(run))
    return _finish(run, t0)


def _import_failed(
    run: _Run, state: str, ev: dict[str, Any], names: list[str]
) -> tuple[bool, str | None]:
    """Report the import check's failure; (torch_missing, error)."""
    torch_missing = False
    error: str | None = None
    if state == "import_failed":
        text = f"{ev.get('traceback', '')}\n{ev.get('type')}: {ev.get('message')}"
        if ev.get("type") == "ModuleNotFoundError" and ev.get("module") == "torch":
            torch_missing = True
            msg = f"torch is not installed for {run.python}"
            fix = (
                "get the right build for this machine with `setup-env plan` (or `setup-env "
                "install`)"
            )
        else:
            diag = decide.classify_error(text, source_checkout=_source_checkout_here())
            first = str(ev.get("message", "")).strip().splitlines()
            line = f"{ev.get('type')}: {first[0] if first else ''}"
            msg = f"import torch failed: {diag.cause if diag else line}"
            fix = diag.fix if diag else "reinstall torch; " + decide.PLAN_FIX
        run.report(
            CheckResult(
                "import",
                "fail",
                0.0,
                msg,
                None,
                {
                    "error": str(ev.get("message", ""))[:2000],
                    "type": ev.get("type"),
                    "python": run.python,
                },
                fix,
            )
        )
    elif state in ("timeout", "died") and ev.get("imported"):
        # torch imported; the first device initialisation hung or crashed.
        imp = ev["imported"]
        run.report(
            CheckResult(
                "import",
                "pass",
                float(imp.get("import_s", 0)),
                f"torch {imp.get('torch_version')} imported in "
                f"{float(imp.get('import_s', 0)):.2f}s",
                None,
                {"python": run.python},
            )
        )
        rc = ev.get("returncode")
        stderr = str(ev.get("stderr", ""))
        diag = decide.classify_error(stderr, returncode=rc, cpu=_cpu(run))
        if state == "timeout":
            limit = DEVICE_PROBE_TIMEOUT_S * run.scale
            msg = (
                f"initialising the devices (torch.cuda/xpu/mps) did not finish within "
                f"{limit:g}s (killed): a hung driver or device"
            )
        else:
            msg = f"the worker died initialising the devices ({_rc_text(rc)})"
        if diag is not None:
            msg += f": {diag.cause}"
        run.report(
            CheckResult(
                "device",
                "fail",
                0.0,
                msg,
                None,
                {"stderr": _tail(stderr)},
                diag.fix
                if diag
                else "check `nvidia-smi` and `dmesg` for "
                "driver errors (Xid); reset or reboot the GPU",
            )
        )
        for n in names:
            if n not in ("import", "device"):
                run.report(CheckResult(n, "skip", 0.0, "the devices could not be initialised"))
        return False, None
    elif state == "timeout":
        if not ev.get("hello"):
            error = f"the worker did not start under {run.python}: " + _tail(ev["stderr"], 3)
        run.report(
            CheckResult(
                "import",
                "fail",
                run.timeout("import"),
                f"import torch did not finish within {run.timeout('import'):.0f}s (killed)",
                None,
                {"stderr": _tail(ev["stderr"])},
                "look for a hung driver or a slow network filesystem; "
                "raise the deadline with --timeout-scale",
            )
        )
    else:  # died
        rc = ev.get("returncode")
        stderr = str(ev.get("stderr", ""))
        if not ev.get("hello"):
            error = (
                f"could not run the verify worker under {run.python} (exit {rc}): "
                f"{decide.last_line(stderr) or 'no output'}"
            )
            run.report(
                CheckResult(
                    "import",
                    "fail",
                    0.0,
                    error,
                    None,
                    {"stderr": _tail(stderr)},
                    "use a Python 3.9+ interpreter",
                )
            )
        else:
            diag = decide.classify_error(stderr, returncode=rc, cpu=_cpu(run))
            msg = f"the process importing torch died ({_rc_text(rc)})"
            if diag:
                msg += f": {diag.cause}"
            run.report(
                CheckResult(
                    "import",
                    "fail",
                    0.0,
                    msg,
                    None,
                    {"stderr": _tail(stderr)},
                    diag.fix if diag else None,
                )
            )
    for n in names:
        if n != "import":
            run.report(CheckResult(n, "skip", 0.0, "torch did not import"))
    return torch_missing, error


def _cpu(run: _Run) -> CpuInfo | None:
    """The CPU facts (flags, ISA level) a crash is judged against, when detected."""
    facts = run.facts_thread.get()
    return facts.cpu if facts is not None else None


def _source_checkout_here() -> bool:
    """Whether the working directory (the worker's too) holds a PyTorch source tree."""
    cwd = os.getcwd()
    return os.path.isfile(os.path.join(cwd, "torch", "__init__.py")) and any(
        os.path.exists(os.path.join(cwd, marker)) for marker in ("setup.py", "pyproject.toml")
    )


def _rc_text(rc: Optional[int]) -> str:
    if rc is None:
        return "still running"
    if rc < 0:
        try:
            return f"killed by {signal.Signals(-rc).name}"
        except ValueError:
            return f"killed by signal {-rc}"
    return f"exit status {rc}"


def _finalize(run: _Run, raw: dict[str, Any]) -> CheckResult:
    res = CheckResult(
        name=str(raw.get("check")),
        status=raw.get("status", "fail"),
        duration_s=float(raw.get("duration_s", 0.0)),
        message=str(raw.get("message", "")),
        device=raw.get("device"),
        evidence=dict(raw.get("evidence") or {}),
        fix=raw.get("fix"),
    )
    if res.status == "fail":
        text = res.message + "\n" + str(res.evidence.get("traceback", ""))
        if "numpy" in res.message.lower():  # what torch said of NumPy when it imported
            text += "\n" + "\n".join(str(w) for w in run.info.get("import_warnings") or [])
        diag = decide.classify_error(
            text,
            torch_version=run.info.get("torch_version"),
            numpy_version=run.info.get("numpy"),
        )
        if diag is not None:
            res = CheckResult(
                res.name,
                res.status,
                res.duration_s,
                f"{res.message} ({diag.cause})",
                res.device,
                res.evidence,
                # The NumPy to reinstall is decided here, knowing torch's and NumPy's versions.
                diag.fix if diag.code == "numpy-abi" else (res.fix or diag.fix),
            )
        if "traceback" in res.evidence:
            ev = dict(res.evidence)
            ev["traceback"] = _tail(str(ev["traceback"]), 12)
            res = CheckResult(
                res.name, res.status, res.duration_s, res.message, res.device, ev, res.fix
            )
    if res.device == "cpu":
        res = smoke_speed.judge_cpu_speed(res)
    if res.name in smoke_speed.SPEED_WARN_BELOW and res.device and res.device != "cpu":
        name = (run.info.get("device_names") or {}).get(res.device, "")
        gpu = None
        facts = run.facts_thread.facts
        if facts is not None:
            gpu = next((g for g in facts.gpus if g.name == name), None)
        res = smoke_speed.judge_speed(res, _gpu_peaks(name) if name else None, gpu)
    return res


def _run_items(
    run: _Run, child: Child, items: list[tuple[str, str]], payload: dict[str, Any]
) -> None:
    remaining = list(items)
    while remaining:
        name, dev = remaining[0]
        deadline = time.monotonic() + run.timeout(name)
        started = time.monotonic()
        kind, ev = child.next_event(deadline)
        if kind == "event":
            assert ev is not None
            if ev["event"] == "start":
                deadline = time.monotonic() + run.timeout(name)
                started = time.monotonic()
                kind, ev = child.next_event(deadline)
        if kind == "event" and ev is not None and ev.get("event") == "result":
            remaining.pop(0)
            run.report(_finalize(run, ev))
            continue
        if kind == "event":  # something unexpected ("done" early): treat as a crash
            kind = "eof"
        # Hung or dead: report, then a new worker for the rest.
        if kind == "timeout":
            child.kill()
            limit = run.timeout(name)
            run.report(
                CheckResult(
                    name,
                    "fail",
                    round(time.monotonic() - started, 3),
                    f"did not finish within its {limit:g}s deadline: killed the worker and went on",
                    dev,
                    {"deadline_s": limit, "stderr": _tail(child.stderr_text())},
                    "a hung device or driver: check `nvidia-smi` / dmesg; raise the deadline with "
                    "--timeout-scale if the machine is just slow",
                )
            )
        else:
            rc = child.returncode()
            stderr = child.stderr_text()
            diag = decide.classify_error(
                stderr, returncode=rc, torch_version=run.info.get("torch_version"), cpu=_cpu(run)
            )
            msg = f"the worker died during this check ({_rc_text(rc)})"
            if diag is not None:
                msg += f": {diag.cause}"
            elif decide.last_line(stderr):
                msg += f": {decide.last_line(stderr)}"
            run.report(
                CheckResult(
                    name,
                    "fail",
                    round(time.monotonic() - started, 3),
                    msg,
                    dev,
                    {"returncode": rc, "stderr": _tail(stderr)},
                    diag.fix if diag else None,
                )
            )
            child.kill()
        remaining.pop(0)
        if not remaining:
            break
        child = run.start_worker({**payload, "items": [list(i) for i in remaining]})
        state, info = run.wait_ready(child)
        if state != "info":
            why = {
                "timeout": "timed out importing torch",
                "died": "died importing torch",
                "import_failed": "failed to import torch",
            }[state]
            for n, d in remaining:
                run.report(
                    CheckResult(
                        n,
                        "fail",
                        0.0,
                        f"not run: the restarted worker {why}",
                        d,
                        {"stderr": _tail(str(info.get("stderr", "")))},
                    )
                )
            child.kill()
            return
        child.next_event(time.monotonic() + 30 * run.scale)  # its plan
    child.next_event(time.monotonic() + 5)  # "done"; then the worker exits by itself
    child.returncode(5)
    child.kill()


# --- distributed --------------------------------------------------------------------------------


def _run_distributed(run: _Run) -> CheckResult:
    info = run.info
    options = run.options
    devices = [str(d) for d in info.get("devices") or []]
    kind = devices[0].split(":")[0] if devices else "cpu"
    backend = {"cuda": "nccl", "xpu": "xccl"}.get(kind, "gloo")
    count = int(info.get("accelerator_count") or 0)
    nproc = options.nproc_per_node or (max(count, 1) if backend != "gloo" else 2)
    size_mb = 8.0 if backend == "gloo" else 256.0
    started = time.monotonic()
    host = _rendezvous_host(options.torchrun_args)
    if host is not None:
        # torchrun retries a name that does not resolve until its rendezvous timeout (minutes):
        # ask the resolver first, as the ranks would.
        from setup_env.bounded.net import resolve_host

        why = resolve_host(host, RESOLVE_TIMEOUT_S * run.scale)
        if why is not None:
            return CheckResult(
                "distributed",
                "fail",
                round(time.monotonic() - started, 3),
                f"the rendezvous host {host!r} does not resolve on this node ({why}); "
                "torchrun was not started",
                None,
                {"rendezvous_host": host, "resolver": why},
                f"check the name given to --rdzv-endpoint/--master-addr and this node's DNS "
                f"(`getent hosts {host}`); under SLURM use the first node of "
                "`scontrol show hostnames $SLURM_JOB_NODELIST`",
            )
    with tempfile.TemporaryDirectory(prefix="setup-env-dist-") as out:
        rdzv = list(options.torchrun_args) or ["--standalone"]
        argv = [
            run.python,
            "-m",
            "torch.distributed.run",
            *rdzv,
            "--nproc-per-node",
            str(nproc),
            "-m",
            "setup_env.act.smoke.dist_worker",
            "--out",
            out,
            "--backend",
            backend,
            "--size-mb",
            str(size_mb),
            "--budget-s",
            "0.3" if backend == "gloo" else "0.5",
        ]
        env = child_env({"OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "1")})
        child = run.spawn(argv, env)
        limit = run.timeout("distributed")
        kind_, _ = child.next_event(time.monotonic() + limit)
        while kind_ == "event":  # torchrun's stdout carries no events; drain until EOF
            kind_, _ = child.next_event(time.monotonic() + limit)
        if kind_ == "timeout":
            child.kill()
            return CheckResult(
                "distributed",
                "fail",
                round(time.monotonic() - started, 3),
                f"torchrun did not finish within {limit:g}s (killed)",
                None,
                {"argv": argv[1:], "stderr": _tail(child.stderr_text(), 10)},
                "check that every node reaches the rendezvous endpoint; raise the "
                "deadline with --timeout-scale",
            )
        rc = child.returncode(30)
        ranks = []
        for fname in sorted(os.listdir(out)):
            if fname.endswith(".json"):
                try:
                    data = bounded.read_file(os.path.join(out, fname), MAX_RANK_FILE)
                    rank = bounded.parse_json(data, fname, allow_nan=True)
                except (OSError, ValueError):
                    continue
                if isinstance(rank, dict):
                    ranks.append(rank)
    duration = round(time.monotonic() - started, 3)
    ev: dict[str, Any] = {
        "backend": backend,
        "nproc_per_node": nproc,
        "torchrun_exit": rc,
        "ranks": ranks,
    }
    errors = [r for r in ranks if r.get("error")]
    wrong = [r for r in ranks if not r.get("error") and not r.get("correct")]
    if wrong and not errors:  # the ranks exit 1 then: torchrun's own failure says nothing more
        return CheckResult(
            "distributed",
            "fail",
            duration,
            f"all-reduce returned wrong values on {len(wrong)} of {len(ranks)} local ranks: "
            + "; ".join(_wrong_text(r) for r in sorted(wrong, key=_rank_of)[:4]),
            None,
            ev,
            "a rank whose all-reduce disagrees: check that rank's GPU and links "
            "(`nvidia-smi topo -m`, NCCL_DEBUG=INFO) and its torch/NCCL versions against the "
            "others",
        )
    if errors or not ranks or rc != 0:
        stderr = child.stderr_text()
        text = "\n".join(
            f"rank {r.get('rank')}: {r.get('error')}" for r in sorted(errors, key=_rank_of)
        ) or _torchrun_cause(stderr)
        diag = decide.classify_error(text + "\n" + stderr)
        ev["stderr"] = _tail(stderr, 10)
        msg = f"torchrun ({backend}, {nproc} per node) failed ({_rc_text(rc)})"
        if text:
            msg += f": {text.splitlines()[0][:300]}"
        return CheckResult(
            "distributed", "fail", duration, msg, None, ev, diag.fix if diag else None
        )
    world = ranks[0].get("world_size")
    r0 = min(ranks, key=lambda r: int(r.get("rank", 0)))
    busbw = r0.get("busbw_gbps")
    mib = int(r0.get("bytes", 0)) / (1 << 20)
    ev["busbw_gbps"] = busbw
    ev["algbw_gbps"] = r0.get("algbw_gbps")
    ev["world_size"] = world
    return CheckResult(
        "distributed",
        "pass",
        duration,
        f"{world} ranks ({backend}): all-reduce exact; bus bandwidth {busbw} GB/s "
        f"({mib:.0f} MiB messages)",
        None,
        ev,
    )


# How long the rendezvous host may take to resolve (times --timeout-scale).
RESOLVE_TIMEOUT_S = 5.0


def _rendezvous_host(torchrun_args: Sequence[str]) -> str | None:
    """The host torchrun's ranks will connect to (--rdzv-endpoint HOST[:PORT] or
    --master-addr HOST), without brackets; None for a --standalone run."""
    args = list(torchrun_args)
    for flag in ("--rdzv-endpoint", "--master-addr"):
        if flag in args[:-1]:
            value = args[args.index(flag) + 1]
            if value.startswith("["):
                return value[1 : value.find("]")] or None
            return (value.rsplit(":", 1)[0] if flag == "--rdzv-endpoint" else value) or None
    return None


def _rank_of(r: Mapping[str, Any]) -> int:
    try:
        return int(r.get("rank", -1))
    except (TypeError, ValueError):
        return -1


def _wrong_text(r: Mapping[str, Any]) -> str:
    """ "rank 1: 3 of 65536 elements wrong, [5] = 11 (expected 10)"."""
    text = f"rank {r.get('rank')}: {r.get('wrong_values')} of {r.get('checked')} elements wrong"
    sample = r.get("wrong_sample") or []
    if sample and isinstance(sample[0], list) and len(sample[0]) == 3:
        i, got, want = sample[0]
        text += f", [{i}] = {got:g} (expected {want:g})"
    return text


def _torchrun_cause(stderr: str) -> str:
    """The line of torchrun's output that says what failed: not its closing "To enable
    traceback see ..." nor the banner lines around it."""
    skip = ("To enable traceback", "traceback :", "error_file", "Root Cause", "Failures:")
    lines = [ln.strip() for ln in stderr.splitlines() if ln.strip()]
    kept = [ln for ln in lines if not any(s in ln for s in skip) and set(ln) - set("=-[] ")]
    return decide.last_line("\n".join(kept))


def _finish(
    run: _Run, t0: float, error: str | None = None, torch_missing: bool = False
) -> VerifyReport:
    checks = tuple(run.results)
    info = run.info
    devices = tuple(str(d) for d in info.get("devices") or [])
    ok = error is None and not torch_missing and not any(c.status == "fail" for c in checks)
    if error is not None and not checks:
        checks = (CheckResult("import", "fail", 0.0, error, None, {}, None),)
    return VerifyReport(
        ok=ok,
        checks=checks,
        python=run.python,
        torch_version=info.get("torch_version"),
        torch_missing=torch_missing,
        device=devices[0] if devices else None,
        devices=devices,
        duration_s=round(time.monotonic() - t0, 3),
        workers=run.workers,
        error=error,
        counts=count_statuses(checks),
    )
