/*
 * output: where a command writes a file, so that a failed or interrupted
 * write never leaves a partial file behind.
 *
 * A path is written as a temporary file beside it, renamed over it only
 * once complete; the temporary file is removed on failure and on SIGINT,
 * SIGTERM or SIGHUP.  NULL or "-" means stdout.  A character device
 * (/dev/null, a terminal) or a FIFO is written in place: renaming over it
 * would replace it.  It is opened without blocking: a FIFO that no one is
 * reading is an error, not a wait.  Any other kind of file there (a
 * directory, a socket, a block device) is an error naming what it is.
 * One output is open at a time per process.
 */
#ifndef SPYREMON_OUTPUT_H
#define SPYREMON_OUTPUT_H

#include <stdbool.h>
#include <stdio.h>

/*
 * Open the output for path (NULL or "-": stdout).  Returns the stream, or
 * NULL after printing why.
 */
FILE *output_open(const char *path);

/*
 * Finish the output opened by output_open: on rc == CLIENT_EXIT_OK, flush
 * and rename the temporary file into place; otherwise remove it.  Returns
 * rc, or CLIENT_EXIT_FAILED (after printing why) if rc was OK but the
 * data could not be written.  Closes fp unless it is stdout.
 */
int output_close(FILE *fp, const char *path, int rc);

/*
 * The temporary file's name while one is open (for a writer that must
 * reopen it by name), else NULL.
 */
const char *output_tmp_path(void);

/* A name for path in messages: "stdout" for NULL or "-". */
const char *output_name(const char *path);

#endif
