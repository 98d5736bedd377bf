"""Cloud provider, instance type, region and image hints.

Contract: ``detect(host, metadata=None) -> (CloudInfo | None, [Note, ...])``. ``metadata``:
None = ask the metadata service only when DMI names a provider and the host is live;
True = ask even without a DMI hint (``--cloud-metadata``); False = never.

Detection order (offline first, as cloud-init's ``tools/ds-identify`` does [S1]):

1. Overrides: ``SETUP_ENV_CLOUD_METADATA=0|1`` (the flag wins over it), and AWS's own
   ``AWS_EC2_METADATA_DISABLED=true``.
2. Linux: world-readable DMI under ``/sys/class/dmi/id`` (``sys_vendor``, ``product_name``,
   ``product_version``, ``chassis_asset_tag``, ``board_asset_tag``, ``bios_vendor``,
   ``bios_version``), ``product_uuid``/``product_serial`` where readable (root only: mode 0400
   [S23]), and ``/sys/hypervisor/uuid`` (Xen-era EC2). Windows: one PowerShell CIM query behind
   a timeout (Win32_ComputerSystemProduct + Win32_SystemEnclosure). macOS: nothing offline.
3. :func:`identify` (pure) matches the signatures: Azure chassis tag, OCI chassis tag, GCE
   product name or serial, AWS (``Amazon EC2`` vendor: the product name IS the instance type on
   Nitro; else an ``ec2`` hypervisor/product UUID), then the other clouds cloud-init knows.
4. Only then, one metadata service, with a TOTAL budget under a second, proxies bypassed
   (plain ``http.client`` to the link-local address, never ``HTTP_PROXY``), every answer treated
   as untrusted input (size cap, charset, instance-type and region patterns). A machine with no
   DMI hint sends nothing and waits for nothing. A ReplayHost never talks to the network unless
   a test passes explicit ``endpoints``.

Source ids ([S1]...) refer to ``setup_env/data/cloud_instances.json`` and the team's cloud.md.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Optional

from setup_env import bounded
from setup_env._record import Record, field, record, replace
from setup_env.bounded import net
from setup_env.facts import CloudInfo, Note
from setup_env.probe.host import Host

DMI_DIR = "/sys/class/dmi/id"
DMI_FIELDS = (
    "sys_vendor",
    "product_name",
    "product_version",
    "chassis_asset_tag",
    "board_asset_tag",
    "bios_vendor",
    "bios_version",
)
DMI_ROOT_FIELDS = ("product_uuid", "product_serial")  # mode 0400: readable only as root [S23]
HYPERVISOR_UUID = "/sys/hypervisor/uuid"

AZURE_ASSET_TAG = "7783-7084-3265-9085-8269-3286-77"  # ASCII codes of "MSFT AZURE VM" [S1,S17]
OCI_ASSET_TAG = "OracleCloud.com"  # [S1]

# Real metadata endpoints. Link-local IP rather than metadata.google.internal: no DNS, and
# google-cloud-go does the same [S4].
DEFAULT_ENDPOINTS: Mapping[str, str] = {
    "aws": "http://169.254.169.254",
    "gcp": "http://169.254.169.254",
    "azure": "http://169.254.169.254",
    "oci": "http://169.254.169.254",
}
METADATA_PROVIDERS = ("aws", "gcp", "azure", "oci")
AZURE_API_VERSION = "2021-02-01"  # pinned; documented for /metadata/instance [S13]
DEFAULT_BUDGET = 0.8  # seconds, all requests together
MAX_ANSWER = 64 * 1024  # bytes: a bigger metadata answer is garbage
POWERSHELL_TIMEOUT = 3.0

# Untrusted-input patterns. Instance types per provider as the providers spell them.
INSTANCE_TYPE_PATTERNS: Mapping[str, re.Pattern[str]] = {
    "aws": re.compile(r"^[a-z][a-z0-9-]{0,30}\.[a-z0-9-]{1,30}$"),
    "gcp": re.compile(r"^[a-z][a-z0-9-]{1,62}$"),
    "azure": re.compile(r"^(Standard|Basic)_[A-Za-z0-9_]{1,60}$"),
    "oci": re.compile(r"^(VM|BM)\.[A-Za-z0-9.-]{1,60}$"),
}
REGION_PATTERN = re.compile(r"^[a-z0-9][a-z0-9-]{0,40}$")  # us-east-1, europe-west4, eastus
ZONE_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9:._-]{0,63}$")  # us-east-1a, 1, Uocm:PHX-AD-1
IMAGE_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9 ()/:._+-]{0,199}$")
TOKEN_PATTERN = re.compile(r"^[A-Za-z0-9+/=_-]{1,512}$")

# The other clouds cloud-init's ds-identify recognises from DMI alone [S1]:
# (provider, DMI field, how, value(s)).
OTHER_SIGNATURES: tuple[tuple[str, str, str, tuple[str, ...]], ...] = (
    ("openstack", "product_name", "equals", ("OpenStack Nova", "OpenStack Compute")),
    (
        "openstack",
        "chassis_asset_tag",
        "equals",
        (
            "OpenTelekomCloud",
            "SAP CCloud VM",
            "HUAWEICLOUD",
            "Samsung Cloud Platform",
            "OpenStack Nova",
            "OpenStack Compute",
        ),
    ),
    ("alibaba", "product_name", "equals", ("Alibaba Cloud ECS",)),
    ("digitalocean", "sys_vendor", "equals", ("DigitalOcean",)),
    ("hetzner", "sys_vendor", "equals", ("Hetzner",)),
    ("vultr", "sys_vendor", "equals", ("Vultr",)),
    ("upcloud", "sys_vendor", "equals", ("UpCloud",)),
    ("akamai", "sys_vendor", "equals", ("Linode", "Akamai")),
    ("scaleway", "sys_vendor", "equals", ("Scaleway",)),
    ("nwcs", "sys_vendor", "equals", ("NWCS",)),
    ("exoscale", "product_name", "prefix", ("Exoscale",)),
    ("cloudstack", "product_name", "prefix", ("CloudStack",)),
    ("cloudsigma", "product_name", "equals", ("CloudSigma",)),
    ("cloudcix", "product_name", "equals", ("CloudCIX",)),
    ("brightbox", "product_serial", "suffix", (".brightbox.com",)),
    ("zstack", "chassis_asset_tag", "suffix", (".zstack.io",)),
)


@record
class Identity(Record):
    """What the offline signals say (the output of :func:`identify`)."""

    provider: str
    instance_type: Optional[str] = None
    bare_metal: Optional[bool] = None
    sources: Mapping[str, str] = field(default_factory=dict)


@record
class MetadataAnswer(Record):
    """What a cloud's metadata service said about this instance."""

    instance_type: Optional[str] = None
    region: Optional[str] = None
    zone: Optional[str] = None
    image: Optional[str] = None
    notes: tuple[Note, ...] = ()


# --- pure parts ----------------------------------------------------------------------------


def clean_dmi(value: str | None) -> str | None:
    """sysfs values end with a newline; empty means 'not specified'."""
    if value is None:
        return None
    value = value.strip().strip("\x00").strip()
    return value or None


def _uuid_is_ec2(value: str | None) -> bool:
    """EC2's SMBIOS UUID starts with ec2, or with its byte-swapped form (45E12AEC-...) [S1,S12]."""
    if not value:
        return False
    value = value.strip().lower()
    if value.startswith("ec2"):
        return True
    try:
        import uuid

        return uuid.UUID(value).bytes_le.hex().startswith("ec2")
    except ValueError:
        return False


def valid_instance_type(provider: str, value: str | None) -> str | None:
    if not value:
        return None
    pattern = INSTANCE_TYPE_PATTERNS.get(provider)
    if pattern is None:
        return None
    return value if pattern.match(value) else None


def is_bare_metal(provider: str, instance_type: str | None) -> bool | None:
    if not instance_type:
        return None
    if provider == "aws":
        return ".metal" in instance_type  # m7i.metal-24xl too (systemd PR #27267)
    if provider == "oci":
        return instance_type.startswith("BM.")
    return False


def identify(dmi: Mapping[str, str | None], hypervisor_uuid: str | None = None) -> Identity | None:
    """Which cloud the DMI strings name; pure, fed real captured values in the tests."""

    def get(name: str) -> str:
        return clean_dmi(dmi.get(name)) or ""

    vendor, product = get("sys_vendor"), get("product_name")
    chassis_tag, serial = get("chassis_asset_tag"), get("product_serial")
    if chassis_tag == AZURE_ASSET_TAG:
        return Identity("azure", sources={"provider": f"{DMI_DIR}/chassis_asset_tag"})
    if chassis_tag == OCI_ASSET_TAG:
        return Identity("oci", sources={"provider": f"{DMI_DIR}/chassis_asset_tag"})
    if product in ("Google Compute Engine", "Google"):
        return Identity("gcp", sources={"provider": f"{DMI_DIR}/product_name"})
    if serial.startswith("GoogleCloud-"):
        return Identity("gcp", sources={"provider": f"{DMI_DIR}/product_serial"})
    if vendor == "Amazon EC2":
        # Nitro: product_name is the instance type [S12,S19,S20].
        itype = valid_instance_type("aws", product)
        sources = {"provider": f"{DMI_DIR}/sys_vendor"}
        if itype:
            sources["instance_type"] = f"{DMI_DIR}/product_name"
        return Identity("aws", itype, is_bare_metal("aws", itype), sources)
    hv = clean_dmi(hypervisor_uuid)
    if hv and hv.lower().startswith("ec2"):
        return Identity("aws", sources={"provider": HYPERVISOR_UUID})
    if _uuid_is_ec2(get("product_uuid")):
        return Identity("aws", sources={"provider": f"{DMI_DIR}/product_uuid"})
    for provider, name, how, values in OTHER_SIGNATURES:
        value = get(name)
        if not value:
            continue
        if (
            (how == "equals" and value in values)
            or (how == "prefix" and value.startswith(values))
            or (how == "suffix" and value.endswith(values))
        ):
            return Identity(provider, sources={"provider": f"{DMI_DIR}/{name}"})
    if vendor == "3DS Outscale" and product == "3DS Outscale VM":
        return Identity("outscale", sources={"provider": f"{DMI_DIR}/sys_vendor"})
    return None


POWERSHELL_QUERY = (
    "$p = Get-CimInstance -ClassName Win32_ComputerSystemProduct; "
    "$e = Get-CimInstance -ClassName Win32_SystemEnclosure; "
    "'sys_vendor=' + $p.Vendor; 'product_name=' + $p.Name; 'product_uuid=' + $p.UUID; "
    "'chassis_asset_tag=' + $e.SMBIOSAssetTag"
)


def parse_windows_dmi(text: str) -> dict[str, str]:
    """``key=value`` lines printed by POWERSHELL_QUERY -> DMI-like fields."""
    out: dict[str, str] = {}
    for line in text.splitlines():
        key, sep, value = line.partition("=")
        key = key.strip()
        if sep and key in ("sys_vendor", "product_name", "product_uuid", "chassis_asset_tag"):
            value = value.strip()
            if value and value.isprintable() and len(value) <= 200:
                out[key] = value
    return out


def _last_segment(value: str) -> str:
    return value.rstrip("/").rsplit("/", 1)[-1]


def _text(data: bytes) -> str | None:
    """An untrusted answer as text: UTF-8, printable, one line, or None."""
    try:
        text = data.decode("utf-8").strip()
    except UnicodeDecodeError:
        return None
    if not text or "\n" in text or not text.isprintable():
        return None
    return text


def parse_aws(answers: Mapping[str, bytes]) -> MetadataAnswer:
    """IMDS leaf answers (path -> body) -> validated values."""
    notes: list[Note] = []
    itype = _text(answers.get("instance-type", b"")) or None
    if itype and not valid_instance_type("aws", itype):
        notes.append(_garbled("instance-type", itype))
        itype = None
    region = _checked(_text(answers.get("region", b"")), REGION_PATTERN, "region", notes)
    zone = _checked(_text(answers.get("zone", b"")), ZONE_PATTERN, "availability-zone", notes)
    return MetadataAnswer(itype, region, zone, None, tuple(notes))


def parse_gcp(answers: Mapping[str, bytes]) -> MetadataAnswer:
    """``projects/<n>/machineTypes/<type>``, ``projects/<n>/zones/<zone>``, image path [S24]."""
    notes: list[Note] = []
    itype = None
    raw_type = _text(answers.get("machine-type", b""))
    if raw_type:
        itype = valid_instance_type("gcp", _last_segment(raw_type))
        if itype is None:
            notes.append(_garbled("machine-type", raw_type))
    zone = None
    raw_zone = _text(answers.get("zone", b""))
    if raw_zone:
        zone = _checked(_last_segment(raw_zone), REGION_PATTERN, "zone", notes)
    region = zone.rsplit("-", 1)[0] if zone and zone.count("-") >= 2 else None
    image = _checked(_text(answers.get("image", b"")), IMAGE_PATTERN, "image", notes)
    return MetadataAnswer(itype, region, zone, image, tuple(notes))


def _json_object(data: bytes, what: str, notes: list[Note]) -> dict[str, Any] | None:
    try:
        doc = bounded.parse_json(data, what)
    except bounded.InputError:
        notes.append(_garbled(what, data[:60].decode("utf-8", "replace")))
        return None
    if not isinstance(doc, dict):
        notes.append(_garbled(what, "not a JSON object"))
        return None
    return doc


def _field(doc: Mapping[str, Any], key: str) -> str | None:
    value = doc.get(key)
    return value if isinstance(value, str) and value else None


def parse_azure(data: bytes) -> MetadataAnswer:
    """``/metadata/instance`` JSON: compute.vmSize, location, zone, image reference [S13]."""
    notes: list[Note] = []
    doc = _json_object(data, "azure-imds", notes)
    compute = doc.get("compute") if doc else None
    if not isinstance(compute, dict):
        if doc is not None:
            notes.append(_garbled("azure-imds", "no compute section"))
        return MetadataAnswer(notes=tuple(notes))
    raw_size = _field(compute, "vmSize")
    itype = valid_instance_type("azure", raw_size)
    if raw_size and itype is None:
        notes.append(_garbled("vmSize", raw_size))
    region = _checked(_field(compute, "location"), REGION_PATTERN, "location", notes)
    zone = _checked(_field(compute, "zone"), ZONE_PATTERN, "zone", notes)
    image = None
    ref = (compute.get("storageProfile") or {}).get("imageReference")
    parts = []
    if isinstance(ref, dict):
        parts = [_field(ref, k) for k in ("publisher", "offer", "sku")]
    if not any(parts):
        parts = [_field(compute, k) for k in ("publisher", "offer", "sku")]
    if all(parts):
        image = _checked(":".join(p for p in parts if p), IMAGE_PATTERN, "image", notes)
    return MetadataAnswer(itype, region, zone, image, tuple(notes))


def parse_oci(data: bytes) -> MetadataAnswer:
    """``/opc/v2/instance/`` JSON: shape, canonicalRegionName, availabilityDomain [S14]."""
    notes: list[Note] = []
    doc = _json_object(data, "oci-imds", notes)
    if doc is None:
        return MetadataAnswer(notes=tuple(notes))
    raw_shape = _field(doc, "shape")
    itype = valid_instance_type("oci", raw_shape)
    if raw_shape and itype is None:
        notes.append(_garbled("shape", raw_shape))
    region = _checked(
        _field(doc, "canonicalRegionName") or _field(doc, "region"), REGION_PATTERN, "region", notes
    )
    zone = _checked(_field(doc, "availabilityDomain"), ZONE_PATTERN, "availabilityDomain", notes)
    return MetadataAnswer(itype, region, zone, None, tuple(notes))


def _checked(
    value: str | None, pattern: re.Pattern[str], what: str, notes: list[Note]
) -> str | None:
    if value is None:
        return None
    if pattern.match(value):
        return value
    notes.append(_garbled(what, value))
    return None


def _garbled(what: str, value: str) -> Note:
    shown = "".join(ch if ch.isprintable() else "?" for ch in value[:60])
    return Note(
        "cloud-metadata-garbled",
        f"the metadata service's {what} is not a valid value and was ignored: {shown!r}",
        "metadata",
    )


# --- the metadata client -------------------------------------------------------------------


class _Unreachable(Exception):
    """Nothing answers at that address (connect failed or timed out)."""


_Budget = bounded.Deadline  # one wall-clock budget for every request of a detection


@record
class _Response(Record):
    """One metadata service answer: status, headers and body."""

    status: int
    headers: Mapping[str, str]
    body: bytes


def _request(
    base: str,
    method: str,
    path: str,
    headers: Mapping[str, str],
    budget: bounded.Deadline,
) -> _Response:
    """One HTTP request straight to ``base`` (no proxy), within what is left of the budget:
    connect, headers and body together (a server dripping bytes cannot stretch it).

    Raises _Unreachable when the connection cannot be made; TimeoutError when the budget runs
    out; ValueError for an answer over MAX_ANSWER or one that is not HTTP."""
    import urllib.parse

    parts = urllib.parse.urlsplit(base)
    if parts.scheme != "http" or not parts.hostname:
        raise ValueError(f"unsupported metadata base URL {base!r}")
    budget.require()
    try:
        resp = net.http_request(
            base.rstrip("/") + path,
            budget,
            method=method,
            headers={**headers, "Connection": "close"},
            max_bytes=MAX_ANSWER,
            use_proxy=False,
        )
    except net.HttpError as exc:
        if exc.kind == "unreachable":
            raise _Unreachable(exc.detail) from None
        if exc.kind == "timeout":
            raise TimeoutError(exc.detail) from None
        raise ValueError(exc.detail) from None
    return _Response(resp.status, resp.headers, resp.body)


def _ask_aws(base: str, budget: _Budget) -> tuple[MetadataAnswer | None, list[Note]]:
    """IMDSv2: PUT a token first, then GET with it [S1,S5,S6]."""
    notes: list[Note] = []
    token_resp = _request(
        base, "PUT", "/latest/api/token", {"X-aws-ec2-metadata-token-ttl-seconds": "60"}, budget
    )
    headers: dict[str, str] = {}
    if token_resp.status == 200:
        token = _text(token_resp.body)
        if token is None or not TOKEN_PATTERN.match(token):
            return None, [_garbled("IMDSv2 token", token_resp.body[:60].decode("utf-8", "replace"))]
        headers["X-aws-ec2-metadata-token"] = token
    elif token_resp.status == 403:  # the IMDS endpoint is disabled: stop (cloud-init does) [S1]
        return None, [
            Note(
                "cloud-metadata-disabled",
                "the EC2 instance metadata service refused a token (IMDS disabled?)",
                "metadata",
                "info",
            )
        ]
    elif token_resp.status not in (404, 405):  # 404/405: IMDSv1 only (botocore falls back) [S6]
        return None, [_http_note("aws", token_resp.status)]
    answers: dict[str, bytes] = {}
    for key, path in (
        ("instance-type", "/latest/meta-data/instance-type"),
        ("region", "/latest/meta-data/placement/region"),
        ("zone", "/latest/meta-data/placement/availability-zone"),
    ):
        resp = _request(base, "GET", path, headers, budget)
        if resp.status == 200:
            answers[key] = resp.body
        elif key == "instance-type":
            return None, [_http_note("aws", resp.status)]
    answer = parse_aws(answers)
    return answer, notes


def _ask_gcp(base: str, budget: _Budget) -> tuple[MetadataAnswer | None, list[Note]]:
    """``Metadata-Flavor: Google`` both ways: a server that does not echo it is not GCE [S4]."""
    answers: dict[str, bytes] = {}
    for key in ("machine-type", "zone", "image"):
        resp = _request(
            base,
            "GET",
            f"/computeMetadata/v1/instance/{key}",
            {"Metadata-Flavor": "Google"},
            budget,
        )
        if resp.status != 200:
            if key == "machine-type":
                return None, [_http_note("gcp", resp.status)]
            continue
        if resp.headers.get("metadata-flavor") != "Google":
            return None, [
                Note(
                    "cloud-metadata-not-gcp",
                    "the metadata server did not answer as Google's (no Metadata-Flavor header)",
                    "metadata",
                )
            ]
        answers[key] = resp.body
    return parse_gcp(answers), []


def _ask_azure(base: str, budget: _Budget) -> tuple[MetadataAnswer | None, list[Note]]:
    resp = _request(
        base,
        "GET",
        f"/metadata/instance?api-version={AZURE_API_VERSION}",
        {"Metadata": "true"},
        budget,
    )
    if resp.status != 200:
        return None, [_http_note("azure", resp.status)]
    return parse_azure(resp.body), []


def _ask_oci(base: str, budget: _Budget) -> tuple[MetadataAnswer | None, list[Note]]:
    resp = _request(base, "GET", "/opc/v2/instance/", {"Authorization": "Bearer Oracle"}, budget)
    if resp.status != 200:
        return None, [_http_note("oci", resp.status)]
    return parse_oci(resp.body), []


_ASK = {"aws": _ask_aws, "gcp": _ask_gcp, "azure": _ask_azure, "oci": _ask_oci}


def _http_note(provider: str, status: int) -> Note:
    return Note(
        "cloud-metadata-error",
        f"the {provider} metadata service answered HTTP {status}",
        "metadata",
    )


def query_metadata(
    providers: tuple[str, ...],
    endpoints: Mapping[str, str],
    budget_s: float = DEFAULT_BUDGET,
) -> tuple[str | None, MetadataAnswer | None, list[Note]]:
    """Ask each provider's service in turn, all within one budget. First answer wins."""
    budget = _Budget(budget_s)
    notes: list[Note] = []
    unreachable: set[str] = set()
    for provider in providers:
        base = endpoints.get(provider)
        if base is None or base in unreachable:
            continue
        try:
            answer, more = _ASK[provider](base, budget)
        except _Unreachable:
            unreachable.add(base)  # the same address serves every cloud: don't try it again
            continue
        except TimeoutError:
            notes.append(
                Note(
                    "cloud-metadata-timeout",
                    f"the {provider} metadata service did not answer within {budget_s:g} s",
                    "metadata",
                    "info",
                )
            )
            break
        except ValueError as exc:
            notes.append(
                Note(
                    "cloud-metadata-garbled",
                    f"the {provider} metadata service gave an unusable answer: {exc}",
                    "metadata",
                )
            )
            continue
        notes.extend(more)
        if answer is not None:
            notes.extend(answer.notes)
            if answer.instance_type is None and answer.region is None:
                # 200 with nothing usable (a captive portal, a stray web server on the
                # link-local address): not this provider's service.
                continue
            return provider, answer, notes
    return None, None, notes


# --- the probe -----------------------------------------------------------------------------


def read_dmi(host: Host) -> tuple[dict[str, str | None], str | None]:
    dmi: dict[str, str | None] = {}
    for name in DMI_FIELDS + DMI_ROOT_FIELDS:
        dmi[name] = clean_dmi(host.read(f"{DMI_DIR}/{name}", 4096).text)
    hv = clean_dmi(host.read(HYPERVISOR_UUID, 4096).text)
    return dmi, hv


def _system(host: Host) -> str:
    value = host.interpreter().get("system")
    return value if isinstance(value, str) else ""


def _image_hint(host: Host, provider: str) -> tuple[str | None, str | None]:
    """Offline image hints: the AWS DLAMI marker, the GCP Deep Learning VM driver helper."""
    if provider == "aws":
        text = host.read("/etc/dlami/dlami_version", 4096).text
        if text is not None:
            version = text.strip()
            label = "Deep Learning AMI"
            if version and IMAGE_PATTERN.match(version) and len(version) <= 40:
                label += f" {version}"
            return label, "/etc/dlami/dlami_version"
    if provider == "gcp" and host.exists("/opt/deeplearning/install-driver.sh"):
        return "Deep Learning VM", "/opt/deeplearning/install-driver.sh"
    return None, None


def _metadata_wanted(host: Host, metadata: bool | None) -> bool | None:
    """flag > SETUP_ENV_CLOUD_METADATA > detection (None = decide from DMI)."""
    if metadata is not None:
        return metadata
    env = (host.env("SETUP_ENV_CLOUD_METADATA") or "").strip().lower()
    if env in ("0", "false", "no", "off"):
        return False
    if env in ("1", "true", "yes", "on"):
        return True
    return None


def detect(
    host: Host,
    metadata: bool | None = None,
    *,
    endpoints: Mapping[str, str] | None = None,
    budget: float = DEFAULT_BUDGET,
) -> tuple[CloudInfo | None, list[Note]]:
    """The cloud this host runs in, or None. See the module docstring for the order.

    ``endpoints`` (provider -> base URL) replaces the real metadata addresses; only with it does
    a non-live host (a replay) ever send a request.
    """
    notes: list[Note] = []
    system = _system(host)
    ident: Identity | None = None
    if system == "Windows":
        result = host.run(
            ["powershell", "-NoProfile", "-NonInteractive", "-Command", POWERSHELL_QUERY],
            timeout=POWERSHELL_TIMEOUT,
        )
        if result.ok:
            ident = identify(parse_windows_dmi(result.stdout))
        elif result.error != "not-found":
            notes.append(Note("cloud-dmi-unreadable", result.describe(), "powershell", "info"))
    elif system != "Darwin":  # macOS has no DMI; EC2 Mac is found through IMDS only
        dmi, hv = read_dmi(host)
        ident = identify(dmi, hv)

    wanted = _metadata_wanted(host, metadata)
    may_send = endpoints is not None or host.label == "live"
    aws_off = (host.env("AWS_EC2_METADATA_DISABLED") or "").strip().lower() == "true"
    answer: MetadataAnswer | None = None
    answered_by: str | None = None
    if may_send and wanted is not False:
        if ident is not None and ident.provider in METADATA_PROVIDERS:
            need = ident.instance_type is None or wanted is True
            providers: tuple[str, ...] = (ident.provider,) if need else ()
        elif ident is None and wanted is True:
            providers = METADATA_PROVIDERS
        else:
            providers = ()
        if aws_off:
            providers = tuple(p for p in providers if p != "aws")
        if providers:
            answered_by, answer, more = query_metadata(
                providers, endpoints if endpoints is not None else DEFAULT_ENDPOINTS, budget
            )
            notes.extend(more)

    if ident is None and answered_by is None:
        return None, notes
    provider = ident.provider if ident is not None else str(answered_by)
    sources = dict(ident.sources) if ident is not None else {"provider": "metadata"}
    itype = ident.instance_type if ident is not None else None
    region = zone = image = None
    if answer is not None and answered_by == provider:
        if answer.instance_type:
            if itype and itype != answer.instance_type:
                notes.append(
                    Note(
                        "cloud-instance-type-mismatch",
                        f"DMI says {itype}, the metadata service says {answer.instance_type}",
                        "metadata",
                    )
                )
            itype = itype or answer.instance_type
            sources.setdefault("instance_type", f"metadata:{provider}")
        region, zone, image = answer.region, answer.zone, answer.image
        for key, value in (("region", region), ("zone", zone), ("image", image)):
            if value:
                sources[key] = f"metadata:{provider}"
    if image is None:
        image, where = _image_hint(host, provider)
        if image and where:
            sources["image"] = where
    info = CloudInfo(
        provider=provider,
        instance_type=itype,
        region=region,
        zone=zone,
        image=image,
        bare_metal=is_bare_metal(provider, itype),
        sources=sources,
    )
    if itype:
        info = _with_catalogue(info, notes)
    if host.exists("/.dockerenv") or host.exists("/run/.containerenv"):
        notes.append(
            Note(
                "cloud-seen-from-container",
                "running in a container: the cloud facts describe the VM that hosts it",
                "dmi",
                "info",
            )
        )
    return info, notes


def _with_catalogue(info: CloudInfo, notes: list[Note]) -> CloudInfo:
    """Add what the catalogue says the instance type has (loaded only for a known cloud VM)."""

    from setup_env.knowledge import cloud_catalog

    try:
        catalog = cloud_catalog.load()
    except cloud_catalog.CatalogError as exc:
        notes.append(Note("cloud-catalogue-unreadable", str(exc), "cloud_catalog"))
        return info
    inst = catalog.lookup(str(info.provider), str(info.instance_type))
    if inst is None:
        return info
    sources = dict(info.sources)
    for key in ("expected_gpus", "expected_gpu_model", "expected_host_arch", "fabric_manager"):
        sources[key] = "cloud_catalog"
    return replace(
        info,
        expected_gpus=inst.gpu_count,
        expected_gpu_model=inst.gpu.name,
        expected_host_arch=inst.host_arch,
        fabric_manager=inst.fabric_manager,
        sources=sources,
    )
