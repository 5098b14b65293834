# Shared by lib.sh and the tests that do not start a daemon (t_sim): how
# far timing bounds stretch.  Source it from bash.

# time_scale [BINARY]: how many times longer a timing bound may be than on a native
# release build: 4 when the daemon under test is built with ASan, whose
# code and allocator run several times slower, and 8 more under qemu-user
# (make check-arch), which translates every instruction; so that such a
# run still fails on a real stall but not on its own cost.  Correctness
# checks never scale.  (grep -c reads all of nm's output, so that pipefail
# sees no early exit.)
time_scale() {
	local s=1
	if nm "${1:-$DAEMON}" 2>/dev/null | grep -c __asan_init >/dev/null; then
		s=4
	fi
	if emulated; then
		s=$((s * 8))
	fi
	echo "$s"
}

# emulated: true under qemu-user, where uname(2) answers with the guest's
# machine but the kernel's own (/proc/sys/kernel/arch, Linux 6.1 on) is
# the host's.
emulated() {
	local kernel
	kernel=$(cat /proc/sys/kernel/arch 2>/dev/null) || return 1
	[ "$kernel" != "$(uname -m)" ]
}
