/* version: the release of every program in this tree. */
#ifndef SPYREMON_VERSION_H
#define SPYREMON_VERSION_H

#define SPYREMON_VERSION "0.1.0"

#endif
