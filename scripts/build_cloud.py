#!/usr/bin/env python3
"""Generate ``setup_env/data/cloud_instances.json`` from the ONE table below.

The table is the only place a cloud GPU instance is listed. It was derived from the team's
research notes (``reference/cloud.md`` and ``reference/cloud_instances.json``, read 2026-12-02),
keeping their verified/inferred status per row and their source ids (``S1``..``S39``, listed in
SOURCES). Everything else (the loader's index, CLI choices, test cases) is derived from the
generated file.

    python scripts/build_cloud.py           # write the JSON
    python scripts/build_cloud.py --check   # exit 1 if the committed JSON differs (CI drift check)

Status words: "verified" = read in the cited source; "inferred" = synthesis or secondary source.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, Optional

from _datafile import write_or_check  # scripts/ is on sys.path when run

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "setup_env" / "data" / "cloud_instances.json"
SCHEMA_VERSION = 1
RETRIEVED = "2026-12-02"

# --- GPU models -------------------------------------------------------------------------------
# key: (nvml/smi name, vendor, architecture, compute capability or gfx arch, memory GB each,
#       name status, sources). The name is what NVML (nvidia-smi) or amd-smi reports, so that
#       the GPU catalogue (knowledge.gpus.lookup) resolves it. cc from NVIDIA's table (S26).
# "name verified" means the exact string was seen in real nvidia-smi output (source given).
# NVIDIA rows do not type their architecture or compute capability: KB means "from the GPU
# knowledge base" (setup_env/data/gpus.json, looked up by the name), so the two never disagree.
KB = ""
GPUS: dict[str, tuple[str, str, str, str, Optional[float], str, list[str]]] = {
    "K80": ("Tesla K80", "nvidia", KB, KB, 12, "name inferred", ["S26", "S15"]),
    "M60": ("Tesla M60", "nvidia", KB, KB, 8, "name inferred", ["S26", "S15"]),
    "P100-PCIE-16GB": (
        "Tesla P100-PCIE-16GB",
        "nvidia",
        KB,
        KB,
        16,
        "name inferred",
        ["S26", "S8"],
    ),
    "V100-SXM2-16GB": (
        "Tesla V100-SXM2-16GB",
        "nvidia",
        KB,
        KB,
        16,
        "name inferred",
        ["S26", "S15"],
    ),
    "V100-SXM2-32GB": (
        "Tesla V100-SXM2-32GB",
        "nvidia",
        KB,
        KB,
        32,
        "name inferred",
        ["S26", "S15"],
    ),
    "V100-PCIE-16GB": (
        "Tesla V100-PCIE-16GB",
        "nvidia",
        KB,
        KB,
        16,
        "name inferred",
        ["S26", "S8"],
    ),
    "T4": ("Tesla T4", "nvidia", KB, KB, 16, "name inferred", ["S26", "S15"]),
    # "NVIDIA T4G" seen in nvidia-smi output of a g5g (public repository, find_string id
    # 41797438641); cc: same silicon as T4 (inferred).
    "T4G": ("NVIDIA T4G", "nvidia", KB, KB, 16, "name verified", ["S15", "S27"]),
    # "NVIDIA A10G" seen in many nvidia-smi outputs of g5 instances (bus 00:1E.0).
    "A10G": ("NVIDIA A10G", "nvidia", KB, KB, 24, "name verified; cc inferred", ["S15"]),
    "A10": ("NVIDIA A10", "nvidia", KB, KB, 24, "name inferred", ["S26", "S8"]),
    "A100-SXM4-40GB": (
        "NVIDIA A100-SXM4-40GB",
        "nvidia",
        KB,
        KB,
        40,
        "name inferred",
        ["S8", "S9"],
    ),
    "A100-SXM4-80GB": (
        "NVIDIA A100-SXM4-80GB",
        "nvidia",
        KB,
        KB,
        80,
        "name inferred",
        ["S8", "S9"],
    ),
    "A100-PCIE-80GB": (
        "NVIDIA A100 80GB PCIe",
        "nvidia",
        KB,
        KB,
        80,
        "name inferred",
        ["S30", "S8"],
    ),
    "A6000": ("NVIDIA RTX A6000", "nvidia", KB, KB, 48, "name inferred", ["S26", "S31"]),
    "L4": ("NVIDIA L4", "nvidia", KB, KB, 24, "name inferred", ["S26", "S8"]),
    "L40S": ("NVIDIA L40S", "nvidia", KB, KB, 48, "name inferred", ["S26"]),
    "H100-SXM5-80GB": (
        "NVIDIA H100 80GB HBM3",
        "nvidia",
        KB,
        KB,
        80,
        "name inferred",
        ["S26", "S8"],
    ),
    "H100-NVL": ("NVIDIA H100 NVL", "nvidia", KB, KB, 94, "name inferred", ["S30"]),
    "H200": ("NVIDIA H200", "nvidia", KB, KB, 141, "name inferred", ["S26", "S8"]),
    "GH200": ("NVIDIA GH200 480GB", "nvidia", KB, KB, 96, "name inferred", ["S26", "S8"]),
    "B200": ("NVIDIA B200", "nvidia", KB, KB, 180, "name inferred", ["S26", "S8"]),
    "B300": ("NVIDIA B300", "nvidia", KB, KB, 270, "name inferred", ["S26", "S8"]),
    "GB200": ("NVIDIA GB200", "nvidia", KB, KB, 186, "name inferred", ["S26", "S30"]),
    "RTX-PRO-6000-BSE": (
        "NVIDIA RTX PRO 6000 Blackwell Server Edition",
        "nvidia",
        KB,
        KB,
        96,
        "name inferred",
        ["S26", "S8"],
    ),
    # Issue 12 item 5: names as the driver prints them (setup_env/data/gpus.json rows).
    "RTX-PRO-4500-BSE": (
        "NVIDIA RTX PRO 4500 Blackwell Server Edition",
        "nvidia",
        KB,
        KB,
        32,
        "name inferred",
        ["S26", "S40"],
    ),
    "GB300": ("NVIDIA GB300", "nvidia", KB, KB, None, "name inferred", ["S26", "S43"]),
    "P4": ("Tesla P4", "nvidia", KB, KB, 8, "name inferred", ["S26", "S28"]),
    "V520": ("Radeon Pro V520", "amd", "RDNA", "gfx1011", 8, "name inferred", ["S27"]),
    "MI300X": (
        "AMD Instinct MI300X",
        "amd",
        "CDNA3",
        "gfx942",
        192,
        "name inferred",
        ["S8", "S30"],
    ),
}

# --- instance families ------------------------------------------------------------------------
# (provider, family, gpu key, {instance type: GPUs}, host arch, NVSwitch baseboard, status,
#  sources, driver note or "", extra note or "")
# A size may map to a fraction string ("1/6") for vGPU slices; those count as one visible GPU.
# NVSwitch: HGX/NVSwitch systems need NVIDIA Fabric Manager in the guest when the whole
# baseboard (8 GPUs, 16 on a2-megagpu) is passed through (cloud.md section 4, list inferred).
FAMILIES: list[tuple[str, str, str, dict[str, Any], str, bool, str, list[str], str, str]] = [
    # AWS (S15 AWS Batch GPU table; S9 aws-ofi-nccl platform names; S8 gpuhunt; S16 DLAMI)
    (
        "aws",
        "p2",
        "K80",
        {"p2.xlarge": 1, "p2.8xlarge": 8, "p2.16xlarge": 16},
        "x86_64",
        False,
        "verified",
        ["S15", "S27"],
        "",
        "Xen-based (inferred): no instance type in DMI",
    ),
    (
        "aws",
        "p3",
        "V100-SXM2-16GB",
        {"p3.2xlarge": 1, "p3.8xlarge": 4, "p3.16xlarge": 8},
        "x86_64",
        False,
        "verified",
        ["S15", "S27"],
        "",
        "Xen-based (inferred)",
    ),
    (
        "aws",
        "p3dn",
        "V100-SXM2-32GB",
        {"p3dn.24xlarge": 8},
        "x86_64",
        False,
        "verified",
        ["S15", "S9"],
        "",
        "",
    ),
    (
        "aws",
        "p4d",
        "A100-SXM4-40GB",
        {"p4d.24xlarge": 8},
        "x86_64",
        True,
        "verified",
        ["S9", "S8", "S27"],
        "",
        "",
    ),
    (
        "aws",
        "p4de",
        "A100-SXM4-80GB",
        {"p4de.24xlarge": 8},
        "x86_64",
        True,
        "verified",
        ["S8", "S9"],
        "",
        "",
    ),
    (
        "aws",
        "p5",
        "H100-SXM5-80GB",
        {"p5.4xlarge": 1, "p5.48xlarge": 8},
        "x86_64",
        True,
        "names verified; p5.4xlarge count inferred",
        ["S9", "S8"],
        "",
        "",
    ),
    ("aws", "p5e", "H200", {"p5e.48xlarge": 8}, "x86_64", True, "inferred", ["S9"], "", ""),
    ("aws", "p5en", "H200", {"p5en.48xlarge": 8}, "x86_64", True, "inferred", ["S9"], "", ""),
    (
        "aws",
        "p6-b200",
        "B200",
        {"p6-b200.48xlarge": 8},
        "x86_64",
        True,
        "names verified; counts inferred",
        ["S9", "S8", "S16"],
        "",
        "",
    ),
    (
        "aws",
        "p6-b300",
        "B300",
        {"p6-b300.48xlarge": 8},
        "x86_64",
        True,
        "names verified; counts inferred",
        ["S9", "S8", "S16"],
        "",
        "",
    ),
    (
        "aws",
        "p6e-gb200",
        "GB200",
        {"p6e-gb200.36xlarge": 4},
        "aarch64",
        False,
        "arm64 verified (DLAMI); size and count inferred",
        ["S16", "S9"],
        "",
        "Grace host; NVL72 UltraServer racks also need NVIDIA IMEX (inferred)",
    ),
    (
        "aws",
        "g3",
        "M60",
        {"g3s.xlarge": 1, "g3.4xlarge": 1, "g3.8xlarge": 2, "g3.16xlarge": 4},
        "x86_64",
        False,
        "verified",
        ["S15", "S27"],
        "",
        "Xen-based (inferred)",
    ),
    (
        "aws",
        "g4dn",
        "T4",
        {
            "g4dn.xlarge": 1,
            "g4dn.2xlarge": 1,
            "g4dn.4xlarge": 1,
            "g4dn.8xlarge": 1,
            "g4dn.16xlarge": 1,
            "g4dn.12xlarge": 4,
            "g4dn.metal": 8,
        },
        "x86_64",
        False,
        "verified except metal (inferred)",
        ["S15", "S27"],
        "",
        "",
    ),
    (
        "aws",
        "g4ad",
        "V520",
        {
            "g4ad.xlarge": 1,
            "g4ad.2xlarge": 1,
            "g4ad.4xlarge": 1,
            "g4ad.8xlarge": 2,
            "g4ad.16xlarge": 4,
        },
        "x86_64",
        False,
        "GPU verified; counts inferred",
        ["S27"],
        "amd-graphics",
        "AMD graphics GPU: no CUDA, and no ROCm build of PyTorch supports it",
    ),
    (
        "aws",
        "g5",
        "A10G",
        {
            "g5.xlarge": 1,
            "g5.2xlarge": 1,
            "g5.4xlarge": 1,
            "g5.8xlarge": 1,
            "g5.16xlarge": 1,
            "g5.12xlarge": 4,
            "g5.24xlarge": 4,
            "g5.48xlarge": 8,
        },
        "x86_64",
        False,
        "verified",
        ["S15", "S27"],
        "",
        "",
    ),
    (
        "aws",
        "g5g",
        "T4G",
        {
            "g5g.xlarge": 1,
            "g5g.2xlarge": 1,
            "g5g.4xlarge": 1,
            "g5g.8xlarge": 1,
            "g5g.16xlarge": 2,
            "g5g.metal": 2,
        },
        "aarch64",
        False,
        "verified",
        ["S15", "S27", "S16"],
        "",
        "Graviton2 host; NVIDIA driver >= 470.82.01 (aarch64)",
    ),
    (
        "aws",
        "g6",
        "L4",
        {
            "g6.xlarge": 1,
            "g6.2xlarge": 1,
            "g6.4xlarge": 1,
            "g6.8xlarge": 1,
            "g6.16xlarge": 1,
            "g6.12xlarge": 4,
            "g6.24xlarge": 4,
            "g6.48xlarge": 8,
        },
        "x86_64",
        False,
        "1-GPU sizes verified; 4/8-GPU sizes inferred",
        ["S15"],
        "",
        "",
    ),
    (
        "aws",
        "gr6",
        "L4",
        {"gr6.4xlarge": 1, "gr6.8xlarge": 1},
        "x86_64",
        False,
        "family verified; GPU and sizes inferred",
        ["S16", "S8"],
        "",
        "",
    ),
    (
        "aws",
        "g6e",
        "L40S",
        {
            "g6e.xlarge": 1,
            "g6e.2xlarge": 1,
            "g6e.4xlarge": 1,
            "g6e.8xlarge": 1,
            "g6e.16xlarge": 1,
            "g6e.12xlarge": 4,
            "g6e.24xlarge": 4,
            "g6e.48xlarge": 8,
        },
        "x86_64",
        False,
        "inferred",
        ["S9"],
        "",
        "",
    ),
    (
        "aws",
        "g7e",
        "RTX-PRO-6000-BSE",
        {
            "g7e.2xlarge": 1,
            "g7e.4xlarge": 1,
            "g7e.8xlarge": 1,
            "g7e.12xlarge": 2,
            "g7e.24xlarge": 4,
            "g7e.48xlarge": 8,
        },
        "x86_64",
        False,
        "GPU verified (gpuhunt de63f51); GPU counts verified (S49: EC2 DescribeInstanceTypes as "
        "AWS's Karpenter reference prints it; S40's table agrees)",
        ["S8", "S9", "S40", "S41", "S49"],
        "",
        "",
    ),
    (
        "aws",
        "g7",
        "RTX-PRO-4500-BSE",
        {
            "g7.2xlarge": 1,
            "g7.4xlarge": 1,
            "g7.8xlarge": 1,
            "g7.12xlarge": 2,
            "g7.24xlarge": 4,
            "g7.48xlarge": 8,
        },
        "x86_64",
        False,
        "GPU counts verified (S49: EC2 DescribeInstanceTypes as AWS's Karpenter reference prints "
        "it, g7.8xlarge 1 and g7.12xlarge 2; S40's table said 2 and 4); GA 2026-06-18 (S40)",
        ["S49", "S40"],
        "",
        "",
    ),
    (
        "aws",
        "g6f",
        "L4",
        {"g6f.large": "1/8", "g6f.xlarge": "1/8", "g6f.2xlarge": "1/4", "g6f.4xlarge": "1/2"},
        "x86_64",
        False,
        "fractions from S42 (AWS G6f table, GpuPartitionSize); driver route inferred",
        ["S42", "S44"],
        "grid",
        "fractional L4 (vGPU): needs NVIDIA's GRID driver; the data-centre driver finds no GPU",
    ),
    (
        "aws",
        "gr6f",
        "L4",
        {"gr6f.4xlarge": "1/2"},
        "x86_64",
        False,
        "fraction from S42 (AWS G6f table, GpuPartitionSize); driver route inferred",
        ["S42", "S44"],
        "grid",
        "fractional L4 (vGPU): needs NVIDIA's GRID driver; the data-centre driver finds no GPU",
    ),
    # GCP (S28 GPU pages, S8 gpuhunt)
    (
        "gcp",
        "a2-highgpu",
        "A100-SXM4-40GB",
        {"a2-highgpu-1g": 1, "a2-highgpu-2g": 2, "a2-highgpu-4g": 4, "a2-highgpu-8g": 8},
        "x86_64",
        True,
        "verified",
        ["S28", "S8"],
        "",
        "accelerator nvidia-tesla-a100",
    ),
    (
        "gcp",
        "a2-megagpu",
        "A100-SXM4-40GB",
        {"a2-megagpu-16g": 16},
        "x86_64",
        True,
        "verified",
        ["S28"],
        "",
        "accelerator nvidia-tesla-a100",
    ),
    (
        "gcp",
        "a2-ultragpu",
        "A100-SXM4-80GB",
        {"a2-ultragpu-1g": 1, "a2-ultragpu-2g": 2, "a2-ultragpu-4g": 4, "a2-ultragpu-8g": 8},
        "x86_64",
        True,
        "verified",
        ["S28", "S8"],
        "",
        "accelerator nvidia-a100-80gb",
    ),
    (
        "gcp",
        "a3-highgpu",
        "H100-SXM5-80GB",
        {"a3-highgpu-1g": 1, "a3-highgpu-2g": 2, "a3-highgpu-4g": 4, "a3-highgpu-8g": 8},
        "x86_64",
        True,
        "verified",
        ["S28", "S8"],
        "",
        "accelerator nvidia-h100-80gb",
    ),
    (
        "gcp",
        "a3-edgegpu",
        "H100-SXM5-80GB",
        {"a3-edgegpu-8g": 8},
        "x86_64",
        True,
        "verified",
        ["S28"],
        "",
        "accelerator nvidia-h100-80gb",
    ),
    (
        "gcp",
        "a3-megagpu",
        "H100-SXM5-80GB",
        {"a3-megagpu-8g": 8},
        "x86_64",
        True,
        "verified",
        ["S28", "S8"],
        "",
        "accelerator nvidia-h100-mega-80gb",
    ),
    (
        "gcp",
        "a3-ultragpu",
        "H200",
        {"a3-ultragpu-8g": 8},
        "x86_64",
        True,
        "verified",
        ["S28"],
        "",
        "accelerator nvidia-h200-141gb",
    ),
    (
        "gcp",
        "a4-highgpu",
        "B200",
        {"a4-highgpu-8g": 8},
        "x86_64",
        True,
        "verified",
        ["S28", "S8"],
        "",
        "accelerator nvidia-b200",
    ),
    (
        "gcp",
        "a4x",
        "GB200",
        {"a4x-highgpu-4g": 4},
        "aarch64",
        False,
        "family and GPU verified; machine-type name and count inferred",
        ["S28"],
        "",
        "Grace host; NVL72 racks also need NVIDIA IMEX (inferred)",
    ),
    (
        "gcp",
        "a4x-max",
        "GB300",
        {"a4x-maxgpu-4g-metal": 4},
        "aarch64",
        False,
        "machine type, GPU and count from a GKE profile (S43, secondary)",
        ["S43", "S28"],
        "",
        "Grace host, bare metal; NVL72 racks also need NVIDIA IMEX (inferred)",
    ),
    (
        "gcp",
        "g2",
        "L4",
        {
            "g2-standard-4": 1,
            "g2-standard-8": 1,
            "g2-standard-12": 1,
            "g2-standard-16": 1,
            "g2-standard-32": 1,
            "g2-standard-24": 2,
            "g2-standard-48": 4,
            "g2-standard-96": 8,
        },
        "x86_64",
        False,
        "verified",
        ["S28"],
        "",
        "accelerator nvidia-l4",
    ),
    (
        "gcp",
        "g4",
        "RTX-PRO-6000-BSE",
        {"g4-standard-48": 1, "g4-standard-96": 2, "g4-standard-192": 4, "g4-standard-384": 8},
        "x86_64",
        False,
        "family and accelerator verified; sizes inferred",
        ["S28", "S8"],
        "",
        "accelerator nvidia-rtx-pro-6000",
    ),
    # Azure (S8 gpuhunt size regexes, S30 size pages, S34 driver setup)
    (
        "azure",
        "NCv3",
        "V100-PCIE-16GB",
        {
            "Standard_NC6s_v3": 1,
            "Standard_NC12s_v3": 2,
            "Standard_NC24s_v3": 4,
            "Standard_NC24rs_v3": 4,
        },
        "x86_64",
        False,
        "names verified; counts inferred",
        ["S8"],
        "",
        "",
    ),
    (
        "azure",
        "NDv2",
        "V100-SXM2-32GB",
        {"Standard_ND40rs_v2": 8},
        "x86_64",
        False,
        "verified",
        ["S8"],
        "",
        "",
    ),
    (
        "azure",
        "NCasT4_v3",
        "T4",
        {
            "Standard_NC4as_T4_v3": 1,
            "Standard_NC8as_T4_v3": 1,
            "Standard_NC16as_T4_v3": 1,
            "Standard_NC64as_T4_v3": 4,
        },
        "x86_64",
        False,
        "names verified; counts inferred",
        ["S8", "S34"],
        "",
        "CUDA or Azure GRID driver",
    ),
    (
        "azure",
        "NC_A100_v4",
        "A100-PCIE-80GB",
        {
            "Standard_NC24ads_A100_v4": 1,
            "Standard_NC48ads_A100_v4": 2,
            "Standard_NC96ads_A100_v4": 4,
        },
        "x86_64",
        False,
        "1-4 PCIe A100 80GB verified; per size inferred",
        ["S30", "S8"],
        "",
        "",
    ),
    (
        "azure",
        "ND_A100_v4",
        "A100-SXM4-40GB",
        {"Standard_ND96asr_v4": 8},
        "x86_64",
        True,
        "verified",
        ["S8"],
        "",
        "",
    ),
    (
        "azure",
        "NDm_A100_v4",
        "A100-SXM4-80GB",
        {"Standard_ND96amsr_A100_v4": 8},
        "x86_64",
        True,
        "verified",
        ["S8"],
        "",
        "",
    ),
    (
        "azure",
        "ND_H100_v5",
        "H100-SXM5-80GB",
        {"Standard_ND96isr_H100_v5": 8},
        "x86_64",
        True,
        "verified",
        ["S30"],
        "",
        "Gen2 VMs only; Ubuntu-HPC / AlmaLinux-HPC images recommended",
    ),
    (
        "azure",
        "ND_H200_v5",
        "H200",
        {"Standard_ND96isr_H200_v5": 8},
        "x86_64",
        True,
        "verified",
        ["S8", "S30"],
        "",
        "",
    ),
    (
        "azure",
        "NCads_H100_v5",
        "H100-NVL",
        {"Standard_NC40ads_H100_v5": 1, "Standard_NC80adis_H100_v5": 2},
        "x86_64",
        False,
        "1-2 GPUs x 94 GB verified; names from gpuhunt regex",
        ["S30", "S8"],
        "",
        "",
    ),
    (
        "azure",
        "NVadsA10_v5",
        "A10",
        {
            "Standard_NV6ads_A10_v5": "1/6",
            "Standard_NV12ads_A10_v5": "1/3",
            "Standard_NV18ads_A10_v5": "1/2",
            "Standard_NV36ads_A10_v5": 1,
            "Standard_NV36adms_A10_v5": 1,
            "Standard_NV72ads_A10_v5": 2,
        },
        "x86_64",
        False,
        "GRID-only verified; slices inferred",
        ["S8", "S34"],
        "grid",
        "vGPU: needs Azure's GRID driver (>= 17.x); the CUDA driver does not work",
    ),
    (
        "azure",
        "ND_MI300X_v5",
        "MI300X",
        {"Standard_ND96isr_MI300X_v5": 8},
        "x86_64",
        False,
        "verified",
        ["S30"],
        "",
        "AMD GPUs: ROCm route (inferred)",
    ),
    (
        "azure",
        "ND_GB200_v6",
        "GB200",
        {"Standard_ND128isr_NDR_GB200_v6": 4},
        "aarch64",
        False,
        "verified",
        ["S30"],
        "",
        "NVIDIA Grace host; NVL72 racks also need NVIDIA IMEX (inferred)",
    ),
    (
        "azure",
        "ND_GB300_v6",
        "GB300",
        {"Standard_ND128isr_GB300_v6": 4},
        "aarch64",
        False,
        "size name verified (S45); 4 GPUs per VM from public baselines (S45, secondary)",
        ["S45", "S30"],
        "",
        "NVIDIA Grace host (arm64 images); NVL72 racks also need NVIDIA IMEX (inferred)",
    ),
    (
        "azure",
        "NC_RTXPRO6000BSE_v6",
        "RTX-PRO-6000-BSE",
        {
            "Standard_NC24lds_xl_RTXPRO6000BSE_v6": "1/4",
            "Standard_NC36lds_xl_RTXPRO6000BSE_v6": "1/4",
            "Standard_NC36ds_xl_RTXPRO6000BSE_v6": "1/4",
            "Standard_NC72lds_xl_RTXPRO6000BSE_v6": "1/2",
            "Standard_NC72ds_xl_RTXPRO6000BSE_v6": "1/2",
            "Standard_NC144lds_xl_RTXPRO6000BSE_v6": 1,
            "Standard_NC144ds_xl_RTXPRO6000BSE_v6": 1,
            "Standard_NC288lds_xl_RTXPRO6000BSE_v6": 2,
            "Standard_NC288ds_xl_RTXPRO6000BSE_v6": 2,
        },
        "x86_64",
        False,
        "series verified (S30 NC_RTXPRO6000BSE_v6 page, 1-2 GPUs per VM); GA size names and "
        "fractions from public price code (S46, secondary); GRID driver on every size verified "
        "(S50, S51)",
        ["S30", "S46", "S47", "S50", "S51"],
        "grid",
        "every NCv6 size, whole or fractional, exposes the GPU through SR-IOV (S50: 'cannot be "
        "modified by the end user'): Azure's GRID driver (vGPU 20, R595: "
        "NVIDIA-Linux-x86_64-595.58.03-grid-azure.run, installed with `-M open`, Secure Boot and "
        "vTPM off) per 'Install GRID drivers on NCv6 RTX PRO 6000 BSE VMs' (S51); the "
        "data-centre driver finds no GPU",
    ),
    # OCI (S8 gpuhunt shape parser; public code)
    (
        "oci",
        "GPU2",
        "P100-PCIE-16GB",
        {"VM.GPU2.1": 1, "BM.GPU2.2": 2},
        "x86_64",
        False,
        "shape names from public code; parser verified",
        ["S8"],
        "",
        "",
    ),
    (
        "oci",
        "GPU3",
        "V100-SXM2-16GB",
        {"VM.GPU3.1": 1, "VM.GPU3.2": 2, "VM.GPU3.4": 4, "BM.GPU3.8": 8},
        "x86_64",
        False,
        "shape names from public code; parser verified",
        ["S8"],
        "",
        "",
    ),
    ("oci", "GPU4", "A100-SXM4-40GB", {"BM.GPU4.8": 8}, "x86_64", True, "verified", ["S8"], "", ""),
    (
        "oci",
        "A100-v2",
        "A100-SXM4-80GB",
        {"BM.GPU.A100-v2.8": 8},
        "x86_64",
        True,
        "inferred (public code)",
        [],
        "",
        "",
    ),
    (
        "oci",
        "A10",
        "A10",
        {"VM.GPU.A10.1": 1, "VM.GPU.A10.2": 2, "BM.GPU.A10.4": 4},
        "x86_64",
        False,
        "inferred (public code)",
        ["S8"],
        "",
        "",
    ),
    (
        "oci",
        "L40S",
        "L40S",
        {"BM.GPU.L40S.4": 4, "BM.GPU.L40S-NC.4": 4},
        "x86_64",
        False,
        "inferred (public code, both spellings seen)",
        [],
        "",
        "",
    ),
    (
        "oci",
        "H100",
        "H100-SXM5-80GB",
        {"BM.GPU.H100.8": 8},
        "x86_64",
        True,
        "inferred (public code)",
        [],
        "",
        "",
    ),
    (
        "oci",
        "H200",
        "H200",
        {"BM.GPU.H200.8": 8},
        "x86_64",
        True,
        "inferred (public code)",
        [],
        "",
        "",
    ),
    (
        "oci",
        "B200",
        "B200",
        {"BM.GPU.B200.8": 8},
        "x86_64",
        True,
        "inferred (public code)",
        [],
        "",
        "",
    ),
    (
        "oci",
        "GB200",
        "GB200",
        {"BM.GPU.GB200.4": 4},
        "aarch64",
        False,
        "inferred (public code; arm64 inferred)",
        [],
        "",
        "Grace host; NVL72 racks also need NVIDIA IMEX (inferred)",
    ),
    (
        "oci",
        "MI300X",
        "MI300X",
        {"BM.GPU.MI300X.8": 8},
        "x86_64",
        False,
        "inferred (public code)",
        [],
        "",
        "AMD GPUs: ROCm route (inferred)",
    ),
    # Lambda (S31 API docs, S32 SkyPilot catalogue); no in-instance metadata, --cloud only.
    (
        "lambda",
        "gpu_1x_a10",
        "A10",
        {"gpu_1x_a10": 1},
        "x86_64",
        False,
        "verified",
        ["S31", "S32"],
        "",
        "",
    ),
    (
        "lambda",
        "a100",
        "A100-SXM4-40GB",
        {"gpu_1x_a100_sxm4": 1},
        "x86_64",
        False,
        "verified",
        ["S31", "S32"],
        "",
        "",
    ),
    (
        "lambda",
        "a100-8x",
        "A100-SXM4-40GB",
        {"gpu_8x_a100": 8},
        "x86_64",
        True,
        "size verified (S31, S32); NVSwitch inferred: an 8x A100 SXM4 board is an HGX A100",
        ["S31", "S32"],
        "",
        "HGX A100 8-GPU board (NVSwitch): NVIDIA Fabric Manager needed (inferred, data review "
        "2026-12 row 14)",
    ),
    (
        "lambda",
        "a100-80gb",
        "A100-SXM4-80GB",
        {"gpu_8x_a100_80gb_sxm4": 8},
        "x86_64",
        True,
        "verified",
        ["S31", "S32"],
        "",
        "",
    ),
    (
        "lambda",
        "v100",
        "V100-SXM2-16GB",
        {"gpu_8x_v100": 8},
        "x86_64",
        False,
        "verified",
        ["S31", "S32"],
        "",
        "",
    ),
    (
        "lambda",
        "a6000",
        "A6000",
        {"gpu_1x_a6000": 1, "gpu_2x_a6000": 2, "gpu_4x_a6000": 4},
        "x86_64",
        False,
        "verified",
        ["S31", "S32"],
        "",
        "",
    ),
    (
        "lambda",
        "h100",
        "H100-SXM5-80GB",
        {"gpu_8x_h100_sxm5": 8},
        "x86_64",
        True,
        "inferred",
        ["S31"],
        "",
        "",
    ),
    (
        "lambda",
        "gh200",
        "GH200",
        {"gpu_1x_gh200": 1},
        "aarch64",
        False,
        "inferred",
        ["S31"],
        "",
        "Grace Hopper superchip: aarch64 host",
    ),
    (
        "lambda",
        "b200",
        "B200",
        {"gpu_8x_b200_sxm6": 8},
        "x86_64",
        True,
        "inferred",
        ["S31"],
        "",
        "",
    ),
]

# --- machine types with GPUs attached separately -----------------------------------------------
# GCP N1: the machine type names no GPU; --accelerator type=...,count=N attaches T4, V100, P100
# or P4 (S28 "GPUs on N1"; counts per GPU model from the same page). (provider, family, machine
# types, {gpu key: allowed counts}, host arch, status, sources, note)
_N1 = [f"n1-standard-{n}" for n in (1, 2, 4, 8, 16, 32, 64, 96)]
_N1 += [f"n1-highmem-{n}" for n in (2, 4, 8, 16, 32, 64, 96)]
_N1 += [f"n1-highcpu-{n}" for n in (2, 4, 8, 16, 32, 64, 96)]
ATTACHABLE: list[tuple[str, str, list[str], dict[str, list[int]], str, str, list[str], str]] = [
    (
        "gcp",
        "n1",
        _N1,
        {"T4": [1, 2, 4], "V100-SXM2-16GB": [1, 2, 4, 8], "P100-PCIE-16GB": [1, 2, 4],
         "P4": [1, 2, 4]},
        "x86_64",
        "GPU models verified (S28); counts per model inferred from S28's N1 table",
        ["S28", "S48"],
        "the machine type names no GPU: GPUs are attached with --accelerator "
        "(nvidia-tesla-t4, -v100, -p100, -p4)",
    ),
]  # fmt: skip

# --- images -----------------------------------------------------------------------------------
# key: (distro id, version, glibc, ships driver branch or "", default CUDA the driver supports
#       or "", status, sources, description). glibc: the distro release's glibc, which decides
#       the manylinux tags a wheel needs (inferred: distribution release notes, not re-read).
IMAGES: dict[str, tuple[str, str, str, str, str, str, list[str], str]] = {
    "ubuntu-20.04": ("ubuntu", "20.04", "2.31", "", "", "inferred", [], "Ubuntu 20.04 LTS"),
    "ubuntu-22.04": ("ubuntu", "22.04", "2.35", "", "", "inferred", [], "Ubuntu 22.04 LTS"),
    "ubuntu-24.04": ("ubuntu", "24.04", "2.39", "", "", "inferred", [], "Ubuntu 24.04 LTS"),
    "debian-12": ("debian", "12", "2.36", "", "", "inferred", [], "Debian 12"),
    "amazon-linux-2": ("amzn", "2", "2.26", "", "", "inferred", [], "Amazon Linux 2"),
    "amazon-linux-2023": ("amzn", "2023", "2.34", "", "", "inferred", [], "Amazon Linux 2023"),
    "rhel-9": ("rhel", "9", "2.34", "", "", "inferred", [], "Red Hat Enterprise Linux 9"),
    "rocky-9": ("rocky", "9", "2.34", "", "", "inferred", [], "Rocky Linux 9"),
    # AWS Deep Learning Base OSS Nvidia Driver GPU AMIs: driver 595.x, CUDA 13.2 (S16).
    "dlami-ubuntu-22.04": (
        "ubuntu",
        "22.04",
        "2.35",
        "595",
        "13.2",
        "verified",
        ["S16"],
        "Deep Learning Base OSS Nvidia Driver GPU AMI (Ubuntu 22.04)",
    ),
    "dlami-ubuntu-24.04": (
        "ubuntu",
        "24.04",
        "2.39",
        "595",
        "13.2",
        "verified",
        ["S16"],
        "Deep Learning Base OSS Nvidia Driver GPU AMI (Ubuntu 24.04)",
    ),
    "dlami-amazon-linux-2023": (
        "amzn",
        "2023",
        "2.34",
        "595",
        "13.2",
        "verified",
        ["S16"],
        "Deep Learning Base OSS Nvidia Driver GPU AMI (Amazon Linux 2023)",
    ),
    # GCP Deep Learning VM family common-cu129-ubuntu-2404-nvidia-580 (S29): driver R580.
    "dlvm-ubuntu-24.04": (
        "ubuntu",
        "24.04",
        "2.39",
        "580",
        "13.0",
        "verified",
        ["S29"],
        "Deep Learning VM common-cu129-ubuntu-2404-nvidia-580",
    ),
}

SOURCES: dict[str, str] = {
    "S8": "github:dstackai/gpuhunt@35841515de37 src/gpuhunt/providers/{aws,gcp,azure,oci,lambdalabs}.py",  # noqa: E501
    "S9": "github:aws/aws-ofi-nccl@2daf7d303aa1 src/platform-aws.cpp, src/nccl_ofi_system.cpp",
    "S15": "https://docs.aws.amazon.com/batch/latest/userguide/gpu-jobs.html",
    "S16": "https://docs.aws.amazon.com/dlami/latest/devguide/ (release notes 2026)",
    "S26": "https://developer.nvidia.com/cuda-gpus ; https://developer.nvidia.com/cuda-legacy-gpus",
    "S27": "github:awsdocs/amazon-ec2-user-guide@0055ee04ffc3 doc_source/install-nvidia-driver.md",
    "S28": "https://cloud.google.com/compute/docs/gpus ; .../accelerator-optimized-machines",
    "S29": "public gcloud scripts: --image-project=deeplearning-platform-release, install-nvidia-driver=True",  # noqa: E501
    "S30": "github:MicrosoftDocs/azure-compute-docs articles/virtual-machines/sizes/gpu-accelerated/",  # noqa: E501
    "S31": "https://docs.lambda.ai/public-cloud/cloud-api/",
    "S32": "github:skypilot-org/skypilot-catalog@11580132cea2 catalogs/v7/lambda/vms.csv",
    "S34": "github:MicrosoftDocs/azure-compute-docs articles/virtual-machines/linux/n-series-driver-setup.md",  # noqa: E501
    "S40": "https://github.com/kubernetes/autoscaler/issues/9854 (AWS G7/G7e tables, 2026-06-23)",
    "S41": "https://github.com/kubernetes/autoscaler/pull/9097 (g7e added from AWS's g7e page)",
    "S42": "https://github.com/DigitalPebble/spruce/pull/265 ; https://github.com/Boavizta/boaviztapi/pull/568 (AWS G6f table, GpuPartitionSize)",  # noqa: E501
    "S43": "https://github.com/NVIDIA/aicr/pull/1985 kwok/profiles/gke/a4x-maxgpu-4g-metal.yaml (4 x NVIDIA-GB300, driver 580.95.05)",  # noqa: E501
    "S44": "https://github.com/skypilot-org/skypilot/issues/6445 (g6f/gr6f: the standard driver finds no GPU)",  # noqa: E501
    "S45": "public Azure HPC validation notes naming Standard_ND128isr_GB300_v6 (4 GPUs per node, open R580)",  # noqa: E501
    "S46": "public Azure retail-price code mapping Standard_NC*_xl_RTXPRO6000BSE_v6 sizes to GPU fractions",  # noqa: E501
    "S47": "https://github.com/Azure/azhpc-images/pull/582 (GA SKU Standard_NC144lds_xl_RTXPRO6000BSE_v6)",  # noqa: E501
    "S48": "https://github.com/berops/claudie/pull/1952 (GCP: GPUs attach to n1-standard-*/n1-highmem-*)",  # noqa: E501
    "S49": "github:aws/karpenter-provider-aws@692ccdd0629e website/content/en/preview/reference/instance-types.md (generated from EC2 DescribeInstanceTypes by hack/docs/instancetypes_gen; v1.14.0, 2026-07-11): g7 and g7e karpenter.k8s.aws/instance-gpu-count 1,1,1,2,4,8",  # noqa: E501
    "S50": "github:MicrosoftDocs/azure-compute-docs@07d4d840 articles/virtual-machines/sizes/gpu-accelerated/nc-rtxpro6000-bse-v6-series-overview.md (2026-05-07: GPUs exposed via SR-IOV; recommended driver v20.x R595 595.58.03 grid-azure)",  # noqa: E501
    "S51": "github:MicrosoftDocs/azure-compute-docs articles/virtual-machines/linux/n-series-driver-setup.md#install-grid-drivers-on-ncv6-rtx-pro-6000-bse-vms",  # noqa: E501
}


def _from_knowledge_base(name: str) -> tuple[str, str]:
    """(architecture, compute capability) of an NVIDIA GPU, from setup_env/data/gpus.json."""
    sys.path.insert(0, str(ROOT))
    from setup_env.knowledge import gpus as kb

    model = kb.lookup(name)
    if model is None or model.match != "exact":
        raise SystemExit(f"{name!r} is not a model of setup_env/data/gpus.json (add it there)")
    return model.architecture, model.compute_capability


def build() -> dict[str, Any]:
    table = {
        key: (
            (name, vendor, *_from_knowledge_base(name), *rest)
            if vendor == "nvidia" and arch == KB and cc == KB
            else (name, vendor, arch, cc, *rest)
        )
        for key, (name, vendor, arch, cc, *rest) in GPUS.items()
    }
    gpus = {
        key: {
            "name": name,
            "vendor": vendor,
            "architecture": arch,
            ("compute_capability" if vendor == "nvidia" else "gfx_arch"): cc,
            "memory_gb": mem,
            "status": status,
            "sources": sources,
        }
        for key, (name, vendor, arch, cc, mem, status, sources) in table.items()
    }
    families = []
    for prov, fam, gpu, sizes, arch, nvswitch, status, sources, driver, note in FAMILIES:
        if gpu not in GPUS:
            raise SystemExit(f"{prov}/{fam}: unknown GPU key {gpu!r}")
        row: dict[str, Any] = {
            "provider": prov,
            "family": fam,
            "gpu": gpu,
            "sizes": sizes,
            "host_arch": arch,
            "nvswitch": nvswitch,
            "status": status,
            "sources": sources,
        }
        if driver:
            row["driver"] = driver
        if note:
            row["note"] = note
        families.append(row)
    images = {
        key: {
            "distro_id": did,
            "version": ver,
            "glibc": glibc,
            "driver_branch": branch or None,
            "cuda_driver_version": cuda or None,
            "status": status,
            "sources": sources,
            "description": desc,
        }
        for key, (did, ver, glibc, branch, cuda, status, sources, desc) in IMAGES.items()
    }
    attachable = []
    for prov, fam, types, gpus_by, arch, status, sources, note in ATTACHABLE:
        for key in gpus_by:
            if key not in GPUS:
                raise SystemExit(f"{prov}/{fam}: unknown GPU key {key!r}")
        attachable.append(
            {
                "provider": prov,
                "family": fam,
                "machine_types": types,
                "gpus": gpus_by,
                "host_arch": arch,
                "status": status,
                "sources": sources,
                "note": note,
            }
        )
    unused = sorted(
        set(GPUS) - {row["gpu"] for row in families} - {k for a in attachable for k in a["gpus"]}
    )
    if unused:
        raise SystemExit(f"GPU models no family uses: {unused}")
    used = {s for row in families for s in row["sources"]}
    used |= {s for row in attachable for s in row["sources"]}
    used |= {s for g in gpus.values() for s in g["sources"]}
    used |= {s for i in images.values() for s in i["sources"]}
    missing = sorted(used - SOURCES.keys())
    if missing:
        raise SystemExit(f"sources cited but not described: {missing}")
    return {
        "schema_version": SCHEMA_VERSION,
        "source": "team research notes reference/cloud.md + reference/cloud_instances.json; "
        "per-row sources below",
        "retrieved": RETRIEVED,
        "generated_by": "scripts/build_cloud.py",
        "gpus": gpus,
        "families": families,
        "attachable": attachable,
        "images": images,
        "sources": {k: SOURCES[k] for k in sorted(used, key=lambda s: int(s[1:]))},
    }


def render() -> str:
    return json.dumps(build(), indent=1, sort_keys=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail if the JSON is out of date")
    args = parser.parse_args(argv)
    return write_or_check(OUT, render(), "scripts/build_cloud.py", args.check)


if __name__ == "__main__":
    sys.exit(main())
