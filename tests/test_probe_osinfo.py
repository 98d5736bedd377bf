"""OS probe: parsers on real captured text, and detection on small replays (garbled ones too)."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_probe_host import make_replay

from setup_env.probe import osinfo

HOSTS = Path(__file__).parent / "fixtures" / "hosts"

# Real /etc/os-release of Amazon Linux 2 (https://github.com/run-x/opta/issues/625).
AL2 = (HOSTS / "amzn2-glibc226-cpu/files/etc/os-release").read_text(encoding="utf-8")
# Real Ubuntu 24.04.3 (python-distro/distro tests/resources/distros/ubuntu24/etc/os-release).
UBUNTU24 = (HOSTS / "ubuntu2404-cpu-only/files/etc/os-release").read_text(encoding="utf-8")


def test_parse_os_release_real_files() -> None:
    al2 = osinfo.parse_os_release(AL2)
    assert (al2["ID"], al2["VERSION_ID"], al2["PRETTY_NAME"]) == ("amzn", "2", "Amazon Linux 2")
    assert al2["ID_LIKE"] == "centos rhel fedora"
    u24 = osinfo.parse_os_release(UBUNTU24)
    assert (u24["ID"], u24["VERSION_ID"], u24["VERSION_CODENAME"]) == ("ubuntu", "24.04", "noble")


def test_parse_os_release_garbled() -> None:
    assert osinfo.parse_os_release("") == {}
    assert osinfo.parse_os_release('garbage\n=\nlower=x\nID="unterminated\n') == {
        "ID": '"unterminated'
    }


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # getconf GNU_LIBC_VERSION on this Debian 12 machine
        ("glibc 2.36\n", ("glibc", "2.36")),
        # ldd --version, Amazon Linux 2 EKS GPU node (public write-up, index id 47231830921)
        (
            "ldd (GNU libc) 2.26\nCopyright (C) 2017 Free Software Foundation, Inc.\n",
            ("glibc", "2.26"),
        ),
        # ldd --version in ghcr.io/catthehacker/ubuntu:act-22.04 and node:18-bookworm
        # (public notes, index id 37678871828)
        ("ldd (Ubuntu GLIBC 2.35-0ubuntu3.1) 2.35\n", ("glibc", "2.35")),
        ("ldd (Debian GLIBC 2.36-9) 2.36\n", ("glibc", "2.36")),
        # Debian 10 (https://github.com/astral-sh/uv/issues/14268)
        ("ldd (Debian GLIBC 2.28-10+deb10u4) 2.28", ("glibc", "2.28")),
        # musl's ldd prints this on stderr (Alpine); no glibc version
        ("musl libc (x86_64)\nVersion 1.2.5\n", ("musl", None)),
        ("", (None, None)),
        ("ldd: command garbled", (None, None)),
    ],
)
def test_parse_glibc(text: str, expected: tuple[str | None, str | None]) -> None:
    assert osinfo.parse_glibc(text) == expected


@pytest.mark.parametrize(
    ("proc_version", "interop", "expected"),
    [
        # /proc/version of this machine (Docker on a VM): not WSL
        (
            "Linux version 6.18.44-fc-v1098 (builder@sandboxing) (gcc (GCC) 15.3.0, GNU ld "
            "(GNU Binutils) 2.46) #1 SMP PREEMPT_DYNAMIC @0\n",
            False,
            None,
        ),
        # WSL2 kernel names (https://github.com/vllm-project/vllm/pull/9293 collect_env:
        # Linux-5.15.153.1-microsoft-standard-WSL2)
        ("Linux version 5.15.153.1-microsoft-standard-WSL2 (root@...)", True, 2),
        # older WSL2 kernels: 4.19.104-microsoft-standard
        ("Linux version 4.19.104-microsoft-standard (oe-user@oe-host)", True, 2),
        # WSL1 reports the Windows build (4.4.0-19041-Microsoft, Microsoft@Microsoft.com)
        (
            "Linux version 4.4.0-19041-Microsoft (Microsoft@Microsoft.com) (gcc version 5.4.0)",
            True,
            1,
        ),
        (None, True, 2),
        (None, False, None),
    ],
)
def test_parse_wsl(proc_version: str | None, interop: bool, expected: int | None) -> None:
    assert osinfo.parse_wsl(proc_version, interop) == expected


def test_parse_cgroup_container() -> None:
    # This machine's /proc/1/cgroup (cgroup v1 names, all at "/"): nothing to tell.
    this_machine = "9:name=systemd:/\n8:pids:/\n4:memory:/\n1:cpu:/\n0::/\n"
    assert osinfo.parse_cgroup_container(this_machine) is None
    assert osinfo.parse_cgroup_container("12:memory:/docker/3f2a9c\n") == "docker"
    assert osinfo.parse_cgroup_container("11:cpu:/kubepods/burstable/pod1234/abc\n") == (
        "kubernetes"
    )
    assert osinfo.parse_cgroup_container("") is None


def _linux_doc(**extra: object) -> dict[str, object]:
    doc: dict[str, object] = {
        "interpreter": {"system": "Linux", "release": "6.8.0-45-generic", "libc_ver": ["", ""]}
    }
    doc.update(extra)
    return doc


def test_empty_os_release_is_a_note(tmp_path: Path) -> None:
    host = make_replay(tmp_path, _linux_doc(), {"/etc/os-release": ""})
    info, notes = osinfo.detect(host)
    assert info.distro_id is None
    assert [n.code for n in notes] == ["os-release-empty"]


def test_missing_os_release_is_an_info_note(tmp_path: Path) -> None:
    info, notes = osinfo.detect(make_replay(tmp_path, _linux_doc()))
    assert (info.family, info.distro_id) == ("linux", None)
    assert [(n.code, n.severity) for n in notes] == [("os-release-missing", "info")]


def test_glibc_falls_back_to_commands_and_survives_a_timeout(tmp_path: Path) -> None:
    host = make_replay(
        tmp_path,
        _linux_doc(
            commands=[
                {"argv": ["getconf", "GNU_LIBC_VERSION"], "returncode": None, "error": "timeout"},
                {
                    "argv": ["ldd", "--version"],
                    "returncode": 1,
                    "stdout": "",
                    "stderr": "musl libc (x86_64)\nVersion 1.2.4\n",
                },
            ]
        ),
        {"/etc/os-release": 'ID=alpine\nVERSION_ID=3.19.1\nPRETTY_NAME="Alpine Linux v3.19"\n'},
    )
    info, notes = osinfo.detect(host)
    assert (info.libc, info.glibc) == ("musl", None)
    assert info.sources["libc"] == "ldd --version"
    assert (info.distro_id, info.distro_version) == ("alpine", "3.19.1")
    assert [n.code for n in notes] == ["command-timeout"]


def test_wsl_container_and_virtualization_sources(tmp_path: Path) -> None:
    host = make_replay(
        tmp_path,
        _linux_doc(
            env={"KUBERNETES_SERVICE_HOST": "10.0.0.1"},
            exists=["/proc/sys/fs/binfmt_misc/WSLInterop", "/.dockerenv"],
            which={"systemd-detect-virt": "/usr/bin/systemd-detect-virt"},
            commands=[
                {"argv": ["systemd-detect-virt", "--vm"], "returncode": None, "error": "timeout"}
            ],
        ),
        {
            "/proc/version": "Linux version 5.15.167.4-microsoft-standard-WSL2 (root@x)\n",
            "/sys/hypervisor/type": "xen\n",
        },
    )
    info, notes = osinfo.detect(host)
    assert (info.wsl, info.container, info.virtualization) == (2, "kubernetes", "xen")
    assert info.sources["container"] == "env:KUBERNETES_SERVICE_HOST"
    assert info.sources["virtualization"] == "/sys/hypervisor/type"
    assert [n.code for n in notes] == ["os-release-missing", "command-timeout"]


def test_macos_version_from_sw_vers_when_python_says_10_16(tmp_path: Path) -> None:
    # A Python built against an old SDK reports macOS 11+ as 10.16.
    host = make_replay(
        tmp_path,
        {
            "interpreter": {"system": "Darwin", "release": "23.2.0", "mac_ver": "10.16"},
            # sw_vers -productVersion on the M1 MacBook Pro of macos14-m1-arm64's SOURCES.md
            "commands": [{"argv": ["sw_vers", "-productVersion"], "stdout": "14.2.1\n"}],
        },
    )
    info, notes = osinfo.detect(host)
    assert (info.family, info.macos_version) == ("darwin", "14.2.1")
    assert info.sources["macos_version"] == "sw_vers -productVersion"
    assert notes == []


def test_windows_build(tmp_path: Path) -> None:
    host = make_replay(
        tmp_path, {"interpreter": {"system": "Windows", "release": "10", "win32_ver": "10.0.22631"}}
    )
    info, _ = osinfo.detect(host)
    assert (info.family, info.windows_build, info.distro_id) == ("windows", "10.0.22631", None)


def test_legacy_release_file_without_os_release_goes_through_distro(tmp_path: Path) -> None:
    # CentOS 6 has no os-release; /etc/centos-release (and redhat-release, a link to it) read
    # exactly this on CentOS 6.10.
    release = "CentOS release 6.10 (Final)\n"
    host = make_replay(
        tmp_path,
        _linux_doc(),
        {"/etc/centos-release": release, "/etc/redhat-release": release},
    )
    info, _ = osinfo.detect(host)
    assert (info.distro_id, info.distro_version) == ("centos", "6.10")
    assert info.sources["distro_id"] == "distro:/etc/*-release"


def test_os_release_ids_normalised_like_distro(tmp_path: Path) -> None:
    # Oracle Linux 8's os-release (ID="ol"); distro reports it as "oracle", and so do we.
    text = 'NAME="Oracle Linux Server"\nVERSION="8.9"\nID="ol"\nVERSION_ID="8.9"\n'
    text += 'PRETTY_NAME="Oracle Linux Server 8.9"\n'
    info, _ = osinfo.detect(make_replay(tmp_path, _linux_doc(), {"/etc/os-release": text}))
    assert (info.distro_id, info.distro_name, info.distro_version) == (
        "oracle",
        "Oracle Linux Server 8.9",
        "8.9",
    )
