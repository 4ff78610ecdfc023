# SPDX-License-Identifier: MIT
# Shared by tools/test, tools/demo and tools/bench: install what is missing
# (Debian packages, only when absent) and configure a build directory.

tc_need_pkgs() {
	# Prints the Debian packages among "$@" that are not installed.
	local p
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || echo "$p"
	done
}

tc_install() {
	local missing
	missing=$(tc_need_pkgs "$@")
	[ -z "$missing" ] && return 0
	echo "topocoll: installing $(echo $missing)" >&2
	local sudo=""
	[ "$(id -u)" -ne 0 ] && sudo="sudo"
	$sudo apt-get update -qq >/dev/null
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq $missing >/dev/null
}

tc_install_base() {
	tc_install meson ninja-build pkg-config gcc g++ libc6-dev libcriterion-dev liburcu-dev libtsan2 libhwloc-dev
}

tc_install_mpi() {
	# Open MPI and MPICH, for libtopocoll-mpi and the suite mpi (docs/mpi.md);
	# apart from the base so that a build without MPI installs none.
	tc_install libopenmpi-dev openmpi-bin libmpich-dev mpich
}

# tc_setup DIR [meson options...]: configures DIR once, reconfigures with the
# given options afterwards.
tc_setup() {
	local dir=$1
	shift
	if [ -f "$dir/build.ninja" ]; then
		meson configure "$dir" "$@" >/dev/null
	else
		meson setup "$dir" "$@" >/dev/null
	fi
}

tc_install_format() {
	# clang-format for tools/check-format (.clang-format is written for
	# version 14, Debian's and Ubuntu's clang-format of that release).
	tc_install clang-format
}
