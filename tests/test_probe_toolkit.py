"""CUDA toolkit probe: real version files and nvcc output; folder layouts built in a replay."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_probe_host import make_replay

from setup_env.probe import toolkit

HOSTS = Path(__file__).parent / "fixtures" / "hosts"
THIS_MACHINE = HOSTS / "debian12-nogpu-cuda13toolkit"

# nvcc --version on this machine (CUDA 13.0 toolkit, no driver).
NVCC_13 = """nvcc: NVIDIA (R) Cuda compiler driver
Copyright (c) 2005-2025 NVIDIA Corporation
Built on Wed_Aug_20_01:58:59_PM_PDT_2025
Cuda compilation tools, release 13.0, V13.0.88
Build cuda_13.0.r13.0/compiler.36424714_0
"""
# nvcc --version of CUDA 11.5 (public setup notes, index id 36014572929)
NVCC_11_5 = """nvcc: NVIDIA (R) Cuda compiler driver
Copyright (c) 2005-2021 NVIDIA Corporation
Built on Thu_Nov_18_09:45:30_PST_2021
Cuda compilation tools, release 11.5, V11.5.119
Build cuda_11.5.r11.5/compiler.30672275_0
"""
# /usr/local/cuda-11.5/version.json, head (same notes)
VERSION_JSON_11_5 = """{
   "cuda" : {
      "name" : "CUDA SDK",
      "version" : "11.5.2"
   },
   "cuda_cudart" : {
      "name" : "CUDA Runtime (cudart)",
      "version" : "11.5.117"
   }
}
"""
# /usr/local/cuda/version.json of a runfile 11.8 install (public notes, index id 45086065116):
# the SDK version carries a date, nvcc the release.
VERSION_JSON_11_8 = """{
   "cuda" : {
      "name" : "CUDA SDK",
      "version" : "11.8.20220929"
   },
   "cuda_gdb" : {
      "name" : "CUDA GDB",
      "version" : "11.8.86"
   },
   "cuda_nvcc" : {
      "name" : "CUDA NVCC",
      "version" : "11.8.89"
   },
   "nvidia_driver" : {
      "name" : "NVIDIA Linux Driver",
      "version" : "520.61.05"
   }
}
"""
# Jetson (JetPack) one-liner (public notes, index id 59028992660)
VERSION_JSON_JETSON = '{ "cuda" : { "name" : "CUDA SDK", "version" : "12.2.140" } }'


def test_parse_nvcc_version() -> None:
    assert toolkit.parse_nvcc_version(NVCC_13) == "13.0.88"
    assert toolkit.parse_nvcc_version(NVCC_11_5) == "11.5.119"
    assert toolkit.parse_nvcc_version("Cuda compilation tools, release 9.2") == "9.2"
    assert toolkit.parse_nvcc_version("") is None


@pytest.mark.parametrize(
    ("text", "version"),
    [
        (VERSION_JSON_11_5, "11.5.2"),
        (VERSION_JSON_11_8, "11.8.89"),
        (VERSION_JSON_JETSON, "12.2.140"),
        ('{"cuda": {"version": "12.6.20241114"}}', "12.6"),
        ("", None),
        ("{truncated", None),
        ('{"cuda": "12.4"}', None),
        ("[]", None),
    ],
)
def test_parse_version_json(text: str, version: str | None) -> None:
    assert toolkit.parse_version_json(text) == version


def test_parse_version_txt_and_cudnn_header() -> None:
    assert toolkit.parse_version_txt("CUDA Version 10.2.89\n") == "10.2.89"
    assert toolkit.parse_version_txt("") is None
    # the three lines that carry the version in cudnn_version.h (cuDNN 8.9.7)
    header = "#define CUDNN_MAJOR 8\n#define CUDNN_MINOR 9\n#define CUDNN_PATCHLEVEL 7\n"
    assert toolkit.parse_cudnn_header(header) == "8.9.7"
    assert toolkit.parse_cudnn_header("#define CUDNN_MAJOR 9\n") is None


def test_two_toolkits_env_and_a_missing_cuda_home(tmp_path: Path) -> None:
    host = make_replay(
        tmp_path,
        {
            "interpreter": {"system": "Linux"},
            "env": {"CUDA_HOME": "/opt/cuda-gone"},
            "links": {"/usr/local/cuda": "/usr/local/cuda-11.8"},
            "exists": ["/usr/local/cuda-12.4/bin/nvcc"],
        },
        {
            "/usr/local/cuda-11.8/version.json": VERSION_JSON_11_8,
            "/usr/local/cuda-12.4/version.txt": "CUDA Version 12.4.1\n",
            "/usr/local/cuda-11.8/include/cudnn_version.h": "#define CUDNN_MAJOR 8\n"
            "#define CUDNN_MINOR 9\n#define CUDNN_PATCHLEVEL 7\n",
        },
    )
    found, notes = toolkit.detect(host)
    assert [(t.version, t.full_version, t.path, t.cudnn_version, t.found_by) for t in found] == [
        (
            "11.8",
            "11.8.89",
            "/usr/local/cuda-11.8",
            "8.9.7",
            ("/usr/local/cuda", "/usr/local/cuda-*"),
        ),
        ("12.4", "12.4.1", "/usr/local/cuda-12.4", None, ("/usr/local/cuda-*",)),
    ]
    assert found[1].nvcc == "/usr/local/cuda-12.4/bin/nvcc"
    assert [n.code for n in notes] == ["cuda-home-missing"]


def test_a_wrapper_nvcc_on_path_is_matched_without_running_it(tmp_path: Path) -> None:
    # This machine's layout: /usr/local/bin/nvcc is a shell wrapper, the toolkit is wheel-built.
    facts, _ = toolkit.detect(make_replay(tmp_path / "x", {}))
    assert facts == []
    found, notes = toolkit.detect(
        __import__("setup_env.probe.host", fromlist=["ReplayHost"]).ReplayHost(THIS_MACHINE)
    )
    assert [(t.version, t.full_version, t.nvcc, t.found_by[0]) for t in found] == [
        ("13.0", "13.0.88", "/usr/local/bin/nvcc", "nvcc on PATH")
    ]
    assert notes == []


def test_an_opaque_nvcc_on_path_is_asked_and_matched_by_version(tmp_path: Path) -> None:
    host = make_replay(
        tmp_path,
        {
            "which": {"nvcc": "/usr/bin/nvcc"},
            "commands": [{"argv": ["/usr/bin/nvcc", "--version"], "stdout": NVCC_13}],
            "dirs": {"/usr/local/cuda-13.0/dist-info": ["nvidia_cuda_nvcc-13.0.88.dist-info"]},
        },
        {"/usr/local/cuda-13.0/include/cuda.h": ""},
    )
    found, notes = toolkit.detect(host)
    assert [(t.full_version, t.path, t.nvcc, t.found_by) for t in found] == [
        ("13.0.88", "/usr/local/cuda-13.0", "/usr/bin/nvcc", ("nvcc on PATH", "/usr/local/cuda-*"))
    ]
    assert notes == []


def test_nvcc_that_fails_is_a_note(tmp_path: Path) -> None:
    host = make_replay(
        tmp_path,
        {
            "which": {"nvcc": "/usr/bin/nvcc"},
            "commands": [
                {
                    "argv": ["/usr/bin/nvcc", "--version"],
                    "returncode": 127,
                    "stdout": "",
                    "stderr": "nvcc: error while loading shared libraries\n",
                }
            ],
        },
    )
    found, notes = toolkit.detect(host)
    assert found == [] and [n.code for n in notes] == ["nvcc-failed"]
