/* The "env" block of the document: what machine and build produced it. */
#ifndef HEAPLAB_ENV_INFO_H
#define HEAPLAB_ENV_INFO_H

#include "json_writer.h"

/* Writes "env": {...} (key and object) into the current object. A figure
 * that cannot be found is null. */
void env_info_write(json_writer *j);

#endif
