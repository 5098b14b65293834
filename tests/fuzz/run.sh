#!/bin/sh
# Build the libFuzzer targets of tests/fuzz/ with clang, ASan and UBSan,
# and run each for SECONDS (default 30) on a copy of its seed corpus.
#
#   sh tests/fuzz/run.sh [SECONDS [TARGET...]]     (make fuzz FUZZ_SECONDS=N)
#
# B names the build directory (default build); everything goes under
# $B/fuzz: the programs, the growing corpora, crash inputs.  Prints per
# target the executions, the coverage (libFuzzer's "cov", edges) and the
# features ("ft"); exits 1 if any target crashed, leaked or timed out,
# naming the input that did it.  clang and its fuzzer runtime are
# installed when missing (as root), as mk/deps.sh does for the rest.
set -eu
cd "$(dirname "$0")/../.."

SECONDS_EACH=${1:-30}
[ $# -gt 0 ] && shift
TARGETS=${*:-csv config trace control}
B=${B:-build}
OUT=$B/fuzz
PKGS="libsystemd sqlite3 yaml-0.1 yajl zlib"

# ---- clang with libFuzzer ----
have_fuzzer() {
	printf 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n)'\
'{ (void)d; (void)n; return 0; }\n' >"$OUT/probe.c"
	clang -fsanitize=fuzzer "$OUT/probe.c" -o "$OUT/probe" 2>/dev/null
}
mkdir -p "$OUT"
if ! command -v clang >/dev/null || ! have_fuzzer; then
	pkgs="clang libclang-rt-dev"
	apt-cache show libclang-rt-dev >/dev/null 2>&1 || pkgs="clang libclang-rt-14-dev"
	if [ "$(id -u)" -eq 0 ]; then
		echo "fuzz: installing: $pkgs" >&2
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
			--no-install-recommends $pkgs >&2
	else
		echo "fuzz: clang with libFuzzer is missing; as root: apt-get install -y $pkgs" >&2
		exit 1
	fi
	have_fuzzer || { echo "fuzz: clang cannot build a fuzzer" >&2; exit 1; }
fi
sh mk/deps.sh

# ---- the targets: each with the sources it links ----
COMMON=$(ls common/*.c)
sources() {
	case $1 in
	csv)	echo common/csvparse.c ;;
	config)	echo $COMMON ;;
	trace)	echo $(ls client/trace/*.c | grep -v '/trace_info\.c$') $COMMON ;;
	control) echo $(ls daemon/*.c daemon/source/*.c daemon/control/*.c store/*.c query/*.c |
		     grep -v '/main\.c$') $COMMON ;;
	esac
}
# libFuzzer options per target
options() {
	case $1 in
	config)	echo -max_len=16384 ;;
	control) echo -max_len=4096 -close_fd_mask=2 ;;	# its notices
	trace)	echo -max_len=131072 ;;
	*)	echo -max_len=8192 ;;
	esac
}

CFLAGS="-std=gnu11 -g -O1 -D_GNU_SOURCE -fno-omit-frame-pointer
	-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
	-Icommon -Iquery -Istore -Idaemon -Idaemon/source -Idaemon/control -Iclient
	-Iclient/trace
	$(pkg-config --cflags $PKGS)"
LIBS=$(pkg-config --libs $PKGS)

failed=""
for t in $TARGETS; do
	bin=$OUT/fuzz_$t
	# shellcheck disable=SC2046
	if [ ! -x "$bin" ] || [ -n "$(find tests/fuzz/fuzz_$t.c $(sources $t) \
	    -newer "$bin" 2>/dev/null)" ]; then
		echo "fuzz: building $bin"
		# shellcheck disable=SC2086
		clang $CFLAGS -o "$bin" tests/fuzz/fuzz_$t.c $(sources $t) $LIBS
	fi
	mkdir -p "$OUT/corpus/$t"
	log=$OUT/fuzz_$t.log
	echo "fuzz: $t for ${SECONDS_EACH}s"
	rc=0
	# shellcheck disable=SC2046
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	"$bin" -max_total_time="$SECONDS_EACH" -print_final_stats=1 \
		-timeout=10 -rss_limit_mb=2048 -artifact_prefix="$OUT/crash-$t-" \
		$(options $t) "$OUT/corpus/$t" "tests/fuzz/corpus/$t" \
		>"$log" 2>&1 || rc=$?
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
	cov=$(grep -o 'cov: [0-9]* ft: [0-9]*' "$log" | tail -n 1)
	if [ $rc -ne 0 ]; then
		failed="$failed $t"
		echo "FAIL  fuzz_$t (exit $rc): see $log"
		grep -E 'ERROR|SUMMARY|Test unit written' "$log" | head -n 5 | sed 's/^/    | /'
	else
		echo "ok    fuzz_$t: ${execs:-?} executions, $cov"
	fi
done
[ -z "$failed" ] || { echo "fuzz: failed:$failed"; exit 1; }
