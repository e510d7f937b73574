/*
 * A growable byte buffer with a hard cap set when it is created: the one
 * buffer for bodies and text that grow piece by piece (HTTP responses, the
 * /metrics exposition). Exceeding the cap is an error the caller reports,
 * never a crash or a silent cut.
 */
#ifndef DRASHIFT_BUF_H
#define DRASHIFT_BUF_H

#include <stdbool.h>
#include <stddef.h>

typedef struct {
	char *data; /* NUL-terminated after the first append; NULL before */
	size_t len; /* bytes held, without the NUL */
	size_t cap; /* bytes allocated */
	size_t max; /* len never exceeds this */
	bool full;  /* an append was refused: every later one is too, until buf_clear() */
} buf_t;

void buf_init(buf_t *b, size_t max);
/*
 * Append n bytes (n may be 0: the buffer then holds at least ""). Returns 0,
 * or -1 and sets full, appending nothing, when len would exceed max.
 */
int buf_append(buf_t *b, const void *s, size_t n);
/* buf_append() of a C string. */
int buf_puts(buf_t *b, const char *s);
/* Empty the buffer, keeping its memory; full is cleared. */
void buf_clear(buf_t *b);
/* Release the memory; the buffer is empty again with the same cap. */
void buf_free(buf_t *b);

#endif
