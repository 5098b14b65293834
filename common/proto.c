/* proto: validation shared by both ends of the control socket. */
#include "proto.h"

#include <string.h>

static bool
fail(const char **why, const char *msg)
{
	if (why != NULL)
		*why = msg;
	return false;
}

bool
proto_tag_valid(const char *tag, const char **why)
{
	size_t n = strlen(tag);

	if (n == 0)
		return fail(why, "a tag cannot be empty");
	if (n > PROTO_TAG_MAX)
		return fail(why, "a tag is at most 64 bytes");
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)tag[i] < 0x21 || (unsigned char)tag[i] > 0x7e)
			return fail(why, "a tag is printable ASCII without spaces");
	return true;
}

/* Length of the UTF-8 sequence at s (1..4), or 0 if it is not valid. */
static size_t
utf8_len(const unsigned char *s)
{
	size_t n;
	unsigned cp;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf) {
		n = 2;
		cp = s[0] & 0x1fu;
	} else if (s[0] >= 0xe0 && s[0] <= 0xef) {
		n = 3;
		cp = s[0] & 0x0fu;
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		n = 4;
		cp = s[0] & 0x07u;
	} else
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3fu);
	}
	/* overlong forms, surrogates, beyond U+10FFFF */
	if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
		return 0;
	return n;
}

bool
proto_meta_valid(const char *key, const char *value, const char **why)
{
	size_t kn = strlen(key), vn = strlen(value);

	if (kn == 0 || kn > PROTO_META_KEY_MAX)
		return fail(why, "a metadata key is 1 to 64 bytes");
	for (size_t i = 0; i < kn; i++) {
		char c = key[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-'))
			return fail(why, "a metadata key is letters, digits, '_', '.' and '-'");
	}
	if (vn > PROTO_META_VALUE_MAX)
		return fail(why, "a metadata value is at most 256 bytes");
	for (size_t i = 0; i < vn;) {
		const unsigned char *p = (const unsigned char *)value + i;
		size_t n = utf8_len(p);

		if (n == 0)
			return fail(why, "a metadata value must be UTF-8");
		/* C0, DEL and C1 (U+0080..U+009F, UTF-8 c2 80..c2 9f) */
		if (*p < 0x20 || *p == 0x7f || (*p == 0xc2 && p[1] <= 0x9f))
			return fail(why, "a metadata value cannot hold control characters");
		i += n;
	}
	return true;
}
