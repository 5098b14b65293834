/* intcheck: reading integrity_check's messages (contract in intcheck.h). */
#include "intcheck.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* The number after word at the start of s (case as given): 0 if none. */
static uint32_t
number_after(const char *s, const char *word)
{
	size_t n = strlen(word);
	unsigned long v;
	char *end;

	if (strncmp(s, word, n) != 0 || !isdigit((unsigned char)s[n]))
		return 0;
	v = strtoul(s + n, &end, 10);
	return v <= UINT32_MAX ? (uint32_t)v : 0;
}

bool
intcheck_is_header(const char *line)
{
	return strncmp(line, "*** in database ", 16) == 0;
}

bool
intcheck_parse(const char *msg, struct intcheck_msg *out)
{
	const char *p;
	size_t n;

	memset(out, 0, sizeof(*out));
	if ((out->tree = number_after(msg, "Tree ")) != 0) {
		/* "Tree T page P ..." */
		if ((p = strstr(msg, " page ")) != NULL)
			out->page = number_after(p, " page ");
	} else if ((out->page = number_after(msg, "Page ")) != 0) {
		p = msg + 5;
		while (isdigit((unsigned char)*p))
			p++;
		out->unused = strncmp(p, " is never used", 14) == 0;
	}
	if ((p = strstr(msg, " index ")) != NULL) {
		p += 7;
		n = strcspn(p, " \t:,;");
		if (n >= sizeof(out->index))
			n = sizeof(out->index) - 1;
		memcpy(out->index, p, n);
		out->index[n] = '\0';
	}
	return out->tree != 0 || out->page != 0 || out->index[0] != '\0';
}
