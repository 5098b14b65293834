/*
 * Tests of control_request: request lines in, reply lines out, without a
 * socket.  Malformed requests of every kind, which of them close the
 * connection, and begin and end through a real window set on a temporary
 * database.  Replies are read back with yajl_tree, not compared as text.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <yajl/yajl_tree.h>

#include "control.h"
#include "proto.h"
#include "store.h"
#include "tmpdb.h"
#include "windows.h"

#define T0	(1764670000LL * 1000000000LL)

struct fx {
	struct tmpdb db;
	struct store *st;
	struct windows *win;
	struct control_ctx ctx;
};

static int
setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	assert_int_equal(tmpdb_make(&f->db, "test_control"), 0);
	assert_int_equal(store_open(f->db.path, 100, &f->st), 0);
	assert_int_equal(windows_start(NULL, f->st, 3600ULL * 1000000000ULL, T0,
	    NULL, NULL, &f->win), 0);
	f->ctx.st = f->st;
	f->ctx.win = f->win;
	*state = f;
	return 0;
}

static int
teardown(void **state)
{
	struct fx *f = *state;

	windows_free(f->win);
	store_close(f->st);
	assert_int_equal(tmpdb_remove(&f->db), 0);
	free(f);
	return 0;
}

/* The reply to line (len bytes) from uid, parsed; *close receives its flag. */
static yajl_val
ask_len(struct fx *f, const char *line, size_t len, uint32_t uid, bool *close)
{
	struct control_peer peer = { .uid = uid, .pid = 4321 };
	struct control_reply reply;
	char *copy = malloc(len + 1), err[128];
	yajl_val v;

	assert_non_null(copy);
	memcpy(copy, line, len);
	copy[len] = '\0';
	assert_int_equal(control_request_handle(&f->ctx, copy, len, &peer, T0,
	    &reply), 0);
	free(copy);
	/* exactly one line */
	assert_true(reply.len > 1);
	assert_int_equal(reply.text[reply.len - 1], '\n');
	assert_null(memchr(reply.text, '\n', reply.len - 1));
	reply.text[reply.len - 1] = '\0';
	if ((v = yajl_tree_parse(reply.text, err, sizeof(err))) == NULL)
		fail_msg("reply is not JSON: %s: %s", reply.text, err);
	free(reply.text);
	if (close != NULL)
		*close = reply.close;
	return v;
}

static yajl_val
ask(struct fx *f, const char *line, uint32_t uid, bool *close)
{
	return ask_len(f, line, strlen(line), uid, close);
}

static yajl_val
get(yajl_val v, const char *key)
{
	const char *path[] = { key, NULL };

	return yajl_tree_get(v, path, yajl_t_any);
}

/* The string member key of v, which must be there. */
static const char *
str(yajl_val v, const char *key)
{
	const char *s = YAJL_GET_STRING(get(v, key));

	if (s == NULL)
		fail_msg("no string \"%s\" in the reply", key);
	return s;
}

/* Assert the reply to line is error code, closing or not. */
static void
assert_refused_len(struct fx *f, const char *line, size_t len,
    const char *code, bool want_close)
{
	bool close;
	yajl_val v = ask_len(f, line, len, 1000, &close);

	if (!YAJL_IS_FALSE(get(v, "ok")) || strcmp(str(v, "error"), code) != 0)
		fail_msg("%.*s: want %s", (int)len, line, code);
	assert_true(strlen(str(v, "message")) > 0);
	if (close != want_close)
		fail_msg("%s: close is %d", line, close);
	yajl_tree_free(v);
}

static void
assert_refused(struct fx *f, const char *line, const char *code, bool want_close)
{
	assert_refused_len(f, line, strlen(line), code, want_close);
}

static void
test_malformed(void **state)
{
	struct fx *f = *state;
	char deep[64];

	/* malformed: answered, then closed */
	assert_refused(f, "", PROTO_E_BAD_REQUEST, true);
	assert_refused(f, "garbage", PROTO_E_BAD_REQUEST, true);
	assert_refused(f, "{\"v\":1,\"cmd\":\"hello\"", PROTO_E_BAD_REQUEST, true);
	assert_refused(f, "{\"v\":1,\"cmd\":\"hello\"} {}", PROTO_E_BAD_REQUEST, true);
	assert_refused(f, "[1,2]", PROTO_E_BAD_REQUEST, true);
	assert_refused(f, "\"hello\"", PROTO_E_BAD_REQUEST, true);
	assert_refused(f, "{\"cmd\":\"hello\"}", PROTO_E_BAD_REQUEST, true);
	assert_refused(f, "{\"v\":\"1\",\"cmd\":\"hello\"}", PROTO_E_BAD_REQUEST, true);
	assert_refused(f, "{\"v\":1.0,\"cmd\":\"hello\"}", PROTO_E_BAD_REQUEST, true);
	assert_refused(f, "{\"v\":1}", PROTO_E_BAD_REQUEST, true);
	assert_refused(f, "{\"v\":1,\"cmd\":7}", PROTO_E_BAD_REQUEST, true);
	assert_refused(f, "{\"v\":2,\"cmd\":\"hello\"}", PROTO_E_VERSION, true);
	assert_refused(f, "{\"v\":0,\"cmd\":\"bogus\"}", PROTO_E_VERSION, true);
	assert_refused_len(f, "{\"v\":1,\0\"cmd\":\"hello\"}", 22,
	    PROTO_E_BAD_REQUEST, true);
	assert_refused(f, "{\"v\":1,\"cmd\":\"h\xff\"}", PROTO_E_BAD_REQUEST, true);
	/* deep nesting is refused before the parser sees it */
	memset(deep, '[', sizeof(deep));
	snprintf(deep, sizeof(deep), "{\"v\":1,\"cmd\":\"hello\",\"x\":%.*s1%.*s}",
	    9, "[[[[[[[[[", 9, "]]]]]]]]]");
	assert_refused(f, deep, PROTO_E_BAD_REQUEST, true);
	/* a bracket inside a string is no nesting */
	{
		yajl_val v = ask(f, "{\"v\":1,\"cmd\":\"hello\",\"x\":"
		    "\"[[[[[[[[[[[[\\\"[[[[\"}", 1000, NULL);

		assert_true(YAJL_IS_TRUE(get(v, "ok")));
		yajl_tree_free(v);
	}

	/* well-formed but unknown: answered, kept open */
	assert_refused(f, "{\"v\":1,\"cmd\":\"frobnicate\"}", PROTO_E_UNKNOWN_CMD,
	    false);
}

static void
test_hello(void **state)
{
	struct fx *f = *state;
	bool close;
	yajl_val v = ask(f, "{\"cmd\":\"hello\",\"v\":1,\"extra\":[1,{}]}", 1000,
	    &close);

	assert_false(close);
	assert_true(YAJL_IS_TRUE(get(v, "ok")));
	assert_int_equal(YAJL_GET_INTEGER(get(v, "v")), PROTO_VERSION);
	assert_true(strncmp(str(v, "daemon"), "spyremond ", 10) == 0);
	yajl_tree_free(v);
}

static void
test_begin_end(void **state)
{
	struct fx *f = *state;
	bool close;
	yajl_val v;
	int64_t id;
	size_t n;
	const struct window *list;

	v = ask(f, "{\"v\":1,\"cmd\":\"begin\",\"tag\":\"run\",\"meta\":"
	    "{\"commit\":\"abc\",\"w\":\"x y\"},\"same_tag\":false}", 1000, &close);
	assert_false(close);
	assert_true(YAJL_IS_TRUE(get(v, "ok")));
	id = YAJL_GET_INTEGER(get(v, "id"));
	assert_true(id > 0);
	assert_string_equal(str(v, "tag"), "run");
	assert_int_equal(YAJL_GET_INTEGER(get(v, "begin_ns")), T0);
	yajl_tree_free(v);
	list = windows_list(f->win, &n);
	assert_int_equal(n, 1);
	assert_int_equal(list[0].uid, 1000);
	assert_int_equal(list[0].pid, 4321);
	assert_int_equal(list[0].nmeta, 2);
	assert_string_equal(list[0].meta[3], "x y");

	/* rule errors keep the connection */
	assert_refused(f, "{\"v\":1,\"cmd\":\"begin\",\"tag\":\"run\"}",
	    PROTO_E_TAG_OPEN, false);
	assert_refused(f, "{\"v\":1,\"cmd\":\"begin\",\"tag\":\"a b\"}",
	    PROTO_E_BAD_TAG, false);
	assert_refused(f, "{\"v\":1,\"cmd\":\"begin\",\"tag\":\"t\",\"meta\":"
	    "{\"k\":1}}", PROTO_E_BAD_META, false);
	assert_refused(f, "{\"v\":1,\"cmd\":\"begin\",\"tag\":\"t\",\"meta\":"
	    "{\"bad key\":\"v\"}}", PROTO_E_BAD_META, false);
	assert_refused(f, "{\"v\":1,\"cmd\":\"end\",\"tag\":\"nope\"}",
	    PROTO_E_NOT_OPEN, false);
	assert_refused(f, "{\"v\":1,\"cmd\":\"end\",\"id\":99}", PROTO_E_NOT_OPEN,
	    false);
	/* wrong types close it */
	assert_refused(f, "{\"v\":1,\"cmd\":\"begin\"}", PROTO_E_BAD_REQUEST, true);
	assert_refused(f, "{\"v\":1,\"cmd\":\"begin\",\"tag\":5}",
	    PROTO_E_BAD_REQUEST, true);
	assert_refused(f, "{\"v\":1,\"cmd\":\"begin\",\"tag\":\"t\",\"meta\":[]}",
	    PROTO_E_BAD_REQUEST, true);
	assert_refused(f, "{\"v\":1,\"cmd\":\"begin\",\"tag\":\"t\",\"same_tag\":1}",
	    PROTO_E_BAD_REQUEST, true);
	assert_refused(f, "{\"v\":1,\"cmd\":\"end\",\"id\":\"1\"}",
	    PROTO_E_BAD_REQUEST, true);
	assert_refused(f, "{\"v\":1,\"cmd\":\"end\",\"id\":-1}",
	    PROTO_E_BAD_REQUEST, true);
	assert_refused(f, "{\"v\":1,\"cmd\":\"end\",\"id\":1,\"tag\":\"run\"}",
	    PROTO_E_BAD_REQUEST, true);
	/* nothing refused opened a window */
	(void)windows_list(f->win, &n);
	assert_int_equal(n, 1);

	/* not for someone else, who has none open; then for the owner */
	v = ask(f, "{\"v\":1,\"cmd\":\"end\"}", 2000, &close);
	assert_false(close);
	assert_string_equal(str(v, "error"), PROTO_E_NOT_OPEN);
	yajl_tree_free(v);
	v = ask(f, "{\"v\":1,\"cmd\":\"end\",\"id\":1}", 2000, &close);
	assert_string_equal(str(v, "error"), PROTO_E_NOT_OWNER);
	yajl_tree_free(v);
	v = ask(f, "{\"v\":1,\"cmd\":\"end\",\"tag\":\"run\"}", 1000, &close);
	assert_false(close);
	assert_true(YAJL_IS_TRUE(get(v, "ok")));
	assert_int_equal(YAJL_GET_INTEGER(get(v, "id")), id);
	assert_int_equal(YAJL_GET_INTEGER(get(v, "begin_ns")), T0);
	assert_int_equal(YAJL_GET_INTEGER(get(v, "end_ns")), T0);
	yajl_tree_free(v);
	(void)windows_list(f->win, &n);
	assert_int_equal(n, 0);

	/* null meta is none */
	v = ask(f, "{\"v\":1,\"cmd\":\"begin\",\"tag\":\"n\",\"meta\":null}", 7, NULL);
	assert_true(YAJL_IS_TRUE(get(v, "ok")));
	yajl_tree_free(v);
}

/*
 * Every way JSON can spell a control character, in every string field of
 * begin and end: each is refused with the field's error, nothing is cut at
 * a NUL and nothing opens or closes a window.
 */
static void
test_control_chars(void **state)
{
	static const char *const forms[] = {
		"\\u0000", "\\u001b", "\\u001B", "\\u0001", "\\u001f", "\\u007f",
		"\\u007F", "\\u0080", "\\u0085", "\\u009f", "\\u009F",
		"\\b", "\\f", "\\n", "\\r", "\\t",
		"\x7f",			/* raw DEL, which JSON allows */
		"\xc2\x80", "\xc2\x85", "\xc2\x9f",	/* raw C1 in UTF-8 */
	};
	struct fx *f = *state;
	char line[256];
	size_t n;
	yajl_val v;

	v = ask(f, "{\"v\":1,\"cmd\":\"begin\",\"tag\":\"ok\"}", 1000, NULL);
	assert_true(YAJL_IS_TRUE(get(v, "ok")));
	yajl_tree_free(v);
	for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
		const char *e = forms[i];

		/* tag, at the end, in the middle and alone */
		snprintf(line, sizeof(line), "{\"v\":1,\"cmd\":\"begin\","
		    "\"tag\":\"ok%s\"}", e);
		assert_refused(f, line, PROTO_E_BAD_TAG, false);
		snprintf(line, sizeof(line), "{\"v\":1,\"cmd\":\"begin\","
		    "\"tag\":\"o%sk\",\"same_tag\":true}", e);
		assert_refused(f, line, PROTO_E_BAD_TAG, false);
		snprintf(line, sizeof(line), "{\"v\":1,\"cmd\":\"begin\","
		    "\"tag\":\"%s\"}", e);
		assert_refused(f, line, PROTO_E_BAD_TAG, false);
		/* end's tag must not match window "ok" */
		snprintf(line, sizeof(line), "{\"v\":1,\"cmd\":\"end\","
		    "\"tag\":\"ok%szzz\"}", e);
		assert_refused(f, line, PROTO_E_BAD_TAG, false);
		/* metadata key and value */
		snprintf(line, sizeof(line), "{\"v\":1,\"cmd\":\"begin\","
		    "\"tag\":\"t\",\"meta\":{\"k%s bad key!\":\"v\"}}", e);
		assert_refused(f, line, PROTO_E_BAD_META, false);
		snprintf(line, sizeof(line), "{\"v\":1,\"cmd\":\"begin\","
		    "\"tag\":\"t\",\"meta\":{\"k\":\"v%s\"}}", e);
		assert_refused(f, line, PROTO_E_BAD_META, false);
		/* any other string, or member name, is a bad request */
		snprintf(line, sizeof(line), "{\"v\":1,\"cmd\":\"status%s\"}", e);
		assert_refused(f, line, PROTO_E_BAD_REQUEST, true);
		snprintf(line, sizeof(line), "{\"v\":1,\"cmd\":\"hello\","
		    "\"x%s\":1}", e);
		assert_refused(f, line, PROTO_E_BAD_REQUEST, true);
	}
	/* a raw C0 byte is not JSON at all */
	assert_refused(f, "{\"v\":1,\"cmd\":\"begin\",\"tag\":\"ok\x1b\"}",
	    PROTO_E_BAD_REQUEST, true);
	/* the message names the field and the character */
	v = ask(f, "{\"v\":1,\"cmd\":\"begin\",\"tag\":\"t\",\"meta\":"
	    "{\"key\":\"a\\u0085b\"}}", 1000, NULL);
	assert_non_null(strstr(str(v, "message"), "U+0085"));
	assert_non_null(strstr(str(v, "message"), "'key'"));
	yajl_tree_free(v);
	v = ask(f, "{\"v\":1,\"cmd\":\"begin\",\"tag\":\"ok\\u0000\\u001b[31m "
	    "junk\"}", 1000, NULL);
	assert_non_null(strstr(str(v, "message"), "U+0000"));
	assert_non_null(strstr(str(v, "message"), "tag"));
	yajl_tree_free(v);

	/* only "ok" is open, still */
	(void)windows_list(f->win, &n);
	assert_int_equal(n, 1);
	/* printable non-ASCII in a value is still fine */
	v = ask(f, "{\"v\":1,\"cmd\":\"begin\",\"tag\":\"u\",\"meta\":"
	    "{\"k\":\"caf\\u00e9 \xc2\xa0\"}}", 1000, NULL);
	assert_true(YAJL_IS_TRUE(get(v, "ok")));
	yajl_tree_free(v);
}

/* A request read after its expires_ns has no effect; before, it is done. */
static void
test_expires(void **state)
{
	struct fx *f = *state;
	char line[160];
	size_t n;
	yajl_val v;

	snprintf(line, sizeof(line), "{\"v\":1,\"cmd\":\"begin\",\"tag\":"
	    "\"late\",\"expires_ns\":%lld}", (long long)(T0 - 1));
	assert_refused(f, line, PROTO_E_EXPIRED, false);
	(void)windows_list(f->win, &n);
	assert_int_equal(n, 0);
	assert_refused(f, "{\"v\":1,\"cmd\":\"begin\",\"tag\":\"x\","
	    "\"expires_ns\":\"soon\"}", PROTO_E_BAD_REQUEST, true);
	snprintf(line, sizeof(line), "{\"v\":1,\"cmd\":\"begin\",\"tag\":"
	    "\"late\",\"expires_ns\":%lld}", (long long)T0);
	v = ask(f, line, 1000, NULL);
	assert_true(YAJL_IS_TRUE(get(v, "ok")));
	yajl_tree_free(v);
	/* an end the caller gave up on leaves the window open */
	snprintf(line, sizeof(line), "{\"v\":1,\"cmd\":\"end\",\"tag\":"
	    "\"late\",\"expires_ns\":%lld}", (long long)(T0 - 5));
	assert_refused(f, line, PROTO_E_EXPIRED, false);
	(void)windows_list(f->win, &n);
	assert_int_equal(n, 1);
}

static void
test_error_reply(void **state)
{
	struct control_reply reply;

	(void)state;
	assert_int_equal(control_request_error(PROTO_E_BUSY, "too \"many\"",
	    &reply), 0);
	assert_true(reply.close);
	assert_int_equal(reply.len, strlen(reply.text));
	assert_string_equal(reply.text, "{\"ok\":false,\"error\":\"busy\","
	    "\"message\":\"too \\\"many\\\"\"}\n");
	free(reply.text);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_malformed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_hello, setup, teardown),
		cmocka_unit_test_setup_teardown(test_begin_end, setup, teardown),
		cmocka_unit_test_setup_teardown(test_control_chars, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_expires, setup, teardown),
		cmocka_unit_test(test_error_reply),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
