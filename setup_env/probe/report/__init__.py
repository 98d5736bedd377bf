from setup_env.probe.report.fields import (
    KEYS,
    SOURCE,
    WARNING_SOURCE,
    CollectEnvError,
    Report,
    TorchMessage,
    decode,
    parse,
    read_messages,
)

__all__ = [
    "KEYS",
    "SOURCE",
    "WARNING_SOURCE",
    "CollectEnvError",
    "Report",
    "TorchMessage",
    "decode",
    "parse",
    "read_messages",
]
