"""A PyTorch build variant: ``cpu``, ``cu128``, ``rocm6.4``, ``rocm7.0.2``, ``xpu`` (and ``mps``).

The label is what PyTorch's index names its per-variant pages after
(``https://download.pytorch.org/whl/<label>``) and what a wheel's local version carries
(``2.7.0+cu128``). It is parsed here, once, into a kind and a version; everything else compares
:class:`Variant` values, never label strings. ``mps`` is not a wheel of its own: it is the plain
CPU wheel on Apple Silicon, whose MPS backend the planner names (its index page is ``cpu``).

Variants are ordered by kind (cpu, mps, cuda, rocm, xpu) and then by version, so ``max()`` of a set
of CUDA variants is the newest CUDA. A variant serialises as its label (``str(v)``); the closed set
of labels a matrix knows is ``setup_env.knowledge.matrix.Matrix.variants``.

Cheap to import (only ``re``): the facts module, which ``detect`` loads, uses it.
"""

from __future__ import annotations

import re
from typing import Literal, Optional

Kind = Literal["cpu", "mps", "cuda", "rocm", "xpu"]
KINDS: tuple[Kind, ...] = ("cpu", "mps", "cuda", "rocm", "xpu")
_RANK = {k: i for i, k in enumerate(KINDS)}

# The one label grammar. cuXY(Z): the last digit is the minor (cu92, cu118, cu128, cu130);
# rocmX.Y(.Z); a bare "rocm" (a report that says ROCm without its version). PyTorch's index
# pages are rocmX.Y(.Z) only (:attr:`Variant.on_index`).
_LABEL = re.compile(r"(cpu|mps|xpu)|cu(\d{1,2})(\d)|rocm(?:(\d+(?:\.\d+){0,3}))?")
# A local version label starts with the variant: "cu128", "rocm6.2.4", "cpu.cxx11.abi".
_LOCAL = re.compile(r"(cpu|xpu|cu\d{2,3}|rocm\d+(?:\.\d+){0,3}|rocm)(?=$|[.+_-])")


_PARSED: dict[str, Variant] = {}  # label -> value (a matrix repeats a few labels many times)


class VariantError(ValueError):
    """A label that is not a variant; the message is one line for the user."""


class Variant:
    """An immutable, hashable, ordered build variant. Build with :meth:`parse` or the
    constructors :meth:`cuda_of` / :meth:`rocm_of`; compare with ``==``, ``<``, :attr:`kind`."""

    __slots__ = ("kind", "version")
    kind: Kind
    version: tuple[int, ...]  # (12, 8) for cu128, (6, 2, 4) for rocm6.2.4, () for cpu/xpu/mps

    def __init__(self, kind: Kind, version: tuple[int, ...] = ()) -> None:
        if kind not in _RANK:
            raise VariantError(f"unknown variant kind {kind!r}")
        object.__setattr__(self, "kind", kind)
        object.__setattr__(self, "version", tuple(version))

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("Variant is immutable")

    # -- parsing ---------------------------------------------------------------------------------

    @classmethod
    def parse(cls, text: str) -> Variant:
        """``"cu128"`` -> Variant("cuda", (12, 8)); VariantError for anything else."""
        hit = _PARSED.get(text) if isinstance(text, str) else None
        if hit is not None:
            return hit
        t = text.strip().lower() if isinstance(text, str) else ""
        m = _LABEL.fullmatch(t)
        if not m:
            raise VariantError(f"{text!r} is not a variant (cpu, cuXYZ, rocmX.Y, xpu)")
        if m.group(1):
            v = cls(m.group(1))  # type: ignore[arg-type]
        elif m.group(2):
            v = cls("cuda", (int(m.group(2)), int(m.group(3))))
        else:
            v = cls("rocm", tuple(int(p) for p in (m.group(4) or "").split(".") if p))
        if len(_PARSED) < 512:
            _PARSED[text] = v
        return v

    @classmethod
    def find(cls, text: Optional[str]) -> Optional[Variant]:
        """:meth:`parse` that answers None instead of raising."""
        try:
            return cls.parse(text) if text else None
        except VariantError:
            return None

    @classmethod
    def from_local(cls, version: str) -> Optional[Variant]:
        """The variant a local version label names: ``2.7.0+cu128`` -> cu128; ``2.0.1+rocm5.4.2``
        -> rocm5.4.2; ``1.8.0.dev20201105`` or ``2.1.0+gitabc`` -> None."""
        _, plus, label = version.partition("+")
        m = _LOCAL.match(label.lower()) if plus else None
        return cls.parse(m.group(1)) if m else None

    @classmethod
    def cuda_of(cls, cuda: Optional[str]) -> Optional[Variant]:
        """``"12.8"`` (a CUDA version, ``torch.version.cuda``) -> cu128."""
        m = re.match(r"^\s*(\d{1,2})\.(\d)\b", cuda or "")
        return cls("cuda", (int(m.group(1)), int(m.group(2)))) if m else None

    @classmethod
    def rocm_of(cls, hip: Optional[str]) -> Optional[Variant]:
        """``"6.2.41133-dd7f95766"`` (``torch.version.hip``) -> rocm6.2 (the index names X.Y)."""
        m = re.match(r"^\s*(\d+)\.(\d+)", hip or "")
        return cls("rocm", (int(m.group(1)), int(m.group(2)))) if m else None

    # -- what it is ------------------------------------------------------------------------------

    @property
    def label(self) -> str:
        if self.kind == "cuda":
            return "cu" + "".join(str(p) for p in self.version)
        if self.kind == "rocm":
            return "rocm" + ".".join(str(p) for p in self.version)
        return self.kind

    @property
    def is_cuda(self) -> bool:
        return self.kind == "cuda"

    @property
    def is_rocm(self) -> bool:
        return self.kind == "rocm"

    @property
    def is_cpu(self) -> bool:
        """A CPU-only wheel (``mps`` included: it is the CPU wheel with Apple's backend)."""
        return self.kind in ("cpu", "mps")

    @property
    def on_index(self) -> bool:
        """A label the data and PyTorch's index use: cpu, cuXYZ (CUDA 10.0 on: an old cu92 still
        parses, as an installed wheel's label, but is no page this tool reads), rocmX.Y(.Z), xpu."""
        if self.kind == "cuda":
            return self.version[0] >= 10
        return self.kind != "mps" and (self.kind != "rocm" or len(self.version) in (2, 3))

    @property
    def cuda(self) -> Optional[str]:
        """``"12.8"`` for cu128; None for other kinds."""
        return ".".join(str(p) for p in self.version) if self.kind == "cuda" else None

    @property
    def index_variant(self) -> Variant:
        """The variant whose index page serves this build (mps -> cpu)."""
        return CPU if self.kind == "mps" else self

    def same_build(self, other: Variant) -> bool:
        """Same kind and the same CUDA X.Y / ROCm X.Y (rocm6.2 and rocm6.2.4 are one build line)."""
        if self.kind != other.kind:
            return False
        if self.kind == "rocm":
            return self.version[:2] == other.version[:2]
        return self.version == other.version

    # -- value semantics -------------------------------------------------------------------------

    def _key(self) -> tuple[int, tuple[int, ...]]:
        return _RANK[self.kind], self.version

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Variant):
            return NotImplemented
        return self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __lt__(self, other: Variant) -> bool:
        return self._key() < other._key()

    def __le__(self, other: Variant) -> bool:
        return self._key() <= other._key()

    def __gt__(self, other: Variant) -> bool:
        return self._key() > other._key()

    def __ge__(self, other: Variant) -> bool:
        return self._key() >= other._key()

    def __str__(self) -> str:
        return self.label

    def __repr__(self) -> str:
        return f"Variant({self.label!r})"

    def __reduce__(self) -> tuple[object, ...]:
        return (Variant, (self.kind, self.version))


def is_index_label(text: object) -> bool:
    """A label PyTorch's index has pages for (cpu, cuXYZ, rocmX.Y(.Z), xpu), spelled exactly so:
    the only variant text that may enter a URL or a printed command."""
    if not isinstance(text, str):
        return False
    hit = _INDEX_LABELS.get(text)
    if hit is None:
        v = Variant.find(text)
        hit = v is not None and v.on_index and v.label == text
        if len(_INDEX_LABELS) < 512:
            _INDEX_LABELS[text] = hit
    return hit


_INDEX_LABELS: dict[str, bool] = {}


CPU = Variant("cpu")
MPS = Variant("mps")
XPU = Variant("xpu")
