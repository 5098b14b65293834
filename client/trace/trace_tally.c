/*
 * trace_tally: what a trace's events add up to (contract in
 * trace_priv.h): extremes, counts, steps and pids, and at the end the
 * dialect and the span, following the time rules in trace.h.
 */
#include <stdlib.h>
#include <string.h>

#include "trace.h"
#include "trace_priv.h"

#define STRINGIFY_(x)	#x
#define STRINGIFY(x)	STRINGIFY_(x)

#define PID_SLOTS	(2 * TRACE_MAX_PIDS)	/* a power of two, half full at most */

/* Distinct integer pids, at most TRACE_MAX_PIDS of them. */
struct pid_set {
	int64_t	 pid[PID_SLOTS];
	uint8_t	 used[PID_SLOTS];
};

int
tally_init(struct trace_tally *t)
{
	memset(t, 0, sizeof(*t));
	return (t->pids = calloc(1, sizeof(*t->pids))) != NULL ? TRACE_OK :
	    TRACE_ERR_NOMEM;
}

void
tally_free(struct trace_tally *t)
{
	free(t->pids);
	trace_info_free(&t->info);
	memset(t, 0, sizeof(*t));
}

static void
pid_set_add(struct trace_tally *t, int64_t pid)
{
	struct trace_info *in = &t->info;
	struct pid_set *s = t->pids;
	uint64_t i = ((uint64_t)pid * 0x9e3779b97f4a7c15ULL) >> 32;

	for (;; i++) {
		i &= PID_SLOTS - 1;
		if (!s->used[i])
			break;
		if (s->pid[i] == pid)
			return;
	}
	if (in->npids == TRACE_MAX_PIDS) {
		in->pids_truncated = true;
		return;
	}
	s->used[i] = 1;
	s->pid[i] = pid;
	in->npids++;
}

static void
pid_seen(struct trace_tally *t, int64_t pid)
{
	struct trace_info *in = &t->info;

	/* events come in runs of one pid */
	if (t->has_last_pid && t->last_pid == pid)
		return;
	t->has_last_pid = true;
	t->last_pid = pid;
	if (!in->has_max_pid || pid > in->max_pid) {
		in->has_max_pid = true;
		in->max_pid = pid;
	}
	pid_set_add(t, pid);
}

static void
kernel_pid_seen(struct trace_info *in, int64_t pid)
{
	size_t i;

	for (i = 0; i < in->nkernel_pids && in->kernel_pids[i] < pid; i++)
		continue;
	if (i < in->nkernel_pids && in->kernel_pids[i] == pid)
		return;
	if (in->nkernel_pids == TRACE_MAX_KERNEL_PIDS) {
		in->kernel_pids_truncated = true;
		return;
	}
	memmove(&in->kernel_pids[i + 1], &in->kernel_pids[i],
	    (in->nkernel_pids - i) * sizeof(in->kernel_pids[0]));
	in->kernel_pids[i] = pid;
	in->nkernel_pids++;
}

static int
step_add(struct trace_tally *t, const struct trace_event *ev, const char **why)
{
	struct trace_info *in = &t->info;
	struct trace_step *s;

	if (in->nsteps == TRACE_MAX_STEPS) {
		*why = "more than " STRINGIFY(TRACE_MAX_STEPS) " step events; "
		    "a narrower step pattern selects fewer";
		return TRACE_ERR_LIMIT;
	}
	if (in->nsteps == t->steps_cap) {
		size_t cap = t->steps_cap ? 2 * t->steps_cap : 16;

		if ((s = reallocarray(in->steps, cap, sizeof(*s))) == NULL)
			goto nomem;
		in->steps = s;
		t->steps_cap = cap;
	}
	s = &in->steps[in->nsteps];
	if ((s->name = strdup(ev->name)) == NULL)
		goto nomem;
	s->ts_ns = ev->ts_ns;
	s->dur_ns = ev->has_dur ? ev->dur_ns : 0;
	in->nsteps++;
	return TRACE_OK;
nomem:
	*why = "out of memory";
	return TRACE_ERR_NOMEM;
}

/* A timed non-M event into the extremes. */
static int
event_timed(struct trace_tally *t, const struct trace_event *ev,
    const char **why)
{
	int64_t end = ev->ts_ns;

	if (ev->ph == 'X' && ev->has_dur && ev->dur_ns > 0 &&
	    __builtin_add_overflow(ev->ts_ns, ev->dur_ns, &end)) {
		*why = "ts + dur is out of range";
		return TRACE_ERR_LIMIT;
	}
	if (ev->ts_ns == 0) {
		/* Kineto's clamped negatives, if there turns out to be a base */
		if (!t->has_zero || end > t->last_zero)
			t->last_zero = end;
		t->has_zero = true;
		t->zero_events++;
		return TRACE_OK;
	}
	if (!t->has_nonzero) {
		t->first_nonzero = ev->ts_ns;
		t->last_nonzero = end;
		t->has_nonzero = true;
	} else {
		if (ev->ts_ns < t->first_nonzero)
			t->first_nonzero = ev->ts_ns;
		if (end > t->last_nonzero)
			t->last_nonzero = end;
	}
	t->nonzero_events++;
	return TRACE_OK;
}

int
tally_event(struct trace_tally *t, const struct trace_event *ev,
    const char **why)
{
	int rc;

	if (ev->has_pid) {
		pid_seen(t, ev->pid);
		if (ev->is_kernel)
			kernel_pid_seen(&t->info, ev->pid);
	}
	if (ev->ph == 'M') {
		t->info.metadata_events++;
		if (ev->has_ts)
			t->info.metadata_timed++;
		return TRACE_OK;
	}
	if (!ev->has_ts) {
		t->info.untimed_events++;
		return TRACE_OK;
	}
	if ((rc = event_timed(t, ev, why)) != TRACE_OK)
		return rc;
	if (ev->ph == 'X' && ev->has_dur && ev->cat[0] != '\0' &&
	    strcmp(ev->cat, "Trace") != 0 &&
	    strcmp(ev->cat, "python_function") != 0 &&
	    (!t->info.has_first_slice ||
	    ev->ts_ns < t->info.first_slice_own_ns)) {
		t->info.has_first_slice = true;
		t->info.first_slice_own_ns = ev->ts_ns;
	}
	return ev->is_step ? step_add(t, ev, why) : TRACE_OK;
}

/* Under a base, steps at ts == 0 are clamped too. */
static void
drop_clamped_steps(struct trace_info *in)
{
	size_t i, kept;

	for (i = kept = 0; i < in->nsteps; i++) {
		if (in->steps[i].ts_ns == 0)
			free(in->steps[i].name);
		else
			in->steps[kept++] = in->steps[i];
	}
	in->nsteps = kept;
}

int
tally_finish(struct trace_tally *t, bool top_array, const char **why)
{
	struct trace_info *in = &t->info;

	in->has_span = t->has_nonzero || (!in->has_base && t->has_zero);
	in->events = t->nonzero_events;
	if (in->has_base) {
		in->clamped_events = t->zero_events;
		drop_clamped_steps(in);
	} else
		in->events += t->zero_events;
	if (t->has_nonzero) {
		in->first_own_ns = t->first_nonzero;
		in->last_own_ns = t->last_nonzero;
	}
	if (!in->has_base && t->has_zero) {
		if (!t->has_nonzero || in->first_own_ns > 0)
			in->first_own_ns = 0;
		if (!t->has_nonzero || t->last_zero > in->last_own_ns)
			in->last_own_ns = t->last_zero;
	}
	if (top_array)
		in->dialect = TRACE_DIALECT_LEGACY;
	else if (in->has_base)
		in->dialect = TRACE_DIALECT_BASE;
	else
		in->dialect = in->has_span && in->last_own_ns >= TRACE_EPOCH_MIN_NS ?
		    TRACE_DIALECT_ABSOLUTE : TRACE_DIALECT_RELATIVE;
	in->absolute = in->has_span && (in->dialect == TRACE_DIALECT_BASE ||
	    in->dialect == TRACE_DIALECT_ABSOLUTE);
	if (in->absolute &&
	    (__builtin_add_overflow(in->base_ns, in->first_own_ns, &in->start_ns) ||
	    __builtin_add_overflow(in->base_ns, in->last_own_ns, &in->end_ns))) {
		*why = "baseTimeNanoseconds + ts is out of range";
		return TRACE_ERR_LIMIT;
	}
	return TRACE_OK;
}
