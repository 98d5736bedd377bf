"""Read NVML through nvidia-ml-py into a plain snapshot dict (skeleton)."""

from __future__ import annotations

from typing import Any


def snapshot() -> dict[str, Any]:
    return {"error": "NVML snapshot not built yet", "code": "not-built"}
