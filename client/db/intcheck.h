/*
 * intcheck: what one message of SQLite's "PRAGMA integrity_check" names.
 * SQLite 3.40 writes, one problem a message, such as
 *   "Page 20: btreeInitPage() returns error code 11"
 *   "Tree 4 page 12 cell 3: Rowid 7 out of order"
 *   "row 5 missing from index samples_file"
 *   "wrong # of entries in index windows_begin"
 *   "Page 31 is never used"
 * after a first line "*** in database main ***" when it found any.  The
 * pages and the index a message names are what "spyremon db check"
 * attributes to tables.  Pure: no SQLite.
 */
#ifndef SPYREMON_INTCHECK_H
#define SPYREMON_INTCHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct intcheck_msg {
	uint32_t tree;		/* "Tree N": a b-tree's root page; 0 if none */
	uint32_t page;		/* the page the problem is on; 0 if none */
	bool unused;		/* "Page N is never used": a page no tree holds */
	char index[128];	/* the index it names ("... index NAME"), or "" */
};

/*
 * Read one message (a line, without "*** in database" lines) into *out.
 * False if it names nothing intcheck knows (it is still a problem).
 */
bool intcheck_parse(const char *msg, struct intcheck_msg *out);

/* True if line is the header SQLite puts before the messages. */
bool intcheck_is_header(const char *line);

#endif
