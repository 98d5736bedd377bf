"""Probes: the ONLY code that touches the machine, always through a ``Host``.

Each probe module has ``detect(host) -> X | None`` plus pure ``parse_*`` functions that are fed
real captured text in the tests. Probes never decide; they report what they saw, with sources,
and turn garbled or missing input into ``Note``s.
"""
