#!/usr/bin/env bash
# Run on a lent GPU machine (the `device` tool runs commands in a copy of this tree, with $OUT
# for what comes back): captures the machine as a replay fixture and brings back the raw
# outputs (nvidia-smi, NVML snapshot, detect/plan/doctor/verify reports) to commit as real
# fixtures. Every step has its own timeout; a failing step is recorded, never fatal.
#   usage: OUT=/some/dir bash scripts/device_check.sh [NAME]
set -u
cd "$(dirname "$0")/.." || exit 2
OUT=${OUT:?set OUT to the folder that comes back}
NAME=${1:-gpu-$(date +%Y%m%d)}
PY=${PYTHON:-python3}
mkdir -p "$OUT/raw"
step() {  # step FILE TIMEOUT CMD...
  local file=$1 limit=$2; shift 2
  echo "== $*" >&2
  timeout "$limit" "$@" >"$OUT/raw/$file" 2>"$OUT/raw/$file.stderr"
  echo "$? $*" >>"$OUT/raw/exit-codes.txt"
}
# The device machine has no network: its image's python3 and torch are used as they are, with
# this tree on PYTHONPATH (carry wheels of packaging/distro/nvidia-ml-py if the image lacks them).
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
VPY=$PY
step versions.txt 120 "$VPY" -c "import sys, torch, packaging; print(sys.version); print(torch.__version__, torch.version.cuda)"
step nvidia-smi.txt 30 nvidia-smi
step nvidia-smi-q.txt 60 nvidia-smi -q
step nvidia-smi-query.csv 30 nvidia-smi --query-gpu=index,name,compute_cap,driver_version,memory.total,pci.bus_id,persistence_mode,mig.mode.current,pcie.link.gen.current,pcie.link.gen.max,pcie.link.width.current,pcie.link.width.max,clocks_throttle_reasons.active --format=csv
step proc-driver-version.txt 5 cat /proc/driver/nvidia/version
step nvml.json 60 "$VPY" -c "import json; from setup_env.probe import nvml_live; print(json.dumps(nvml_live.snapshot(), indent=1))"
step capture.txt 120 "$VPY" scripts/capture_host.py "$OUT/hosts/$NAME"
step detect.json 60 "$VPY" -m setup_env detect --json
step plan.json 60 "$VPY" -m setup_env plan --json
step doctor.json 60 "$VPY" -m setup_env doctor --json
step verify.json 600 "$VPY" -m setup_env verify --all-devices --json --junit "$OUT/raw/verify.xml"
step verify-distributed.json 600 "$VPY" -m setup_env verify --distributed --json
step check.txt 600 "$VPY" -m setup_env --no-color
echo "done: $OUT" >&2
