"""The CUDA fat-binary reader, on real fat binaries compared with NVIDIA's own reader.

Fixtures (tests/fixtures/fatbin/, made by make.sh there): two small shared libraries compiled by
nvcc 13.0 from tiny.cu with known -gencode targets, and the listing `cuobjdump --list-elf
--list-ptx` printed for each. When nvcc and cuobjdump are on this machine the same comparison runs
on freshly compiled code too.
"""

from __future__ import annotations

import hashlib
import importlib.util
import io
import os
import re
import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest

from setup_env.probe import fatbin

FIX = Path(__file__).parent / "fixtures" / "fatbin"
DEVRT = Path("/usr/local/cuda/lib64/libcudadevrt.a")
CUPTI = Path("/usr/local/cuda/lib64/libcupti.so.13")


def cuobjdump_listing(text: str) -> tuple[set[str], set[str]]:
    """(SASS, PTX) named in `cuobjdump --list-elf --list-ptx` output, spelled as ours are.

    cuobjdump names each entry `<stem>.<n>.sm_XY.cubin` / `<stem>.<n>.sm_XY.ptx`.
    """
    sass, ptx = set(), set()
    for m in re.finditer(r"^(ELF|PTX) file\s+\d+: \S+\.(sm_\w+)\.(?:cubin|ptx)$", text, re.M):
        if m.group(1) == "ELF":
            sass.add(m.group(2))
        else:
            ptx.add(m.group(2).replace("sm_", "compute_"))
    return sass, ptx


def ours(path: Path) -> tuple[set[str], set[str]]:
    (fa,) = fatbin.read_path(str(path))
    # cuobjdump 13.2 prints a family-specific cubin (sm_100f) as plain sm_100; its PTX keeps the f.
    return {a.rstrip("f") for a in fa.sass}, set(fa.ptx)


def test_tiny_library_exact_archs() -> None:
    fa = fatbin.read_file(str(FIX / "libtiny.so"))
    assert fa.method == "elf-sections"
    assert fa.sass == ("sm_75", "sm_80", "sm_90")
    assert fa.ptx == ("compute_90",)
    # nvcc writes the device-link fat binary (SASS only) and the compilation unit's (SASS + PTX).
    assert [(fb.section, fb.sass, fb.ptx) for fb in fa.fatbins] == [
        (".nv_fatbin", ("sm_75", "sm_80", "sm_90"), ()),
        (".nv_fatbin", ("sm_75", "sm_80", "sm_90"), ("compute_90",)),
    ]


def test_arch_specific_and_family_targets() -> None:
    fa = fatbin.read_file(str(FIX / "libvar.so"))
    assert fa.sass == ("sm_90a", "sm_100f", "sm_120")
    assert fa.ptx == ("compute_100a",)


@pytest.mark.parametrize("lib", ["libtiny.so", "libvar.so"])
def test_agrees_with_recorded_cuobjdump(lib: str) -> None:
    expected = cuobjdump_listing((FIX / f"{lib}.cuobjdump.txt").read_text())
    assert expected[0]  # the listing is not empty
    assert ours(FIX / lib) == expected


@pytest.mark.parametrize("lib", ["libtiny.so", "libvar.so"])
def test_section_walk_and_stream_scan_agree(lib: str) -> None:
    data = (FIX / lib).read_bytes()
    by_section = fatbin.read_file(str(FIX / lib)).fatbins
    scanned = list(fatbin.iter_bytes_fatbins(data))
    assert [(f.offset, f.size, f.entries) for f in by_section] == [
        (f.offset, f.size, f.entries) for f in scanned
    ]


def test_scan_across_chunk_boundaries(monkeypatch: pytest.MonkeyPatch) -> None:
    """A tiny chunk size makes every header straddle reads: same answer."""
    data = (FIX / "libtiny.so").read_bytes()
    want = [(f.offset, f.entries) for f in fatbin.iter_bytes_fatbins(data)]
    for chunk in (7, 64, 4093):
        monkeypatch.setattr(fatbin, "_CHUNK", chunk)
        assert [(f.offset, f.entries) for f in fatbin.iter_bytes_fatbins(data)] == want


def _wheel(tmp_path: Path, members: dict[str, bytes]) -> Path:
    path = tmp_path / "torch-2.13.0+cu130-cp311-cp311-manylinux_2_28_x86_64.whl"
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return path


def test_wheel_members_are_streamed(tmp_path: Path) -> None:
    tiny = (FIX / "libtiny.so").read_bytes()
    var = (FIX / "libvar.so").read_bytes()
    whl = _wheel(
        tmp_path,
        {
            "torch/lib/libtorch_cuda.so": tiny,
            "torch/lib/libextra.so.13": var,
            "torch/lib/libc10.so": b"\x7fELF" + b"\0" * 200,  # no device code
            "torch/version.py": b"__version__ = '2.13.0+cu130'\n",
            "torch-2.13.0.dist-info/RECORD": b"",
        },
    )
    files = fatbin.read_path(str(whl))
    names = [f.name.split("!")[1] for f in files]
    assert names == [
        "torch/lib/libtorch_cuda.so",
        "torch/lib/libextra.so.13",
        "torch/lib/libc10.so",
    ]
    assert files[0].sass == ("sm_75", "sm_80", "sm_90") and files[0].ptx == ("compute_90",)
    assert files[1].sass == ("sm_90a", "sm_100f", "sm_120")
    assert files[2].fatbins == ()
    s = fatbin.summarize(files)
    assert (s.files, s.files_with_fatbins, s.fatbins) == (3, 2, 4)
    assert s.sass_everywhere == ()  # the two libraries share no SASS arch
    assert s.sass_partial == {
        "sm_75": 2,
        "sm_80": 2,
        "sm_90": 2,
        "sm_90a": 2,
        "sm_100f": 2,
        "sm_120": 2,
    }


def test_summary_everywhere_versus_stray() -> None:
    tiny = fatbin.read_file(str(FIX / "libtiny.so"))
    s = fatbin.summarize([tiny])
    assert s.sass_everywhere == ("sm_75", "sm_80", "sm_90") and s.sass_partial == {}
    assert s.ptx_everywhere == ("compute_90",) and s.fatbins_with_ptx == 1
    # A stray kernel: one extra fat binary with only sm_89, like the handful of sm_89 kernels
    # VERIFIED.md section 3 reports in libtorch_cuda.so.
    stray = fatbin.Fatbin(0, 0, (fatbin.Entry("sass", 89),))
    s = fatbin.summarize([tiny, fatbin.FileArches("x.so", "scan", (stray,))])
    assert s.sass == ("sm_75", "sm_80", "sm_89", "sm_90")
    assert s.sass_everywhere == ()
    s = fatbin.summarize(
        [tiny, fatbin.FileArches("x.so", "scan", (stray, *tiny.fatbins, *tiny.fatbins))]
    )
    # 7 fat binaries with SASS: the stray one lacks the common archs, so nothing is everywhere.
    assert s.fatbins_with_sass == 7 and s.sass_everywhere == ()
    assert s.sass_partial == {"sm_75": 6, "sm_80": 6, "sm_89": 1, "sm_90": 6}


@pytest.mark.parametrize("cut", [0x2008 + 8, 0x2008 + 16 + 40, 0x2008 + 16 + 64 + 500])
def test_truncated_fatbin_is_a_clear_error(tmp_path: Path, cut: int) -> None:
    """Cut inside the first fat binary (its header, an entry header, a payload)."""
    data = (FIX / "libtiny.so").read_bytes()
    first = fatbin.read_file(str(FIX / "libtiny.so")).fatbins[0].offset
    assert first == 0x2008  # the cuts above are relative to this
    bad = tmp_path / "cut.bin"
    bad.write_bytes(data[:cut])
    with pytest.raises(fatbin.FatbinError, match=r"truncated"):
        list(fatbin.scan_stream(io.BytesIO(data[:cut]), "cut"))
    # As a file the section table (at the end) is gone: still a clear error, not a traceback.
    with pytest.raises(fatbin.FatbinError):
        fatbin.read_path(str(bad))


def test_truncated_elf_is_a_clear_error(tmp_path: Path) -> None:
    data = (FIX / "libtiny.so").read_bytes()
    bad = tmp_path / "libtiny.so"
    bad.write_bytes(data[: len(data) - 100])  # loses the end of the section table
    with pytest.raises(fatbin.FatbinError, match="truncated or corrupt ELF section table"):
        fatbin.read_path(str(bad))


def test_corrupt_entry_is_a_clear_error() -> None:
    data = bytearray((FIX / "libtiny.so").read_bytes())
    second_entry = 0x2008 + 16 + 64 + 1472
    data[second_entry + 8 : second_entry + 16] = (10**9).to_bytes(8, "little")  # payload size
    with pytest.raises(fatbin.FatbinError, match=r"corrupt fat binary entry at offset 0x2618"):
        list(fatbin.iter_bytes_fatbins(bytes(data)))


def test_chance_magic_is_not_a_fatbin() -> None:
    junk = b"\x00" * 100 + fatbin._MAGIC_BYTES + b"\x07\x00" + b"\xff" * 50
    assert list(fatbin.iter_bytes_fatbins(junk)) == []


def test_not_a_library(tmp_path: Path) -> None:
    text = tmp_path / "notes.txt"
    text.write_text("hello\n")
    with pytest.raises(fatbin.FatbinError, match="not a library"):
        fatbin.read_path(str(text))
    broken = tmp_path / "broken.whl"
    broken.write_bytes(b"PK\x03\x04" + b"\0" * 40)
    with pytest.raises(fatbin.FatbinError, match="not a readable wheel"):
        fatbin.read_path(str(broken))
    with pytest.raises(fatbin.FatbinError, match="no such file"):
        fatbin.read_path(str(tmp_path / "missing.so"))
    with pytest.raises(fatbin.FatbinError, match="is a directory"):
        fatbin.read_path(str(tmp_path))


def test_corrupt_member_inside_wheel(tmp_path: Path) -> None:
    whl = _wheel(tmp_path, {"torch/lib/libtorch_cuda.so": (FIX / "libtiny.so").read_bytes()})
    data = bytearray(whl.read_bytes())
    mid = len(data) // 2
    data[mid : mid + 64] = b"\xa5" * 64  # damage the deflate stream
    whl.write_bytes(bytes(data))
    with pytest.raises(fatbin.FatbinError):
        fatbin.read_path(str(whl))


@pytest.mark.torch
def test_cpu_only_torch_library_has_no_fatbins() -> None:
    """A real CPU build of torch (CI installs torch==2.13.0+cpu), read without importing torch."""
    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("torch is not installed")
    lib = Path(next(iter(spec.submodule_search_locations))) / "lib" / "libc10.so"
    (fa,) = fatbin.read_path(str(lib))
    assert fa.method == "scan"  # an ELF without .nv_fatbin is scanned whole
    assert fa.fatbins == ()


def test_real_toolkit_static_library_matches_cuobjdump() -> None:
    """libcudadevrt.a from the CUDA toolkit on this machine, against cuobjdump's listing of it."""
    if not DEVRT.exists():
        pytest.skip("no CUDA toolkit at /usr/local/cuda")
    tool = shutil.which("cuobjdump")
    if tool:
        listing = subprocess.run(
            [tool, "--list-elf", "--list-ptx", str(DEVRT)],
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        ).stdout
    else:
        recorded = (FIX / "libcudadevrt.a.cuobjdump.txt").read_text()
        digest = hashlib.sha256(DEVRT.read_bytes()).hexdigest()
        if recorded.split()[2] != digest:
            pytest.skip("a different libcudadevrt.a than the recorded listing, and no cuobjdump")
        listing = recorded
    want = cuobjdump_listing(listing)
    assert len(want[0]) >= 5
    assert ours(DEVRT) == want


def test_real_toolkit_library_with_fatbins_in_rodata() -> None:
    """CUPTI keeps its kernels as data (no .nv_fatbin section): found by scanning."""
    if not CUPTI.exists():
        pytest.skip("no CUDA 13 CUPTI at /usr/local/cuda")
    fa = fatbin.read_path(str(CUPTI))[0]
    assert fa.method == "scan" and fa.fatbins
    assert {"sm_75", "sm_80", "sm_90", "sm_100", "sm_120"} <= set(fa.sass)


def test_real_toolkit_library_fatbins_in_rodata_match_cuobjdump() -> None:
    """Each fat binary CUPTI keeps as data, cut out, is read the same by cuobjdump. Without
    cuobjdump the cross-check cannot run, and says so (SKIP with the reason), not PASS."""
    if not CUPTI.exists():
        pytest.skip("no CUDA 13 CUPTI at /usr/local/cuda")
    tool = shutil.which("cuobjdump")
    if not tool:
        pytest.skip("cross-check against cuobjdump not run: no cuobjdump on PATH")
    fa = fatbin.read_path(str(CUPTI))[0]
    assert fa.fatbins
    data = CUPTI.read_bytes()
    for fb in fa.fatbins:
        raw = Path(os.environ.get("TMPDIR", "/tmp")) / f"setup-env-test-{os.getpid()}.fatbin"
        raw.write_bytes(data[fb.offset : fb.offset + fb.size])
        try:
            out = subprocess.run(
                [tool, "--list-elf", "--list-ptx", str(raw)],
                capture_output=True,
                text=True,
                timeout=60,
                check=True,
            ).stdout
        finally:
            raw.unlink()
        assert cuobjdump_listing(out) == ({a.rstrip("f") for a in fb.sass}, set(fb.ptx))


@pytest.mark.slow
def test_fresh_nvcc_build_matches(tmp_path: Path) -> None:
    """Compile tiny.cu now with this machine's nvcc and read it back."""
    nvcc = shutil.which("nvcc")
    if not nvcc:
        pytest.skip("no nvcc on PATH")
    out = tmp_path / "libfresh.so"
    subprocess.run(
        [
            nvcc,
            "-shared",
            "-cudart",
            "shared",
            "-Xcompiler",
            "-fPIC",
            "-o",
            str(out),
            str(FIX / "tiny.cu"),
            "-gencode",
            "arch=compute_80,code=sm_80",
            "-gencode",
            "arch=compute_86,code=sm_86",
            "-gencode",
            "arch=compute_120,code=compute_120",
        ],
        check=True,
        timeout=300,
        capture_output=True,
    )
    fa = fatbin.read_file(str(out))
    assert fa.sass == ("sm_80", "sm_86")
    assert fa.ptx == ("compute_120",)
    tool = shutil.which("cuobjdump")
    if tool:
        listing = subprocess.run(
            [tool, "--list-elf", "--list-ptx", str(out)],
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        ).stdout
        assert cuobjdump_listing(listing) == ours(out)
