/* capterm: capture's progress on a terminal (capterm.h). */
#include "capterm.h"

#include <stdarg.h>
#include <stdio.h>

void
capterm_progress(bool tty, const char *fmt, ...)
{
	va_list ap;

	if (!tty)
		return;
	capterm_clear(tty);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fflush(stderr);
}

void
capterm_clear(bool tty)
{
	if (tty)
		fputs("\r\033[K", stderr);
}
