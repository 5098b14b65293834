/*
 * libFuzzer target: aiu-smi's CSV output through the daemon's two layers,
 * csv_lines_feed (cutting a stream into lines, in chunks whose sizes the
 * input chooses) and csv_parse_line (one parser across all lines, as the
 * daemon keeps one per child).  Only the sanitizers judge; the one rule
 * checked here is the parser's contract that a row is parsed whole.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "csvparse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
on_line(void *arg, const char *line, size_t len, bool overlong)
{
	struct csv_parser *p = arg;
	struct csv_result res;
	enum csv_kind k;

	if (overlong)
		return;
	k = csv_parse_line(p, line, len, &res);
	if (k == CSV_ROW && p->ncols == 0)
		abort();	/* a row without columns to map it by */
	if (k == CSV_BAD && res.error[0] == '\0')
		abort();	/* rejected without a reason */
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct csv_lines lb;
	static struct csv_parser p;
	size_t off = 0, chunk;

	csv_lines_reset(&lb);
	csv_parser_init(&p);
	/* the first byte picks the chunk size: lines split anywhere */
	chunk = size > 0 ? (size_t)data[0] % 64 + 1 : 1;
	while (off < size) {
		size_t n = size - off < chunk ? size - off : chunk;

		csv_lines_feed(&lb, (const char *)data + off, n, on_line, &p);
		off += n;
	}
	return 0;
}
