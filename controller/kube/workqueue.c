#include "workqueue.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "strmap.h"
#include "xalloc.h"

#define WORKQUEUE_MIN_CAPACITY 16u

/*
 * Where a key is queued. For a key that is not processing, READY means it is
 * in the FIFO and WAITING means it is in the heap. For a key being processed
 * it is the pending re-add to apply in workqueue_done(), and the key is in
 * neither structure: that is what keeps it from being handed out twice.
 */
typedef enum {
	WORKQUEUE_NONE,
	WORKQUEUE_READY,
	WORKQUEUE_WAITING,
} workqueue_queued_t;

typedef struct {
	uint64_t due_ms;     /* valid while queued == WAITING */
	uint64_t seq;        /* orders equal due times: first scheduled, first out */
	size_t heap_index;   /* valid while in the heap */
	workqueue_queued_t queued;
	bool processing;
	char key[];
} workqueue_item_t;

struct workqueue {
	uint64_t next_seq;
	bool shut_down;
	size_t nprocessing;

	/* Every key with any state: queued or processing. */
	strmap_t items; /* key -> workqueue_item_t* */

	/* Ready keys, a ring buffer. */
	workqueue_item_t **fifo;
	size_t fifo_cap; /* power of two */
	size_t fifo_head;
	size_t fifo_len;

	/* Waiting keys, a binary min-heap on (due_ms, seq). */
	workqueue_item_t **heap;
	size_t heap_cap;
	size_t heap_len;
};

/* ---- the keys ------------------------------------------------------------ */

static workqueue_item_t *workqueue_lookup(const workqueue_t *q, const char *key)
{
	return strmap_get(&q->items, key);
}

/* Returns the key's item, creating an idle one if the key is unknown. */
static workqueue_item_t *workqueue_intern(workqueue_t *q, const char *key)
{
	workqueue_item_t *item = strmap_get(&q->items, key);
	if (item != NULL)
		return item;
	size_t len = strlen(key);
	item = xmalloc(sizeof(*item) + len + 1);
	memset(item, 0, sizeof(*item));
	memcpy(item->key, key, len + 1);
	item->queued = WORKQUEUE_NONE;
	strmap_put(&q->items, key, item);
	return item;
}

/*
 * A key with no queue state is dropped, so the
 * table holds only keys that matter and a processed key costs nothing.
 */
static void workqueue_release_if_idle(workqueue_t *q, workqueue_item_t *item)
{
	if (item->queued != WORKQUEUE_NONE || item->processing)
		return;
	strmap_remove(&q->items, item->key);
	free(item);
}

/* ---- FIFO of ready keys -------------------------------------------------- */

static void workqueue_fifo_push(workqueue_t *q, workqueue_item_t *item)
{
	if (q->fifo_len == q->fifo_cap) {
		size_t new_cap = q->fifo_cap * 2;
		workqueue_item_t **n = xmalloc(new_cap * sizeof(*n));
		for (size_t i = 0; i < q->fifo_len; i++)
			n[i] = q->fifo[(q->fifo_head + i) & (q->fifo_cap - 1)];
		free(q->fifo);
		q->fifo = n;
		q->fifo_cap = new_cap;
		q->fifo_head = 0;
	}
	q->fifo[(q->fifo_head + q->fifo_len) & (q->fifo_cap - 1)] = item;
	q->fifo_len++;
	item->queued = WORKQUEUE_READY;
}

static workqueue_item_t *workqueue_fifo_pop(workqueue_t *q)
{
	if (q->fifo_len == 0)
		return NULL;
	workqueue_item_t *item = q->fifo[q->fifo_head];
	q->fifo_head = (q->fifo_head + 1) & (q->fifo_cap - 1);
	q->fifo_len--;
	item->queued = WORKQUEUE_NONE;
	return item;
}

/* ---- heap of waiting keys ------------------------------------------------ */

/*
 * Each item knows its heap index, so a waiting key that is added ready, or
 * re-added with an earlier due time, is removed or moved in O(log n). That
 * keeps no stale entries in the heap: the top is always a live key, which is
 * what lets workqueue_next_due() stay const and O(1).
 */
static bool workqueue_heap_less(const workqueue_item_t *a, const workqueue_item_t *b)
{
	return a->due_ms < b->due_ms || (a->due_ms == b->due_ms && a->seq < b->seq);
}

static void workqueue_heap_place(workqueue_t *q, size_t i, workqueue_item_t *item)
{
	q->heap[i] = item;
	item->heap_index = i;
}

static void workqueue_heap_sift_up(workqueue_t *q, size_t i)
{
	workqueue_item_t *item = q->heap[i];
	while (i > 0) {
		size_t parent = (i - 1) / 2;
		if (!workqueue_heap_less(item, q->heap[parent]))
			break;
		workqueue_heap_place(q, i, q->heap[parent]);
		i = parent;
	}
	workqueue_heap_place(q, i, item);
}

static void workqueue_heap_sift_down(workqueue_t *q, size_t i)
{
	workqueue_item_t *item = q->heap[i];
	for (;;) {
		size_t child = 2 * i + 1;
		if (child >= q->heap_len)
			break;
		if (child + 1 < q->heap_len && workqueue_heap_less(q->heap[child + 1], q->heap[child]))
			child++;
		if (!workqueue_heap_less(q->heap[child], item))
			break;
		workqueue_heap_place(q, i, q->heap[child]);
		i = child;
	}
	workqueue_heap_place(q, i, item);
}

static void workqueue_heap_push(workqueue_t *q, workqueue_item_t *item, uint64_t due_ms)
{
	if (q->heap_len == q->heap_cap) {
		q->heap_cap *= 2;
		q->heap = xrealloc(q->heap, q->heap_cap * sizeof(*q->heap));
	}
	item->queued = WORKQUEUE_WAITING;
	item->due_ms = due_ms;
	item->seq = q->next_seq++;
	q->heap[q->heap_len] = item;
	workqueue_heap_sift_up(q, q->heap_len++);
}

static void workqueue_heap_remove(workqueue_t *q, workqueue_item_t *item)
{
	size_t i = item->heap_index;
	workqueue_item_t *last = q->heap[--q->heap_len];
	item->queued = WORKQUEUE_NONE;
	if (i == q->heap_len)
		return;
	workqueue_heap_place(q, i, last);
	workqueue_heap_sift_up(q, i);
	workqueue_heap_sift_down(q, last->heap_index);
}

/* Move the waiting item to an earlier due time (the earliest one wins). */
static void workqueue_heap_advance(workqueue_t *q, workqueue_item_t *item, uint64_t due_ms)
{
	item->due_ms = due_ms;
	item->seq = q->next_seq++;
	workqueue_heap_sift_up(q, item->heap_index);
}

/*
 * Waiting keys whose time has come join the ready FIFO in due-time order.
 * Done before every add as well as every get, so a key that fell due before
 * another key was added ends up ahead of it, as far as the caller's clock
 * readings can tell.
 */
static void workqueue_promote(workqueue_t *q, uint64_t now_ms)
{
	while (q->heap_len > 0 && q->heap[0]->due_ms <= now_ms) {
		workqueue_item_t *item = q->heap[0];
		workqueue_heap_remove(q, item);
		workqueue_fifo_push(q, item);
	}
}

/* ---- public -------------------------------------------------------------- */

workqueue_t *workqueue_new(void)
{
	workqueue_t *q = xcalloc(1, sizeof(*q));
	q->items = (strmap_t)STRMAP_INIT;
	q->fifo_cap = WORKQUEUE_MIN_CAPACITY;
	q->fifo = xmalloc(q->fifo_cap * sizeof(*q->fifo));
	q->heap_cap = WORKQUEUE_MIN_CAPACITY;
	q->heap = xmalloc(q->heap_cap * sizeof(*q->heap));
	return q;
}

void workqueue_free(workqueue_t *q)
{
	if (q == NULL)
		return;
	strmap_clear(&q->items, free);
	free(q->fifo);
	free(q->heap);
	free(q);
}

void workqueue_add(workqueue_t *q, const char *key, uint64_t now_ms)
{
	if (q->shut_down)
		return;
	workqueue_promote(q, now_ms);
	workqueue_item_t *item = workqueue_intern(q, key);
	if (item->queued == WORKQUEUE_READY)
		return;
	if (item->processing) {
		item->queued = WORKQUEUE_READY; /* pending: requeued by workqueue_done() */
		return;
	}
	if (item->queued == WORKQUEUE_WAITING)
		workqueue_heap_remove(q, item);
	workqueue_fifo_push(q, item);
}

void workqueue_add_after(workqueue_t *q, const char *key, uint64_t delay_ms, uint64_t now_ms)
{
	if (delay_ms == 0) {
		workqueue_add(q, key, now_ms);
		return;
	}
	if (q->shut_down)
		return;
	workqueue_promote(q, now_ms);
	uint64_t due_ms = delay_ms > UINT64_MAX - now_ms ? UINT64_MAX : now_ms + delay_ms;
	workqueue_item_t *item = workqueue_intern(q, key);
	switch (item->queued) {
	case WORKQUEUE_READY:
		return;
	case WORKQUEUE_WAITING:
		if (due_ms >= item->due_ms)
			return;
		if (item->processing)
			item->due_ms = due_ms;
		else
			workqueue_heap_advance(q, item, due_ms);
		return;
	case WORKQUEUE_NONE:
		if (item->processing) {
			item->queued = WORKQUEUE_WAITING; /* pending: scheduled by workqueue_done() */
			item->due_ms = due_ms;
		} else {
			workqueue_heap_push(q, item, due_ms);
		}
		return;
	}
}

const char *workqueue_get(workqueue_t *q, uint64_t now_ms)
{
	if (q->shut_down)
		return NULL;
	workqueue_promote(q, now_ms);
	workqueue_item_t *item = workqueue_fifo_pop(q);
	if (item == NULL)
		return NULL;
	item->processing = true;
	q->nprocessing++;
	return item->key;
}

void workqueue_done(workqueue_t *q, const char *key)
{
	workqueue_item_t *item = workqueue_lookup(q, key);
	if (item == NULL || !item->processing)
		return;
	item->processing = false;
	q->nprocessing--;
	switch (item->queued) {
	case WORKQUEUE_READY:
		workqueue_fifo_push(q, item);
		break;
	case WORKQUEUE_WAITING:
		workqueue_heap_push(q, item, item->due_ms);
		break;
	case WORKQUEUE_NONE:
		workqueue_release_if_idle(q, item);
		break;
	}
}

uint64_t workqueue_next_due(const workqueue_t *q, uint64_t now_ms)
{
	if (q->shut_down)
		return UINT64_MAX;
	if (q->fifo_len > 0)
		return 0;
	if (q->heap_len == 0)
		return UINT64_MAX;
	uint64_t due_ms = q->heap[0]->due_ms;
	return due_ms <= now_ms ? 0 : due_ms - now_ms;
}

size_t workqueue_depth(const workqueue_t *q)
{
	return q->fifo_len + q->heap_len;
}

size_t workqueue_processing(const workqueue_t *q)
{
	return q->nprocessing;
}

void workqueue_shutdown(workqueue_t *q)
{
	q->shut_down = true;
}
