# Sourced by the benchmarks that measure a process's CPU time.
#
# cpu_s PID: the CPU time of PID, all its threads, in seconds: the
# scheduler's run time in ns (/proc/PID/task/*/schedstat), since utime and
# stime come in clock ticks (10 ms), which at about 1 % of a core is a
# tenth of a 10 s run's figure; ticks where the kernel keeps no schedstat.
cpu_s() {
	if [ -r "/proc/$1/schedstat" ]; then
		cat /proc/"$1"/task/*/schedstat 2>/dev/null |
			awk '{ ns += $1 } END { printf "%.9f\n", ns / 1e9 }'
	else
		awk -v t="$(getconf CLK_TCK)" '{ print ($14 + $15) / t }' \
			"/proc/$1/stat"
	fi
}
