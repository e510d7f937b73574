/*
 * Newline framing of a watch stream; see watch_framer.h for the contract.
 *
 * The loop looks for the next "\n" with memchr. A line that lies wholly in the
 * chunk while nothing is pending is delivered in place; otherwise its bytes
 * are appended to the pending buffer, which is delivered once the "\n" shows
 * up. The length check runs on the whole line in both paths, so where the
 * chunk boundaries fall never changes which lines are delivered or refused.
 */
#include "watch_framer.h"

#include "xalloc.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* First allocation for a split line: most watch events are a few KiB. */
#define WATCH_FRAMER_MIN_CAP 1024u

void watch_framer_init(watch_framer_t *f, size_t max_line)
{
	f->buf = NULL;
	f->len = 0;
	f->cap = 0;
	/* One byte stays free for the terminator, so max + 1 must not overflow. */
	f->max = max_line < SIZE_MAX ? max_line : SIZE_MAX - 1;
}

size_t watch_framer_pending(const watch_framer_t *f)
{
	return f->len;
}

void watch_framer_reset(watch_framer_t *f)
{
	free(f->buf);
	f->buf = NULL;
	f->len = 0;
	f->cap = 0;
}

void watch_framer_free(watch_framer_t *f)
{
	watch_framer_reset(f);
}

/*
 * Append n bytes to the pending line, growing the buffer geometrically but
 * never beyond max + 1 (the extra byte keeps the line NUL-terminated, so a
 * parser that peeks one byte past the end stays inside the allocation).
 * Returns -1 when the line would exceed max.
 */
static int watch_framer__append(watch_framer_t *f, const char *bytes, size_t n)
{
	if (n > f->max - f->len)
		return -1;
	size_t need = f->len + n + 1;
	if (need > f->cap) {
		size_t cap = f->cap > 0 ? f->cap : WATCH_FRAMER_MIN_CAP;
		while (cap < need)
			cap = cap > SIZE_MAX / 2 ? SIZE_MAX : cap * 2;
		/* need <= max + 1 was checked above, so the clamp keeps cap >= need. */
		if (cap > f->max + 1)
			cap = f->max + 1;
		f->buf = xrealloc(f->buf, cap);
		f->cap = cap;
	}
	memcpy(f->buf + f->len, bytes, n);
	f->len += n;
	f->buf[f->len] = '\0';
	return 0;
}

int watch_framer_feed(watch_framer_t *f, const char *bytes, size_t n, watch_framer_line_cb on_line,
		      void *data)
{
	size_t pos = 0;
	while (pos < n) {
		const char *start = bytes + pos;
		const char *nl = memchr(start, '\n', n - pos);
		if (nl == NULL) {
			if (watch_framer__append(f, start, n - pos) != 0) {
				watch_framer_reset(f);
				return -1;
			}
			return 0;
		}

		size_t seg = (size_t)(nl - start);
		const char *line;
		size_t len;
		if (f->len == 0) {
			if (seg > f->max) {
				watch_framer_reset(f);
				return -1;
			}
			line = start;
			len = seg;
		} else {
			if (watch_framer__append(f, start, seg) != 0) {
				watch_framer_reset(f);
				return -1;
			}
			line = f->buf;
			len = f->len;
		}
		pos += seg + 1;

		if (len > 0 && line[len - 1] == '\r')
			len--;
		int rc = len > 0 ? on_line(line, len, data) : 0;
		/* The pending line, if any, has been delivered; keep the buffer for the next one. */
		f->len = 0;
		if (rc != 0)
			return rc;
	}
	return 0;
}
