/*
 * devevents: device events, their cards and categories, and host events
 * (devevents.h).
 */
#include <err.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "client.h"
#include "devevents.h"

static const char *const category_names[OPS_NCAT] = {
	[OPS_COMPUTE] = "compute",
	[OPS_MEMORY] = "memory copy",
	[OPS_COMM] = "communication",
	[OPS_OTHER] = "other",
	[OPS_IDLE] = "idle",
};

const char *
ops_category_name(enum ops_category c)
{
	return c < OPS_NCAT ? category_names[c] : "?";
}

/* Kineto's categories of device events. */
static const char *const device_cats[] = {
	"kernel", "gpu_memcpy", "gpu_memset", "cuda_sync",
};

/* Spans that enclose other events: not the host's work. */
static const char *const span_cats[] = {
	"Trace", "user_annotation", "gpu_user_annotation",
};

/* Host categories whose events may name a stream: launches, copies' calls. */
static const char *const host_cats[] = {
	"cpu_op", "python_function", "cuda_runtime", "cuda_driver",
	"user_annotation",
};

static bool
ends_with(const char *s, const char *tail)
{
	size_t n = strlen(s), k = strlen(tail);

	return n >= k && strcmp(s + n - k, tail) == 0;
}

static bool
in_list(const char *s, const char *const *list, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(s, list[i]) == 0)
			return true;
	return false;
}

#define NELEM(a)	(sizeof(a) / sizeof((a)[0]))

bool
devevent_is_device(const struct trace_event *ev, bool *has_card,
    int64_t *card)
{
	*has_card = false;
	if (!ev->has_ts)
		return false;
	if ((ev->ph == 'B' || ev->ph == 'E') && ev->has_cycles)
		goto card;
	if (ev->ph != 'X')
		return false;
	if (strcmp(ev->cat, "gpu_user_annotation") == 0)
		return false;
	if (!in_list(ev->cat, device_cats, NELEM(device_cats)) &&
	    (!ev->has_stream || in_list(ev->cat, host_cats,
	    NELEM(host_cats)) || ends_with(ev->cat, "_runtime") ||
	    ends_with(ev->cat, "_driver")))
		return false;
card:
	if (ev->has_device) {
		*has_card = true;
		*card = ev->device;
	} else if (ev->has_pid) {
		*has_card = true;
		*card = ev->pid;
	}
	return true;
}

bool
devevent_is_host(const struct trace_event *ev)
{
	bool has_card;
	int64_t card;

	if (ev->ph != 'X' || !ev->has_ts || !ev->has_dur || ev->dur_ns <= 0 ||
	    ev->is_step)
		return false;
	if (in_list(ev->cat, span_cats, NELEM(span_cats)))
		return false;
	return !devevent_is_device(ev, &has_card, &card);
}

bool
devevent_pair(struct devevent_pairs *p, const struct trace_event *ev,
    int64_t card, int64_t *begin_ns)
{
	struct devevent_open *o;

	if (ev->ph == 'B') {
		if (p->n == p->cap) {
			size_t cap = p->cap ? 2 * p->cap : 16;

			if ((o = reallocarray(p->open, cap, sizeof(*o))) == NULL)
				errx(CLIENT_EXIT_FAILED, "out of memory");
			p->open = o;
			p->cap = cap;
		}
		o = &p->open[p->n];
		if ((o->name = strdup(ev->name)) == NULL)
			errx(CLIENT_EXIT_FAILED, "out of memory");
		o->card = card;
		o->track = ev->track;
		o->ts_ns = ev->ts_ns;
		p->n++;
		return false;
	}
	for (size_t i = p->n; i-- > 0;) {
		o = &p->open[i];
		if (o->card != card || o->track != ev->track ||
		    strcmp(o->name, ev->name) != 0)
			continue;
		*begin_ns = o->ts_ns;
		free(o->name);
		memmove(o, o + 1, (p->n - i - 1) * sizeof(*o));
		p->n--;
		return true;
	}
	p->unpaired++;
	return false;
}

size_t
devevent_pairs_open(const struct devevent_pairs *p)
{
	return p->n;
}

void
devevent_pairs_free(struct devevent_pairs *p)
{
	for (size_t i = 0; i < p->n; i++)
		free(p->open[i].name);
	free(p->open);
	memset(p, 0, sizeof(*p));
}

/* Whether name holds one of the words, without regard to case. */
static bool
holds_any(const char *name, const char *const *words, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (strcasestr(name, words[i]) != NULL)
			return true;
	return false;
}

enum ops_category
devevent_category(const char *name, const char *cat)
{
	static const char *const comm[] = {
		"nccl", "rccl", "hccl", "allreduce", "all_reduce",
		"allgather", "all_gather", "reducescatter", "reduce_scatter",
		"alltoall", "sendrecv", "rdma", "broadcast",
	};
	static const char *const memory[] = { "memcpy", "memset", "dma" };

	if (holds_any(name, comm, NELEM(comm)))
		return OPS_COMM;
	if (strcmp(cat, "gpu_memcpy") == 0 || strcmp(cat, "gpu_memset") == 0 ||
	    holds_any(name, memory, NELEM(memory)))
		return OPS_MEMORY;
	/* HTA's rule: "Sync" with its case, so that async is not one */
	if (strcmp(cat, "cuda_sync") == 0 || strstr(name, "Sync") != NULL ||
	    strcasestr(name, "stream wait") != NULL ||
	    strcasestr(name, "event_wait") != NULL)
		return OPS_OTHER;
	return OPS_COMPUTE;
}
