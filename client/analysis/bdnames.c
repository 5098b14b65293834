/*
 * bdnames: the breakdown's rules of a name, cached (bdnames.h).
 */
#include <err.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bdnames.h"
#include "breakdown.h"
#include "client.h"

bool
bd_is_step_name(const char *s)
{
	return strncmp(s, "ProfilerStep#", 13) == 0 && s[13] >= '0' &&
	    s[13] <= '9';
}

/* The cats of HTA's idle-time events. */
static bool
idle_cat(const char *cat)
{
	static const char *const cats[] = {
		"kernel", "Kernel", "gpu_memset", "Memset", "gpu_memcpy",
		"Memcpy", "mtia_ccp_events",
	};

	for (size_t i = 0; i < sizeof(cats) / sizeof(cats[0]); i++)
		if (strcmp(cat, cats[i]) == 0)
			return true;
	return false;
}

const struct bd_namefacts *
bd_names_facts(struct bd_names *c, const char *name, const char *cat)
{
	struct bd_namefacts *f = NULL;
	uint32_t h = 2166136261u;	/* FNV-1a */

	for (const char *p = name; *p != '\0'; p++)
		h = (h ^ (unsigned char)*p) * 16777619u;
	for (const char *p = cat; *p != '\0'; p++)
		h = (h ^ (unsigned char)*p) * 16777619u;
	for (size_t k = 0; k < BD_NAMEPROBE; k++) {
		struct bd_namefacts *g = &c->slot[(h + k) % BD_NAMECACHE];

		if (g->name == NULL) {
			f = g;
			break;
		}
		if (strcmp(g->name, name) == 0 && strcmp(g->cat, cat) == 0)
			return g;
	}
	if (bd_is_step_name(name))
		f = &c->scratch;
	else if (f == NULL)
		f = &c->slot[h % BD_NAMECACHE];
	free(f->name);
	free(f->cat);
	if ((f->name = strdup(name)) == NULL || (f->cat = strdup(cat)) == NULL)
		errx(CLIENT_EXIT_FAILED, "out of memory");
	f->category = devevent_category(name, cat);
	f->sync = bd_is_sync_call(name);
	f->hta_compute = bd_hta_is_compute(name);
	f->step = bd_is_step_name(name);
	f->idle_cat = idle_cat(cat);
	f->sync_name = strcmp(name, "Event Sync") == 0 ||
	    strcmp(name, "Context Sync") == 0;
	return f;
}

void
bd_names_free(struct bd_names *c)
{
	for (size_t i = 0; i < BD_NAMECACHE; i++) {
		free(c->slot[i].name);
		free(c->slot[i].cat);
	}
	free(c->scratch.name);
	free(c->scratch.cat);
}
