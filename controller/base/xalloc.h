/*
 * Allocation wrappers. Running out of memory is not a condition drashift can
 * recover from in a useful way: it logs and aborts, and Kubernetes restarts the
 * pod. Callers therefore never check these for NULL.
 */
#ifndef DRASHIFT_XALLOC_H
#define DRASHIFT_XALLOC_H

#include <stddef.h>

void *xmalloc(size_t size);
void *xcalloc(size_t count, size_t size);
void *xrealloc(void *ptr, size_t size);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
/* a, sep and b in fresh memory: the keys of two names that maps are looked up by, per node and reconcile. */
char *xjoin(const char *a, char sep, const char *b);
/* Formatted string in fresh memory; bounded by construction (vsnprintf twice). */
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
