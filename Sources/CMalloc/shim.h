#ifndef PREFSD_CMALLOC_SHIM_H
#define PREFSD_CMALLOC_SHIM_H

/* glibc's malloc extensions (malloc_trim), which Swift's Glibc module leaves out. */
#include <malloc.h>

#endif
