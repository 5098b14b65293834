# spyremon: telemetry for IBM Spyre (AIU) hosts.
#
#   make            build build/spyremond, build/spyremon, build/aiu-smi-sim
#   make check      build and run every test (unit and integration)
#   make demo       run the daemon on the simulator and show what it stored
#   make run        start spyremond from the build tree on the simulator
#                   (conf/run.yaml, state in run/); make stop stops it
#   make bench      build the benchmark programs (bench/README.md)
#   make SAN=1 B=build-san check    the same tests under ASan and UBSan
#   make check-loaded               the tests beside 2 CPU-bound processes
#   make check-arch ARCH=s390x      build and test on s390x (or ppc64le)
#                                   under qemu-user, in a Debian 12 root
#   make install                    PREFIX, DESTDIR and more: mk/install.mk
#
# Missing Debian packages are installed by mk/deps.sh (as root) or named;
# NO_DEPS=1 leaves that to the caller (package builds: debian/control and
# rpm/spyremon.spec name the build dependencies).
#
# The tree, bottom up (docs/architecture.md, "The flow and the tree"):
# common/ is what both programs read and write the same way; query/ is
# how both read the database; store/ is the only code that writes it;
# daemon/ is spyremond (daemon/source/, where samples come in;
# daemon/control/, where requests come in); client/ is spyremon.
# Each program's objects but its main.o go into an archive that the unit
# tests link, so tests run the real modules.

B	?= build
PREFIX	?= /usr/local
CC	?= cc

all: $(B)/spyremond $(B)/spyremon $(B)/aiu-smi-sim

CFLAGS	?= -O2 -g
WARNINGS = -Wall -Wextra -Wpedantic -Wshadow -Wpointer-arith -Wcast-qual \
	   -Wstrict-prototypes -Wmissing-prototypes -Wmissing-declarations \
	   -Wformat=2 -Wundef -Wvla -Wwrite-strings \
	   -Wredundant-decls -Wnested-externs -Wold-style-definition \
	   -Wimplicit-fallthrough -Wnull-dereference -Werror=implicit-function-declaration

# Libraries: libspyremon's set is the daemon's, kept small (log.c writes to
# the journal); the client adds what it alone needs.
LIB_PKGS	= sqlite3 yaml-0.1 yajl libsystemd
DAEMON_PKGS	= $(LIB_PKGS)
CLIENT_PKGS	= $(LIB_PKGS) zlib cairo fontconfig libpng
SIM_PKGS	= libsystemd
TEST_PKGS	= $(sort $(DAEMON_PKGS) $(CLIENT_PKGS)) cmocka
pkg_cflags	= $(shell pkg-config --cflags $(1))
pkg_libs	= $(shell pkg-config --libs $(1)) -lm

ifeq ($(SAN),1)
SANFLAGS = -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
CFLAGS += $(SANFLAGS)
LDFLAGS += $(SANFLAGS)
endif

# ---- sources, one list per folder ----

COMMON_SRCS = common/log.c common/timeparse.c common/metrics.c common/proto.c \
	common/config.c common/config_keys.c common/config_source.c common/config_print.c common/csvparse.c \
	common/inventory.c common/rowring.c common/jsonw.c common/window_json.c \
	common/energy.c common/clocksync.c common/metricfile.c \
	common/metricfile_json.c common/regfile.c common/daemonid.c
# query/: reading the database, the same for the store and every command
QUERY_SRCS = query/pragma.c query/dbread.c query/catalog_read.c \
	query/windows_read.c query/bestsrc.c query/samples_read.c query/pair.c \
	query/summary.c query/summary_query.c query/summary_card.c \
	query/summary_idle.c query/summary_read.c \
	query/daemon_read.c query/epochs.c
STORE_SRCS = store/sql.c store/catalog.c store/migrate.c store/store.c store/storebuf.c store/storedb.c \
	store/dbfile.c store/retention.c \
	store/store_windows.c store/store_import.c store/counters.c \
	store/summary_write.c store/store_summary.c \
	store/writer.c store/writer_jobs.c store/writer_sync.c \
	store/writer_status.c store/writer_flush.c store/writer_recover.c \
	store/smiversion.c store/store_daemon.c store/walcheck.c \
	store/store_copy.c
# daemon/: samples in (source/), requests in (control/), and what ties
# them (windows; main.c, not in the archive)
DAEMON_SOURCE_SRCS = daemon/source/source_base.c daemon/source/source_rows.c \
	daemon/source/source_child.c daemon/source/source_direct.c \
	daemon/source/source.c daemon/source/health.c \
	daemon/source/direct.c daemon/source/direct_clock.c daemon/source/dstamp.c \
	daemon/source/pace.c \
	daemon/source/clockstep.c
DAEMON_CONTROL_SRCS = daemon/control/control.c daemon/control/control_request.c \
	daemon/control/control_reply.c daemon/control/control_sync.c \
	daemon/control/control_clock.c
DAEMON_SRCS = $(DAEMON_SOURCE_SRCS) $(DAEMON_CONTROL_SRCS) daemon/windows.c \
	daemon/windows_ends.c daemon/windows_table.c daemon/window_clock.c \
	daemon/window_meta.c daemon/windows_storing.c
CLIENT_SRCS = client/client.c client/cmd.c client/db.c client/format.c \
	client/json.c client/output.c client/table.c client/windows.c \
	client/hosts.c \
	client/ctl/ctl.c client/ctl/mark.c client/ctl/status.c \
	client/ctl/status_brief.c client/ctl/settle.c client/ctl/orphan.c \
	client/ctl/markvllm.c \
	client/trace/trace.c client/trace/trace_event.c client/trace/trace_util.c \
	client/trace/trace_stream.c client/trace/trace_tally.c \
	client/trace/trace_info.c client/trace/tracelist.c \
	client/analysis/attrib.c client/analysis/devcounter.c \
	client/analysis/devevents.c client/analysis/opsenergy.c \
	client/analysis/breakdown.c client/analysis/bdtrace.c \
	client/analysis/bdrun.c client/analysis/bdnames.c \
	client/analysis/bdcards.c client/analysis/bdranks.c \
	client/analysis/pcielink.c \
	client/export/export.c client/export/export_opts.c \
	client/export/export_derived.c \
	client/export/export_fmt.c \
	client/export/target.c client/export/merge.c \
	client/export/merge_events.c client/export/merge_ops.c \
	client/export/merge_buf.c client/export/merge_bd.c \
	client/export/combine.c \
	client/export/steps.c client/export/steporder.c client/export/ops.c \
	client/export/ops_out.c \
	client/export/breakdown_out.c client/export/breakdown_cards.c \
	client/export/breakdown_ranks.c \
	client/export/breakdown_evidence.c \
	client/import/import.c client/import/import_run.c \
	client/import/import_check.c client/import/import_parse.c \
	client/metrics/metrics.c client/metrics/collect.c \
	client/metrics/render.c client/metrics/expo.c client/metrics/http.c \
	client/report/winsum.c client/report/summarycmd.c \
	client/report/stats.c client/report/runsteps.c client/report/compare.c \
	client/report/report.c client/report/report_md.c client/report/plot.c \
	client/report/plot_bars.c client/report/plot_steps.c \
	client/report/report_why.c client/report/compare_breakdown.c \
	client/report/runmeta.c client/report/report_ops.c \
	client/report/compare_ops.c client/report/compare_serving.c \
	client/report/compare_write.c \
	client/report/serving.c client/report/report_series.c client/sha256.c \
	client/capture/capture.c client/capture/caploop.c \
	client/capture/capserve.c client/capture/capout.c \
	client/capture/capwin.c client/capture/capterm.c client/capture/kipc.c \
	client/capture/dynoreq.c client/capture/procinfo.c \
	client/capture/caplitter.c client/capture/capvllm.c \
	client/db/dbcmd.c client/db/dbcheck.c client/db/intcheck.c \
	client/db/keyscan.c client/db/salvage.c client/db/salvage_copy.c \
	client/db/pagewalk.c client/db/salvage_walk.c \
	client/serving/promtext.c client/serving/httpc.c client/serving/vllm.c \
	client/serving/loadgen.c
SIM_SRCS = sim/aiu-smi-sim.c sim/simopts.c sim/cardmodel.c sim/layout.c \
	sim/metricwriter.c sim/powersched.c
# what the simulator takes from common/: no database, no config
SIM_COMMON = common/log.c common/timeparse.c common/metrics.c \
	common/metricfile.c

UNIT_TESTS = test_timeparse test_csvparse test_config test_inventory \
	test_store test_pace test_health test_control test_windows \
	test_format test_trace test_import test_merge test_energy \
	test_rowring test_stats test_expo test_metricfile test_direct \
	test_hosts test_bestsrc test_sync test_writer test_capture \
	test_daemonid test_walcheck test_runmeta test_migrate test_pair \
	test_attrib test_devcounter test_devevents test_salvage test_clockstep \
	test_promtext test_loadgen test_breakdown test_epochs \
	test_bdcards test_pcielink

# ---- include paths, per folder: the client never sees daemon/ ----

INC_COMMON = -Icommon
INC_QUERY  = $(INC_COMMON) -Iquery
INC_STORE  = $(INC_QUERY) -Istore
INC_DAEMON = $(INC_STORE) -Idaemon -Idaemon/source -Idaemon/control
CLIENT_DIRS = client client/ctl client/trace client/analysis client/export \
	      client/import client/metrics client/report client/capture client/db \
	      client/serving
INC_CLIENT = $(INC_STORE) $(addprefix -I,$(CLIENT_DIRS))
INC_SIM    = $(INC_COMMON) -Isim
INC_TEST   = $(INC_DAEMON) $(addprefix -I,$(CLIENT_DIRS)) -Itests/unit

$(B)/common/%.o: INC = $(INC_COMMON)
$(B)/common/%.o: PKGS = $(LIB_PKGS)
$(B)/query/%.o: INC = $(INC_QUERY)
$(B)/query/%.o: PKGS = $(LIB_PKGS)
$(B)/store/%.o: INC = $(INC_STORE)
$(B)/store/%.o: PKGS = $(LIB_PKGS)
$(B)/daemon/%.o: INC = $(INC_DAEMON)
$(B)/daemon/%.o: PKGS = $(DAEMON_PKGS)
$(B)/client/%.o: INC = $(INC_CLIENT)
$(B)/client/%.o: PKGS = $(CLIENT_PKGS)
$(B)/sim/%.o: INC = $(INC_SIM)
$(B)/sim/%.o: PKGS = $(SIM_PKGS)

# Floating point: a*b+c is never fused into one multiply-add.  GCC fuses
# by default in gnu11 on s390x and ppc64le (and wherever FMA is in the
# target), not on baseline x86-64, so the same summary or step figure
# would differ in its last bits from one architecture to another; unfused,
# every double is rounded as IEEE 754 says on all of them.
FPFLAGS	= -ffp-contract=off

ALL_CFLAGS = -std=gnu11 $(WARNINGS) $(FPFLAGS) $(CFLAGS) -D_GNU_SOURCE $(INC) \
	$(call pkg_cflags,$(PKGS))

objs = $(patsubst %.c,$(B)/%.o,$(1))

# libspyremon.a: common/, query/ and store/, below both programs.
LIBSPYREMON	= $(B)/libspyremon.a
DAEMON_LIB	= $(B)/libspyremond.a
CLIENT_LIB	= $(B)/libspyremon-client.a

$(LIBSPYREMON): $(call objs,$(COMMON_SRCS) $(QUERY_SRCS) $(STORE_SRCS))
$(DAEMON_LIB): $(call objs,$(DAEMON_SRCS))
$(CLIENT_LIB): $(call objs,$(CLIENT_SRCS))
$(B)/%.a:
	@rm -f $@
	$(AR) rcs $@ $^

$(B)/spyremond: $(B)/daemon/main.o $(DAEMON_LIB) $(LIBSPYREMON)
	$(CC) $(LDFLAGS) -o $@ $^ $(call pkg_libs,$(DAEMON_PKGS))

$(B)/spyremon: $(B)/client/main.o $(CLIENT_LIB) $(LIBSPYREMON)
	$(CC) $(LDFLAGS) -o $@ $^ $(call pkg_libs,$(CLIENT_PKGS))

$(B)/aiu-smi-sim: $(call objs,$(SIM_SRCS) $(SIM_COMMON))
	$(CC) $(LDFLAGS) -o $@ $^ $(call pkg_libs,$(SIM_PKGS))

$(B)/.deps-ok: mk/deps.sh
	@$(if $(NO_DEPS),:,sh mk/deps.sh)
	@mkdir -p $(B) && touch $@

# every object is remade when the Makefile changes: its flags are here
$(B)/%.o: %.c Makefile | $(B)/.deps-ok
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -MMD -MP -c -o $@ $<

# ---- tests ----

# Each unit test links the archives; the linker takes only the modules the
# test calls.  TEST_LINK is also what the test tools and benchmarks link.
TEST_LINK = $(CLIENT_LIB) $(DAEMON_LIB) $(LIBSPYREMON)
TEST_LIBS = $(call pkg_libs,$(TEST_PKGS))
TEST_CFLAGS = -std=gnu11 $(WARNINGS) $(FPFLAGS) $(CFLAGS) -D_GNU_SOURCE $(INC_TEST) \
	$(call pkg_cflags,$(TEST_PKGS))

UNIT_BINS = $(addprefix $(B)/tests/,$(UNIT_TESTS))
$(UNIT_BINS): $(B)/tests/%: tests/unit/%.c $(TEST_LINK) Makefile | $(B)/.deps-ok
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -MMD -MP $(LDFLAGS) -o $@ $< $(TEST_LINK) $(TEST_LIBS)

# Programs the integration tests run, built by make check.
TEST_TOOLS = $(B)/tests/mksamples $(B)/tests/mfdump
$(TEST_TOOLS): $(B)/tests/%: tests/tools/%.c $(TEST_LINK) Makefile | $(B)/.deps-ok
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -MMD -MP $(LDFLAGS) -o $@ $< $(TEST_LINK) $(TEST_LIBS)

# An LD_PRELOAD library that shifts CLOCK_REALTIME (tests/tools/clockshift.c).
CLOCKSHIFT = $(B)/tests/clockshift.so
$(CLOCKSHIFT): tests/tools/clockshift.c Makefile
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O2 -g $(WARNINGS) -fPIC -shared -o $@ $< -ldl

check: all $(UNIT_BINS) $(TEST_TOOLS) $(CLOCKSHIFT)
	@B=$(B) sh tests/run.sh

# ---- benchmarks (bench/README.md), built only by "make bench" ----

BENCH_PROGS = $(B)/bench-mkdb $(B)/bench-ingest $(B)/bench-markrtt $(B)/bench-runtime \
	$(B)/bench-directread
$(B)/bench-mkdb $(B)/bench-ingest $(B)/bench-directread: $(B)/bench-%: bench/%.c $(TEST_LINK) | $(B)/.deps-ok
	$(CC) $(TEST_CFLAGS) -MMD -MP $(LDFLAGS) -o $@ $< $(TEST_LINK) $(TEST_LIBS)
$(B)/bench-markrtt $(B)/bench-runtime: $(B)/bench-%: bench/%.c | $(B)/.deps-ok
	$(CC) $(TEST_CFLAGS) -MMD -MP $(LDFLAGS) -o $@ $<
bench: all $(BENCH_PROGS)

# the long forms of the hostile-host tests (mk/stress.sh); not in check
stress: all $(UNIT_BINS) $(TEST_TOOLS)
	@sh mk/stress.sh $(B)

deps:
	@sh mk/deps.sh

# make check-arch ARCH=s390x|ppc64le [ONLY=pattern|none]: mk/arch.sh says how
ARCH	?= s390x
check-arch:
	@ONLY="$(ONLY)" sh mk/arch.sh $(ARCH) $(B)

# the same tests on a busy machine (mk/loaded.sh); SAN=1 and B pass through
check-loaded:
	@sh mk/loaded.sh B=$(B) $(if $(SAN),SAN=$(SAN))

# make check-hta HTA_SRC=DIR: Holistic Trace Analysis (its source in DIR,
# outside the tree) reads merged traces as the originals, and its
# breakdowns of tests/data/hta, one rank or several, are expected.json's
# and --breakdown's (tests/tools/hta_check.py)
check-hta: all $(B)/tests/mksamples
	@test -n "$(HTA_SRC)" -a -d "$(HTA_SRC)/hta" || \
	    { echo "make check-hta HTA_SRC=DIR: DIR/hta is HTA's package" >&2; exit 2; }
	PYTHONPATH="$(HTA_SRC)" /usr/bin/python3 tests/tools/hta_check.py \
	    --client $(B)/spyremon --mksamples $(B)/tests/mksamples

# make check-ata ATA_SRC=DIR: IBM's aiu-trace-analyzer (its source in DIR,
# outside the tree) reads merged traces as the originals (tests/tools/ata_check.py)
check-ata: all $(B)/tests/mksamples
	@test -n "$(ATA_SRC)" -a -f "$(ATA_SRC)/bin/acelyzer.py" || \
	    { echo "make check-ata ATA_SRC=DIR: DIR/bin/acelyzer.py is the analyzer's" >&2; exit 2; }
	/usr/bin/python3 tests/tools/ata_check.py --ata-src "$(ATA_SRC)" \
	    --client $(B)/spyremon --mksamples $(B)/tests/mksamples

demo: all
	@sh mk/demo.sh $(B)

run: all
	@sh mk/run.sh start $(B)

stop:
	@sh mk/run.sh stop $(B)

clean:
	rm -rf $(B)

.PHONY: all check check-loaded check-hta check-ata bench deps demo run stop clean check-arch stress

include mk/install.mk

-include $(shell find $(B) -name '*.d' 2>/dev/null)

# ---- libFuzzer targets under ASan and UBSan, FUZZ_SECONDS each (tests/fuzz/run.sh) ----
FUZZ_SECONDS ?= 30
fuzz:
	@B=$(B) sh tests/fuzz/run.sh $(FUZZ_SECONDS)
.PHONY: fuzz
