/*
 * A deduplicating work queue of string keys ("plan/name", "node/gpu-1") with
 * delayed adds, with the semantics of client-go's delaying workqueue. (No
 * per-key failure backoff: a failed write is decided again from what the
 * cluster shows, and the freeze's writes keep their own retry pause.)
 *
 * It is a pure data structure: it never reads a clock and never arms a timer.
 * Every call that depends on time takes now_ms, a monotonic millisecond clock
 * supplied by the caller, so unit tests are deterministic. The controller
 * drives it from one libuv timer armed with workqueue_next_due().
 *
 * Each key is in at most one of these places at a time:
 *   ready       handed out by workqueue_get(), oldest readiness first
 *   waiting     becomes ready at its due time (the earliest one asked for)
 *   processing  handed out and not yet workqueue_done(); it may additionally
 *               carry a pending re-add (ready or waiting) that takes effect
 *               when workqueue_done() is called, so a key is never handed
 *               out twice at once
 *
 * Single-threaded, like the rest of the controller: no locking.
 * Keys are copied; callers keep ownership of the strings they pass in.
 * Keys must not be NULL.
 */
#ifndef DRASHIFT_WORKQUEUE_H
#define DRASHIFT_WORKQUEUE_H

#include <stddef.h>
#include <stdint.h>

typedef struct workqueue workqueue_t;

/* Create an empty queue. Never returns NULL. */
workqueue_t *workqueue_new(void);

/* Free the queue and every key in it, including keys still processing. */
void workqueue_free(workqueue_t *q);

/*
 * Make key ready now. If the key is already ready, nothing changes (it keeps
 * its place); if it is waiting, it becomes ready now. If it is being
 * processed, it is marked to become ready again when workqueue_done() is
 * called. Ignored after workqueue_shutdown().
 */
void workqueue_add(workqueue_t *q, const char *key, uint64_t now_ms);

/*
 * Make key ready at now_ms + delay_ms (saturating). An earlier due time
 * already recorded for the key wins, and a key that is already ready stays
 * ready. A delay of 0 is workqueue_add(). While the key is being processed,
 * the delay is recorded and the key starts waiting when workqueue_done() is
 * called (ready at once if the due time has passed by then).
 * Ignored after workqueue_shutdown().
 */
void workqueue_add_after(workqueue_t *q, const char *key, uint64_t delay_ms, uint64_t now_ms);

/*
 * Next ready key, in FIFO order of readiness. Waiting keys whose due time has
 * come are made ready first, in due-time order (ties in the order they were
 * scheduled). The key is marked processing. Returns NULL when nothing is
 * ready or after workqueue_shutdown(). The returned string is owned by the
 * queue and stays valid until workqueue_done() is called for the key.
 */
const char *workqueue_get(workqueue_t *q, uint64_t now_ms);

/*
 * Processing of key is finished. If the key was re-added meanwhile it is
 * ready again, or waiting if it was re-added with a delay that has not yet
 * elapsed. Does nothing for a key that is not being processed. key may be the
 * pointer workqueue_get() returned; it is invalid after this call.
 */
void workqueue_done(workqueue_t *q, const char *key);

/*
 * Milliseconds until workqueue_get() has something to hand out: 0 if a key is
 * ready now (or a waiting key is already due), the time until the earliest
 * waiting key is due otherwise, and UINT64_MAX if nothing is ready or waiting
 * or the queue is shut down. Keys being processed do not count: call this
 * again after workqueue_done(), which may make a key ready.
 */
uint64_t workqueue_next_due(const workqueue_t *q, uint64_t now_ms);

/*
 * Ready plus waiting keys, not counting keys being processed (even those with
 * a pending re-add; they count again once workqueue_done() requeues them).
 */
size_t workqueue_depth(const workqueue_t *q);

/* Keys handed out by workqueue_get() and not yet workqueue_done(). */
size_t workqueue_processing(const workqueue_t *q);

/*
 * Stop handing out work: later adds are ignored and workqueue_get() returns
 * NULL. workqueue_done() still works, so keys in flight can finish.
 */
void workqueue_shutdown(workqueue_t *q);

#endif
