/*
 * control_clock: the "clock" part of the status reply, the steps of the
 * host clock the daemon has seen (contract in control_priv.h).
 */
#include "control_priv.h"

#include "clockstep.h"
#include "jsonw.h"
#include "store.h"

void
control_status_clock(yajl_gen g, const struct control_ctx *ctx)
{
	struct clockstep_stats cs;
	struct store_stats st;

	clockstep_get_stats(&cs);
	store_get_stats(ctx->st, &st);
	jsonw_str(g, "clock");
	yajl_gen_map_open(g);
	/* steps of CLOCK_REALTIME since the daemon started: + forward */
	jsonw_put_uint(g, "steps", cs.steps);
	jsonw_put_int(g, "net_step_ns", cs.net_ns);
	jsonw_put_int(g, "last_step_ns", cs.last_ns);
	jsonw_put_int(g, "last_step_at_ns", cs.last_at_ns);
	/* the kernel's notice is watched, besides the monotonic clock */
	jsonw_put_bool(g, "kernel_notice", cs.kernel);
	/* rows whose stamp was already stored, stored a few ns later */
	jsonw_put_uint(g, "rows_nudged", st.rows_nudged);
	yajl_gen_map_close(g);
}
