/*
 * libFuzzer target for the watch framer.
 *
 * The first three input bytes choose the line cap, the chunking and when the
 * callback asks to stop; the rest is the stream. The stream is fed in chunks
 * of varying size, each copied into an allocation of exactly its size so the
 * sanitizer sees any read beyond it. The lines delivered must be exactly those
 * a simple reference splitter finds in the whole stream, and feeding must end
 * the way the reference says (0, -1 for a line over the cap, or the stop code).
 *
 *   CC=clang meson setup build-fuzz -Dfuzz=true -Db_sanitize=address,undefined -Db_lundef=false
 *   meson compile -C build-fuzz test/fuzz/fuzz_watch_framer
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "watch_framer.h"

#define STOP_RC 42

typedef struct {
	size_t start;
	size_t len;
} ref_line_t;

typedef struct {
	const uint8_t *stream;
	const ref_line_t *want;
	size_t nwant;
	size_t got;
	size_t stop_after; /* 0: never stop */
} check_t;

static int on_line(const char *line, size_t len, void *data)
{
	check_t *c = data;
	if (len == 0 || c->got >= c->nwant)
		abort();
	const ref_line_t *w = &c->want[c->got];
	if (w->len != len || memcmp(c->stream + w->start, line, len) != 0)
		abort();
	/* The byte after a line is readable (ASan checks it) and is its terminator. */
	if (line[len] != '\n' && line[len] != '\r' && line[len] != '\0')
		abort();
	c->got++;
	if (c->stop_after != 0 && c->got == c->stop_after)
		return STOP_RC;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 3)
		return 0;
	/* Small caps hit the limit often; the top bit allows long lines too. */
	size_t max = (data[0] & 0x80) ? 4096 + (data[0] & 0x7f) : data[0];
	uint32_t rng = data[1] * 2654435761u + 1;
	size_t stop_after = data[2] % 8;
	const uint8_t *s = data + 3;
	size_t n = size - 3;

	/* Reference: split the whole stream. */
	ref_line_t *want = malloc((n + 1) * sizeof(*want));
	if (want == NULL)
		abort();
	size_t nwant = 0, pos = 0, tail = 0;
	int want_rc = 0;
	while (pos < n) {
		const uint8_t *nl = memchr(s + pos, '\n', n - pos);
		size_t seg = nl != NULL ? (size_t)(nl - (s + pos)) : n - pos;
		if (seg > max) {
			want_rc = -1;
			break;
		}
		if (nl == NULL) {
			tail = seg;
			break;
		}
		size_t len = seg > 0 && s[pos + seg - 1] == '\r' ? seg - 1 : seg;
		if (len > 0) {
			want[nwant].start = pos;
			want[nwant].len = len;
			nwant++;
			if (stop_after != 0 && nwant == stop_after) {
				want_rc = STOP_RC;
				break;
			}
		}
		pos += seg + 1;
	}

	watch_framer_t f;
	watch_framer_init(&f, max);
	check_t c = {.stream = s, .want = want, .nwant = nwant, .stop_after = stop_after};
	int rc = 0;
	for (pos = 0; pos < n && rc == 0;) {
		rng = rng * 1103515245u + 12345u;
		size_t chunk = 1 + (rng >> 16) % 97;
		if (chunk > n - pos)
			chunk = n - pos;
		uint8_t *copy = malloc(chunk);
		if (copy == NULL)
			abort();
		memcpy(copy, s + pos, chunk);
		rc = watch_framer_feed(&f, (const char *)copy, chunk, on_line, &c);
		free(copy);
		pos += chunk;
	}
	if (rc != want_rc || c.got != nwant)
		abort();
	if (rc == 0 && watch_framer_pending(&f) != tail)
		abort();
	if (rc != 0 && watch_framer_pending(&f) != 0)
		abort();

	/* After a reset the framer takes a fresh stream. */
	watch_framer_reset(&f);
	if (watch_framer_pending(&f) != 0)
		abort();
	watch_framer_free(&f);
	free(want);
	return 0;
}
