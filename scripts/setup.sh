#!/usr/bin/env bash
# Install the Debian packages latprof needs (only the missing ones; sudo only
# when not root), then configure and build into $LP_BUILD_DIR (default build/).
#   LATPROF_WERROR=ON   warnings are errors (CI)
#   LP_NO_APT=1         never call apt-get (just report what is missing)
set -euo pipefail
cd "$(dirname "$0")/.."

# Test tiers (scripts/test.sh): gcc's ASan/UBSan/TSan runtimes for the
# sanitizer builds, clang-14 with libFuzzer (libclang-rt-14-dev) for fuzzing.
LP_PACKAGES=(cmake gcc g++ make pkg-config python3 libsqlite3-dev libdw-dev libelf-dev
	libpfm4-dev libxxhash-dev libyajl-dev zlib1g-dev nettle-dev gnuplot-nox chromium sqlite3
	libasan8 libubsan1 libtsan2 clang-14 libclang-rt-14-dev
	pigz xz-utils memcached libmemcached-tools postgresql mariadb-server sysbench linux-perf
	gcc-multilib)
# gcc-multilib: tests/reliability builds a 32-bit test program (a child
# that cannot load the 64-bit interposer).
# tests/real records real programs: pigz, xz, memcached under memcaslap
# (libmemcached-tools), PostgreSQL under pgbench (postgresql; its binaries
# live in /usr/lib/postgresql/<major>/bin), MariaDB under sysbench
# (mariadb-server, sysbench: InnoDB's latches wait on futexes directly;
# linux-perf traces its futex syscalls as the second source),
# Python with nvtx, numpy, onnx
# and onnxruntime (lp_install_python). The real-program benchmark
# (tests/bench/bench_servers.py) uses memcached and PostgreSQL too.
# nodejs: a Node program's JavaScript frames (tests/real/test_node_frames.py).
LP_PACKAGES+=(nodejs)
LP_BUILD_DIR=${LP_BUILD_DIR:-build}

lp_missing_packages() {
	local p
	for p in "${LP_PACKAGES[@]}"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || echo "$p"
	done
}

lp_install_packages() {
	command -v dpkg-query >/dev/null || { echo "setup: not a Debian system; install: ${LP_PACKAGES[*]}" >&2; return 0; }
	local missing
	missing=$(lp_missing_packages)
	[ -z "$missing" ] && return 0
	if [ "${LP_NO_APT:-0}" = 1 ]; then
		echo "setup: missing packages (LP_NO_APT=1, not installing):" $missing >&2
		return 0
	fi
	local sudo=()
	[ "$(id -u)" -ne 0 ] && sudo=(sudo)
	echo "setup: installing" $missing >&2
	"${sudo[@]}" apt-get update -qq
	# shellcheck disable=SC2086
	DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq $missing
}

# The Python tests record programs using PyPI's `nvtx` package; tests/real
# adds numpy, onnx and onnxruntime; the report schema tests use jsonschema.
LP_PY_PACKAGES=(nvtx numpy onnx onnxruntime jsonschema)
lp_install_python() {
	local p missing=()
	for p in "${LP_PY_PACKAGES[@]}"; do
		python3 -c "import $p" 2>/dev/null || missing+=("$p")
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	if [ "${LP_NO_APT:-0}" = 1 ]; then
		echo "setup: python packages missing (LP_NO_APT=1, not installing):" "${missing[@]}" >&2
		return 0
	fi
	echo "setup: pip install" "${missing[@]}" >&2
	python3 -m pip install -q "${missing[@]}" 2>/dev/null ||
		python3 -m pip install -q --break-system-packages "${missing[@]}" ||
		echo "setup: could not install" "${missing[@]}" "; their tests will skip" >&2
}

lp_build() {
	cmake -S . -B "$LP_BUILD_DIR" -DLATPROF_WERROR="${LATPROF_WERROR:-OFF}" ${LP_CMAKE_ARGS:-}
	cmake --build "$LP_BUILD_DIR" -j "$(nproc)"
}

lp_install_packages
lp_install_python
lp_build
