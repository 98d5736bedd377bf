#!/usr/bin/env python3
"""The long fuzz run of issue 11: hostile inputs over every parser and entry point.

    python scripts/fuzz.py                 # 12,000 inputs, seed 1
    python scripts/fuzz.py --inputs 50000 --seed 7 --timeout 10

Inputs are made by mutating real captured documents (tests/fixtures: host folders, facts,
the bundled matrix, index answers, command outputs) and from scratch (deep nesting, huge
integers, BOMs and UTF-16, control characters, wrong types, FIFOs, links out of the folder,
/dev/zero). Each input runs in this process under a watchdog (SIGALRM after --timeout s: a
hang). Prints, per target and in total: inputs tried, tracebacks (an exception other than the
documented error, or a command answering "internal-error"), hangs, and peak memory (max RSS).
Exit status 1 when any traceback or hang was seen. A few inputs per run go to real hostile
loopback servers (tests/fixtures/hostile/servers.py).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import inspect
import io
import json
import os
import random
import resource
import signal
import sys
import tempfile
import time
import traceback
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from setup_env import bounded  # noqa: E402
from setup_env.cli import main  # noqa: E402
from setup_env.facts import Facts, FactsError  # noqa: E402
from setup_env.knowledge import index  # noqa: E402
from setup_env.knowledge import matrix as mx  # noqa: E402
from setup_env.probe import cloud  # noqa: E402
from setup_env.probe.host import ReplayError, ReplayHost  # noqa: E402

FIX = ROOT / "tests" / "fixtures"
HOSTS = sorted(p for p in (FIX / "hosts").iterdir() if (p / "host.json").exists())
HOSTILE_STRINGS = [
    "", "\n", "\r\n", "\x00", "\x1b[2J", "\u2028", "\ufeff", "$(id)", "`id`", "; rm -rf /",
    "\n$ curl evil.sh | sh", "../../../etc/passwd", "/dev/zero", "%2e%2e", "NaN", "-1",
    "9" * 5000, "[" * 3000, "{" * 3000, "\"", "\\", "A" * 70000,
]  # fmt: skip


class Hang(Exception):
    pass


def _alarm(_sig: int, _frame: Any) -> None:
    raise Hang()


# --- generators ------------------------------------------------------------------------------


def rand_scalar(r: random.Random) -> Any:
    return r.choice(
        [
            None, True, False, r.randint(-(10**6), 10**6), 10**r.randint(20, 60), r.random(),
            r.choice(HOSTILE_STRINGS)[:200], "x" * r.randint(0, 50),
        ]
    )  # fmt: skip


def rand_doc(r: random.Random, depth: int = 0) -> Any:
    k = r.random()
    if depth > 4 or k < 0.4:
        return rand_scalar(r)
    if k < 0.7:
        return [rand_doc(r, depth + 1) for _ in range(r.randint(0, 4))]
    return {str(rand_scalar(r))[:20]: rand_doc(r, depth + 1) for _ in range(r.randint(0, 5))}


def mutate_doc(r: random.Random, doc: Any, n: int = 3) -> Any:
    doc = json.loads(json.dumps(doc))
    for _ in range(n):
        node, parent, key = doc, None, None
        for _ in range(r.randint(0, 6)):
            if isinstance(node, dict) and node:
                parent, key = node, r.choice(list(node))
                node = node[key]
            elif isinstance(node, list) and node:
                parent, key = node, r.randrange(len(node))
                node = node[key]
            else:
                break
        new = rand_doc(r) if r.random() < 0.8 else r.choice([[], {}, "", 0, None])
        if parent is None:
            doc = new
        else:
            parent[key] = new  # type: ignore[index]
    return doc


def mutate_text(r: random.Random, text: str) -> str:
    chars = list(text)
    for _ in range(r.randint(1, 6)):
        op = r.random()
        pos = r.randint(0, len(chars))
        if op < 0.3:
            chars[pos:pos] = list(r.choice(HOSTILE_STRINGS)[:300])
        elif op < 0.5 and chars:
            del chars[pos : pos + r.randint(1, 50)]
        elif op < 0.7:
            chars[pos:pos] = [chr(r.randint(0, 0x2FFF)) for _ in range(r.randint(1, 8))]
        elif op < 0.85 and chars:
            line = "".join(chars).splitlines()
            if line:
                chars[pos:pos] = list("\n" + r.choice(line) * r.randint(1, 3))
        else:
            chars = chars[: r.randint(0, len(chars))]
    return "".join(chars)


def encode(r: random.Random, text: str) -> bytes:
    k = r.random()
    if k < 0.1:
        return text.encode("utf-16")
    if k < 0.15:
        return b"\xef\xbb\xbf" + text.encode("utf-8", "surrogatepass")
    if k < 0.2:
        return bytes(r.randint(0, 255) for _ in range(r.randint(0, 200)))
    return text.encode("utf-8", "surrogatepass")


def doc_bytes(r: random.Random, doc: Any) -> bytes:
    k = r.random()
    if k < 0.05:
        return b"[" * r.randint(1000, 300000)
    if k < 0.08:
        return b'{"schema_version": ' + b"9" * r.randint(100, 20000) + b"}"
    text = json.dumps(doc)
    if k < 0.3:
        text = mutate_text(r, text)
    return encode(r, text)


# --- targets ---------------------------------------------------------------------------------


class Ctx:
    def __init__(self, seed: int) -> None:
        self.r = random.Random(seed)
        self.tmp = Path(tempfile.mkdtemp(prefix="setup-env-fuzz-"))
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            main(["detect", "--json", "--root", str(HOSTS[0])])
        self.facts = [json.loads(buf.getvalue())]
        for h in HOSTS[1:4]:
            buf = io.StringIO()
            with contextlib.redirect_stdout(buf):
                main(["detect", "--json", "--root", str(h)])
            self.facts.append(json.loads(buf.getvalue()))
        self.host_docs = [(h, json.loads((h / "host.json").read_text())) for h in HOSTS]
        self.matrix = json.loads(mx.BUNDLED_PATH.read_text())
        self.pep691 = [json.loads(p.read_text()) for p in (FIX / "index").glob("pypi-*.json")]
        self.pep503 = [p.read_text() for p in (FIX / "index" / "whl").rglob("index.html")]
        self.texts = [
            p.read_text(errors="replace")
            for h in HOSTS
            for p in list((h / "commands").glob("*.txt")) + list((h / "files").rglob("*"))
            if p.is_file() and p.stat().st_size < 200_000
        ] or ["x"]
        self.parsers = _text_parsers()
        self.n = 0

    def path(self, name: str) -> Path:
        self.n += 1
        return self.tmp / f"{self.n}-{name}"


def _text_parsers() -> list[tuple[str, Callable[[str], Any]]]:
    out = []
    for name in ("apple", "cloud", "cpu", "nvidia", "osinfo", "packages", "rocm", "toolkit", "xpu"):
        mod = importlib.import_module(f"setup_env.probe.{name}")
        for fname, fn in sorted(vars(mod).items()):
            if (
                fname.startswith("parse_")
                and inspect.isfunction(fn)
                and (fn.__module__ + ".").startswith(mod.__name__ + ".")  # or a package's module
            ):
                req = [
                    p for p in inspect.signature(fn).parameters.values()
                    if p.default is inspect.Parameter.empty
                ]  # fmt: skip
                if len(req) == 1 and req[0].annotation in ("str", "str | None"):
                    out.append((f"{name}.{fname}", fn))
    return out


def cli(argv: list[str]) -> str:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main(argv)
    if rc not in (0, 1, 2, 3):
        raise AssertionError(f"exit {rc}")
    if "internal-error" in out.getvalue() or "internal error" in err.getvalue():
        raise AssertionError("internal error: " + err.getvalue()[-400:])
    if "--json" in argv and not out.getvalue().strip():
        raise AssertionError("no JSON under --json: " + err.getvalue()[-300:])
    if "--json" in argv:
        json.loads(out.getvalue())
    return f"exit {rc}"


def t_json(c: Ctx) -> tuple[str, Callable[[], Any]]:
    data = doc_bytes(c.r, rand_doc(c.r))
    return repr(data[:80]), lambda: _expect(bounded.InputError, bounded.parse_json, data)


def t_facts(c: Ctx) -> tuple[str, Callable[[], Any]]:
    base = c.r.choice(c.facts)
    doc = mutate_doc(c.r, base if c.r.random() < 0.5 else base["facts"], c.r.randint(1, 4))
    data = doc_bytes(c.r, doc)
    return repr(data[:80]), lambda: _expect(FactsError, Facts.from_json, data)


def t_facts_cli(c: Ctx) -> tuple[str, Callable[[], Any]]:
    doc = mutate_doc(c.r, c.r.choice(c.facts), c.r.randint(1, 3))
    f = c.path("facts.json")
    f.write_bytes(doc_bytes(c.r, doc))
    cmd = c.r.choice(["plan", "doctor"])
    return f"{cmd} --facts {f.name}", lambda: cli([cmd, "--json", "--facts", str(f)])


def _replay_folder(c: Ctx, doc: Any, src: Path) -> Path:
    root = c.path("host")
    root.mkdir()
    if (src / "files").exists():
        (root / "files").symlink_to(src / "files")
    if (src / "commands").exists():
        (root / "commands").symlink_to(src / "commands")
    k = c.r.random()
    if k < 0.05:  # hostile files: a FIFO, /dev/zero, a link out, a 5 MB file
        (root / "evil").mkdir()
        os.mkfifo(root / "evil" / "fifo")
        (root / "evil" / "zero").symlink_to("/dev/zero")
        (root / "evil" / "out").symlink_to("/etc/hostname")
        with (root / "evil" / "big").open("wb") as fh:
            fh.truncate(5 << 20)
        if isinstance(doc, dict):
            doc.setdefault("commands", [])
            if isinstance(doc["commands"], list):
                doc["commands"].append(
                    {"argv": ["nvidia-smi"], "stdout_file": c.r.choice(
                        ["evil/fifo", "evil/zero", "evil/out", "evil/big", "../../etc/passwd"]
                    )}
                )  # fmt: skip
    (root / "host.json").write_bytes(
        doc_bytes(c.r, doc) if c.r.random() < 0.2 else json.dumps(doc).encode()
    )
    return root


def t_replay(c: Ctx) -> tuple[str, Callable[[], Any]]:
    from setup_env.probe.detect import detect

    src, base = c.r.choice(c.host_docs)
    doc = mutate_doc(c.r, base, c.r.randint(1, 4))
    root = _replay_folder(c, doc, src)

    def run() -> Any:
        try:
            host = ReplayHost(root)
        except ReplayError:
            return "ReplayError"
        return detect(host)

    return f"{src.name} mutated -> {root.name}", run


def t_detect_cli(c: Ctx) -> tuple[str, Callable[[], Any]]:
    src, base = c.r.choice(c.host_docs)
    root = _replay_folder(c, mutate_doc(c.r, base, c.r.randint(1, 3)), src)
    return f"detect --root {root.name}", lambda: cli(["detect", "--json", "--root", str(root)])


def t_matrix(c: Ctx) -> tuple[str, Callable[[], Any]]:
    doc = mutate_doc(c.r, c.matrix, c.r.randint(1, 3))
    return "matrix mutated", lambda: _expect(
        mx.MatrixError, mx.parse, doc, path="fuzz", origin="explicit"
    )


def t_matrix_cache(c: Ctx) -> tuple[str, Callable[[], Any]]:
    cache = c.path("cache")
    (cache / "setup-env").mkdir(parents=True)
    target = cache / "setup-env" / "wheels.json"
    if c.r.random() < 0.05:
        os.mkfifo(target)
    else:
        target.write_bytes(doc_bytes(c.r, mutate_doc(c.r, c.matrix, c.r.randint(1, 3))))

    def run() -> Any:
        old = os.environ.get("XDG_CACHE_HOME")
        os.environ["XDG_CACHE_HOME"] = str(cache)
        try:
            return cli(["plan", "--json", "--os", "linux", "--variant", "cpu"])
        finally:
            if old is None:
                os.environ.pop("XDG_CACHE_HOME", None)
            else:
                os.environ["XDG_CACHE_HOME"] = old

    return f"user-cache matrix {target.name}", run


def t_pep691(c: Ctx) -> tuple[str, Callable[[], Any]]:
    data = doc_bytes(c.r, mutate_doc(c.r, c.r.choice(c.pep691), c.r.randint(1, 5)))
    return repr(data[:80]), lambda: _expect(
        index.IndexFetchError, index.parse_pep691, data, "torch"
    )


def t_pep503(c: Ctx) -> tuple[str, Callable[[], Any]]:
    data = encode(c.r, mutate_text(c.r, c.r.choice(c.pep503)[:50000]))
    return repr(data[:80]), lambda: _expect(
        index.IndexFetchError, index.parse_pep503, data, "torch"
    )


def t_cloud(c: Ctx) -> tuple[str, Callable[[], Any]]:
    data = doc_bytes(c.r, rand_doc(c.r) if c.r.random() < 0.5 else {"compute": rand_doc(c.r)})

    def run() -> Any:
        cloud.parse_azure(data)
        cloud.parse_oci(data)
        cloud.parse_aws({"instance-type": data, "region": data})
        return cloud.parse_gcp({"machine-type": data, "zone": data, "image": data})

    return repr(data[:80]), run


def t_parsers(c: Ctx) -> tuple[str, Callable[[], Any]]:
    name, fn = c.r.choice(c.parsers)
    text = mutate_text(c.r, c.r.choice(c.texts)[:20000])
    return f"{name}({text[:60]!r})", lambda: fn(text)


ARG_WORDS = [
    "--os", "--gpu", "--arch", "--python", "--driver", "--glibc", "--variant", "--torch",
    "--index-url", "--with", "--cloud", "--installer", "--channel", "--macos", "--wsl",
    "linux", "windows", "macos", "RTX 4090", "sm_90", "H100", "cpu", "cu126", "rocm6.4", "2.13",
    "3.12", "3.14t", "555.42", "2.28", "https://download.pytorch.org/whl", "aws", "-v",
]  # fmt: skip


def t_cli_args(c: Ctx) -> tuple[str, Callable[[], Any]]:
    words = [
        c.r.choice(ARG_WORDS) if c.r.random() < 0.7 else c.r.choice(HOSTILE_STRINGS)[:100]
        for _ in range(c.r.randint(0, 8))
    ]
    cmd = c.r.choice([["plan"], ["plan"], ["matrix", "show"], ["diagnose"], ["doctor", "--facts"]])
    argv = [*cmd, "--json", *words]
    return repr(argv)[:200], lambda: cli(argv)


TARGETS: dict[str, tuple[Callable[[Ctx], tuple[str, Callable[[], Any]]], int]] = {
    "parse_json": (t_json, 10),
    "facts": (t_facts, 12),
    "facts-cli": (t_facts_cli, 6),
    "replay-detect": (t_replay, 10),
    "detect-cli": (t_detect_cli, 4),
    "matrix": (t_matrix, 6),
    "matrix-cache-cli": (t_matrix_cache, 4),
    "pep691": (t_pep691, 6),
    "pep503": (t_pep503, 6),
    "cloud": (t_cloud, 8),
    "probe-parsers": (t_parsers, 20),
    "cli-args": (t_cli_args, 8),
}


def _expect(allowed: type[BaseException], fn: Callable[..., Any], *a: Any, **k: Any) -> Any:
    try:
        return fn(*a, **k)
    except allowed as exc:
        return type(exc).__name__


def servers_round(timeout: float) -> list[tuple[str, str, float]]:
    """Each hostile server mode once against the index client and the metadata client."""
    spec = importlib.util.spec_from_file_location("fuzz_servers", FIX / "hostile" / "servers.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    out = []
    for mode in ("drip-headers", "drip-body", "cut-body", "silent", "garbage-200", "not-http"):
        with mod.HostileServer(mode, seconds=timeout * 3, interval=0.05) as srv:
            t0 = time.monotonic()
            try:
                index.Fetcher(timeout=1.0).get(srv.url + "/simple/torch/")
                res = "ok"
            except index.IndexFetchError as exc:
                res = exc.kind
            out.append((f"index {mode}", res, time.monotonic() - t0))
            t0 = time.monotonic()
            provider, _a, _n = cloud.query_metadata(
                ("azure", "oci", "aws", "gcp"),
                dict.fromkeys(cloud.METADATA_PROVIDERS, srv.url),
                0.8,
            )
            out.append((f"metadata {mode}", str(provider), time.monotonic() - t0))
    return out


def main_fuzz(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--inputs", type=int, default=12000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=10.0, help="seconds per input: a hang")
    ap.add_argument("--show", type=int, default=5, help="tracebacks to print in full")
    args = ap.parse_args(argv)

    signal.signal(signal.SIGALRM, _alarm)
    ctx = Ctx(args.seed)
    names = list(TARGETS)
    weights = [TARGETS[n][1] for n in names]
    tried: Counter[str] = Counter()
    errors: Counter[str] = Counter()
    hangs: Counter[str] = Counter()
    slowest: dict[str, float] = {}
    seen: dict[str, tuple[str, str]] = {}
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    t_start = time.monotonic()
    for i in range(args.inputs):
        name = ctx.r.choices(names, weights)[0]
        desc, run = TARGETS[name][0](ctx)
        tried[name] += 1
        t0 = time.monotonic()
        signal.setitimer(signal.ITIMER_REAL, args.timeout)
        try:
            run()
        except Hang:
            hangs[name] += 1
            seen.setdefault(f"hang {name}", (desc, "hang"))
        except BaseException as exc:
            if isinstance(exc, KeyboardInterrupt):
                raise
            errors[name] += 1
            tb = traceback.format_exc()
            key = (
                f"{name}: {type(exc).__name__} at {traceback.extract_tb(exc.__traceback__)[-1][:3]}"
            )
            seen.setdefault(key, (desc, tb))
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
        slowest[name] = max(slowest.get(name, 0.0), time.monotonic() - t0)
        if (i + 1) % 2000 == 0:
            bad = f"{sum(errors.values())} tracebacks, {sum(hangs.values())} hangs"
            print(f"  {i + 1} inputs, {bad}", file=sys.stderr, flush=True)
    elapsed = time.monotonic() - t_start
    net = servers_round(args.timeout)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss

    print(f"setup-env fuzz: seed {args.seed}, {sum(tried.values())} inputs in {elapsed:.0f} s")
    print(f"{'target':<18} {'inputs':>7} {'tracebacks':>10} {'hangs':>6} {'slowest':>9}")
    for name in names:
        row = f"{name:<18} {tried[name]:>7} {errors[name]:>10} {hangs[name]:>6}"
        print(f"{row} {slowest.get(name, 0):>8.2f}s")
    total = sum(tried.values()), sum(errors.values()), sum(hangs.values())
    print(f"{'total':<18} {total[0]:>7} {total[1]:>10} {total[2]:>6}")
    print(f"peak memory (max RSS): {rss / 1024:.0f} MiB (at start {rss0 / 1024:.0f} MiB)")
    print("hostile servers (deadline 1.0 s index, 0.8 s metadata):")
    for what, res, took in net:
        print(f"  {what:<24} -> {res:<12} {took:.2f} s")
    for key, (desc, tb) in list(seen.items())[: args.show]:
        print(f"\n--- {key}\ninput: {desc}\n{tb}")
    bad = sum(errors.values()) + sum(hangs.values())
    net_slow = [w for w, _r, t in net if t > 2.0]
    if net_slow:
        print(f"deadline overrun: {', '.join(net_slow)}")
    return 1 if bad or net_slow else 0


if __name__ == "__main__":
    sys.exit(main_fuzz())
