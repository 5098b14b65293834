/*
 * plot_priv: what the chart drawers of this folder (plot.c, plot_bars.c,
 * plot_steps.c) share beyond plot.h's functions: the font and its sizes.
 */
#ifndef SPYREMON_PLOT_PRIV_H
#define SPYREMON_PLOT_PRIV_H

#define PLOT_FONT	"sans-serif"
#define PLOT_TITLE_SIZE	18.0
#define PLOT_LABEL_SIZE	12.0

#endif
