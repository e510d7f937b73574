#include "buf.h"

#include <stdlib.h>
#include <string.h>

#include "xalloc.h"

void buf_init(buf_t *b, size_t max)
{
	*b = (buf_t){ .max = max };
}

int buf_append(buf_t *b, const void *s, size_t n)
{
	if (b->full || n > b->max - b->len) {
		b->full = true;
		return -1;
	}
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;
		while (cap < b->len + n + 1)
			cap *= 2;
		b->data = xrealloc(b->data, cap);
		b->cap = cap;
	}
	if (n > 0)
		memcpy(b->data + b->len, s, n);
	b->len += n;
	b->data[b->len] = '\0';
	return 0;
}

int buf_puts(buf_t *b, const char *s)
{
	return buf_append(b, s, strlen(s));
}

void buf_clear(buf_t *b)
{
	b->len = 0;
	b->full = false;
	if (b->data != NULL)
		b->data[0] = '\0';
}

void buf_free(buf_t *b)
{
	free(b->data);
	buf_init(b, b->max);
}
