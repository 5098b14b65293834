/*
 * spyremond: what main.c shares with the rest of the daemon.
 *
 * Exit statuses, one per fatal start-up failure, documented in spyremond(8).
 */
#ifndef SPYREMON_SPYREMOND_H
#define SPYREMON_SPYREMOND_H

#define EXIT_OK			0
#define EXIT_CONFIG		1	/* the config file is invalid */
#define EXIT_USAGE		2	/* bad command line */
#define EXIT_DATABASE		3	/* the database cannot be opened or migrated */
#define EXIT_EVENTLOOP		4	/* signals, timers or the event loop failed */
#define EXIT_SOCKET		5	/* the control socket cannot be set up */
#define EXIT_DAMAGED		6	/* the database's log is damaged and was
					   not opened (refused, or no copy) */

#endif
