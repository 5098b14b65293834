/*
 * capwin: the window a capture opens on spyremond over the traced span,
 * through the control socket as "spyremon mark" does (ctl.h), with the
 * protocol's begin_ns and end_ns (proto.h): the window begins at the
 * trace's planned start and ends at its end as the trace file gives it.
 *
 * Each returns CLIENT_EXIT_OK, or an exit status after printing why (as
 * ctl_request_send does).
 */
#ifndef SPYREMON_CAPWIN_H
#define SPYREMON_CAPWIN_H

#include <stddef.h>
#include <stdint.h>

#include "client.h"

/* Whether spyremond answers on its socket. */
int capwin_hello(struct client *cl);

/*
 * Open a window tagged tag with nmeta key, value pairs (meta[2i],
 * meta[2i+1]), beginning at begin_ns (0: now), tied to this process so
 * that it ends if the capture dies, and not refused for a tag the caller
 * has open already.  Its id in *id.
 */
int capwin_begin(struct client *cl, const char *tag, const char *const *meta,
    size_t nmeta, int64_t begin_ns, int64_t *id);

/* End window id at end_ns (0: now); its span in *begin_ns, *end_ns. */
int capwin_end(struct client *cl, int64_t id, int64_t end_ns,
    int64_t *begin_ns, int64_t *end_ns_out);

/*
 * capwin_end, with nmeta key, value pairs (meta[2i], meta[2i+1]) merged
 * into the window's metadata as it ends (the daemon refuses a key the
 * window has already, and the window then stays open).
 */
int capwin_end_meta(struct client *cl, int64_t id, int64_t end_ns,
    const char *const *meta, size_t nmeta, int64_t *begin_ns,
    int64_t *end_ns_out);

#endif
