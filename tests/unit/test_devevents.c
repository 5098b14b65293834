/*
 * Tests of which trace events are a device's, on which card, of what
 * category, and which are the host's (devevents.h), on events shaped as
 * the real traces of tests/data/traces write them: Kineto's kernels,
 * copies and sets, a runtime launch that names its stream, MTIA's device
 * events, annotations and steps, and the Spyre runtime's begin and end
 * pairs.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "devevents.h"

static struct trace_event
event(const char *cat, const char *name)
{
	struct trace_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.ph = 'X';
	ev.cat = cat;
	ev.name = name;
	ev.has_ts = ev.has_dur = ev.has_pid = true;
	ev.ts_ns = 1000;
	ev.dur_ns = 500;
	ev.pid = 2;
	return ev;
}

static void
test_device_events(void **state)
{
	struct trace_event ev;
	bool has;
	int64_t card;

	(void)state;
	/* a kernel: its card is args.device, else its pid */
	ev = event("kernel", "volta_sgemm_64x64_nn");
	assert_true(devevent_is_device(&ev, &has, &card));
	assert_true(has);
	assert_int_equal(card, 2);
	ev.has_device = true;
	ev.device = 5;
	assert_true(devevent_is_device(&ev, &has, &card));
	assert_int_equal(card, 5);
	assert_false(devevent_is_host(&ev));
	ev = event("gpu_memset", "Memset (Device)");
	ev.has_pid = false;
	assert_true(devevent_is_device(&ev, &has, &card));
	assert_false(has);
	/* another accelerator's device events name a stream */
	ev = event("mtia_ccp_events", "event_wait");
	assert_false(devevent_is_device(&ev, &has, &card));
	ev.has_stream = true;
	assert_true(devevent_is_device(&ev, &has, &card));
	/* launches name the stream too, on the host */
	ev = event("cuda_runtime", "cudaLaunchKernel");
	ev.has_stream = true;
	assert_false(devevent_is_device(&ev, &has, &card));
	assert_true(devevent_is_host(&ev));
	ev = event("mtia_runtime", "recordEvent");
	ev.has_stream = true;
	assert_false(devevent_is_device(&ev, &has, &card));
	ev = event("cpu_op", "aten::mm");
	ev.has_stream = true;
	assert_false(devevent_is_device(&ev, &has, &card));
	assert_true(devevent_is_host(&ev));
	/* an annotation of a device's time is neither */
	ev = event("gpu_user_annotation", "Optimizer.step#SGD.step");
	ev.has_stream = true;
	assert_false(devevent_is_device(&ev, &has, &card));
	assert_false(devevent_is_host(&ev));
	/* not complete events, steps, spans and instants */
	ev = event("kernel", "k");
	ev.ph = 'B';
	assert_false(devevent_is_device(&ev, &has, &card));
	ev = event("user_annotation", "ProfilerStep#3");
	assert_false(devevent_is_host(&ev));
	ev = event("Trace", "PyTorch Profiler (0)");
	assert_false(devevent_is_host(&ev));
	ev = event("python_function", "train");
	ev.is_step = true;
	assert_false(devevent_is_host(&ev));
	ev = event("cpu_op", "aten::empty");
	ev.dur_ns = 0;
	assert_false(devevent_is_host(&ev));
}

/*
 * The Spyre runtime's begin and end pairs: device events when they carry
 * the cycle stamps; an end closes the latest begin of its card, track and
 * name; an end without a begin and a begin left open are counted.
 */
static void
test_pairs(void **state)
{
	struct devevent_pairs p = { 0 };
	struct trace_event ev;
	int64_t card, begin;
	bool has;

	(void)state;
	ev = event("", "add_11 Cmpt Exec");
	ev.ph = 'B';
	assert_false(devevent_is_device(&ev, &has, &card));
	ev.has_cycles = true;
	assert_true(devevent_is_device(&ev, &has, &card));
	assert_false(devevent_is_host(&ev));
	ev.track = 7;
	ev.ts_ns = 100;
	assert_false(devevent_pair(&p, &ev, 0, &begin));
	ev.ts_ns = 110;		/* the same name, nested */
	assert_false(devevent_pair(&p, &ev, 0, &begin));
	ev.track = 8;		/* another track */
	ev.ts_ns = 120;
	assert_false(devevent_pair(&p, &ev, 0, &begin));
	ev.ph = 'E';
	ev.track = 7;
	ev.ts_ns = 130;
	assert_true(devevent_pair(&p, &ev, 0, &begin));
	assert_int_equal(begin, 110);
	assert_true(devevent_pair(&p, &ev, 0, &begin));
	assert_int_equal(begin, 100);
	assert_false(devevent_pair(&p, &ev, 0, &begin));	/* none left */
	assert_int_equal(p.unpaired, 1);
	assert_false(devevent_pair(&p, &ev, 1, &begin));	/* another card */
	assert_int_equal(devevent_pairs_open(&p), 1);
	ev.track = 8;
	ev.name = "other";
	assert_false(devevent_pair(&p, &ev, 0, &begin));	/* another name */
	ev.name = "add_11 Cmpt Exec";
	assert_true(devevent_pair(&p, &ev, 0, &begin));
	assert_int_equal(begin, 120);
	assert_int_equal(devevent_pairs_open(&p), 0);
	assert_int_equal(p.unpaired, 3);
	devevent_pairs_free(&p);
}

static void
test_categories(void **state)
{
	(void)state;
	assert_int_equal(devevent_category("ncclKernel_AllReduce_RING_LL_Sum_"
	    "float(ncclDevComm*, unsigned long, ncclWork*)", "kernel"), OPS_COMM);
	assert_int_equal(devevent_category("SenRdmaSend_82227 DmaO", ""),
	    OPS_COMM);
	assert_int_equal(devevent_category("Memcpy DtoD (Device -> Device)",
	    "gpu_memcpy"), OPS_MEMORY);
	assert_int_equal(devevent_category("Memset (Device)", "gpu_memset"),
	    OPS_MEMORY);
	assert_int_equal(devevent_category("add_11 DmaI", ""), OPS_MEMORY);
	assert_int_equal(devevent_category("x", "gpu_memcpy"), OPS_MEMORY);
	assert_int_equal(devevent_category("Context Sync", "cuda_sync"),
	    OPS_OTHER);
	assert_int_equal(devevent_category("Event Sync", "kernel"), OPS_OTHER);
	assert_int_equal(devevent_category("event_wait", "mtia_ccp_events"),
	    OPS_OTHER);
	/* "Sync" keeps its case: an async kernel computes */
	assert_int_equal(devevent_category("void async_copy_kernel", "kernel"),
	    OPS_COMPUTE);
	assert_int_equal(devevent_category("volta_sgemm_64x64_nn", "kernel"),
	    OPS_COMPUTE);
	assert_int_equal(devevent_category("add_11 Cmpt Exec", ""),
	    OPS_COMPUTE);
	assert_string_equal(ops_category_name(OPS_MEMORY), "memory copy");
	assert_string_equal(ops_category_name(OPS_IDLE), "idle");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_device_events),
		cmocka_unit_test(test_pairs),
		cmocka_unit_test(test_categories),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
