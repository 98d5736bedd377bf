"""`setup-env capture DIR`: record this machine into a folder that ``--root DIR`` replays
(``detect``, ``plan``, ``doctor``, ``check``), for a bug report or a test fixture.

What is written and what is redacted: ``setup_env.act.capture``. After writing, the folder is
replayed and its facts compared with the live ones.

Exit codes: 0 captured, and the replay gives the live facts; 1 captured, but the replay differs
(named); 2 bad usage; 3 the folder could not be written (or, with ``--expected``, is not a
captured machine).
"""

from __future__ import annotations

import argparse
import shlex
import sys

from setup_env.exitcodes import ExitCode

EXAMPLES = """\
  setup-env capture /tmp/box                 # on the machine to describe
  setup-env plan --root /tmp/box             # anywhere: the plan for that machine
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from setup_env.commands._help import epilog

    epilog(
        parser,
        "0 captured (the replay gives the live facts); 1 captured, but the replay differs;\n"
        "2 bad options; 3 the folder could not be written (--expected: not a captured machine).",
        EXAMPLES,
    )
    parser.add_argument("folder", metavar="DIR", help="the folder to write (created if missing)")
    parser.add_argument(
        "--expected",
        action="store_true",
        help="only (re)write DIR/expected.json from a replay of DIR (a test fixture's answer)",
    )


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from setup_env import bounded
    from setup_env.act import capture
    from setup_env.output import render
    from setup_env.probe.host import ReplayError

    folder = Path(args.folder)
    try:
        if args.expected:
            if not (folder / "host.json").is_file():
                raise ReplayError(f"{folder} is not a captured machine: no host.json")
            capture.write_expected(folder)
            message = f"wrote {folder / 'expected.json'}"
            differs: list[str] = []
        else:
            live = capture.capture(folder)
            differs = capture.differences(live, capture.replay(folder))
            message = f"captured this machine into {folder}"
    except (OSError, ReplayError) as exc:  # bounded.WriteFailed is an OSError
        detail = str(exc)
        if isinstance(exc, OSError) and not isinstance(exc, bounded.WriteFailed):
            detail = f"{folder}: {exc.strerror or exc}"
        return render.fail("capture", "unexaminable", detail, ExitCode.UNEXAMINABLE, args.json)
    code = ExitCode.CHECK_FAILED if differs else ExitCode.OK
    if args.json:
        payload = {
            "folder": str(folder),
            "expected_only": bool(args.expected),
            "replay_matches": not differs,
            "differs_in": differs,
        }
        print(render.dumps(render.envelope("capture", payload)))
        return int(code)
    if differs:
        print(
            f"{message}, but the replay differs from the live machine in: {', '.join(differs)}",
            file=sys.stderr,
        )
        return int(code)
    tail = "" if args.expected else " (the replay gives the live facts)"
    print(f"{message}{tail}; replay it with: setup-env plan --root {shlex.quote(str(folder))}")
    return int(code)
