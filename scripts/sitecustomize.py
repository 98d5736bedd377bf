"""For scripts/mutate only (its runs put scripts/ on PYTHONPATH): a Python child process that a
test starts reports which setup-env functions it ran.

mutmut learns which tests reach which function by recording, in the test process, each call
through a mutated function ("stats"); then it runs only those tests against that function's
mutants. Calls made in a child process (a test that runs the door as an unprivileged child, a
CLI run in a subprocess) are recorded in the child and lost with it, so mutmut would never run
those tests against the mutants they would kill. Here the child writes its hits to the folder
the parent's plugin (scripts/_mutate_plugin.py) names in SETUP_ENV_MUTATE_HITS, and the plugin
adds them to the test's own.
"""

import os

if os.environ.get("MUTANT_UNDER_TEST") == "stats" and os.environ.get("SETUP_ENV_MUTATE_HITS"):
    import atexit

    def _report_hits() -> None:
        import sys

        if "mutmut" not in sys.modules:  # nothing mutated ran here
            return
        try:
            from mutmut.state import state

            hits = sorted(state()._stats)
        except Exception:
            return
        if hits:
            try:  # a test may have lowered the file-size limit (soft) to make a write fail
                import resource

                hard = resource.getrlimit(resource.RLIMIT_FSIZE)[1]
                resource.setrlimit(resource.RLIMIT_FSIZE, (hard, hard))
            except (ImportError, OSError, ValueError):
                pass
            folder = os.environ["SETUP_ENV_MUTATE_HITS"]
            with open(os.path.join(folder, f"{os.getpid()}.hits"), "w") as fh:
                fh.write("\n".join(hits) + "\n")

    atexit.register(_report_hits)
