"""Read the GPU architectures compiled into CUDA fat binaries (``setup-env matrix arches``).

A CUDA shared library carries its device code in *fat binaries*: containers that hold one entry per
target, either SASS (a cubin, machine code for one ``sm_XY``) or PTX (``compute_XY``, JIT-compiled
by the driver). On Linux ``nvcc`` puts them in the ELF section ``.nv_fatbin`` (pre-linked
relocatable ones in ``__nv_relfatbin``); the layout below was read from CUDA 13.0 ``nvcc`` output
and checked against ``cuobjdump --list-elf --list-ptx`` (``tests/fixtures/fatbin/make.sh``)::

    container header (16 bytes, little endian)
      u32 magic = 0xBA55ED50   u16 version = 1   u16 header_size = 16   u64 body_size
    then entries, back to back, until body_size bytes are used:
      u16 kind (1 = PTX, 2 = ELF/SASS)   u16 entry_version (0x0101)   u32 entry_header_size
      u64 payload_size   ...   u32 @28: sm number (75, 90, 120)   ...   u64 @40: flags
      flags & 0x100000: arch-specific target (sm_90a), flags & 0x200000: family target (sm_100f)
      the payload (payload_size bytes, possibly compressed) follows the entry header.

Only the entry headers are read; payloads are skipped, never decompressed. Two readers share one
walker: a seekable ELF file is read section by section (``.nv_fatbin``, ``__nv_relfatbin``); a
stream (a ``.so`` inside a wheel, read straight from the zip without extracting it) or a file
without those sections (a Windows DLL, a library that keeps fat binaries in ``.rodata``) is scanned
for the container magic, each hit validated before it counts.

Nothing here prints; ``setup_env.output.render_matrix`` renders the results.
"""

from __future__ import annotations

import io
import os
import struct
import zipfile
import zlib
from collections.abc import Iterable, Iterator, Sequence
from typing import IO, Literal, Optional

from setup_env import bounded
from setup_env._record import Record, field, record

FATBIN_MAGIC = 0xBA55ED50
_MAGIC_BYTES = struct.pack("<I", FATBIN_MAGIC)
_HEADER = struct.Struct("<IHHQ")  # magic, version, header_size, body_size
_ENTRY_PREFIX = struct.Struct("<HHIQ")  # kind, entry_version, entry_header_size, payload_size
_ENTRY_MIN = 64  # smallest entry header seen (CUDA 11-13 write 64, 80, 96 or 112)
_ENTRY_MAX = 4096  # anything larger is not an entry header
_FLAG_ARCH_SPECIFIC = 0x100000
_FLAG_FAMILY = 0x200000
_KINDS = {1: "ptx", 2: "sass"}
_CHUNK = 1 << 20
FATBIN_SECTIONS = (".nv_fatbin", "__nv_relfatbin")
# Names of members of a wheel that can hold device code.
_LIB_SUFFIXES = (".so", ".dll", ".pyd", ".dylib")

Kind = Literal["sass", "ptx", "other"]


class FatbinError(ValueError):
    """The file could not be read: not a library or wheel, truncated, or a corrupt fat binary."""


@record
class Entry(Record):
    """One kernel image in a fat binary: SASS or PTX, and for which arch."""

    kind: Kind
    sm: int  # 90 for sm_90 / sm_90a / compute_90
    suffix: str = ""  # "a" (arch-specific) or "f" (family), from the entry flags
    offset: int = 0  # of the entry header, in the file (or member) it was read from

    @property
    def arch(self) -> str:
        """``sm_90a`` for SASS, ``compute_90`` for PTX: the spelling of ``nvcc -gencode``."""
        prefix = "compute" if self.kind == "ptx" else "sm"
        return f"{prefix}_{self.sm}{self.suffix}"


@record
class Fatbin(Record):
    """One fat binary found in a file, with its entries."""

    offset: int
    size: int  # header + body
    entries: tuple[Entry, ...]
    section: str = ""  # ".nv_fatbin", "__nv_relfatbin", or "" when found by scanning

    @property
    def sass(self) -> tuple[str, ...]:
        return arch_sorted(e.arch for e in self.entries if e.kind == "sass")

    @property
    def ptx(self) -> tuple[str, ...]:
        return arch_sorted(e.arch for e in self.entries if e.kind == "ptx")


@record
class FileArches(Record):
    """The fat binaries of one library (a file, or ``wheel.whl!path/in/wheel.so``)."""

    name: str
    method: Literal["elf-sections", "scan"]
    fatbins: tuple[Fatbin, ...]
    size: int = 0

    @property
    def sass(self) -> tuple[str, ...]:
        return arch_sorted(a for f in self.fatbins for a in f.sass)

    @property
    def ptx(self) -> tuple[str, ...]:
        return arch_sorted(a for f in self.fatbins for a in f.ptx)


@record
class Summary(Record):
    """Which archs every fat binary carries, and which only some do ("stray" kernels).

    ``sass_everywhere``: in every fat binary that holds SASS at all (what a GPU can count on);
    ``sass_partial``: arch -> number of fat binaries holding it, for the others. Likewise PTX,
    counted over the fat binaries that hold PTX.
    """

    files: int
    files_with_fatbins: int
    fatbins: int
    sass: tuple[str, ...]
    sass_everywhere: tuple[str, ...]
    sass_partial: dict[str, int] = field(default_factory=dict)
    ptx: tuple[str, ...] = ()
    ptx_everywhere: tuple[str, ...] = ()
    ptx_partial: dict[str, int] = field(default_factory=dict)
    fatbins_with_sass: int = 0
    fatbins_with_ptx: int = 0


def arch_key(arch: str) -> tuple[int, str, str]:
    prefix, _, rest = arch.partition("_")
    digits = "".join(c for c in rest if c.isdigit())
    return (int(digits) if digits else 0, rest[len(digits) :], prefix)


def arch_sorted(arches: Iterable[str]) -> tuple[str, ...]:
    return tuple(sorted(set(arches), key=arch_key))


# --- the walker ----------------------------------------------------------------------------------


class _Reader:
    """Forward-only buffered reader over a binary stream, with absolute offsets.

    Holds about one chunk at a time, so a 2 GB library inside a wheel is read in constant memory;
    payloads are skipped by reading past them, never kept.
    """

    def __init__(self, stream: IO[bytes], start: int = 0, limit: Optional[int] = None) -> None:
        self._stream = stream
        self._buf = b""
        self._i = 0  # current position inside _buf
        self._base = start  # absolute offset of _buf[0]
        self._left = limit  # bytes the stream may still give (None: to its end)
        self._eof = False

    @property
    def pos(self) -> int:
        return self._base + self._i

    def _read(self, n: int) -> bytes:
        if self._left is not None:
            n = min(n, self._left)
        if n <= 0 or self._eof:
            return b""
        data = self._stream.read(n)
        if not data:
            self._eof = True
            return b""
        if self._left is not None:
            self._left -= len(data)
        return data

    def _fill(self, want: int) -> int:
        """Try to have ``want`` bytes at the current position; returns how many there are."""
        avail = len(self._buf) - self._i
        if avail >= want:
            return avail
        parts = [self._buf[self._i :]]
        self._base += self._i
        self._i = 0
        while avail < want:
            data = self._read(max(_CHUNK, want - avail))
            if not data:
                break
            parts.append(data)
            avail += len(data)
        self._buf = b"".join(parts)
        return avail

    def peek(self, n: int) -> bytes:
        self._fill(n)
        return self._buf[self._i : self._i + n]

    def skip(self, n: int) -> bool:
        """Advance ``n`` bytes; False when the data ends first."""
        avail = len(self._buf) - self._i
        if n <= avail:
            self._i += n
            return True
        n -= avail
        self._base += len(self._buf)
        self._buf, self._i = b"", 0
        while n > 0:
            data = self._read(min(n, _CHUNK))
            if not data:
                return False
            self._base += len(data)
            n -= len(data)
        return True

    def find_magic(self) -> bool:
        """Advance to the next container magic; False at the end of the data."""
        keep = len(_MAGIC_BYTES) - 1
        while True:
            i = self._buf.find(_MAGIC_BYTES, self._i)
            if i >= 0:
                self._i = i
                return True
            self._i = max(self._i, len(self._buf) - keep)
            before = len(self._buf) - self._i
            if self._fill(before + _CHUNK) == before:
                return False


def _looks_like_container(head: bytes) -> bool:
    """Header + first entry prefix plausible? Cheap test that rejects chance magic bytes."""
    if len(head) < _HEADER.size + _ENTRY_PREFIX.size:
        return False
    magic, version, header_size, body_size = _HEADER.unpack_from(head, 0)
    if magic != FATBIN_MAGIC or version != 1 or header_size != _HEADER.size or body_size == 0:
        return False
    kind, _ver, ehs, payload = _ENTRY_PREFIX.unpack_from(head, _HEADER.size)
    return (
        kind in (1, 2, 4, 8, 16) and _ENTRY_MIN <= ehs <= _ENTRY_MAX and ehs + payload <= body_size
    )


def _consistent_prefix(head: bytes) -> bool:
    """The data ends within what could be a container header (the file was cut there)."""
    padded = head + b"\0" * (_HEADER.size - len(head)) if len(head) < _HEADER.size else head
    _magic, version, header_size, _body = _HEADER.unpack_from(padded, 0)
    return len(head) < 6 or (version == 1 and (len(head) < 8 or header_size == _HEADER.size))


def _read_container(reader: _Reader, where: str, section: str) -> Fatbin:
    """Read the container at the reader's position; leaves the reader just after it."""
    start = reader.pos
    head = reader.peek(_HEADER.size)
    if len(head) < _HEADER.size:
        raise FatbinError(f"{where}: truncated fat binary header at offset {start:#x}")
    _magic, version, header_size, body_size = _HEADER.unpack(head)
    if version != 1 or header_size != _HEADER.size:
        raise FatbinError(
            f"{where}: unknown fat binary version {version} (header size {header_size}) "
            f"at offset {start:#x}"
        )
    reader.skip(header_size)
    entries: list[Entry] = []
    used = 0
    while used < body_size:
        at = reader.pos
        prefix = reader.peek(_ENTRY_PREFIX.size)
        if len(prefix) < _ENTRY_PREFIX.size:
            raise FatbinError(f"{where}: truncated fat binary entry at offset {at:#x}")
        kind, _ver, ehs, payload = _ENTRY_PREFIX.unpack(prefix)
        if not _ENTRY_MIN <= ehs <= _ENTRY_MAX or used + ehs + payload > body_size:
            raise FatbinError(
                f"{where}: corrupt fat binary entry at offset {at:#x} "
                f"(header {ehs} bytes, payload {payload} bytes, {body_size - used} left)"
            )
        header = reader.peek(ehs)
        if len(header) < ehs:
            raise FatbinError(f"{where}: truncated fat binary entry at offset {at:#x}")
        sm = struct.unpack_from("<I", header, 28)[0]
        flags = struct.unpack_from("<Q", header, 40)[0] if ehs >= 48 else 0
        suffix = "a" if flags & _FLAG_ARCH_SPECIFIC else ("f" if flags & _FLAG_FAMILY else "")
        if not 10 <= sm <= 999:
            raise FatbinError(f"{where}: corrupt fat binary entry at offset {at:#x} (sm {sm})")
        entries.append(Entry(kind=_KINDS.get(kind, "other"), sm=sm, suffix=suffix, offset=at))  # type: ignore[arg-type]
        if not reader.skip(ehs + payload):
            raise FatbinError(f"{where}: truncated fat binary payload at offset {at:#x}")
        used += ehs + payload
    return Fatbin(
        offset=start, size=header_size + body_size, entries=tuple(entries), section=section
    )


def scan_stream(
    stream: IO[bytes],
    where: str,
    *,
    start: int = 0,
    limit: Optional[int] = None,
    section: str = "",
) -> list[Fatbin]:
    """Every fat binary in ``stream`` (from its current position, at most ``limit`` bytes).

    ``start`` is the absolute offset of the stream's position, so offsets in the result are file
    offsets. A chance magic that is not followed by a plausible header is skipped; a plausible
    container that breaks off midway raises :class:`FatbinError`.
    """
    reader = _Reader(stream, start, limit)
    found: list[Fatbin] = []
    want = _HEADER.size + _ENTRY_PREFIX.size
    while reader.find_magic():
        head = reader.peek(want)
        if _looks_like_container(head):
            found.append(_read_container(reader, where, section))
        elif len(head) < want and _consistent_prefix(head):
            raise FatbinError(f"{where}: truncated fat binary header at offset {reader.pos:#x}")
        else:
            reader.skip(1)
    return found


# --- ELF -----------------------------------------------------------------------------------------


@record
class _Section(Record):
    """One ELF section header: name, offset and size."""

    name: str
    offset: int
    size: int
    nobits: bool


def elf_sections(f: IO[bytes], where: str, file_size: int) -> list[_Section]:
    """The section table of a little-endian ELF file (32 or 64 bit)."""
    f.seek(0)
    ident = f.read(64)
    if len(ident) < 52 or ident[:4] != b"\x7fELF":
        raise FatbinError(f"{where}: not an ELF file")
    cls, data = ident[4], ident[5]
    if data != 1:
        raise FatbinError(f"{where}: big-endian ELF is not supported")
    if cls == 2:
        if len(ident) < 64:
            raise FatbinError(f"{where}: truncated ELF header")
        shoff = struct.unpack_from("<Q", ident, 0x28)[0]
        shentsize, shnum, shstrndx = struct.unpack_from("<HHH", ident, 0x3A)
        sh = struct.Struct(
            "<IIQQQQIIQQ"
        )  # name type flags addr offset size link info align entsize
    elif cls == 1:
        shoff = struct.unpack_from("<I", ident, 0x20)[0]
        shentsize, shnum, shstrndx = struct.unpack_from("<HHH", ident, 0x2E)
        sh = struct.Struct("<IIIIIIIIII")
    else:
        raise FatbinError(f"{where}: unknown ELF class {cls}")
    if shoff == 0 or shnum == 0:
        return []
    if shentsize < sh.size or shoff + shnum * shentsize > file_size:
        raise FatbinError(f"{where}: truncated or corrupt ELF section table")
    f.seek(shoff)
    table = f.read(shnum * shentsize)
    raw = [sh.unpack_from(table, i * shentsize) for i in range(shnum)]
    if shstrndx >= shnum:
        raise FatbinError(f"{where}: corrupt ELF section table (string table index)")
    str_off, str_size = raw[shstrndx][4], raw[shstrndx][5]
    if str_off + str_size > file_size:
        raise FatbinError(f"{where}: truncated ELF (section names past the end of the file)")
    f.seek(str_off)
    names = f.read(str_size)
    sections = []
    for r in raw:
        name_end = names.find(b"\0", r[0])
        name = names[r[0] : name_end if name_end >= 0 else None].decode("ascii", "replace")
        nobits = r[1] == 8  # SHT_NOBITS (.bss): no bytes in the file
        if not nobits and r[4] + r[5] > file_size:
            raise FatbinError(
                f"{where}: truncated ELF (section {name} runs past the end of the file)"
            )
        sections.append(_Section(name, r[4], r[5], nobits))
    return sections


def read_file(
    path: str, name: Optional[str] = None, *, scan_elf: bool = True, scan_other: bool = True
) -> FileArches:
    """Fat binaries of one library on disk: ELF sections when it has them, else a scan.

    The scan also finds fat binaries that a library keeps as data (CUPTI holds its kernels in
    ``.rodata`` and loads them itself; ``cuobjdump`` does not list those) and reads Windows DLLs,
    Mach-O files and static archives (``libcudadevrt.a``). ``scan_elf=False``: an ELF library
    without fat-binary sections answers no fat binaries instead of a whole-file scan (a
    ``libtorch_cpu.so`` is ~400 MB); ``scan_other=False``: the same for every other file.
    """
    where = name or path
    try:
        with bounded.open_file(path) as f:  # a regular file: a FIFO or a device is refused
            size = os.fstat(f.fileno()).st_size
            head = f.read(4)
            if head == b"\x7fELF":
                sections = [
                    s
                    for s in elf_sections(f, where, size)
                    if s.name in FATBIN_SECTIONS and not s.nobits
                ]
                if sections:
                    fatbins: list[Fatbin] = []
                    for s in sections:
                        f.seek(s.offset)
                        fatbins += scan_stream(
                            f, where, start=s.offset, limit=s.size, section=s.name
                        )
                    return FileArches(where, "elf-sections", tuple(fatbins), size)
                if not scan_elf:
                    return FileArches(where, "elf-sections", (), size)
            elif head[:2] != b"MZ" and head[:4] not in _MACHO_MAGICS and head != b"!<ar":
                raise FatbinError(
                    f"{where}: not a library (no ELF, PE, Mach-O or static-archive header)"
                )
            elif not scan_other:
                return FileArches(where, "scan", (), size)
            f.seek(0)
            return FileArches(where, "scan", tuple(scan_stream(f, where)), size)
    except bounded.ReadFailed as exc:
        raise FatbinError(f"{where}: {exc.detail or exc.kind}") from None
    except OSError as exc:
        raise FatbinError(f"{where}: {exc.strerror or exc}") from None


_MACHO_MAGICS = (b"\xcf\xfa\xed\xfe", b"\xce\xfa\xed\xfe", b"\xca\xfe\xba\xbe")


def is_library_name(name: str) -> bool:
    base = name.rsplit("/", 1)[-1].lower()
    if base.endswith(_LIB_SUFFIXES):
        return True
    # versioned sonames: libcudart.so.13, libnvrtc.so.13.0.88
    stem, sep, version = base.partition(".so.")
    return bool(sep) and bool(stem) and all(p.isdigit() for p in version.split("."))


def read_wheel(path: str) -> list[FileArches]:
    """Fat binaries of every library in a wheel, each streamed from the zip (nothing extracted)."""
    try:
        with bounded.open_zip(path) as zf:
            results = []
            for info in zf.infolist():
                if info.is_dir() or not is_library_name(info.filename):
                    continue
                where = f"{os.path.basename(path)}!{info.filename}"
                try:
                    with zf.open(info) as member:
                        fatbins = scan_stream(member, where)
                except (zipfile.BadZipFile, zlib.error, EOFError, OSError, RuntimeError) as exc:
                    raise FatbinError(f"{where}: cannot read from the wheel ({exc})") from None
                results.append(FileArches(where, "scan", tuple(fatbins), info.file_size))
            return results
    except zipfile.BadZipFile as exc:
        raise FatbinError(f"{path}: not a readable wheel ({exc})") from None
    except bounded.ReadFailed as exc:
        raise FatbinError(f"{path}: {exc.detail or exc.kind}") from None
    except OSError as exc:
        raise FatbinError(f"{path}: {exc.strerror or exc}") from None


def read_path(path: str) -> list[FileArches]:
    """A wheel (every library in it) or one library file."""
    if not os.path.exists(path):
        raise FatbinError(f"{path}: no such file")
    if os.path.isdir(path):
        raise FatbinError(f"{path}: is a directory (give a .whl or a shared library)")
    try:
        with bounded.open_file(path) as f:  # a FIFO or a device is refused, never waited on
            is_zip = f.read(4) == b"PK\x03\x04"
    except bounded.ReadFailed as exc:
        raise FatbinError(f"{path}: {exc.detail or exc.kind}") from None
    except OSError as exc:
        raise FatbinError(f"{path}: {exc.strerror or exc}") from None
    if is_zip or path.endswith(".whl"):
        return read_wheel(path)
    return [read_file(path)]


def summarize(files: Sequence[FileArches]) -> Summary:
    fatbins = [fb for fa in files for fb in fa.fatbins]
    with_sass = [fb for fb in fatbins if fb.sass]
    with_ptx = [fb for fb in fatbins if fb.ptx]

    def split(
        groups: list[tuple[str, ...]],
    ) -> tuple[tuple[str, ...], tuple[str, ...], dict[str, int]]:
        counts: dict[str, int] = {}
        for g in groups:
            for a in g:
                counts[a] = counts.get(a, 0) + 1
        everywhere = arch_sorted(a for a, n in counts.items() if n == len(groups))
        partial = {a: counts[a] for a in arch_sorted(counts) if counts[a] < len(groups)}
        return arch_sorted(counts), everywhere, partial

    sass, sass_all, sass_some = split([fb.sass for fb in with_sass])
    ptx, ptx_all, ptx_some = split([fb.ptx for fb in with_ptx])
    return Summary(
        files=len(files),
        files_with_fatbins=sum(1 for fa in files if fa.fatbins),
        fatbins=len(fatbins),
        sass=sass,
        sass_everywhere=sass_all,
        sass_partial=sass_some,
        ptx=ptx,
        ptx_everywhere=ptx_all,
        ptx_partial=ptx_some,
        fatbins_with_sass=len(with_sass),
        fatbins_with_ptx=len(with_ptx),
    )


def iter_bytes_fatbins(data: bytes, where: str = "<bytes>") -> Iterator[Fatbin]:
    """Scan an in-memory buffer (tests, and callers that already hold the bytes)."""
    yield from scan_stream(io.BytesIO(data), where)
