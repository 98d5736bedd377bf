#!/usr/bin/env python3
"""Generate ``setup_env/data/gpus.json`` (the NVIDIA GPU catalogue) from the ONE table below.

Each row: the model name exactly as NVML / ``nvidia-smi`` print it (plus aliases people type),
compute capability, memory per device, and peak dense bf16 / fp32 TFLOP/s and memory bandwidth
(GB/s) from the vendor's datasheet or architecture whitepaper. Every row cites its sources by id
(``SOURCES`` below, each a URL). The architecture name is NOT typed per row: it is derived from
the compute capability through ``ARCHITECTURES`` (one table), which is written into the JSON too,
so ``setup_env.gpus.arch_for_cc`` and the rows can never disagree.

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
) -> None:
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
    None, 1792, ["CC", "RTXPRO6000"], ("RTX PRO 6000 Server",))
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
gpu("TITAN-XP",         "NVIDIA TITAN Xp",                "6.1", GF,  None, None,   None, None,
    ["CC"], ("TITAN Xp",))
gpu("TITAN-RTX",        "NVIDIA TITAN RTX",               "7.5", GF,  None, None,   None, None,
    ["CC"], ("TITAN RTX",))
gpu("QUADRO-M2000",     "NVIDIA Quadro M2000",            "5.2", WS,  None, None,   None, None,
    ["CC"], ("Quadro M2000",))
gpu("GT-720",           "NVIDIA GeForce GT 720",          "3.5", GF,  None, None,   None, None,
    ["CC-LEGACY"], ("GeForce GT 720", "GT 720"))
# --- embedded --------------------------------------------------------------------------------
gpu("JETSON-AGX-ORIN",  "Orin",                           "8.7", EMB, None, None,   None, None,
    ["CC", "JETSON"], ("Jetson AGX Orin", "Jetson Orin"),
    note="Jetson has no nvidia-smi; torch names the device 'Orin'; memory is shared with the CPU")
# fmt: on


def build() -> dict[str, Any]:
    keys = [r["key"] for r in ROWS]
    if len(set(keys)) != len(keys):
        raise SystemExit("duplicate keys in the table")
    for row in ROWS:
        for sid in row["sources"]:
            if sid not in SOURCES:
                raise SystemExit(f"{row['key']}: unknown source id {sid}")
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
