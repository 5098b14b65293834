/*
 * bdnames: what the breakdown's rules say of an event's name and cat
 * (its category, whether it is a synchronisation call, HTA's compute
 * rule, a step's name, HTA's idle categories), remembered by name: a
 * trace repeats a few kernel and call names hundreds of thousands of
 * times, and the rules are a few dozen string comparisons and searches.
 */
#ifndef SPYREMON_BDNAMES_H
#define SPYREMON_BDNAMES_H

#include <stdbool.h>

#include "devevents.h"

struct bd_namefacts {
	char	*name, *cat;
	enum ops_category category;	/* devevent_category */
	bool	 sync;			/* bd_is_sync_call */
	bool	 hta_compute;		/* bd_hta_is_compute */
	bool	 step;			/* bd_is_step_name */
	bool	 idle_cat;		/* a cat HTA's idle time takes */
	bool	 sync_name;		/* "Event Sync" or "Context Sync" */
};

#define BD_NAMECACHE	256
#define BD_NAMEPROBE	4	/* slots looked at from a name's own */

/* The cache: zero it to start; slots chosen by a hash of name and cat. */
struct bd_names {
	struct bd_namefacts slot[BD_NAMECACHE];
	struct bd_namefacts scratch;	/* a step's name: each is new */
};

/*
 * The rules' answers for name and cat, valid until the next call.  A
 * step's name is never kept (each is new, and would push out the others).
 */
const struct bd_namefacts *bd_names_facts(struct bd_names *c,
    const char *name, const char *cat);

/* HTA's step names: ProfilerStep# and a digit, at the start. */
bool bd_is_step_name(const char *s);

void bd_names_free(struct bd_names *c);

#endif
