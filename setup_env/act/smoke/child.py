"""The verify worker as the parent sees it: a child process in its own group, its events read
line by line and its stderr kept within bounds, killed whole; and the machine's facts detected in
a thread while the worker imports torch.
"""

from __future__ import annotations

import collections
import contextlib
import os
import queue
import subprocess
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Optional

from setup_env import bounded
from setup_env.decide.smoke_model import VerifyOptions

if TYPE_CHECKING:
    from setup_env.facts import Facts


def child_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    env = dict(os.environ)
    # bounded.PACKAGE_PARENT: another interpreter (verify --python) runs the worker without
    # setup-env installed there.
    parts = [bounded.PACKAGE_PARENT] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    env["PYTHONPATH"] = os.pathsep.join(parts)
    env["PYTHONUNBUFFERED"] = "1"
    env.setdefault("PYTHONIOENCODING", "utf-8")
    env.update(extra or {})
    return env


MAX_EVENT_LINE = 4 << 20  # one JSON event from the worker; a real one is a few KiB
MAX_RANK_FILE = 4 << 20  # one rank's result of the distributed check; a real one is ~1 KiB
MAX_STDERR_LINE = 4096
STDERR_LINES = 300
MAX_STDERR = STDERR_LINES * (MAX_STDERR_LINE + 1)  # what stderr_text() can hold, at most


def capped_lines(stream: Any, limit: int) -> Iterator[bytes | None]:
    """Lines of ``stream`` of at most ``limit`` bytes; None for each longer one (its bytes are
    read and dropped as they come, never held whole)."""
    while True:
        line = stream.readline(limit)
        if not line:
            return
        if len(line) >= limit and not line.endswith(b"\n"):
            while True:  # drop the rest of the over-long line
                more = stream.readline(limit)
                if not more or more.endswith(b"\n"):
                    break
            yield None
            continue
        yield line


class Child:
    """A child process whose stdout lines (JSON events) arrive on a queue; stderr is kept."""

    def __init__(self, argv: Sequence[str], env: Mapping[str, str]) -> None:
        from setup_env.bounded import popen_group

        # Its own process group: the helpers it forks are killed with it.
        self.proc = popen_group(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=dict(env),
        )
        self.events: queue.Queue[Optional[dict[str, Any]]] = queue.Queue()
        self.stderr: collections.deque[str] = collections.deque(maxlen=STDERR_LINES)
        self.noise: collections.deque[str] = collections.deque(maxlen=50)
        self._out_thread = threading.Thread(target=self._read_out, daemon=True)
        self._err_thread = threading.Thread(target=self._read_err, daemon=True)
        try:
            self._out_thread.start()
            self._err_thread.start()
        except BaseException:  # no thread to read it (a thread limit): no child left behind
            self.proc.kill()
            self.proc.wait(timeout=10)
            raise

    def _read_out(self) -> None:
        assert self.proc.stdout is not None
        for raw in capped_lines(self.proc.stdout, MAX_EVENT_LINE):
            if raw is None:
                self.noise.append(f"(a line over {MAX_EVENT_LINE} bytes, dropped)")
                continue
            line = raw.decode("utf-8", "replace").strip()
            if not line:
                continue
            try:
                # NaN and Infinity as the worker's json.dumps writes them (a result can hold one).
                ev = bounded.parse_json(line, "a worker event", allow_nan=True)
            except bounded.InputError:
                self.noise.append(line)
                continue
            if isinstance(ev, dict) and "event" in ev:
                self.events.put(ev)
            else:
                self.noise.append(line)
        self.proc.stdout.close()
        self.events.put(None)  # EOF

    def _read_err(self) -> None:
        # Pieces of at most MAX_STDERR_LINE bytes: a torch import writing warnings without
        # newlines (4 GB seen) is kept as its last MAX_STDERR bytes, not read whole.
        assert self.proc.stderr is not None
        while True:
            raw = self.proc.stderr.readline(MAX_STDERR_LINE)
            if not raw:
                break
            self.stderr.append(raw.decode("utf-8", "replace").rstrip("\n"))
        self.proc.stderr.close()

    def next_event(self, deadline: float) -> tuple[str, Optional[dict[str, Any]]]:
        """("event", ev) | ("eof", None) | ("timeout", None)."""
        left = deadline - time.monotonic()
        if left <= 0:
            return "timeout", None
        try:
            ev = self.events.get(timeout=left)
        except queue.Empty:
            return "timeout", None
        return ("eof", None) if ev is None else ("event", ev)

    def returncode(self, wait: float = 5.0) -> Optional[int]:
        try:
            rc = self.proc.wait(timeout=wait)
        except subprocess.TimeoutExpired:
            return None
        self._err_thread.join(timeout=5.0)
        return rc

    def stderr_text(self) -> str:
        return "\n".join(self.stderr)

    def kill(self) -> None:
        # The whole group, even when the worker itself has exited: a helper it forked (a
        # DataLoader worker, a wrapper's sleep) lives on and holds the pipes open otherwise.
        from setup_env.bounded import kill_group

        kill_group(self.proc)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=10)
        self._err_thread.join(timeout=5.0)
        self._out_thread.join(timeout=5.0)


class FactsThread:
    """Detect the machine while the worker imports torch."""

    def __init__(self, options: VerifyOptions) -> None:
        self.facts: Facts | None = options.facts
        self.error: str | None = None
        self._thread: threading.Thread | None = None
        if self.facts is None and options.detect_facts:
            thread = threading.Thread(target=self._run, daemon=True)
            try:
                thread.start()
            except RuntimeError as exc:  # "can't start new thread": verify runs without facts
                self.error = f"{type(exc).__name__}: {exc}"
            else:
                self._thread = thread

    def _run(self) -> None:
        try:
            from setup_env.probe.detect import detect  # type: ignore[import-not-found,unused-ignore]
            from setup_env.probe.host import LiveHost

            self.facts = detect(LiveHost())
        except Exception as exc:  # the facts are an aid; verify runs without them
            self.error = f"{type(exc).__name__}: {exc}"

    def get(self, timeout: float = 20.0) -> Facts | None:
        if self._thread is not None:
            self._thread.join(timeout)
        return self.facts
