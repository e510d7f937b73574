/*
 * Watch framing: whatever way the stream is cut into chunks, the same lines
 * come out; a line over the cap fails the stream and the framer recovers.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "watch_framer.h"

#define MAX_LINES 32

typedef struct {
	char *lines[MAX_LINES];
	size_t n;
	size_t stop_after; /* return stop_rc once this many lines arrived; 0: never */
	int stop_rc;
	const char *chunk; /* the chunk being fed, to tell in-place lines from copies */
	size_t chunk_len;
	size_t in_place; /* lines delivered as pointers into the chunk */
} collector_t;

static int collect(const char *line, size_t len, void *data)
{
	collector_t *c = data;
	assert_true(len > 0);
	assert_true(c->n < MAX_LINES);
	/* The byte after the line is readable: "\r", "\n" or the buffer's NUL. */
	assert_true(line[len] == '\r' || line[len] == '\n' || line[len] == '\0');
	if (c->chunk != NULL && line >= c->chunk && line + len <= c->chunk + c->chunk_len)
		c->in_place++;
	c->lines[c->n] = malloc(len + 1);
	assert_non_null(c->lines[c->n]);
	memcpy(c->lines[c->n], line, len);
	c->lines[c->n][len] = '\0';
	c->n++;
	if (c->stop_after != 0 && c->n == c->stop_after)
		return c->stop_rc;
	return 0;
}

static void collector_clear(collector_t *c)
{
	for (size_t i = 0; i < c->n; i++)
		free(c->lines[i]);
	memset(c, 0, sizeof(*c));
}

static int feed(watch_framer_t *f, collector_t *c, const char *bytes, size_t n)
{
	c->chunk = bytes;
	c->chunk_len = n;
	return watch_framer_feed(f, bytes, n, collect, c);
}

/*
 * Feed stream cut at the given offsets into heap chunks of exactly their size
 * (so ASan sees any read past a chunk). Returns the first non-zero result.
 */
static int feed_cut(watch_framer_t *f, collector_t *c, const char *stream, size_t len,
		    const size_t *cuts, size_t ncuts)
{
	size_t start = 0;
	for (size_t i = 0; i <= ncuts; i++) {
		size_t end = i < ncuts ? cuts[i] : len;
		char *chunk = malloc(end - start + 1);
		assert_non_null(chunk);
		memcpy(chunk, stream + start, end - start);
		int rc = feed(f, c, chunk, end - start);
		free(chunk);
		if (rc != 0)
			return rc;
		start = end;
	}
	return 0;
}

static void assert_lines(const collector_t *c, const char *const *want, size_t nwant)
{
	if (c->n != nwant)
		fail_msg("%zu lines delivered, want %zu", c->n, nwant);
	for (size_t i = 0; i < nwant; i++)
		assert_string_equal(c->lines[i], want[i]);
}

static const char stream[] = "{\"type\":\"ADDED\",\"object\":{\"a\":1}}\n"
			     "\n"
			     "{\"type\":\"MODIFIED\"}\r\n"
			     "\r\n"
			     "x\n"
			     "\n\n"
			     "{\"b\":\"c\\r\\n\"}\r\n";
static const char *const stream_lines[] = {
	"{\"type\":\"ADDED\",\"object\":{\"a\":1}}",
	"{\"type\":\"MODIFIED\"}",
	"x",
	"{\"b\":\"c\\r\\n\"}",
};
#define STREAM_LINES (sizeof(stream_lines) / sizeof(stream_lines[0]))

static void test_every_chunk_boundary(void **state)
{
	(void)state;
	size_t len = sizeof(stream) - 1;
	watch_framer_t f;
	collector_t c = {0};
	watch_framer_init(&f, 64);

	/* All in one chunk: every line is delivered in place, nothing is copied. */
	assert_int_equal(feed_cut(&f, &c, stream, len, NULL, 0), 0);
	assert_lines(&c, stream_lines, STREAM_LINES);
	assert_int_equal(c.in_place, STREAM_LINES);
	assert_null(f.buf);
	collector_clear(&c);

	/* Two chunks, cut at every offset (0 and len give an empty chunk). */
	for (size_t i = 0; i <= len; i++) {
		size_t cuts[1] = {i};
		assert_int_equal(feed_cut(&f, &c, stream, len, cuts, 1), 0);
		assert_lines(&c, stream_lines, STREAM_LINES);
		assert_int_equal(watch_framer_pending(&f), 0);
		collector_clear(&c);
	}

	/* Three chunks, every pair of cuts. */
	for (size_t i = 0; i <= len; i++) {
		for (size_t j = i; j <= len; j++) {
			size_t cuts[2] = {i, j};
			assert_int_equal(feed_cut(&f, &c, stream, len, cuts, 2), 0);
			assert_lines(&c, stream_lines, STREAM_LINES);
			assert_int_equal(watch_framer_pending(&f), 0);
			collector_clear(&c);
		}
	}

	/* Byte by byte. */
	size_t cuts[sizeof(stream)];
	for (size_t i = 0; i < len; i++)
		cuts[i] = i + 1;
	assert_int_equal(feed_cut(&f, &c, stream, len, cuts, len - 1), 0);
	assert_lines(&c, stream_lines, STREAM_LINES);
	assert_int_equal(c.in_place, 0);
	collector_clear(&c);

	watch_framer_free(&f);
}

static void test_pending_partial_line(void **state)
{
	(void)state;
	watch_framer_t f;
	collector_t c = {0};
	watch_framer_init(&f, 1024);
	assert_int_equal(feed(&f, &c, "{\"a\":1}\n{\"b\"", 12), 0);
	assert_int_equal(c.n, 1);
	assert_int_equal(watch_framer_pending(&f), 4);
	assert_int_equal(feed(&f, &c, ":2", 2), 0);
	assert_int_equal(watch_framer_pending(&f), 6);
	/* The "\r" of a CRLF split from its "\n" is still stripped. */
	assert_int_equal(feed(&f, &c, "}\r", 2), 0);
	assert_int_equal(feed(&f, &c, "\n", 1), 0);
	assert_int_equal(watch_framer_pending(&f), 0);
	const char *want[] = {"{\"a\":1}", "{\"b\":2}"};
	assert_lines(&c, want, 2);
	collector_clear(&c);

	/* reset drops what was pending; the next stream starts clean. */
	assert_int_equal(feed(&f, &c, "half a li", 9), 0);
	watch_framer_reset(&f);
	assert_int_equal(watch_framer_pending(&f), 0);
	assert_int_equal(feed(&f, &c, "ne\n", 3), 0);
	const char *after[] = {"ne"};
	assert_lines(&c, after, 1);
	collector_clear(&c);
	watch_framer_free(&f);
}

static void test_crlf_and_empty_lines(void **state)
{
	(void)state;
	watch_framer_t f;
	collector_t c = {0};
	watch_framer_init(&f, 64);
	/* Only one "\r" belongs to the line ending; a bare "\r" line is empty. */
	const char *s = "\n\r\n\n\r\r\na\r\r\nb\rc\n\r\n";
	assert_int_equal(feed(&f, &c, s, strlen(s)), 0);
	const char *want[] = {"\r", "a\r", "b\rc"};
	assert_lines(&c, want, 3);
	collector_clear(&c);
	watch_framer_free(&f);
}

static void test_line_over_cap(void **state)
{
	(void)state;
	watch_framer_t f;
	collector_t c = {0};
	watch_framer_init(&f, 16);
	/* "ok" + a 17-byte line + "next": refused at every split, "ok" still delivered. */
	const char s[] = "ok\n0123456789abcdefg\nnext\n";
	size_t len = sizeof(s) - 1;
	for (size_t i = 0; i <= len; i++) {
		size_t cuts[1] = {i};
		assert_int_equal(feed_cut(&f, &c, s, len, cuts, 1), -1);
		const char *want[] = {"ok"};
		assert_lines(&c, want, 1);
		assert_int_equal(watch_framer_pending(&f), 0);
		collector_clear(&c);
		watch_framer_reset(&f);
	}

	/* Growing past the cap fails at once, before any "\n" arrives. */
	assert_int_equal(feed(&f, &c, "0123456789", 10), 0);
	assert_int_equal(feed(&f, &c, "abcdefg", 7), -1);
	assert_int_equal(watch_framer_pending(&f), 0);
	assert_null(f.buf);

	/* After the relist the framer works again; a line of exactly the cap is fine. */
	watch_framer_reset(&f);
	assert_int_equal(feed(&f, &c, "0123456789", 10), 0);
	assert_int_equal(feed(&f, &c, "abcdef\n", 7), 0);
	assert_true(f.cap <= 17);
	const char *want[] = {"0123456789abcdef"};
	assert_lines(&c, want, 1);
	collector_clear(&c);
	watch_framer_free(&f);
}

static void test_buffer_growth_is_bounded(void **state)
{
	(void)state;
	const size_t max = 100000;
	watch_framer_t f;
	collector_t c = {0};
	watch_framer_init(&f, max);
	char *line = malloc(max + 1);
	assert_non_null(line);
	memset(line, 'x', max);
	line[max] = '\n';
	size_t grows = 0, last_cap = 0;
	for (size_t off = 0; off < max; off += 1000) {
		assert_int_equal(feed(&f, &c, line + off, 1000), 0);
		assert_true(f.cap >= f.len + 1);
		assert_true(f.cap <= max + 1);
		if (f.cap != last_cap) {
			grows++;
			last_cap = f.cap;
		}
	}
	/* Doubling from 1 KiB: a handful of reallocations for 100 KB, not one per chunk. */
	assert_true(grows <= 8);
	assert_int_equal(watch_framer_pending(&f), max);
	assert_int_equal(feed(&f, &c, "\n", 1), 0);
	assert_int_equal(c.n, 1);
	assert_int_equal(strlen(c.lines[0]), max);
	collector_clear(&c);
	free(line);
	watch_framer_free(&f);
}

static void test_callback_stops_feeding(void **state)
{
	(void)state;
	watch_framer_t f;
	collector_t c = {0};
	watch_framer_init(&f, 64);
	c.stop_after = 2;
	c.stop_rc = 7;
	const char *s = "one\ntwo\nthree\nfour";
	assert_int_equal(feed(&f, &c, s, strlen(s)), 7);
	const char *want[] = {"one", "two"};
	assert_lines(&c, want, 2);
	/* The rest of the chunk is dropped; nothing is left pending. */
	assert_int_equal(watch_framer_pending(&f), 0);
	collector_clear(&c);

	/* Also when the stopping line was a copied one. */
	c.stop_after = 1;
	c.stop_rc = -5;
	assert_int_equal(feed(&f, &c, "par", 3), 0);
	assert_int_equal(feed(&f, &c, "tial\nmore\n", 10), -5);
	const char *want2[] = {"partial"};
	assert_lines(&c, want2, 1);
	assert_int_equal(watch_framer_pending(&f), 0);
	collector_clear(&c);
	watch_framer_free(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_chunk_boundary),
		cmocka_unit_test(test_pending_partial_line),
		cmocka_unit_test(test_crlf_and_empty_lines),
		cmocka_unit_test(test_line_over_cap),
		cmocka_unit_test(test_buffer_growth_is_bounded),
		cmocka_unit_test(test_callback_stops_feeding),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
