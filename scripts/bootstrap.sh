#!/usr/bin/env bash
# Make sure this machine has what `make demo` and `make test` need:
#   liblmdb (found by pkg-config as `lmdb`), SQLite's C library (pkg-config `sqlite3`, for
#   freshet-bench), python3 (>= 3.8), nginx, make, and a Swift 6 toolchain.
# Idempotent and quiet when everything is already there; prints one line per thing it installs.
# Debian/Ubuntu: installs with apt-get (as root, or through sudo). macOS: installs lmdb with Homebrew
# (SQLite comes with the macOS SDK; `brew install sqlite` is the provider SwiftPM names).
# A missing Swift toolchain is not installed: the script says so in one line and exits 1.
set -euo pipefail

say() { printf 'bootstrap: %s\n' "$*"; }
die() { printf 'bootstrap: %s\n' "$*" >&2; exit 1; }

os="$(uname -s)"

# ---- Swift (never installed here)
if ! command -v swift >/dev/null 2>&1; then
    die "swift not found on PATH: install a Swift 6 toolchain (https://www.swift.org/install/) and run this again"
fi
swift_major="$(swift --version 2>/dev/null | sed -n 's/.*Swift version \([0-9][0-9]*\)\..*/\1/p' | head -n 1)"
if [ -n "$swift_major" ] && [ "$swift_major" -lt 6 ]; then
    die "Swift $swift_major found but this package needs Swift 6 or newer (https://www.swift.org/install/)"
fi

# ---- what is missing?
have_lmdb() { command -v pkg-config >/dev/null 2>&1 && pkg-config --exists lmdb; }
# macOS ships SQLite's headers and library in its SDK (Homebrew's `sqlite` is keg-only), so only
# Linux needs libsqlite3-dev.
have_sqlite() { [ "$os" = "Darwin" ] || { command -v pkg-config >/dev/null 2>&1 && pkg-config --exists sqlite3; }; }
have_python() { command -v python3 >/dev/null 2>&1 && python3 -c 'import sys; sys.exit(sys.version_info < (3, 8))' 2>/dev/null; }
have_nginx() { command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ]; }
have_make() { command -v make >/dev/null 2>&1; }

missing=()
have_lmdb || missing+=(lmdb)
have_sqlite || missing+=(sqlite)
have_python || missing+=(python3)
have_nginx || missing+=(nginx)
have_make || missing+=(make)
[ "${#missing[@]}" -eq 0 ] && exit 0

# ---- macOS: Homebrew
if [ "$os" = "Darwin" ]; then
    command -v brew >/dev/null 2>&1 || die "missing ${missing[*]}: install Homebrew (https://brew.sh), then: brew install ${missing[*]/python3/python}"
    for thing in "${missing[@]}"; do
        formula="$thing"
        [ "$thing" = "python3" ] && formula="python"
        [ "$thing" = "lmdb" ] && ! command -v pkg-config >/dev/null 2>&1 && formula="lmdb pkg-config"
        say "installing $formula (brew install $formula)"
        # shellcheck disable=SC2086
        brew install $formula >/dev/null || die "brew install $formula failed"
    done
    exit 0
fi

# ---- Debian / Ubuntu: apt-get
command -v apt-get >/dev/null 2>&1 || die "missing ${missing[*]} and no apt-get here: install liblmdb-dev (pkg-config lmdb), libsqlite3-dev (pkg-config sqlite3), python3, nginx and make with your package manager"

if [ "$(id -u)" -eq 0 ]; then
    as_root=()
elif command -v sudo >/dev/null 2>&1; then
    as_root=(sudo)
else
    die "missing ${missing[*]}: run this as root or install sudo (apt-get install liblmdb-dev libsqlite3-dev pkg-config python3 nginx-light make)"
fi

log="$(mktemp "${TMPDIR:-/tmp}/freshet-bootstrap.XXXXXX")"
trap 'rm -f "$log"' EXIT
apt() { "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get "$@" >>"$log" 2>&1; }
apt update -q || { cat "$log" >&2; die "apt-get update failed"; }

install_pkgs() {  # $1 = what, rest = packages
    local what="$1"; shift
    say "installing $what (apt-get install $*)"
    apt install -y -q --no-install-recommends "$@" || { cat "$log" >&2; die "apt-get install $* failed"; }
}

for thing in "${missing[@]}"; do
    case "$thing" in
        lmdb)
            pkgs=(liblmdb-dev)
            command -v pkg-config >/dev/null 2>&1 || pkgs+=(pkg-config)
            install_pkgs lmdb "${pkgs[@]}"
            have_lmdb || die "liblmdb-dev is installed but pkg-config still does not find lmdb"
            ;;
        sqlite)
            pkgs=(libsqlite3-dev)
            command -v pkg-config >/dev/null 2>&1 || pkgs+=(pkg-config)
            install_pkgs sqlite "${pkgs[@]}"
            have_sqlite || die "libsqlite3-dev is installed but pkg-config still does not find sqlite3"
            ;;
        python3)
            install_pkgs python3 python3
            ;;
        nginx)
            # nginx-light is enough; newer Debian releases only have the nginx package.
            if apt-cache show nginx-light >/dev/null 2>&1; then pkg=nginx-light; else pkg=nginx; fi
            install_pkgs nginx "$pkg"
            have_nginx || die "$pkg is installed but no nginx binary was found"
            ;;
        make)
            install_pkgs make make
            ;;
    esac
done
