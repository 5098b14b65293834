/*
 * libFuzzer target: the profiler-trace reader on the input as the
 * (uncompressed) trace, fed in chunks whose size the input's first byte
 * chooses, with the default step pattern.  A span it reports must not end
 * before it starts.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct trace_reader *r;
	struct trace_error err;
	struct trace_info info;
	size_t off = 0, chunk;
	int rc;

	if (trace_reader_new(NULL, &r, &err) != TRACE_OK)
		abort();
	chunk = size > 0 ? (size_t)data[0] * 16 + 1 : 1;
	rc = TRACE_OK;
	while (off < size && rc == TRACE_OK) {
		size_t n = size - off < chunk ? size - off : chunk;

		rc = trace_reader_feed(r, data + off, n, &err);
		off += n;
	}
	if (rc == TRACE_OK) {
		rc = trace_reader_finish(r, &info, &err);
		if (rc == TRACE_OK && info.has_span &&
		    info.last_own_ns < info.first_own_ns)
			abort();
		for (size_t i = 0; rc == TRACE_OK && i < info.nsteps; i++)
			if (info.steps[i].dur_ns < 0)
				abort();
		trace_info_free(&info);
	}
	trace_reader_free(r);
	return 0;
}
