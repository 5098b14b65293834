/*
 * mfdump: a new-format metric file as text, decoded by common/metricfile.c
 * with the built-in table, for comparing decoders across hosts
 * (tests/arch/outputs.sh).
 *
 *   mfdump native|little|big FILE
 *
 * Prints the header, then one line per section and per metric: its
 * section, name, word count and exact value (mant / 10^scale, in the
 * file's base unit) or "-".  The same file decoded in the same order gives
 * the same text on every host.  Exits 1 with the file and reason when it
 * cannot be read or decoded, 2 on a bad command line.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metricfile.h"

#define MAX_FILE	(1 << 20)

/* mant / 10^scale as a decimal, exactly. */
static void
print_value(const struct mf_value *v)
{
	uint64_t mag, pow10 = 1;
	int i;

	if (!v->present) {
		printf("-");
		return;
	}
	for (i = 0; i < v->scale; i++)
		pow10 *= 10;
	mag = v->mant < 0 ? (uint64_t)0 - (uint64_t)v->mant : (uint64_t)v->mant;
	printf("%s%" PRIu64, v->mant < 0 ? "-" : "", mag / pow10);
	if (v->scale > 0)
		printf(".%0*" PRIu64, v->scale, mag % pow10);
}

int
main(int argc, char **argv)
{
	static uint8_t buf[MAX_FILE];
	static struct mf_file f;
	enum mf_order order;
	char err[256];
	size_t n, i, j;
	FILE *fp;

	if (argc != 3) {
		fprintf(stderr, "usage: mfdump native|little|big FILE\n");
		return 2;
	}
	if (strcmp(argv[1], "native") == 0)
		order = MF_ORDER_NATIVE;
	else if (strcmp(argv[1], "little") == 0)
		order = MF_ORDER_LITTLE;
	else if (strcmp(argv[1], "big") == 0)
		order = MF_ORDER_BIG;
	else {
		fprintf(stderr, "mfdump: byte order '%s': native, little or big\n",
		    argv[1]);
		return 2;
	}
	if ((fp = fopen(argv[2], "rb")) == NULL) {
		fprintf(stderr, "mfdump: %s: %s\n", argv[2], strerror(errno));
		return 1;
	}
	n = fread(buf, 1, sizeof(buf), fp);
	if (ferror(fp)) {
		fprintf(stderr, "mfdump: %s: read error\n", argv[2]);
		fclose(fp);
		return 1;
	}
	fclose(fp);
	if (mf_decode(buf, n, order, mf_table_builtin(), &f, err,
	    sizeof(err)) != MF_OK) {
		fprintf(stderr, "mfdump: %s: %s\n", argv[2], err);
		return 1;
	}
	printf("file size %" PRIu32 " version %u.%u.%u.%u sections %" PRIu32
	    " updated_ms %" PRIu64 " skipped %u sections %u metrics\n",
	    f.size, f.version[0], f.version[1], f.version[2], f.version[3],
	    f.nsections, f.updated_ms, f.skipped_sections, f.skipped_metrics);
	for (i = 0; i < f.nsec; i++) {
		const struct mf_section *s = &f.sec[i];

		printf("section %" PRIu32 " %s size %" PRIu32 " seq %" PRIu32
		    " entries %" PRIu32 " updated_ms %" PRIu64 " interval %"
		    PRIu32 "\n", s->type, s->stype ? s->stype->name : "?",
		    s->size, s->seq, s->nentries, s->updated_ms, s->interval);
		for (j = s->first_value; j < s->first_value + s->nvalues; j++) {
			const struct mf_value *v = &f.val[j];

			printf("  %s words %" PRIu32 " value ", v->type->name,
			    v->nwords);
			print_value(v);
			printf("\n");
		}
	}
	return 0;
}
