/*
 * libFuzzer target: one request line of the control socket through
 * control_request_handle, with a real window set on a real database (in
 * a temporary directory, removed at exit) and a source whose child never
 * starts, so that every command, status included, runs as in the daemon.
 * The reply must be one line; a sync left waiting is answered at once, as
 * when its wait runs out.  Windows the input opened are ended after
 * each input, so no state piles up between inputs.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <systemd/sd-event.h>

#include "config.h"
#include "control.h"
#include "log.h"
#include "proto.h"
#include "source.h"
#include "store.h"
#include "windows.h"

#define T0	(1764670000LL * 1000000000LL)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct control_ctx ctx;
static char dir[64], db[96];

static void
cleanup(void)
{
	static const char *const suffix[] = { "", "-wal", "-shm", "-journal" };
	char p[128];

	windows_free(ctx.win);
	store_close(ctx.st);
	for (size_t i = 0; i < sizeof(suffix) / sizeof(suffix[0]); i++) {
		snprintf(p, sizeof(p), "%s%s", db, suffix[i]);
		unlink(p);
	}
	rmdir(dir);
}

static void
setup(void)
{
	struct config_errors errs;
	struct config *cfg;
	char text[256];
	sd_event *ev;

	log_init("fuzz_control", 0);
	snprintf(dir, sizeof(dir), "%s/fuzz_control.XXXXXX",
	    access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp");
	if (mkdtemp(dir) == NULL)
		abort();
	snprintf(db, sizeof(db), "%s/spyremon.db", dir);
	/* no cards under an empty sysfs, and a child that cannot start */
	snprintf(text, sizeof(text), "sysfs_root: %s\nsource:\n"
	    "  command: /nonexistent/aiu-smi\n", dir);
	if (config_parse("fuzz.yaml", text, strlen(text), &cfg, &errs) == -1 ||
	    sd_event_new(&ev) < 0)
		abort();
	ctx.cfg = cfg;
	if (store_open(db, 1000, &ctx.st) == -1 ||
	    windows_start(NULL, ctx.st, 3600ULL * 1000000000ULL, T0, NULL,
	    NULL, &ctx.win) == -1 ||
	    source_start(ev, cfg, ctx.st, &ctx.src) == -1)
		abort();
	ctx.started_ns = T0;
	atexit(cleanup);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static bool ready;
	struct control_peer peer = { .uid = 1000, .pid = 4321 };
	struct control_reply reply;
	char *line;
	size_t n;

	if (!ready) {
		setup();
		ready = true;
	}
	if (size >= PROTO_MAX_REQUEST)
		return 0;	/* control.c never passes a longer line */
	if ((line = malloc(size + 1)) == NULL)
		abort();
	memcpy(line, data, size);
	line[size] = '\0';
	/* the first byte, if odd, makes the caller root */
	if (size > 0 && (data[0] & 1))
		peer.uid = 0;
	if (control_request_handle(&ctx, line, size, &peer, T0, &reply) == 0) {
		/* a sync the writer has not met yet: its answer as it stands,
		 * as the daemon gives it when the wait runs out */
		if (reply.wait_ticket > 0 && control_request_sync_reply(&ctx,
		    reply.wait_ticket, 0, &reply) == -1)
			abort();
		if (reply.len == 0 || reply.text[reply.len - 1] != '\n' ||
		    memchr(reply.text, '\n', reply.len - 1) != NULL)
			abort();
		free(reply.text);
	}
	free(line);

	/* end what was opened, as root, so that every input starts alike */
	for (;;) {
		const struct window *list = windows_list(ctx.win, &n);
		struct windows_end_req er = { .by = WINDOWS_END_ID, .uid = 0 };
		struct windows_result res;

		if (n == 0)
			break;
		er.id = list[0].id;
		er.now_ns = T0;
		windows_end(ctx.win, &er, &res);
		if (res.error != NULL)
			abort();
	}
	return 0;
}
