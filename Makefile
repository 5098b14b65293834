# spyremon: telemetry for IBM Spyre (AIU) hosts.
#
#   make            build build/spyremond, build/spyremon, build/aiu-smi-sim
#   make check      build and run every test (unit and integration)
#   make demo       run the daemon on the simulator and show what it stored
#   make SAN=1 B=build-san check    the same tests under ASan and UBSan
#
# Missing Debian packages are installed by mk/deps.sh (as root) or named.

B	?= build
PREFIX	?= /usr/local
CC	?= cc

PKGS	= libsystemd sqlite3 yaml-0.1 yajl zlib
CFLAGS	?= -O2 -g
WARNINGS = -Wall -Wextra -Wpedantic -Wshadow -Wpointer-arith -Wcast-qual \
	   -Wstrict-prototypes -Wmissing-prototypes -Wmissing-declarations \
	   -Wformat=2 -Wundef -Wvla -Wwrite-strings \
	   -Wredundant-decls -Wnested-externs -Wold-style-definition \
	   -Wimplicit-fallthrough -Wnull-dereference -Werror=implicit-function-declaration
ALL_CFLAGS = -std=gnu11 $(WARNINGS) $(CFLAGS) -D_GNU_SOURCE -Icommon -Idaemon \
	     $(shell pkg-config --cflags $(PKGS))
LIBS	= $(shell pkg-config --libs $(PKGS))

ifeq ($(SAN),1)
SANFLAGS = -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
ALL_CFLAGS += $(SANFLAGS)
LDFLAGS += $(SANFLAGS)
endif

COMMON_OBJS = $(addprefix $(B)/common/, log.o timeparse.o metrics.o proto.o config.o)
# Every daemon module but main.o, so the unit tests can link them.
DAEMON_OBJS = $(addprefix $(B)/daemon/, csvparse.o store.o \
	      inventory.o health.o source.o source_rows.o source_child.o retention.o)
CLIENT_OBJS = $(addprefix $(B)/client/, main.o)
SIM_OBJS    = $(addprefix $(B)/sim/, aiu-smi-sim.o simopts.o cardmodel.o layout.o)

UNIT_TESTS  = $(addprefix $(B)/tests/, test_timeparse test_csvparse test_config \
	      test_store test_inventory test_health)

# Modules added later append here, one line each.
# (daemon)
DAEMON_OBJS += $(B)/daemon/control.o
DAEMON_OBJS += $(B)/daemon/control_request.o
DAEMON_OBJS += $(B)/daemon/windows.o
DAEMON_OBJS += $(B)/daemon/pace.o
DAEMON_OBJS += $(B)/daemon/store_windows.o
COMMON_OBJS += $(B)/common/config_print.o
DAEMON_OBJS += $(B)/daemon/catalog.o
DAEMON_OBJS += $(B)/daemon/store_import.o
# (client)
CLIENT_OBJS += $(B)/client/trace.o
CLIENT_OBJS += $(B)/client/trace_util.o
CLIENT_OBJS += $(B)/client/trace_stream.o
CLIENT_OBJS += $(B)/client/trace_tally.o
CLIENT_OBJS += $(B)/client/tracecmd.o
CLIENT_OBJS += $(B)/client/tracetarget.o
CLIENT_OBJS += $(B)/client/ctl.o
CLIENT_OBJS += $(B)/client/db.o
CLIENT_OBJS += $(B)/client/export.o
CLIENT_OBJS += $(B)/client/export_fmt.o
CLIENT_OBJS += $(B)/client/format.o
CLIENT_OBJS += $(B)/client/json.o
CLIENT_OBJS += $(B)/client/output.o
CLIENT_OBJS += $(B)/client/mark.o
CLIENT_OBJS += $(B)/client/status.o
CLIENT_OBJS += $(B)/client/windows.o
CLIENT_OBJS += $(B)/client/import.o
CLIENT_OBJS += $(B)/client/import_run.o
CLIENT_OBJS += $(B)/client/import_check.o
CLIENT_OBJS += $(B)/client/import_parse.o
# import writes through the daemon's store, which owns the schema
CLIENT_OBJS += $(addprefix $(B)/daemon/, store.o catalog.o store_import.o \
	       csvparse.o inventory.o)
CLIENT_OBJS += $(B)/client/energy.o
CLIENT_OBJS += $(B)/client/steps.o
CLIENT_OBJS += $(B)/client/steps_out.o
CLIENT_OBJS += $(B)/client/merge.o
CLIENT_OBJS += $(B)/client/merge_events.o
# (unit tests)
# client_test NAME, OBJS: the unit test tests/unit/NAME.c of client
# modules, linked with OBJS (and the common objects) instead of the
# daemon's.
define client_test
UNIT_TESTS += $(B)/tests/$(1)
$(B)/tests/$(1): tests/unit/$(1).c $(2) $$(COMMON_OBJS) | $(B)/.deps-ok
	@mkdir -p $$(dir $$@)
	$$(CC) $$(ALL_CFLAGS) $$(shell pkg-config --cflags cmocka) -Itests/unit -Iclient \
		-MMD -MP $$(LDFLAGS) -o $$@ $$< $(2) $$(COMMON_OBJS) $$(LIBS) \
		$$(shell pkg-config --libs cmocka)
endef
$(eval $(call client_test,test_format,$(B)/client/format.o))
$(eval $(call client_test,test_trace,$(addprefix $(B)/client/, trace.o \
	trace_util.o trace_stream.o trace_tally.o)))
# the import's parsing, with the daemon's CSV parser
$(eval $(call client_test,test_import,$(B)/client/import_parse.o \
	$(B)/daemon/csvparse.o $(B)/daemon/inventory.o))
UNIT_TESTS += $(B)/tests/test_control
UNIT_TESTS += $(B)/tests/test_windows
UNIT_TESTS += $(B)/tests/test_pace
# the merge's pure pieces (times, pids, names)
$(eval $(call client_test,test_merge,$(addprefix $(B)/client/, merge_events.o \
	db.o format.o)))
$(eval $(call client_test,test_energy,$(B)/client/energy.o))
# Programs the integration tests run, built by make check.
TEST_TOOLS = $(B)/tests/mksamples
$(B)/tests/mksamples: tests/tools/mksamples.c $(DAEMON_OBJS) $(COMMON_OBJS) | $(B)/.deps-ok
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -MMD -MP $(LDFLAGS) -o $@ $< $(DAEMON_OBJS) $(COMMON_OBJS) $(LIBS)

PROGS = $(B)/spyremond $(B)/spyremon $(B)/aiu-smi-sim

all: $(PROGS)

$(B)/.deps-ok: mk/deps.sh
	@sh mk/deps.sh
	@mkdir -p $(B) && touch $@

$(B)/%.o: %.c | $(B)/.deps-ok
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -MMD -MP -c -o $@ $<

$(B)/spyremond: $(B)/daemon/main.o $(DAEMON_OBJS) $(COMMON_OBJS)
	$(CC) $(LDFLAGS) -o $@ $^ $(LIBS)

$(B)/spyremon: $(CLIENT_OBJS) $(COMMON_OBJS)
	$(CC) $(LDFLAGS) -o $@ $^ $(LIBS)

$(B)/aiu-smi-sim: $(SIM_OBJS) $(COMMON_OBJS)
	$(CC) $(LDFLAGS) -o $@ $^ $(LIBS)

$(B)/tests/%: tests/unit/%.c $(DAEMON_OBJS) $(COMMON_OBJS) | $(B)/.deps-ok
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(shell pkg-config --cflags cmocka) -Itests/unit -MMD -MP \
		$(LDFLAGS) -o $@ $< $(DAEMON_OBJS) $(COMMON_OBJS) $(LIBS) \
		$(shell pkg-config --libs cmocka)

check: $(PROGS) $(UNIT_TESTS) $(TEST_TOOLS)
	@B=$(B) sh tests/run.sh

deps:
	@sh mk/deps.sh

demo: $(PROGS)
	@sh mk/demo.sh $(B)

clean:
	rm -rf $(B)

.PHONY: all check deps demo clean

include mk/install.mk

-include $(shell find $(B) -name '*.d' 2>/dev/null)

# Benchmark programs (bench/README.md), built only by "make bench".
BENCH_PROGS = $(B)/bench-mkdb $(B)/bench-markrtt $(B)/bench-runtime
$(B)/bench-mkdb: bench/mkdb.c $(DAEMON_OBJS) $(COMMON_OBJS) | $(B)/.deps-ok
	$(CC) $(ALL_CFLAGS) -MMD -MP $(LDFLAGS) -o $@ $< $(DAEMON_OBJS) $(COMMON_OBJS) $(LIBS)
$(B)/bench-markrtt $(B)/bench-runtime: $(B)/bench-%: bench/%.c | $(B)/.deps-ok
	$(CC) $(ALL_CFLAGS) -MMD -MP $(LDFLAGS) -o $@ $<
bench: $(PROGS) $(BENCH_PROGS)
.PHONY: bench
