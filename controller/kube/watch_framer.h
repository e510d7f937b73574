/*
 * Newline framing of a Kubernetes watch stream.
 *
 * A watch response is a stream of JSON objects, one per line, that curl hands
 * over in chunks of any size: a line may be spread over many chunks and one
 * chunk may hold many lines. The framer turns chunks back into lines.
 *
 * The bytes of an unfinished line are held in a buffer with a hard cap set at
 * creation (curl's dynbuf rule): an API server that sends an endless line, or
 * an object far larger than anything drashift watches, makes feeding fail
 * instead of growing memory without bound. The caller then drops the watch and
 * relists.
 *
 * When a whole line lies inside one chunk and nothing is pending, the line is
 * handed over as a pointer into the chunk; only lines split across chunks are
 * copied. The framer is embedded by its owner (no allocation until a line is
 * split) and is single-threaded like the loop that feeds it.
 */
#ifndef DRASHIFT_WATCH_FRAMER_H
#define DRASHIFT_WATCH_FRAMER_H

#include <stddef.h>

typedef struct {
	char *buf;  /* the unfinished line; NULL until a line is split across chunks */
	size_t len; /* bytes of it held */
	size_t cap; /* allocated size of buf (one more than the bytes it can hold) */
	size_t max; /* hard cap on a line's length, set by watch_framer_init */
} watch_framer_t;

/*
 * Called for each complete, non-empty line, without its "\n" and without the
 * "\r" of a CRLF ending. line is not NUL-terminated, but line[len] is always
 * readable. It is valid only during the call. Return 0 to go on; anything else
 * stops feeding and is returned by watch_framer_feed().
 *
 * The callback must not call watch_framer_feed/reset/free on the framer that
 * called it: stop by returning non-zero and reset afterwards.
 */
typedef int (*watch_framer_line_cb)(const char *line, size_t len, void *data);

/*
 * max_line caps the length of one line: every byte before its "\n", counting
 * the "\r" of a CRLF ending.
 */
void watch_framer_init(watch_framer_t *f, size_t max_line);

/*
 * Feed n bytes of the stream; on_line runs for every line they complete.
 * Returns:
 *   0    all bytes consumed; an unfinished line is kept for the next call;
 *   -1   a line grew past max_line: the framer has been reset (nothing is
 *        pending, no further line of this chunk was delivered) and the stream
 *        cannot be trusted any more; the caller relists;
 *   rc   on_line returned non-zero rc: the rest of the chunk is dropped and
 *        nothing is pending.
 */
int watch_framer_feed(watch_framer_t *f, const char *bytes, size_t n, watch_framer_line_cb on_line,
		      void *data);

/* Bytes of an unfinished line held until its "\n" arrives. */
size_t watch_framer_pending(const watch_framer_t *f);

/* Forget any unfinished line and give its buffer back, e.g. before a new watch. */
void watch_framer_reset(watch_framer_t *f);

/* Release the buffer; the framer may be initialised again afterwards. */
void watch_framer_free(watch_framer_t *f);

#endif
