#!/bin/sh
# install.sh: from a bare Linux or macOS machine to setup-env in a virtual environment and, with
# --install-torch, to the PyTorch that fits this machine, installed and verified.
#
# Only the bootstrap lives here (find a Python, make the venv, install setup-env, hand over).
# Everything that needs judgement (which torch, which index, how much disk a build needs) is
# setup-env's, in Python. POSIX sh; shellcheck clean.
set -eu

MIN_MAJOR=3
MIN_MINOR=9
# Free space needed in the venv's filesystem (KiB): setup-env alone is ~30 MB with pip and its
# dependencies; the smallest PyTorch (a CPU build) downloads ~200 MB and unpacks to ~1 GB. The
# exact need of the planned build (CUDA: several GB) is checked again by `setup-env install`.
NEED_KB_BASE=$((512 * 1024))
NEED_KB_TORCH=$((3 * 1024 * 1024))

usage() {
	cat <<'EOF'
Usage: install.sh [OPTIONS]

Find a Python >= 3.9, create a virtual environment, install setup-env into it and print the
PyTorch install plan for this machine. With --install-torch, also install that PyTorch and
verify it. Running it again changes nothing, unless this checkout's code changed since it was
installed (a pull, an edit): then setup-env is installed again from it.

Options:
  --venv DIR         virtual environment to create or reuse (default: .venv)
  --python PATH      use this Python instead of searching PATH
  --from SPEC        install setup-env from SPEC (a folder, a wheel, a pip requirement) instead
                     of this checkout (or PyPI when install.sh is not in a checkout)
  --install-torch    also install the planned PyTorch (setup-env install) and verify it
  --torch VERSION    plan and install this torch release (e.g. 2.13)
  --variant V        plan and install this variant (cpu, cu130, rocm7.2, xpu)
  --index-url URL    an internal mirror of the PyTorch index
  --find-links DIR   offline: install only wheels from DIR (setup-env, its dependencies, torch)
  --dry-run          print every step, do nothing
  -y, --yes          unattended: never ask (cloud-init user data, CI images)
  -h, --help         this help

Exit codes:
  0   done
  2   bad option, or --install-torch without --yes and no terminal to confirm on
  10  no Python 3.9 or newer found
  11  Python found, but no venv module (Debian/Ubuntu: python3-venv)
  12  not enough free disk space in the venv's filesystem
  13  no network to the package index
  14  --venv DIR exists but is not a usable virtual environment
  15  installing setup-env failed
  16  setup-env plan failed (no PyTorch build fits: the plan says why and what to do)
  17  installing PyTorch failed (setup-env install says why)
  18  the installed PyTorch did not pass setup-env verify
EOF
}

say() { printf 'install.sh: %s\n' "$*"; }
die() {
	code=$1
	shift
	printf 'install.sh: error: %s\n' "$*" >&2
	exit "$code"
}

# Print an argument as a POSIX shell would need it typed.
quote() {
	case $1 in
	'') printf "''" ;;
	*[!A-Za-z0-9_./:=@%+,-]*) printf "'%s'" "$(printf '%s' "$1" | sed "s/'/'\\\\''/g")" ;;
	*) printf '%s' "$1" ;;
	esac
}

show() {
	line=
	for arg in "$@"; do
		line="$line $(quote "$arg")"
	done
	printf '+%s\n' "$line"
}

# Run a command, or only show it under --dry-run.
run() {
	show "$@"
	if [ "$DRY_RUN" = 1 ]; then
		return 0
	fi
	"$@"
}

VENV=.venv
PYTHON=
FROM=
INSTALL_TORCH=0
DRY_RUN=0
YES=
TORCH=
VARIANT=
INDEX_URL=
FIND_LINKS=

need_value() {
	if [ "$2" -lt 2 ]; then
		die 2 "$1 needs a value (see --help)"
	fi
}

while [ $# -gt 0 ]; do
	case $1 in
	--venv) need_value "$1" $# && VENV=$2 && shift ;;
	--venv=*) VENV=${1#*=} ;;
	--python) need_value "$1" $# && PYTHON=$2 && shift ;;
	--python=*) PYTHON=${1#*=} ;;
	--from) need_value "$1" $# && FROM=$2 && shift ;;
	--from=*) FROM=${1#*=} ;;
	--torch) need_value "$1" $# && TORCH=$2 && shift ;;
	--torch=*) TORCH=${1#*=} ;;
	--variant) need_value "$1" $# && VARIANT=$2 && shift ;;
	--variant=*) VARIANT=${1#*=} ;;
	--index-url) need_value "$1" $# && INDEX_URL=$2 && shift ;;
	--index-url=*) INDEX_URL=${1#*=} ;;
	--find-links) need_value "$1" $# && FIND_LINKS=$2 && shift ;;
	--find-links=*) FIND_LINKS=${1#*=} ;;
	--install-torch) INSTALL_TORCH=1 ;;
	--dry-run) DRY_RUN=1 ;;
	-y | --yes) YES=--yes ;;
	-h | --help)
		usage
		exit 0
		;;
	*) die 2 "unknown option: $1 (see --help)" ;;
	esac
	shift
done

if [ -z "$VENV" ]; then
	die 2 "--venv needs a folder"
fi
if [ "$INSTALL_TORCH" = 1 ] && [ -z "$YES" ] && [ "$DRY_RUN" = 0 ] && [ ! -t 0 ]; then
	die 2 "--install-torch without a terminal to confirm on: add --yes for unattended use"
fi
if [ -n "$FIND_LINKS" ] && [ ! -d "$FIND_LINKS" ]; then
	die 2 "--find-links: no folder at $FIND_LINKS"
fi

case $VENV in
/*) ;;
*) VENV="$(pwd)/$VENV" ;;
esac
VENV_PY="$VENV/bin/python"
VENV_TOOL="$VENV/bin/setup-env"

# --- a Python ------------------------------------------------------------------------------

UV=$(command -v uv 2>/dev/null || true)

# check_python PATH: sets PY_VERSION; returns 0 usable, 1 not runnable, 2 too old, 3 no venv,
# 4 runs but is not a Python.
check_python() {
	PY_VERSION=$("$1" -c 'import sys; print("%d.%d.%d" % sys.version_info[:3])' 2>/dev/null) ||
		return 1
	# It ran: it must also have said X.Y.Z (/bin/true runs, says nothing, and is no Python).
	case $PY_VERSION in
	[0-9]*.[0-9]*.[0-9]*) ;;
	*)
		PY_VERSION=
		return 4
		;;
	esac
	major=${PY_VERSION%%.*}
	rest=${PY_VERSION#*.}
	minor=${rest%%.*}
	case $major$minor in
	'' | *[!0-9]*)
		PY_VERSION=
		return 4
		;;
	esac
	if [ "$major" -lt "$MIN_MAJOR" ] ||
		{ [ "$major" -eq "$MIN_MAJOR" ] && [ "$minor" -lt "$MIN_MINOR" ]; }; then
		return 2
	fi
	# uv makes venvs on its own; `python -m venv` needs the venv module and ensurepip (Debian and
	# Ubuntu ship them apart, in python3-venv).
	if [ -z "$UV" ] && ! "$1" -c 'import venv, ensurepip' >/dev/null 2>&1; then
		return 3
	fi
	return 0
}

FOUND=
NO_VENV=
describe_rejection() {
	case $2 in
	1) say "rejected $1: it does not run" ;;
	4) say "rejected $1: it is not a Python (it did not report a version)" ;;
	2) say "rejected $1: Python $PY_VERSION is too old (3.9 or newer is needed)" ;;
	3)
		say "rejected $1: Python $PY_VERSION has no venv module (ensurepip missing)"
		NO_VENV="$1 (Python $PY_VERSION)"
		;;
	esac
}

venv_hint() {
	hint="install it (Debian/Ubuntu: sudo apt-get install python3-venv, or python${1}-venv)"
	printf '%s or install uv (https://docs.astral.sh/uv/)' "$hint"
}

find_python() {
	if [ -n "$PYTHON" ]; then
		status=0
		check_python "$PYTHON" || status=$?
		case $status in
		0) FOUND=$PYTHON ;;
		1) die 10 "--python $(quote "$PYTHON") does not run: give the path of a Python 3.9 or newer" ;;
		4) die 10 "--python $(quote "$PYTHON") is not a Python (it did not report a version): give the path of a Python 3.9 or newer" ;;
		2) die 10 "--python $PYTHON is Python $PY_VERSION: 3.9 or newer is needed" ;;
		3) die 11 "--python $PYTHON (Python $PY_VERSION) has no venv module: $(venv_hint "${PY_VERSION%.*}")" ;;
		esac
		return 0
	fi
	for name in python3 python3.14 python3.13 python3.12 python3.11 python3.10 python3.9 python; do
		path=$(command -v "$name" 2>/dev/null) || continue
		case $path in
		/*) ;;
		*) continue ;; # an alias or a function, not a program
		esac
		status=0
		check_python "$path" || status=$?
		if [ "$status" = 0 ]; then
			FOUND=$path
			return 0
		fi
		describe_rejection "$path" "$status"
	done
	if [ -n "$NO_VENV" ]; then
		die 11 "$NO_VENV has no venv module: $(venv_hint "${PY_VERSION%.*}")"
	fi
	die 10 "no Python 3.9 or newer found on PATH: install one (Debian/Ubuntu: sudo apt-get install python3 python3-venv; Fedora: sudo dnf install python3; macOS: brew install python) or pass --python PATH"
}

# --- what to install -----------------------------------------------------------------------

case $0 in
*/*) HERE=${0%/*} ;;
*) HERE=. ;;
esac
HERE=$(cd "$HERE" && pwd)
SOURCE=
SOURCE_VERSION=
CHECKOUT=0
if [ -n "$FROM" ]; then
	SOURCE=$FROM
elif [ -f "$HERE/install.sh" ] && [ -f "$HERE/pyproject.toml" ] &&
	grep -q '^name = "setup-env"' "$HERE/pyproject.toml"; then
	SOURCE=$HERE
	SOURCE_VERSION=$(sed -n 's/^version = "\([^"]*\)".*/\1/p' "$HERE/pyproject.toml" | sed -n 1p)
	CHECKOUT=1
else
	SOURCE=setup-env
fi
# What was installed from where: the sha256 of the checkout's code as it was installed (see
# source_hash), written after each install. The version says nothing: it is 0.1.0 from one
# commit to the next, so a `git pull` or an edit would otherwise keep the old code.
STAMP="$VENV/.setup-env-source"

# source_hash DIR: the sha256 of what an install of the checkout DIR puts in the venv: the build
# files (pyproject.toml; setup.py, setup.cfg, MANIFEST.in where present) and every file under
# setup_env/ (code and data), names and contents, caches (__pycache__, *.pyc) left out.
source_hash() {
	"$FOUND" - "$1" <<'EOF'
import hashlib, os, sys
root = sys.argv[1]
names = [n for n in ("pyproject.toml", "setup.py", "setup.cfg", "MANIFEST.in")
         if os.path.isfile(os.path.join(root, n))]
for top, dirs, files in os.walk(os.path.join(root, "setup_env")):
    dirs[:] = [d for d in dirs if d != "__pycache__" and not d.endswith(".egg-info")]
    names += [os.path.relpath(os.path.join(top, f), root) for f in files
              if not f.endswith((".pyc", ".pyo"))]
digest = hashlib.sha256()
for name in sorted(n.replace(os.sep, "/") for n in names):
    with open(os.path.join(root, name), "rb") as f:
        digest.update(name.encode() + b"\0" + hashlib.sha256(f.read()).digest())
print(digest.hexdigest())
EOF
}

# --- checks --------------------------------------------------------------------------------

free_kb() {
	dir=$1
	while [ ! -d "$dir" ]; do
		dir=${dir%/*}
		if [ -z "$dir" ]; then
			dir=/
		fi
	done
	df -Pk "$dir" | {
		read -r _header
		read -r _fs _size _used avail _rest
		printf '%s\n' "$avail"
	}
}

check_space() {
	need=$NEED_KB_BASE
	what="setup-env"
	if [ "$INSTALL_TORCH" = 1 ]; then
		need=$NEED_KB_TORCH
		what="setup-env and PyTorch (a CUDA build needs several GB more)"
	fi
	avail=$(free_kb "$VENV")
	case $avail in
	'' | *[!0-9]*)
		say "could not read the free space of $VENV's filesystem: not checked"
		return 0
		;;
	esac
	if [ "$avail" -lt "$need" ]; then
		die 12 "not enough disk space for $what: $((avail / 1024)) MiB free in the filesystem of $VENV, at least $((need / 1024)) MiB needed: free some space or pass --venv DIR on a bigger disk"
	fi
}

index_url() {
	if [ -n "$UV" ]; then
		printf '%s\n' "${UV_DEFAULT_INDEX:-${UV_INDEX_URL:-${PIP_INDEX_URL:-https://pypi.org/simple}}}"
	else
		printf '%s\n' "${PIP_INDEX_URL:-https://pypi.org/simple}"
	fi
}

# Can the index be reached at all? Any HTTP answer counts; only a network failure does not.
check_network() {
	url=$(index_url)
	if ! why=$("$FOUND" - "$url" 2>&1 <<'EOF'
import sys, urllib.error, urllib.request
try:
    urllib.request.urlopen(sys.argv[1].rstrip("/") + "/", timeout=10).close()
except urllib.error.HTTPError:
    pass
except Exception as exc:
    print(getattr(exc, "reason", None) or exc)
    sys.exit(1)
EOF
	); then
		die 13 "no network to the package index $url ($why): connect this machine, set PIP_INDEX_URL (and https_proxy) to a reachable mirror, or bring wheels and pass --find-links DIR"
	fi
}

# --- the steps -----------------------------------------------------------------------------

find_python
say "found Python $PY_VERSION at $FOUND"
if [ -n "$UV" ]; then
	say "using uv at $UV for the virtual environment and the installs"
fi
check_space

if [ -e "$VENV" ] || [ -L "$VENV" ]; then
	if [ -f "$VENV/pyvenv.cfg" ]; then
		if ! "$VENV_PY" -c 'import sys' >/dev/null 2>&1; then
			die 14 "$VENV is a virtual environment whose Python does not run (was its base Python removed?): remove it (rm -r $(quote "$VENV")) and run install.sh again"
		fi
		NEW_VENV=0
	elif [ -d "$VENV" ] && [ -z "$(ls -A "$VENV")" ]; then
		NEW_VENV=1
	else
		die 14 "$VENV exists and is not a virtual environment: choose another --venv DIR"
	fi
else
	# Where the venv would go must be a folder, or nothing yet: not inside a file.
	parent=$VENV
	while :; do
		case $parent in
		*/*) parent=${parent%/*} ;;
		*) parent=. ;;
		esac
		[ -n "$parent" ] || parent=/
		if [ -e "$parent" ] || [ "$parent" = . ] || [ "$parent" = / ]; then
			break
		fi
	done
	if [ ! -d "$parent" ]; then
		die 14 "--venv $(quote "$VENV"): $parent is not a folder: choose another --venv DIR"
	fi
	NEW_VENV=1
fi

INSTALLED=
INSTALLED_FROM=
if [ "$NEW_VENV" = 0 ]; then
	INSTALLED=$("$VENV_PY" -c 'from importlib.metadata import version; print(version("setup-env"))' 2>/dev/null || true)
	if [ -f "$STAMP" ]; then
		INSTALLED_FROM=$(sed -n 1p "$STAMP")
	fi
fi
SOURCE_HASH=
if [ "$CHECKOUT" = 1 ]; then
	SOURCE_HASH=$(source_hash "$SOURCE") || SOURCE_HASH=
fi
# A checkout is installed again whenever its code is not what was installed from it; setup-env
# from PyPI (install.sh outside a checkout) is kept once there; --from always installs.
NEED_INSTALL=1
if [ -n "$INSTALLED" ] && [ -z "$FROM" ]; then
	if [ "$CHECKOUT" = 0 ]; then
		NEED_INSTALL=0
	elif [ -n "$SOURCE_HASH" ] && [ "$INSTALLED_FROM" = "$SOURCE_HASH" ]; then
		NEED_INSTALL=0
	fi
fi

# The network, before anything is created: a machine that cannot reach the index is left as is.
if [ "$NEED_INSTALL" = 1 ] && [ -z "$FIND_LINKS" ]; then
	if [ "$DRY_RUN" = 1 ]; then
		say "would check the network to $(index_url)"
	else
		check_network
	fi
fi

if [ "$NEW_VENV" = 1 ]; then
	status=0
	if [ -n "$UV" ]; then
		run "$UV" venv --python "$FOUND" "$VENV" || status=$?
	else
		run "$FOUND" -m venv "$VENV" || status=$?
	fi
	if [ "$status" != 0 ]; then
		die 11 "creating the virtual environment at $VENV with $FOUND failed (exit $status): $(venv_hint "${PY_VERSION%.*}")"
	fi
else
	say "keeping the virtual environment at $VENV"
fi

if [ "$NEED_INSTALL" = 0 ]; then
	if [ "$CHECKOUT" = 1 ]; then
		say "already set up: setup-env $INSTALLED in $VENV, installed from $SOURCE as it is now"
	else
		say "already set up: setup-env $INSTALLED in $VENV"
	fi
else
	if [ -n "$INSTALLED" ] && [ "$CHECKOUT" = 1 ]; then
		say "the code in $SOURCE is not what setup-env $INSTALLED in $VENV was installed from: installing it again"
	elif [ -n "$INSTALLED" ]; then
		say "replacing setup-env $INSTALLED in $VENV with $SOURCE${SOURCE_VERSION:+ ($SOURCE_VERSION)}"
	fi
	# Forget what was installed before installing: an install that fails half-way is redone.
	if [ "$DRY_RUN" = 0 ] && [ -f "$STAMP" ]; then
		: >"$STAMP"
	fi
	status=0
	if [ -n "$UV" ]; then
		# uv reuses its build of a folder until pyproject.toml changes: build this one anew.
		run "$UV" pip install --python "$VENV_PY" --reinstall-package setup-env ${FIND_LINKS:+--no-index --find-links "$FIND_LINKS"} "$SOURCE" || status=$?
	else
		# pip builds and installs a folder anew every time, whatever its version says.
		run "$VENV_PY" -m pip install --disable-pip-version-check ${FIND_LINKS:+--no-index --find-links "$FIND_LINKS"} "$SOURCE" || status=$?
	fi
	if [ "$status" != 0 ]; then
		die 15 "installing setup-env from $SOURCE into $VENV failed (exit $status): see the installer's message above"
	fi
	if [ "$DRY_RUN" = 1 ]; then
		:
	elif [ -n "$SOURCE_HASH" ]; then
		printf '%s\n%s\n' "$SOURCE_HASH" "$SOURCE" >"$STAMP"
	else
		printf 'none\n%s\n' "$SOURCE" >"$STAMP"
	fi
fi

status=0
run "$VENV_TOOL" plan ${TORCH:+--torch "$TORCH"} ${VARIANT:+--variant "$VARIANT"} ${INDEX_URL:+--index-url "$INDEX_URL"} || status=$?
if [ "$status" = 1 ]; then
	die 16 "no PyTorch build fits as asked: the plan above says why and what to do"
elif [ "$status" != 0 ]; then
	die 16 "setup-env plan failed (exit $status): see its message above"
fi

if [ "$INSTALL_TORCH" = 1 ]; then
	status=0
	run "$VENV_TOOL" install --no-verify $YES ${TORCH:+--torch "$TORCH"} ${VARIANT:+--variant "$VARIANT"} ${INDEX_URL:+--index-url "$INDEX_URL"} ${FIND_LINKS:+--find-links "$FIND_LINKS"} || status=$?
	if [ "$status" != 0 ]; then
		die 17 "setup-env install exited $status: PyTorch was not installed (its message above says why)"
	fi
	status=0
	run "$VENV_TOOL" verify || status=$?
	if [ "$status" != 0 ]; then
		die 18 "setup-env verify exited $status: the installed PyTorch does not work as it should (see above)"
	fi
fi

if [ "$DRY_RUN" = 1 ]; then
	say "dry run: nothing was changed"
else
	say "done: run $(quote "$VENV_TOOL") (or activate the environment: . $(quote "$VENV/bin/activate"))"
fi
