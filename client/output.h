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

/*
 * SIGINT, SIGTERM and SIGHUP end the program after removing the temporary
 * file (output_open catches them from then on), and then after fn, which
 * must be async-signal-safe; NULL for none.  Catches them from now on.
 */
void output_at_signal(void (*fn)(void));

/* A name for path in messages: "stdout" for NULL or "-". */
const char *output_name(const char *path);

/*
 * A directory written whole (--output DIR of report and capture): its
 * files are written into a new directory beside dir, whose name
 * output_dir_open puts in tmp (len bytes), and output_dir_publish renames
 * that to dir once they are complete.  dir must not exist, or be an empty
 * directory, which is replaced.  Both return CLIENT_EXIT_OK, or
 * CLIENT_EXIT_FAILED after saying why ("--output DIR: ...").  On success
 * publish empties tmp; output_dir_remove removes tmp and its files, if
 * tmp is not empty, and empties it.
 */
int output_dir_open(const char *dir, char *tmp, size_t len);
int output_dir_publish(const char *dir, char *tmp);
void output_dir_remove(char *tmp);

#endif
