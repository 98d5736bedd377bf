#!/usr/bin/env python3
"""Generate ``setup_env/data/gpus.json`` (the NVIDIA GPU catalogue) from the ONE table below.

Each row: the model name exactly as NVML / ``nvidia-smi`` print it (plus aliases people type),
compute capability, memory per device, and peak dense bf16 / fp32 TFLOP/s and memory bandwidth
(GB/s) from the vendor's datasheet or architecture whitepaper. Every row cites its sources by id
(``SOURCES`` below, each a URL). The architecture name is NOT typed per row: it is derived from
the compute capability through ``ARCHITECTURES`` (one table), which is written into the JSON too,
so ``setup_env.knowledge.gpus.arch_for_cc`` and the rows can never disagree.

Rules for the numbers (so that nothing is made up):

* ``None`` where the cited source gives no figure (Pascal/Volta/Turing have no bf16; AWS does not
  publish A10G peaks; NVIDIA's GeForce pages give no bf16 figure, only the whitepapers do).
* "dense" means without 2:4 structured sparsity. Datasheets that print only the with-sparsity
  figure (marked ``*`` there: H100, H200, GH200, L4, B200...) are halved; the row's note says so.
* A board with two GPUs (K80, M60) is listed per device, as NVML sees it: board figures halved.
* Values were transcribed from the cited pages (read 2026-12-02, RETRIEVED); bf16 peaks of
  the data-centre parts agree with the table in pytorch/torchtitan ``get_peak_flops`` (T1).

    python scripts/build_gpus.py           # write the JSON
    python scripts/build_gpus.py --check   # exit 1 if the committed JSON differs (CI drift check)
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, Optional

from _datafile import write_or_check  # scripts/ is on sys.path when run

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "setup_env" / "data" / "gpus.json"
SCHEMA_VERSION = 1
RETRIEVED = "2026-12-02"

SOURCES: dict[str, str] = {
    # Compute capabilities (the authority for every row's cc).
    "CC": "https://developer.nvidia.com/cuda-gpus",
    "CC-LEGACY": "https://developer.nvidia.com/cuda-legacy-gpus",
    # Data-centre datasheets / product pages.
    "K80": "https://www.nvidia.com/en-gb/data-center/tesla-k80/",
    "M60": "https://images.nvidia.com/content/pdf/tesla/tesla-m60-product-brief.pdf",
    "P4": "https://images.nvidia.com/content/pdf/tesla/184457-Tesla-P4-Datasheet-NV-Final-Letter-Web.pdf",
    "P40": "https://images.nvidia.com/content/pdf/tesla/184427-Tesla-P40-Datasheet-NV-Final-Letter-Web.pdf",
    "P100": "https://www.nvidia.com/en-us/data-center/tesla-p100/",
    "V100": "https://www.nvidia.com/en-us/data-center/v100/",
    "T4": "https://www.nvidia.com/en-us/data-center/tesla-t4/",
    "A10": "https://www.nvidia.com/en-us/data-center/products/a10-gpu/",
    "A10G": "https://aws.amazon.com/ec2/instance-types/g5/",
    "T4G": "https://aws.amazon.com/ec2/instance-types/g5g/",
    "A30": "https://www.nvidia.com/en-us/data-center/products/a30-gpu/",
    "A40": "https://www.nvidia.com/en-us/data-center/a40/",
    "A100": "https://www.nvidia.com/en-us/data-center/a100/",
    "L4": "https://www.nvidia.com/en-us/data-center/l4/",
    "L40": "https://www.nvidia.com/en-us/data-center/l40/",
    "L40S": "https://www.nvidia.com/en-us/data-center/l40s/",
    "H100": "https://www.nvidia.com/en-us/data-center/h100/",
    "H200": "https://www.nvidia.com/en-us/data-center/h200/",
    "GH200": "https://www.nvidia.com/en-us/data-center/grace-hopper-superchip/",
    "HGX": "https://www.nvidia.com/en-us/data-center/hgx/",
    "GB200": "https://www.nvidia.com/en-us/data-center/gb200-nvl72/",
    "RTXPRO6000": (
        "https://www.nvidia.com/en-us/products/workstations/professional-desktop-gpus/rtx-pro-6000/"
    ),
    # Workstation datasheets.
    "RTXA6000": "https://www.nvidia.com/en-us/design-visualization/rtx-a6000/",
    "RTXA5000": "https://www.nvidia.com/en-us/design-visualization/rtx-a5000/",
    "RTXA4000": "https://www.nvidia.com/en-us/design-visualization/rtx-a4000/",
    "RTX6000ADA": "https://www.nvidia.com/en-us/design-visualization/rtx-6000/",
    # Architecture whitepapers (the only NVIDIA documents that print GeForce bf16 figures).
    "WP-PASCAL": (
        "https://international.download.nvidia.com/geforce-com/international/pdfs/"
        "GeForce_GTX_1080_Whitepaper_FINAL.pdf"
    ),
    "WP-TURING": (
        "https://images.nvidia.com/aem-dam/en-zz/Solutions/design-visualization/technologies/"
        "turing-architecture/NVIDIA-Turing-Architecture-Whitepaper.pdf"
    ),
    "WP-GA102": (
        "https://www.nvidia.com/content/PDF/nvidia-ampere-ga-102-gpu-architecture-whitepaper-v2.pdf"
    ),
    "WP-ADA": (
        "https://images.nvidia.com/aem-dam/Solutions/geforce/ada/nvidia-ada-gpu-architecture.pdf"
    ),
    "WP-RTX-BLACKWELL": (
        "https://images.nvidia.com/aem-dam/Solutions/geforce/blackwell/"
        "nvidia-rtx-blackwell-gpu-architecture.pdf"
    ),
    # GeForce product pages (memory size, memory interface/speed).
    "GF-10": "https://www.nvidia.com/en-us/geforce/10-series/",
    "GF-20": "https://www.nvidia.com/en-us/geforce/graphics-cards/compare/?section=compare-20",
    "GF-30": "https://www.nvidia.com/en-us/geforce/graphics-cards/30-series/",
    "GF-40": "https://www.nvidia.com/en-us/geforce/graphics-cards/40-series/",
    "GF-50": "https://www.nvidia.com/en-us/geforce/graphics-cards/50-series/",
    # Jetson.
    "JETSON": "https://developer.nvidia.com/embedded/jetson-modules",
    # Cross-check only (public code that tabulates the same bf16 peaks).
    "T1": "https://github.com/pytorch/torchtitan/blob/main/torchtitan/tools/utils.py",
    # Names as nvidia-smi prints them, seen in this repository's host fixtures.
    "FIXTURES": "tests/fixtures/hosts/*/SOURCES.md",
    # Names as the driver prints them: the driver README's list of supported GPU products
    # (Appendix A), which is the table nvidia-smi / NVML names come from.
    "DRV-NAMES": (
        "https://download.nvidia.com/XFree86/Linux-x86_64/580.95.05/README/supportedchips.html"
    ),
    # nvidia-smi / torch names seen in public reports.
    "NAME-GB10": "https://github.com/p-e-w/heretic/issues/13",
    "NAME-THOR": "https://github.com/sgl-project/sglang/pull/11287",
    "NAME-THOR-TORCH": "https://github.com/vllm-project/vllm/issues/34470",
    "THOR-SM110": "https://github.com/pytorch/pytorch/pull/169719",
    # Driver windows: first CUDA toolkit and last driver branch per architecture.
    "ARCH-MATRIX": (
        "https://docs.nvidia.com/datacenter/tesla/drivers/"
        "cuda-toolkit-driver-and-architecture-matrix.html"
    ),
    "CUDA-RN": "https://docs.nvidia.com/cuda/cuda-toolkit-release-notes/index.html",
    "CUDA-12.9-RN": (
        "https://docs.nvidia.com/cuda/archive/12.9.0/cuda-toolkit-release-notes/index.html"
    ),
    "OPEN-KM": "https://github.com/NVIDIA/open-gpu-kernel-modules#compatible-gpus",
    "LEGACY-580": "https://github.com/NixOS/nixos-hardware/issues/1880",
    # AMD: gfx ids and names (rocminfo's "Marketing Name").
    "AMD-SPECS": "https://rocm.docs.amd.com/en/latest/reference/gpu-arch-specs.html",
    "AMD-LLVM": "https://llvm.org/docs/AMDGPUUsage.html#processors",
    "ROCMINFO-MI300X": "https://github.com/ROCm/ROCm/issues/4021",
    # ROCm wheels: PYTORCH_ROCM_ARCH of PyTorch's official builds.
    "PT-ROCM-BUILD": (
        "https://github.com/pytorch/pytorch/blob/1fca82d4/.ci/docker/manywheel/build.sh"
    ),
    "PT-141667": "https://github.com/pytorch/pytorch/pull/141667",
    "PT-147761": "https://github.com/pytorch/pytorch/pull/147761",
    "PT-148562": "https://github.com/pytorch/pytorch/pull/148562",
    "PT-167299": "https://github.com/pytorch/pytorch/pull/167299",
    # ROCm 7.14 (TheRock multi-arch) wheels: the common list only; gfx900/gfx906 are prepended
    # on the legacy rocm/dev-almalinux path (7.1/7.2) alone. gfx1103 is in the common list.
    "PT-ROCM-BUILD-714": (
        "https://github.com/pytorch/pytorch/blob/027375bffdc7aa980c93df464526ff2d83ad8349/"
        ".ci/docker/manywheel/build.sh"
    ),
    # gfx1103 added to the wheel arch list (opened 2026-04-08, landed by 2026-04-17: #179788
    # 'Now that #179653 landed'), after the 2.12 branch cut: first in 2.13.
    "PT-179653": "https://github.com/pytorch/pytorch/pull/179653",
    "PT-179788": "https://github.com/pytorch/pytorch/pull/179788",
    # NVIDIA GPU Operator platform support: 'NVIDIA RTX PRO 6000 Blackwell Server Edition notes:
    # Driver versions 575.57.08 or later is required.'
    "NV-GPUOP-PLATFORM": (
        "https://github.com/NVIDIA/cloud-native-docs/blob/main/gpu-operator/platform-support.rst"
        " (https://docs.nvidia.com/datacenter/cloud-native/gpu-operator/latest/"
        "platform-support.html)"
    ),
    # Jetson: JetPack <-> L4T <-> CUDA, and NVIDIA's PyTorch wheels for each JetPack.
    "JETPACK-ARCHIVE": "https://developer.nvidia.com/embedded/jetpack-archive",
    "JETSON-PYTORCH-RN": (
        "https://docs.nvidia.com/deeplearning/frameworks/install-pytorch-jetson-platform-"
        "release-notes/pytorch-jetson-rel.html"
    ),
    "JETSON-AI-LAB": "https://pypi.jetson-ai-lab.io/",
    # NVIDIA staff's "PyTorch for Jetson" thread: the wheel (torch release, JetPack releases) list.
    "JETSON-FORUM": "https://forums.developer.nvidia.com/t/pytorch-for-jetson/72048",
    # NVIDIA moderator, 2025: "2.4.0, 2.5.0, and 2.6.0rc1 for the JetPack 6.1 environment" on
    # the Jetson AI Lab index jp6/cu126.
    "JETSON-FORUM-JP61": (
        "https://forums.developer.nvidia.com/t/jetpack-6-1-install-pytorch-2-5-1/318629/7"
    ),
    # [secondary] an NVIDIA employee's repository: its L4T -> JetPack table (35.5.0 = 5.1.3,
    # 35.6.0 = 5.1.4, 35.6.1/35.6.2 = 5.1.5, 35.6.4 = 5.1.6, 39.1.0 = "7.2 GA # Orin SBSA") and
    # L4T 39 -> CUDA 13.2 (get_cuda_version), read at commit dd206bfe (2026-05-30).
    "JETSON-CONTAINERS-L4T": (
        "https://github.com/dusty-nv/jetson-containers/blob/"
        "dd206bfe71f9ed35a02d9b9d9954bddb1b649602/jetson_containers/l4t_version.py"
    ),
    # [secondary] independent install scripts naming the same NVIDIA wheel URL (the search index's
    # file ids): jp/v512 torch-2.1.0a0+41361538.nv23.06-cp38 (9912602627, 55701283109,
    # 15207225270, 29191287345, 17276186309); jp/v461 torch-1.11.0a0+17540c5+nv22.01-cp36
    # (813031960, 42204307987, 27348147625, 47150507197; jetson-containers' pytorch config saves
    # it under the PEP 440 name torch-1.11.0a0+17540c5-cp36...).
    "JETSON-WHEEL-COPIES": "https://developer.download.nvidia.com/compute/redist/jp/",
    "JETPACK7": "https://developer.nvidia.com/embedded/jetpack-sdk-70",
    "REVIEW-11": "https://github.com/nvidia-holoscan/holohub/issues/1687",
}

# Compute capability -> architecture. One table; rows never spell the architecture.
ARCHITECTURES: dict[str, str] = {
    "3.5": "Kepler",
    "3.7": "Kepler",
    "5.0": "Maxwell",
    "5.2": "Maxwell",
    "5.3": "Maxwell",
    "6.0": "Pascal",
    "6.1": "Pascal",
    "6.2": "Pascal",
    "7.0": "Volta",
    "7.2": "Volta",
    "7.5": "Turing",
    "8.0": "Ampere",
    "8.6": "Ampere",
    "8.7": "Ampere",
    "8.9": "Ada",
    "9.0": "Hopper",
    "10.0": "Blackwell",
    "10.3": "Blackwell",
    "11.0": "Blackwell",
    "12.0": "Blackwell",
    "12.1": "Blackwell",
}

Num = Optional[float]
ROWS: list[dict[str, Any]] = []


def gpu(
    key: str,
    name: str,
    cc: str,
    segment: str,
    memory_gb: Num,
    bf16: Num,
    fp32: Num,
    gbps: Num,
    sources: list[str],
    aliases: tuple[str, ...] = (),
    note: str = "",
    first_driver: Optional[str] = None,
) -> None:
    """``first_driver``: the first driver the vendor supports this model with, where it says so
    for the model (narrower than its compute capability's first branch in DRIVER_WINDOWS)."""
    ROWS.append(
        {
            "key": key,
            "name": name,
            "aliases": list(aliases),
            "vendor": "nvidia",
            "compute_capability": cc,
            "architecture": ARCHITECTURES[cc],
            "segment": segment,
            "memory_gb": memory_gb,
            "bf16_tflops": bf16,
            "fp32_tflops": fp32,
            "memory_gbps": gbps,
            "sources": sources,
            "note": note,
            **({"first_driver": first_driver} if first_driver else {}),
        }
    )


DC, WS, GF, EMB = "datacenter", "workstation", "consumer", "embedded"
HALF = "dense bf16 = the datasheet's with-sparsity figure / 2"

# fmt: off
# --- data centre -----------------------------------------------------------------------------
#   key                 nvidia-smi name                   cc     seg  GB    bf16    fp32  GB/s
gpu("K80",              "Tesla K80",                      "3.7", DC,  12,   None,   4.37, 240,
    ["CC-LEGACY", "K80"], ("K80",),
    note="one board = two GK210 devices; board figures (24 GB, 8.73 TFLOP/s boost, "
         "480 GB/s) halved per device")
gpu("M60",              "Tesla M60",                      "5.2", DC,  8,    None,   None, None,
    ["CC-LEGACY", "M60"], ("M60",),
    note="one board = two GM204 devices, 8 GB each")
gpu("P4",               "Tesla P4",                       "6.1", DC,  8,    None,   5.5,  192,
    ["CC", "P4"], ("P4",))
gpu("P40",              "Tesla P40",                      "6.1", DC,  24,   None,   12.0, 346,
    ["CC", "P40"], ("P40",))
gpu("P100-PCIE-12GB",   "Tesla P100-PCIE-12GB",           "6.0", DC,  12,   None,   9.3,  549,
    ["CC", "P100"])
gpu("P100-PCIE-16GB",   "Tesla P100-PCIE-16GB",           "6.0", DC,  16,   None,   9.3,  732,
    ["CC", "P100"], ("P100 PCIe",))
gpu("P100-SXM2-16GB",   "Tesla P100-SXM2-16GB",           "6.0", DC,  16,   None,   10.6, 732,
    ["CC", "P100"], ("P100 SXM2",))
gpu("V100-PCIE-16GB",   "Tesla V100-PCIE-16GB",           "7.0", DC,  16,   None,   14.0, 900,
    ["CC", "V100"], ("V100 PCIe",))
gpu("V100-PCIE-32GB",   "Tesla V100-PCIE-32GB",           "7.0", DC,  32,   None,   14.0, 900,
    ["CC", "V100"])
gpu("V100-SXM2-16GB",   "Tesla V100-SXM2-16GB",           "7.0", DC,  16,   None,   15.7, 900,
    ["CC", "V100"], ("V100 SXM2",))
gpu("V100-SXM2-32GB",   "Tesla V100-SXM2-32GB",           "7.0", DC,  32,   None,   15.7, 900,
    ["CC", "V100"])
gpu("V100S-PCIE-32GB",  "Tesla V100S-PCIE-32GB",          "7.0", DC,  32,   None,   16.4, 1134,
    ["CC", "V100"], ("V100S",))
gpu("T4",               "Tesla T4",                       "7.5", DC,  16,   None,   8.1,  320,
    ["CC", "T4"], ("T4", "NVIDIA T4"))
gpu("T4G",              "NVIDIA T4G",                     "7.5", DC,  16,   None,   None, None,
    ["CC", "T4G"], ("T4G",),
    note="AWS-only T4 for Graviton2 (g5g); AWS publishes memory, not peaks")
gpu("A10",              "NVIDIA A10",                     "8.6", DC,  24,   125.0,  31.2, 600,
    ["CC", "A10"], ("A10",))
gpu("A10G",             "NVIDIA A10G",                    "8.6", DC,  24,   None,   None, None,
    ["CC", "A10G"], ("A10G",),
    note="AWS-only part (GA102 like the A10); AWS publishes memory, not peaks")
gpu("A30",              "NVIDIA A30",                     "8.0", DC,  24,   165.0,  10.3, 933,
    ["CC", "A30"], ("A30",))
gpu("A40",              "NVIDIA A40",                     "8.6", DC,  48,   149.7,  37.4, 696,
    ["CC", "A40"], ("A40",))
gpu("A100-PCIE-40GB",   "NVIDIA A100-PCIE-40GB",          "8.0", DC,  40,   312.0,  19.5, 1555,
    ["CC", "A100", "T1"], ("A100 PCIe 40GB",))
gpu("A100-SXM4-40GB",   "NVIDIA A100-SXM4-40GB",          "8.0", DC,  40,   312.0,  19.5, 1555,
    ["CC", "A100", "T1"], ("A100 SXM4 40GB",))
gpu("A100-PCIE-80GB",   "NVIDIA A100 80GB PCIe",          "8.0", DC,  80,   312.0,  19.5, 1935,
    ["CC", "A100", "T1"], ("A100-PCIE-80GB",))
gpu("A100-SXM4-80GB",   "NVIDIA A100-SXM4-80GB",          "8.0", DC,  80,   312.0,  19.5, 2039,
    ["CC", "A100", "T1"], ("A100 SXM4 80GB",))
gpu("L4",               "NVIDIA L4",                      "8.9", DC,  24,   121.0,  30.3, 300,
    ["CC", "L4"], ("L4",), note=HALF)
gpu("L40",              "NVIDIA L40",                     "8.9", DC,  48,   181.05, 90.5, 864,
    ["CC", "L40"], ("L40",), note=HALF)
gpu("L40S",             "NVIDIA L40S",                    "8.9", DC,  48,   362.05, 91.6, 864,
    ["CC", "L40S", "T1"], ("L40S",))
gpu("H100-PCIE",        "NVIDIA H100 PCIe",               "9.0", DC,  80,   756.0,  51.0, 2000,
    ["CC", "H100", "T1"], ("H100 PCIe", "H100-PCIE-80GB"), note=HALF)
gpu("H100-SXM5-80GB",   "NVIDIA H100 80GB HBM3",          "9.0", DC,  80,   989.5,  67.0, 3350,
    ["CC", "H100", "T1"], ("H100 SXM", "H100 SXM5", "H100-SXM5-80GB"), note=HALF)
gpu("H100-NVL",         "NVIDIA H100 NVL",                "9.0", DC,  94,   835.5,  60.0, 3900,
    ["CC", "H100", "T1"], ("H100 NVL",), note=HALF)
gpu("H200",             "NVIDIA H200",                    "9.0", DC,  141,  989.5,  67.0, 4800,
    ["CC", "H200", "T1"], ("H200", "H200 SXM", "H200-SXM5-141GB"), note=HALF)
gpu("H200-NVL",         "NVIDIA H200 NVL",                "9.0", DC,  141,  835.5,  60.0, 4800,
    ["CC", "H200"], ("H200 NVL",), note=HALF)
gpu("GH200-96GB",       "NVIDIA GH200 480GB",             "9.0", DC,  96,   989.5,  67.0, 4000,
    ["CC", "GH200"], ("GH200",),
    note=HALF + "; the 480GB in the name is Grace LPDDR5X + HBM3, the GPU has 96 GB HBM3")
gpu("B200",             "NVIDIA B200",                    "10.0", DC, 180,  2250.0, 75.0, 7700,
    ["CC", "HGX", "GB200", "T1"], ("B200",),
    note="'Individual Blackwell GPU' column for HGX B200 (180 GB, 4.5 PFLOP/s bf16 sparse, "
         "75 TFLOP/s fp32, 7.7 TB/s); " + HALF)
gpu("GB200",            "NVIDIA GB200",                   "10.0", DC, 186,  2500.0, 80.0, 8000,
    ["CC", "GB200"], ("GB200",),
    note="'Individual Blackwell GPU' column for GB200 NVL72 (186 GB, 5 PFLOP/s bf16 sparse, "
         "80 TFLOP/s fp32, 8 TB/s); " + HALF)
gpu("B300",             "NVIDIA B300 SXM6 AC",            "10.3", DC, 288,  None,   None, None,
    ["CC", "HGX"], ("B300",),
    note="HGX B300 2.3 TB / 8 GPUs; per-GPU peaks not given in the cited page")
gpu("RTX-PRO-6000-SE",  "NVIDIA RTX PRO 6000 Blackwell Server Edition", "12.0", DC, 96, None,
    None, 1792, ["CC", "RTXPRO6000", "NV-GPUOP-PLATFORM"], ("RTX PRO 6000 Server",),
    first_driver="575.57.08",
    note="NVIDIA (GPU Operator platform support): 'Driver versions 575.57.08 or later is "
         "required' for the Server Edition; the R570 window of cc 12.0 is too early for it")
gpu("RTX-PRO-6000-WE",  "NVIDIA RTX PRO 6000 Blackwell Workstation Edition", "12.0", WS, 96,
    None, 125.0, 1792, ["CC", "RTXPRO6000"], ("RTX PRO 6000",))
# --- workstation -----------------------------------------------------------------------------
gpu("RTX-A4000",        "NVIDIA RTX A4000",               "8.6", WS,  16,   None,   19.2, 448,
    ["CC", "RTXA4000"], ("RTX A4000",))
gpu("RTX-A5000",        "NVIDIA RTX A5000",               "8.6", WS,  24,   None,   27.8, 768,
    ["CC", "RTXA5000"], ("RTX A5000",))
gpu("RTX-A6000",        "NVIDIA RTX A6000",               "8.6", WS,  48,   None,   38.7, 768,
    ["CC", "RTXA6000"], ("RTX A6000",))
gpu("RTX-6000-ADA",     "NVIDIA RTX 6000 Ada Generation", "8.9", WS,  48,   None,   91.1, 960,
    ["CC", "RTX6000ADA"], ("RTX 6000 Ada",))
# --- GeForce ---------------------------------------------------------------------------------
gpu("GTX-1050-TI",      "NVIDIA GeForce GTX 1050 Ti",     "6.1", GF,  4,    None,   None, 112,
    ["CC", "GF-10"], ("GTX 1050 Ti",))
gpu("GTX-1060-6GB",     "NVIDIA GeForce GTX 1060 6GB",    "6.1", GF,  6,    None,   None, 192,
    ["CC", "GF-10"], ("GTX 1060",))
gpu("GTX-1070",         "NVIDIA GeForce GTX 1070",        "6.1", GF,  8,    None,   None, 256,
    ["CC", "GF-10"], ("GTX 1070",))
gpu("GTX-1080",         "NVIDIA GeForce GTX 1080",        "6.1", GF,  8,    None,   8.873, 320,
    ["CC", "WP-PASCAL", "GF-10"], ("GTX 1080",))
gpu("GTX-1080-TI",      "NVIDIA GeForce GTX 1080 Ti",     "6.1", GF,  11,   None,   None, 484,
    ["CC", "GF-10"], ("GTX 1080 Ti",))
gpu("RTX-2060",         "NVIDIA GeForce RTX 2060",        "7.5", GF,  6,    None,   None, 336,
    ["CC", "GF-20"], ("RTX 2060",))
gpu("RTX-2070",         "NVIDIA GeForce RTX 2070",        "7.5", GF,  8,    None,   None, 448,
    ["CC", "GF-20"], ("RTX 2070",))
gpu("RTX-2080",         "NVIDIA GeForce RTX 2080",        "7.5", GF,  8,    None,   None, 448,
    ["CC", "GF-20"], ("RTX 2080",))
gpu("RTX-2080-TI",      "NVIDIA GeForce RTX 2080 Ti",     "7.5", GF,  11,   None,   13.4, 616,
    ["CC", "WP-TURING", "GF-20"], ("RTX 2080 Ti",))
gpu("RTX-3060",         "NVIDIA GeForce RTX 3060",        "8.6", GF,  12,   None,   None, 360,
    ["CC", "GF-30"], ("RTX 3060",))
gpu("RTX-3060-TI",      "NVIDIA GeForce RTX 3060 Ti",     "8.6", GF,  8,    None,   None, 448,
    ["CC", "GF-30"], ("RTX 3060 Ti",))
gpu("RTX-3070",         "NVIDIA GeForce RTX 3070",        "8.6", GF,  8,    40.6,   20.3, 448,
    ["CC", "WP-GA102", "GF-30"], ("RTX 3070",))
gpu("RTX-3080",         "NVIDIA GeForce RTX 3080",        "8.6", GF,  10,   59.5,   29.8, 760,
    ["CC", "WP-GA102", "GF-30"], ("RTX 3080",))
gpu("RTX-3090",         "NVIDIA GeForce RTX 3090",        "8.6", GF,  24,   71.0,   35.6, 936,
    ["CC", "WP-GA102", "GF-30"], ("RTX 3090",))
gpu("RTX-4060",         "NVIDIA GeForce RTX 4060",        "8.9", GF,  8,    None,   None, 272,
    ["CC", "GF-40"], ("RTX 4060",))
gpu("RTX-4060-TI",      "NVIDIA GeForce RTX 4060 Ti",     "8.9", GF,  8,    None,   None, 288,
    ["CC", "GF-40"], ("RTX 4060 Ti",))
gpu("RTX-4070",         "NVIDIA GeForce RTX 4070",        "8.9", GF,  12,   None,   None, 504,
    ["CC", "GF-40"], ("RTX 4070",))
gpu("RTX-4070-TI",      "NVIDIA GeForce RTX 4070 Ti",     "8.9", GF,  12,   None,   None, 504,
    ["CC", "GF-40"], ("RTX 4070 Ti",))
gpu("RTX-4080",         "NVIDIA GeForce RTX 4080",        "8.9", GF,  16,   97.5,   48.7, 716.8,
    ["CC", "WP-ADA", "GF-40"], ("RTX 4080",))
gpu("RTX-4090",         "NVIDIA GeForce RTX 4090",        "8.9", GF,  24,   165.2,  82.6, 1008,
    ["CC", "WP-ADA", "GF-40"], ("RTX 4090",))
gpu("RTX-5060-TI",      "NVIDIA GeForce RTX 5060 Ti",     "12.0", GF, None, None,   None, 448,
    ["CC", "GF-50"], ("RTX 5060 Ti",), note="sold with 8 GB or 16 GB under the same name")
gpu("RTX-5070",         "NVIDIA GeForce RTX 5070",        "12.0", GF, 12,   None,   None, 672,
    ["CC", "GF-50"], ("RTX 5070",))
gpu("RTX-5070-TI",      "NVIDIA GeForce RTX 5070 Ti",     "12.0", GF, 16,   None,   None, 896,
    ["CC", "GF-50"], ("RTX 5070 Ti",))
gpu("RTX-5080",         "NVIDIA GeForce RTX 5080",        "12.0", GF, 16,   None,   None, 960,
    ["CC", "GF-50"], ("RTX 5080",))
gpu("RTX-5090",         "NVIDIA GeForce RTX 5090",        "12.0", GF, 32,   209.5,  104.8, 1792,
    ["CC", "WP-RTX-BLACKWELL", "GF-50"], ("RTX 5090",))
# Seen in real collect_env reports (tests/fixtures/collect_env/): compute capability only.
gpu("GT-720",           "NVIDIA GeForce GT 720",          "3.5", GF,  None, None,   None, None,
    ["CC-LEGACY"], ("GeForce GT 720", "GT 720"))
# --- embedded --------------------------------------------------------------------------------
gpu("JETSON-AGX-ORIN",  "Orin",                           "8.7", EMB, None, None,   None, None,
    ["CC", "JETSON"],
    ("Jetson AGX Orin", "Jetson Orin", "Jetson Orin NX", "Jetson Orin Nano",
     "NVIDIA Jetson AGX Orin", "NVIDIA Jetson Orin NX", "NVIDIA Jetson Orin Nano"),
    note="Jetson has no nvidia-smi; torch names the device 'Orin'; memory is shared with the CPU")
# fmt: on

# --- the rest of NVIDIA's compute-capability list (names as the driver prints them) -------
# These rows carry no peaks (None): the cc is from NVIDIA's list (CC / CC-LEGACY), the name from
# the driver's product list (DRV-NAMES). Laptop parts are not on NVIDIA's cc list: they share the
# desktop chip's cc (the note says so).
LAP = "laptop"
LAPTOP_NOTE = "laptop part: NVIDIA's cc list names the desktop family; same chip generation"


def family(cc: str, segment: str, srcs: list[str], names: list[str], note: str = "") -> None:
    """Rows of one compute capability: "NVIDIA GeForce RTX 5060" -> key RTX-5060, alias RTX 5060."""
    for name in names:
        short = name
        for prefix in ("NVIDIA GeForce ", "NVIDIA ", "Tesla "):
            if short.startswith(prefix):
                short = short[len(prefix) :]
                break
        key = short.upper().replace(" ", "-").replace("(", "").replace(")", "")
        aliases = (short,) if short != name else ()
        gpu(
            key,
            name,
            cc,
            segment,
            None,
            None,
            None,
            None,
            srcs,
            aliases,
            note=note or "cc from NVIDIA's list; name as the driver prints it",
        )


# fmt: off
family("12.1", DC, ["CC", "NAME-GB10"], ["NVIDIA GB10"],
       note="DGX Spark (Grace Blackwell superchip, unified LPDDR5X: NVML reports no memory)")
family("12.0", WS, ["CC", "DRV-NAMES"], [
    "NVIDIA RTX PRO 6000 Blackwell Max-Q Workstation Edition",
    "NVIDIA RTX PRO 5000 Blackwell", "NVIDIA RTX PRO 4500 Blackwell",
    "NVIDIA RTX PRO 4000 Blackwell", "NVIDIA RTX PRO 4000 Blackwell SFF Edition",
    "NVIDIA RTX PRO 2000 Blackwell"])
family("12.0", DC, ["CC", "DRV-NAMES"], ["NVIDIA RTX PRO 4500 Blackwell Server Edition"])
family("12.0", GF, ["CC", "GF-50", "DRV-NAMES"], [
    "NVIDIA GeForce RTX 5060", "NVIDIA GeForce RTX 5050", "NVIDIA GeForce RTX 5090 D"])
family("12.0", LAP, ["CC", "DRV-NAMES"], [
    "NVIDIA GeForce RTX 5090 Laptop GPU", "NVIDIA GeForce RTX 5080 Laptop GPU",
    "NVIDIA GeForce RTX 5070 Ti Laptop GPU", "NVIDIA GeForce RTX 5070 Laptop GPU",
    "NVIDIA GeForce RTX 5060 Laptop GPU", "NVIDIA GeForce RTX 5050 Laptop GPU"], note=LAPTOP_NOTE)
family("10.3", DC, ["CC"], ["NVIDIA GB300"])
family("9.0", DC, ["CC", "DRV-NAMES"], ["NVIDIA H20", "NVIDIA H800", "NVIDIA H100 SXM5 64GB"],
       note="Hopper (cc 9.0 like every Hopper part); not printed on NVIDIA's short cc list")
family("8.9", DC, ["CC", "DRV-NAMES"], ["NVIDIA L20"],
       note="Ada data-centre part (cc 8.9 like L4/L40); not printed on NVIDIA's short cc list")
family("8.9", WS, ["CC", "DRV-NAMES"], [
    "NVIDIA RTX 5000 Ada Generation", "NVIDIA RTX 4500 Ada Generation",
    "NVIDIA RTX 4000 Ada Generation", "NVIDIA RTX 4000 SFF Ada Generation",
    "NVIDIA RTX 2000 Ada Generation"])
family("8.9", GF, ["CC", "GF-40", "DRV-NAMES"], [
    "NVIDIA GeForce RTX 4090 D", "NVIDIA GeForce RTX 4080 SUPER",
    "NVIDIA GeForce RTX 4070 Ti SUPER", "NVIDIA GeForce RTX 4070 SUPER"])
family("8.9", LAP, ["CC", "DRV-NAMES"], [
    "NVIDIA GeForce RTX 4090 Laptop GPU", "NVIDIA GeForce RTX 4080 Laptop GPU",
    "NVIDIA GeForce RTX 4070 Laptop GPU", "NVIDIA GeForce RTX 4060 Laptop GPU",
    "NVIDIA GeForce RTX 4050 Laptop GPU"], note=LAPTOP_NOTE)
family("8.6", DC, ["CC", "DRV-NAMES"], ["NVIDIA A2", "NVIDIA A16"])
family("8.6", WS, ["CC", "DRV-NAMES"], ["NVIDIA RTX A2000", "NVIDIA RTX A2000 12GB"])
family("8.6", LAP, ["CC", "DRV-NAMES"], [
    "NVIDIA RTX A3000 Laptop GPU", "NVIDIA GeForce RTX 3080 Laptop GPU",
    "NVIDIA GeForce RTX 3070 Laptop GPU", "NVIDIA GeForce RTX 3060 Laptop GPU",
    "NVIDIA GeForce RTX 3050 Laptop GPU"], note=LAPTOP_NOTE)
family("8.6", GF, ["CC", "GF-30", "DRV-NAMES"], [
    "NVIDIA GeForce RTX 3090 Ti", "NVIDIA GeForce RTX 3080 Ti", "NVIDIA GeForce RTX 3070 Ti",
    "NVIDIA GeForce RTX 3050"])
family("7.5", WS, ["CC-LEGACY", "DRV-NAMES"], [
    "Quadro RTX 8000", "Quadro RTX 6000", "Quadro RTX 5000", "Quadro RTX 4000", "NVIDIA T1000",
    "NVIDIA T1000 8GB", "NVIDIA T600", "NVIDIA T400", "NVIDIA T400 4GB", "NVIDIA TITAN RTX"])
family("7.5", GF, ["CC-LEGACY", "DRV-NAMES"], [
    "NVIDIA GeForce GTX 1660 Ti", "NVIDIA GeForce GTX 1660 SUPER", "NVIDIA GeForce GTX 1660",
    "NVIDIA GeForce GTX 1650 SUPER", "NVIDIA GeForce GTX 1650", "NVIDIA GeForce GTX 1650 Ti",
    "NVIDIA GeForce RTX 2080 SUPER", "NVIDIA GeForce RTX 2070 SUPER",
    "NVIDIA GeForce RTX 2060 SUPER"])
family("7.0", WS, ["CC-LEGACY", "DRV-NAMES"], ["NVIDIA TITAN V", "Quadro GV100"])
family("6.1", WS, ["CC-LEGACY", "DRV-NAMES"], [
    "Quadro P6000", "Quadro P5000", "Quadro P4000", "Quadro P2200", "Quadro P2000",
    "Quadro P1000", "Quadro P620", "Quadro P600", "Quadro P400", "NVIDIA TITAN Xp",
    "NVIDIA TITAN X (Pascal)"])
family("6.1", GF, ["CC-LEGACY", "DRV-NAMES"], [
    "NVIDIA GeForce GTX 1070 Ti", "NVIDIA GeForce GTX 1050"])
family("6.0", WS, ["CC-LEGACY", "DRV-NAMES"], ["Quadro GP100"])
family("5.2", DC, ["CC-LEGACY", "DRV-NAMES"], ["Tesla M40", "Tesla M40 24GB"])
family("5.2", WS, ["CC-LEGACY", "DRV-NAMES"], [
    "Quadro M6000", "Quadro M6000 24GB", "Quadro M5000", "Quadro M4000", "Quadro M2000"])
family("5.2", GF, ["CC-LEGACY", "DRV-NAMES"], [
    "NVIDIA GeForce GTX TITAN X", "NVIDIA GeForce GTX 980 Ti", "NVIDIA GeForce GTX 980",
    "NVIDIA GeForce GTX 970", "NVIDIA GeForce GTX 960", "NVIDIA GeForce GTX 950"])
family("5.0", WS, ["CC-LEGACY", "DRV-NAMES"], ["Quadro K2200", "Quadro K1200", "Quadro K620"])
family("5.0", GF, ["CC-LEGACY", "DRV-NAMES"], [
    "NVIDIA GeForce GTX 750 Ti", "NVIDIA GeForce GTX 750"])
family("3.5", DC, ["CC-LEGACY", "DRV-NAMES"], ["Tesla K40m", "Tesla K40c", "Tesla K20Xm"])
# Jetson: torch names the iGPU by its SoC; there is no nvidia-smi before JetPack 7.
gpu("JETSON-THOR",      "NVIDIA Thor",                    "11.0", EMB, None, None,  None, None,
    ["CC", "NAME-THOR", "NAME-THOR-TORCH", "THOR-SM110"],
    ("Jetson AGX Thor", "Jetson T5000", "Jetson T4000", "Thor"),
    note="Jetson Thor: cc 11.0 with CUDA 13 (10.1 under CUDA 12.x); nvidia-smi from JetPack 7")
gpu("JETSON-XAVIER",    "Xavier",                         "7.2", EMB, None, None,   None, None,
    ["CC-LEGACY", "JETSON"], ("Jetson AGX Xavier", "Jetson Xavier NX", "Jetson Xavier"),
    note="torch names the device 'Xavier'; memory is shared with the CPU")
gpu("JETSON-TX2",       "NVIDIA Tegra X2",                "6.2", EMB, None, None,   None, None,
    ["CC-LEGACY", "JETSON"], ("Jetson TX2", "Tegra X2", "TX2"),
    note="torch names the device 'NVIDIA Tegra X2'; memory is shared with the CPU")
gpu("JETSON-NANO",      "NVIDIA Tegra X1",                "5.3", EMB, None, None,   None, None,
    ["CC-LEGACY", "JETSON"], ("Jetson Nano", "Tegra X1", "Jetson TX1"),
    note="torch names the device 'NVIDIA Tegra X1'; memory is shared with the CPU")
# fmt: on

# --- driver windows --------------------------------------------------------------------------
# Per compute capability: the first driver branch that runs it (the minimum driver of the first
# CUDA toolkit that supports it, NVIDIA's release notes table 3), the last branch that still does
# (NVIDIA's architecture matrix), and which kernel modules drive it (the open modules support
# Turing and newer; Blackwell needs them). Jetson iGPUs (5.3, 6.2, 7.2, 8.7, 11.0) are left out:
# their driver comes with the L4T release, never separately.
DRIVER_WINDOWS: dict[str, dict[str, Any]] = {}


def window(
    ccs: list[str],
    first: Optional[int],
    last: Optional[int],
    first_cuda: Optional[str],
    modules: str,
    sources: list[str],
    note: str = "",
) -> None:
    for cc in ccs:
        DRIVER_WINDOWS[cc] = {
            "first_branch": first,
            "last_branch": last,
            "first_cuda": first_cuda,
            "kernel_modules": modules,
            "sources": sources,
            "note": note,
        }


window(
    ["3.5", "3.7"],
    None,
    470,
    "6.0",
    "proprietary",
    ["ARCH-MATRIX"],
    note="Kepler: R470 is the last branch (CUDA 11.x the last toolkit)",
)
window(
    ["5.0", "5.2"],
    None,
    580,
    "6.5",
    "proprietary",
    ["ARCH-MATRIX", "OPEN-KM", "LEGACY-580"],
    note="Maxwell: R580 is the last branch (CUDA 12.x the last toolkit)",
)
window(
    ["6.0", "6.1"],
    None,
    580,
    "8.0",
    "proprietary",
    ["ARCH-MATRIX", "OPEN-KM", "LEGACY-580"],
    note="Pascal: R580 is the last branch (CUDA 12.x the last toolkit)",
)
window(
    ["7.0"],
    None,
    580,
    "9.0",
    "proprietary",
    ["ARCH-MATRIX", "OPEN-KM"],
    note="Volta: R580 is the last branch (CUDA 12.x the last toolkit)",
)
window(["7.5"], 410, None, "10.0", "either", ["ARCH-MATRIX", "CUDA-RN", "OPEN-KM"])
window(["8.0"], 450, None, "11.0", "either", ["ARCH-MATRIX", "CUDA-RN", "OPEN-KM"])
window(
    ["8.6"],
    455,
    None,
    "11.1",
    "either",
    ["ARCH-MATRIX", "CUDA-RN", "OPEN-KM"],
    note="the matrix prints CUDA 11.0 for 8.0 and 8.6 together; sm_86 came with CUDA 11.1 "
    "(R455), which is what an RTX 30xx needs",
)
window(["8.9", "9.0"], 520, None, "11.8", "either", ["ARCH-MATRIX", "CUDA-RN", "OPEN-KM"])
window(
    ["10.0", "12.0"],
    570,
    None,
    "12.8",
    "open",
    ["ARCH-MATRIX", "CUDA-RN", "OPEN-KM"],
    note="Blackwell: first toolkit CUDA 12.8 (driver R570); the open kernel modules only",
)
window(
    ["10.3", "12.1"],
    575,
    None,
    "12.9",
    "open",
    ["CUDA-12.9-RN", "CUDA-RN", "OPEN-KM"],
    note="sm_103 / sm_121 came with CUDA 12.9 (driver R575); not on the architecture matrix",
)

# --- AMD GPUs --------------------------------------------------------------------------------
# Names as rocminfo prints them ("Marketing Name"), gfx ids from AMD's hardware specifications.
AMD_ROWS: list[dict[str, Any]] = []


def amd(
    key: str,
    name: str,
    gfx: str,
    segment: str,
    memory_gb: Num,
    aliases: tuple[str, ...] = (),
    sources: tuple[str, ...] = ("AMD-SPECS",),
    note: str = "",
) -> None:
    AMD_ROWS.append(
        {
            "key": key,
            "name": name,
            "aliases": list(aliases),
            "vendor": "amd",
            "gfx": gfx,
            "segment": segment,
            "memory_gb": memory_gb,
            "sources": list(sources),
            "note": note,
        }
    )


# fmt: off
amd("MI355X",   "AMD Instinct MI355X",   "gfx950",  DC, 288, ("MI355X",))
amd("MI350X",   "AMD Instinct MI350X",   "gfx950",  DC, 288, ("MI350X",))
amd("MI325X",   "AMD Instinct MI325X",   "gfx942",  DC, 256, ("MI325X",))
amd("MI300X",   "AMD Instinct MI300X",   "gfx942",  DC, 192, ("MI300X", "MI300X OAM"),
    ("AMD-SPECS", "ROCMINFO-MI300X"))
amd("MI300A",   "AMD Instinct MI300A",   "gfx942",  DC, 128, ("MI300A",))
amd("MI250X",   "AMD Instinct MI250X/MI250", "gfx90a", DC, 128, ("MI250X", "MI250"),
    note="rocminfo prints one name for both; one GCD (64 GB) per agent")
amd("MI210",    "AMD Instinct MI210",    "gfx90a",  DC, 64,  ("MI210",))
amd("MI100",    "AMD Instinct MI100",    "gfx908",  DC, 32,  ("MI100",))
amd("MI60",     "AMD Instinct MI60",     "gfx906",  DC, 32,  ("MI60",))
amd("MI50",     "AMD Instinct MI50",     "gfx906",  DC, 16,  ("MI50", "MI50 32GB"))
amd("MI25",     "Radeon Instinct MI25",  "gfx900",  DC, 16,  ("MI25",))
amd("PRO-W7900", "AMD Radeon PRO W7900", "gfx1100", WS, 48,  ("Radeon PRO W7900", "W7900"))
amd("PRO-W7800", "AMD Radeon PRO W7800", "gfx1100", WS, 32,  ("Radeon PRO W7800", "W7800"))
amd("PRO-W7700", "AMD Radeon PRO W7700", "gfx1101", WS, 16,  ("Radeon PRO W7700", "W7700"))
amd("PRO-W6800", "AMD Radeon PRO W6800", "gfx1030", WS, 32,  ("Radeon PRO W6800", "W6800"))
amd("PRO-V620",  "AMD Radeon PRO V620",  "gfx1030", DC, 32,  ("Radeon PRO V620", "V620"))
amd("PRO-VII",   "AMD Radeon Pro VII",   "gfx906",  WS, 16,  ("Radeon Pro VII",))
amd("PRO-V520",  "AMD Radeon Pro V520",  "gfx1011", DC, 8,   ("Radeon Pro V520", "V520"),
    note="AWS g4ad; no official ROCm wheel carries gfx1011")
amd("PRO-W9700", "AMD Radeon AI PRO R9700", "gfx1201", WS, 32, ("Radeon AI PRO R9700", "R9700"))
amd("RX-9070-XT", "AMD Radeon RX 9070 XT", "gfx1201", GF, 16, ("RX 9070 XT",))
amd("RX-9070",   "AMD Radeon RX 9070",   "gfx1201", GF, 16,  ("RX 9070",))
amd("RX-9060-XT", "AMD Radeon RX 9060 XT", "gfx1200", GF, 16, ("RX 9060 XT",))
amd("RX-7900-XTX", "AMD Radeon RX 7900 XTX", "gfx1100", GF, 24, ("RX 7900 XTX",))
amd("RX-7900-XT", "AMD Radeon RX 7900 XT", "gfx1100", GF, 20, ("RX 7900 XT",))
amd("RX-7900-GRE", "AMD Radeon RX 7900 GRE", "gfx1100", GF, 16, ("RX 7900 GRE",))
amd("RX-7800-XT", "AMD Radeon RX 7800 XT", "gfx1101", GF, 16, ("RX 7800 XT",))
amd("RX-7700-XT", "AMD Radeon RX 7700 XT", "gfx1101", GF, 12, ("RX 7700 XT",))
amd("RX-7600",   "AMD Radeon RX 7600",   "gfx1102", GF, 8,   ("RX 7600",))
amd("RX-6950-XT", "AMD Radeon RX 6950 XT", "gfx1030", GF, 16, ("RX 6950 XT",))
amd("RX-6900-XT", "AMD Radeon RX 6900 XT", "gfx1030", GF, 16, ("RX 6900 XT",))
amd("RX-6800-XT", "AMD Radeon RX 6800 XT", "gfx1030", GF, 16, ("RX 6800 XT",))
amd("RX-6800",   "AMD Radeon RX 6800",   "gfx1030", GF, 16,  ("RX 6800",))
amd("RX-6700-XT", "AMD Radeon RX 6700 XT", "gfx1031", GF, 12, ("RX 6700 XT",),
    sources=("AMD-LLVM",))
amd("RX-6600-XT", "AMD Radeon RX 6600 XT", "gfx1032", GF, 8, ("RX 6600 XT",),
    sources=("AMD-LLVM",))
amd("RX-6600",   "AMD Radeon RX 6600",   "gfx1032", GF, 8,   ("RX 6600",), sources=("AMD-LLVM",))
amd("RX-5700-XT", "AMD Radeon RX 5700 XT", "gfx1010", GF, 8, ("RX 5700 XT",),
    sources=("AMD-LLVM",))
amd("RX-5700",   "AMD Radeon RX 5700",   "gfx1010", GF, 8,   ("RX 5700",), sources=("AMD-LLVM",))
amd("RX-5500-XT", "AMD Radeon RX 5500 XT", "gfx1012", GF, 8, ("RX 5500 XT",),
    sources=("AMD-LLVM",))
amd("RX-VEGA-64", "Radeon RX Vega",      "gfx900",  GF, 8,   ("RX Vega 64", "Vega 64"),
    sources=("AMD-LLVM",))
amd("RX-580",    "Radeon RX 580 Series", "gfx803",  GF, 8,   ("RX 580", "RX 570"),
    sources=("AMD-LLVM",))
amd("STRIX-HALO", "AMD Radeon 8060S Graphics", "gfx1151", EMB, None,
    ("Radeon 8060S", "Ryzen AI Max+ 395", "Ryzen AI Max 390", "Strix Halo"),
    note="Ryzen AI Max (Strix Halo) iGPU; memory shared with the CPU")
amd("STRIX-POINT", "AMD Radeon 890M Graphics", "gfx1150", EMB, None,
    ("Radeon 890M", "Radeon 880M", "Ryzen AI 9 HX 370", "Strix Point"),
    note="Ryzen AI 300 (Strix Point) iGPU; memory shared with the CPU")
amd("PHOENIX",   "AMD Radeon 780M Graphics", "gfx1103", EMB, None, ("Radeon 780M", "Radeon 760M"),
    sources=("AMD-LLVM", "PT-179653"),
    note="Ryzen 7040/8040 (Phoenix/Hawk Point) iGPU; in PyTorch's ROCm wheels from torch 2.13")
# fmt: on

# --- which gfx targets PyTorch's ROCm wheels carry (PYTORCH_ROCM_ARCH of the official build) --
# Ranges of torch releases (inclusive, "2.10" = every 2.10.x) -> the gfx list; section C of the
# data review, each range re-read at its PR. gfx942 needs ROCm >= 6.0 (every variant here is).
# The first rule that matches a (torch, ROCm) pair wins, so the narrower ROCm ranges come first.
ROCM_BASE = ["gfx900", "gfx906", "gfx908", "gfx90a", "gfx942", "gfx1030", "gfx1100"]
# build.sh @027375bf (data review 2026-12b rows 3 and 4): one common list for every ROCm build;
# the ROCm 7.14 path (TheRock multi-arch wheels, torch 2.14 on) uses it as is, the legacy
# rocm/dev-almalinux path (ROCm 7.1/7.2) prepends gfx900;gfx906. gfx1103 joined it with #179653.
ROCM_COMMON_2_13 = [
    "gfx908", "gfx90a", "gfx942", "gfx950", "gfx1030", "gfx1100", "gfx1101", "gfx1102",
    "gfx1103", "gfx1200", "gfx1201", "gfx1150", "gfx1151",
]  # fmt: skip
ROCM_WHEELS: list[dict[str, Any]] = [
    {
        "torch_min": "2.0",
        "torch_max": "2.5",
        "rocm_min": None,
        "gfx": ROCM_BASE,
        "sources": ["PT-ROCM-BUILD"],
    },
    {
        "torch_min": "2.6",
        "torch_max": "2.6",
        "rocm_min": None,
        "gfx": [*ROCM_BASE, "gfx1101"],
        "sources": ["PT-ROCM-BUILD", "PT-141667"],
    },
    {
        "torch_min": "2.7",
        "torch_max": "2.9",
        "rocm_min": None,
        "gfx": [*ROCM_BASE, "gfx1101", "gfx1102", "gfx1200", "gfx1201"],
        "sources": ["PT-ROCM-BUILD", "PT-141667", "PT-147761", "PT-148562"],
    },
    {
        # rocm7.14 (torch 2.14, 2.15): no gfx900/gfx906 (MI25, MI50, MI60, Radeon VII / Pro VII)
        "torch_min": "2.13",
        "torch_max": None,
        "rocm_min": "7.14",
        "gfx": ROCM_COMMON_2_13,
        "sources": ["PT-ROCM-BUILD-714", "PT-179653"],
    },
    {
        # rocm7.1 / rocm7.2 (legacy images): gfx900;gfx906 + the common list, gfx1103 included
        "torch_min": "2.13",
        "torch_max": None,
        "rocm_min": "7.0",
        "gfx": ["gfx900", "gfx906", *ROCM_COMMON_2_13],
        "sources": ["PT-ROCM-BUILD-714", "PT-179653", "PT-179788"],
    },
    {
        "torch_min": "2.10",
        "torch_max": "2.12",
        "rocm_min": "7.0",
        "gfx": [
            *ROCM_BASE,
            "gfx950",
            "gfx1101",
            "gfx1102",
            "gfx1150",
            "gfx1151",
            "gfx1200",
            "gfx1201",
        ],
        "sources": ["PT-ROCM-BUILD", "PT-141667", "PT-147761", "PT-148562", "PT-167299"],
    },
    {
        "torch_min": "2.10",
        "torch_max": "2.12",
        "rocm_min": None,
        "gfx": [*ROCM_BASE, "gfx1101", "gfx1102", "gfx1200", "gfx1201"],
        "sources": ["PT-ROCM-BUILD", "PT-141667", "PT-147761", "PT-148562", "PT-167299"],
    },
]

# --- Jetson: JetPack <-> L4T <-> CUDA <-> NVIDIA's torch ---------------------------------------
# index: where NVIDIA points for that JetPack's torch wheels (the Jetson AI Lab index from JetPack
# 6 on; NVIDIA's redist folder before). torch: the exact version of NVIDIA's newest wheel for it
# (None: none). wheel: that wheel's file name in the redist folder, where sources name it: the plan
# installs it by URL, so pip can never take PyPI's CPU-only aarch64 torch instead (issue 17).
# sbsa: the JetPack runs PyTorch's own SBSA (linux aarch64) CUDA wheels where they carry the GPU's
# arch (JetPack 7). confidence: of the row (JetPack <-> L4T <-> CUDA); torch_confidence: of the
# wheel (V: NVIDIA's own page or listing names the file; V2: NVIDIA names the release and several
# independent copies the file; I: inferred; ?: unconfirmed). A '?' row is planned only when the
# machine is known to run it (--jetpack, /etc/nv_tegra_release, its CUDA), never assumed for an
# unknown JetPack nor offered as an upgrade; a torch_confidence below V2 is a plan warning.
JETPACK: list[dict[str, Any]] = []


# fmt: off
def jetpack(version: str, l4t: str, cuda: str, modules: list[str], python: str,
            index: Optional[str], torch: Optional[str], sources: list[str], sbsa: bool = False,
            note: str = "", driver: Optional[str] = None, wheel: Optional[str] = None,
            confidence: str = "V2", torch_confidence: str = "V2") -> None:
    JETPACK.append({
        "jetpack": version, "l4t": l4t, "cuda": cuda, "modules": modules, "python": python,
        "index": index, "torch": torch, "wheel": wheel, "sbsa": sbsa, "driver": driver,
        "kernel": L4T_KERNEL.get(l4t.split(".")[0]), "sources": sources, "note": note,
        "confidence": confidence, "torch_confidence": torch_confidence,
    })


# The Linux kernel series each L4T major ships ("-tegra" kernels), as seen in public captures:
# 4.9.253-tegra on R32.6.1 and 5.15.148-tegra on R36.4.3 (tests/fixtures/hosts/jetson-orin-nx-jp62
# SOURCES.md), 5.10.120-tegra on JetPack 5 (tests/fixtures/collect_env/jetson-agx-orin-nv23.02),
# 6.8.12-tegra on R38.2.0 (jetson_stats#711). R39 (JetPack 7.2): none seen, so no kernel.
L4T_KERNEL = {"32": "4.9", "35": "5.10", "36": "5.15", "38": "6.8"}


NV_REDIST = "https://developer.download.nvidia.com/compute/redist/jp"
AI_LAB = "https://pypi.jetson-ai-lab.io/jp6"
ORIN, XAVIER, OLD = ["8.7"], ["7.2", "8.7"], ["5.3", "6.2", "7.2"]
ARCHIVE, NV_RN, FORUM = "JETPACK-ARCHIVE", "JETSON-PYTORCH-RN", "JETSON-FORUM"
L4T_TABLE, COPIES = "JETSON-CONTAINERS-L4T", "JETSON-WHEEL-COPIES"
JP5_WHEEL = "torch-2.1.0a0+41361538.nv23.06-cp38-cp38-linux_aarch64.whl"
JP5_NOTE = ("NVIDIA's thread lists torch 2.1.0 (2.1.0a0+41361538.nv23.06, jp/v512) for JetPack "
            "5.1, 5.1.1 and 5.1.2")
JP5_LATER = ("NVIDIA published no torch wheel for JetPack 5.1.3 and later: the 5.1.2 wheel is "
             "inferred to run (same L4T R35, CUDA 11.4 and Python 3.8)")
AI_LAB_NOTE = ("which torch releases the Jetson AI Lab index holds is not confirmed by a source "
               "read: NVIDIA's forum names 2.4.0, 2.5.0 and 2.6.0rc1 on jp6/cu126 (2025)")
#       JetPack  L4T       CUDA    modules  Python index                     torch
jetpack("4.6",   "32.6.1", "10.2", OLD,    "3.6",  f"{NV_REDIST}/v46/pytorch",  "1.10.0",
        [ARCHIVE, NV_RN, FORUM], torch_confidence="?",
        note="NVIDIA's thread lists torch 1.10.0 (torch-1.10.0-cp36-cp36m-linux_aarch64.whl, on "
             "nvidia.box.com) for JetPack 4.4-4.6; which file the v46 folder holds is "
             "unconfirmed (copies name four different ones)")
jetpack("4.6.1", "32.7.1", "10.2", OLD,    "3.6",  f"{NV_REDIST}/v461/pytorch",
        "1.11.0a0+17540c5+nv22.01", [ARCHIVE, NV_RN, COPIES],
        wheel="torch-1.11.0a0+17540c5+nv22.01-cp36-cp36m-linux_aarch64.whl",
        note="the file is named by several independent copies, not by an NVIDIA page read; its "
             "version is not PEP 440 (two '+'): pip >= 24.1 and uv refuse it, while JetPack "
             "4.6.1's Python 3.6 has pip <= 21.3.1, which installs it")
jetpack("5.1",   "35.2.1", "11.4", XAVIER, "3.8",  f"{NV_REDIST}/v512/pytorch",
        "2.1.0a0+41361538.nv23.06", [ARCHIVE, FORUM, L4T_TABLE, COPIES], wheel=JP5_WHEEL,
        note=JP5_NOTE)
jetpack("5.1.1", "35.3.1", "11.4", XAVIER, "3.8",  f"{NV_REDIST}/v512/pytorch",
        "2.1.0a0+41361538.nv23.06", [ARCHIVE, FORUM, L4T_TABLE, COPIES], wheel=JP5_WHEEL,
        note=JP5_NOTE)
jetpack("5.1.2", "35.4.1", "11.4", XAVIER, "3.8",  f"{NV_REDIST}/v512/pytorch",
        "2.1.0a0+41361538.nv23.06", [ARCHIVE, NV_RN, FORUM, COPIES], wheel=JP5_WHEEL,
        note=JP5_NOTE)
jetpack("5.1.3", "35.5.0", "11.4", XAVIER, "3.8",  f"{NV_REDIST}/v512/pytorch",
        "2.1.0a0+41361538.nv23.06", [FORUM, L4T_TABLE, COPIES], wheel=JP5_WHEEL,
        torch_confidence="I", note=JP5_LATER)
jetpack("5.1.4", "35.6.0", "11.4", XAVIER, "3.8",  f"{NV_REDIST}/v512/pytorch",
        "2.1.0a0+41361538.nv23.06", [FORUM, L4T_TABLE, COPIES], wheel=JP5_WHEEL,
        torch_confidence="I", note=JP5_LATER)
jetpack("5.1.5", "35.6.1", "11.4", XAVIER, "3.8",  f"{NV_REDIST}/v512/pytorch",
        "2.1.0a0+41361538.nv23.06", [FORUM, L4T_TABLE, COPIES], wheel=JP5_WHEEL,
        torch_confidence="I", note=JP5_LATER + "; L4T 35.6.2 is 5.1.5 too")
jetpack("5.1.6", "35.6.4", "11.4", XAVIER, "3.8",  f"{NV_REDIST}/v512/pytorch",
        "2.1.0a0+41361538.nv23.06", [FORUM, L4T_TABLE, COPIES], wheel=JP5_WHEEL,
        torch_confidence="I", note=JP5_LATER)
jetpack("6.0",   "36.3.0", "12.2", ORIN,   "3.10", f"{AI_LAB}/cu122",           "2.4.0",
        [ARCHIVE, NV_RN, "JETSON-AI-LAB"], torch_confidence="?",
        note=AI_LAB_NOTE + "; NVIDIA's redist folder jp/v60 lists torch 2.4.0a0 builds")
jetpack("6.1",   "36.4.0", "12.6", ORIN,   "3.10", f"{AI_LAB}/cu126",           "2.8.0",
        [ARCHIVE, "JETSON-AI-LAB", "JETSON-FORUM-JP61"], torch_confidence="?", note=AI_LAB_NOTE)
jetpack("6.2",   "36.4.3", "12.6", ORIN,   "3.10", f"{AI_LAB}/cu126",           "2.8.0",
        [ARCHIVE, "JETSON-AI-LAB"], torch_confidence="?",
        note="6.1 and 6.2 share CUDA 12.6 and the index; " + AI_LAB_NOTE)
jetpack("6.2.1", "36.4.4", "12.6", ORIN,   "3.10", f"{AI_LAB}/cu126",           "2.8.0",
        [ARCHIVE, "JETSON-AI-LAB"], torch_confidence="?", note=AI_LAB_NOTE)
jetpack("7.0",   "38.2.0", "13.0", ["11.0"], "3.12", None, None,
        ["JETPACK7", "REVIEW-11", "NAME-THOR-TORCH"], sbsa=True, driver="580.00",
        note="Jetson Thor: PyTorch's SBSA CUDA 13 wheels (sm_110); L4T's driver reports 580.00")
jetpack("7.1",   "38.4.0", "13.0", ["11.0"], "3.12", None, None,
        ["JETPACK7", "REVIEW-11", "NAME-THOR-TORCH"], sbsa=True, driver="580.00",
        note="Jetson Thor (T5000/T4000): PyTorch's SBSA CUDA 13 wheels")
jetpack("7.2",   "39.1.0", "13.2", ORIN,   "3.12", None, None, [L4T_TABLE], sbsa=True,
        confidence="?",
        note="Orin in SBSA mode ('7.2 GA # Orin SBSA', L4T 39 -> CUDA 13.2): one secondary "
             "source; its driver version and kernel are not known here")
# fmt: on


def build() -> dict[str, Any]:
    keys = [r["key"] for r in ROWS]
    if len(set(keys)) != len(keys):
        raise SystemExit("duplicate keys in the table")
    tables = [*ROWS, *AMD_ROWS, *DRIVER_WINDOWS.values(), *ROCM_WHEELS, *JETPACK]
    for row in tables:
        for sid in row["sources"]:
            if sid not in SOURCES:
                raise SystemExit(f"{row.get('key', row)}: unknown source id {sid}")
    used = {sid for row in tables for sid in row["sources"]}
    unused = set(SOURCES) - used - {"FIXTURES"}
    if unused:
        raise SystemExit(f"sources cited by no row: {sorted(unused)}")
    return {
        "schema_version": SCHEMA_VERSION,
        "source": (
            "NVIDIA CUDA GPUs compute-capability pages, NVIDIA datasheets and architecture "
            "whitepapers; per-row source ids resolve through 'sources'"
        ),
        "retrieved": RETRIEVED,
        "generated_by": "scripts/build_gpus.py",
        "sources": SOURCES,
        "architectures": ARCHITECTURES,
        "gpus": ROWS,
        "driver_windows": DRIVER_WINDOWS,
        "amd": AMD_ROWS,
        "rocm_wheels": ROCM_WHEELS,
        "jetpack": JETPACK,
    }


def render() -> str:
    return json.dumps(build(), indent=1, ensure_ascii=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail if the JSON is out of date")
    args = parser.parse_args(argv)
    return write_or_check(OUT, render(), "scripts/build_gpus.py", args.check)


if __name__ == "__main__":
    sys.exit(main())
