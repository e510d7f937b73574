/*
 * Leader election on a coordination.k8s.io/v1 Lease, with client-go's
 * semantics (k8s.io/client-go/tools/leaderelection).
 *
 * Every candidate reads the Lease. A Lease held by someone else is presumed
 * alive until leaseDurationSeconds (the holder's, from the record) have passed
 * since *this process* last saw the record change, measured on the local
 * monotonic clock: the holder's renewTime is never compared with our clock, so
 * clock skew between nodes does not matter. Writes carry the resourceVersion
 * that was read, so of two candidates racing for an expired Lease exactly one
 * wins (the other gets 409 Conflict and reads again).
 *
 * Candidates read every retry_period, less up to a tenth at random (never
 * later, so a standby sees a change within one period), and exactly when the
 * lease they wait for expires. The leader renews every retry_period by writing
 * back the object it wrote last; a 409 makes it read first and decide again.
 * If no renewal has succeeded for renew_deadline it stops leading at once;
 * and leader_is_leader() turns false by itself once lease_duration has passed
 * since the last successful renewal was sent, even if the loop was too busy to
 * notice the deadline or a renewal is still in flight. Because renew_deadline
 * < lease_duration, a leader always stops before another candidate may start:
 * losing the lease stops all writes.
 *
 * While leading, seeing the Lease held by anyone else (someone overwrote it)
 * or deleted also stops leadership at once: we lead only while the Lease says
 * so. A candidate that finds the Lease held by nobody (holderIdentity empty,
 * as leader_release() leaves it) takes it without waiting.
 *
 * States (one function changes them and logs from -> to at info level):
 *
 *   STARTING --first answer--> STANDBY <--lost / deadline--> LEADING
 *       \---------acquired / created----------------------------^
 *   any --leader_release()--> RELEASING --written or failed--> STOPPED
 *   any --leader_stop()--> STOPPED
 *
 * Callbacks (on_started_leading, on_stopped_leading, release's done) run from
 * the loop, never from inside the leader_* call that caused them.
 */
#ifndef DRASHIFT_LEADER_H
#define DRASHIFT_LEADER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "kube_http.h"

/* ---- the pure part: records and decisions (no I/O, unit-tested) ---------- */

/* What a Lease says, decoded. Strings are owned (leader_record_free). */
typedef struct {
	bool present;             /* false: the Lease does not exist (404) */
	char *holder;             /* holderIdentity; "" when held by nobody */
	int64_t lease_duration_s; /* leaseDurationSeconds; 0 when unset */
	int64_t acquire_time_us;  /* acquireTime, Unix microseconds; 0 when unset */
	int64_t renew_time_us;    /* renewTime, likewise */
	int64_t transitions;      /* leaseTransitions; 0 when unset */
	char *resource_version;   /* metadata.resourceVersion */
} leader_record_t;

/*
 * Decode a Lease object (JSON bytes from the API). Absent optional fields take
 * the defaults above; a field of the wrong type, a time that is not a
 * MicroTime, or a missing metadata.resourceVersion is an error: -1 with one
 * line in err, and *out left empty (safe to free).
 */
int leader_record_decode(const char *json, size_t len, leader_record_t *out, char *err,
			 size_t errlen);
void leader_record_free(leader_record_t *rec);

/*
 * When the record was last seen to change: now_ms if cur differs from prev
 * (another resourceVersion, or it appeared or vanished), else prev_observed_ms.
 * prev may be NULL (nothing seen yet).
 */
uint64_t leader_observed_time(const leader_record_t *prev, uint64_t prev_observed_ms,
			      const leader_record_t *cur, uint64_t now_ms);

typedef enum {
	LEADER_CREATE,  /* the Lease does not exist: create it, holding it */
	LEADER_ACQUIRE, /* held by nobody, expired, or still ours from before: take it */
	LEADER_RENEW,   /* we lead and it is ours: renew it */
	LEADER_WAIT,    /* someone else holds a live lease */
	LEADER_LOSE,    /* we lead but must stop: renew deadline passed, or not ours any more */
} leader_action_t;

typedef struct {
	const leader_record_t *record; /* NULL or !present: the Lease does not exist */
	uint64_t observed_ms;          /* monotonic ms when record was last seen to change */
	const char *identity;          /* ours */
	bool leading;                  /* we currently lead */
	uint64_t last_renew_ms;        /* when our last successful write was sent */
	uint64_t now_ms;               /* monotonic */
	/*
	 * Ours. lease_duration_ms only stands in when the record has no
	 * positive leaseDurationSeconds: the holder's own duration governs.
	 */
	uint64_t lease_duration_ms;
	uint64_t renew_deadline_ms;
} leader_situation_t;

leader_action_t leader_decide(const leader_situation_t *s);
const char *leader_action_name(leader_action_t a);

/* ---- the elector --------------------------------------------------------- */

typedef enum {
	LEADER_STARTING,
	LEADER_STANDBY,
	LEADER_LEADING,
	LEADER_RELEASING,
	LEADER_STOPPED,
} leader_state_t;

typedef struct {
	const char *namespace; /* of the Lease */
	const char *name;
	const char *identity;  /* unique per candidate, usually the pod name */
	uint64_t lease_duration_ms; /* default 15000 */
	uint64_t renew_deadline_ms; /* default 10000; must be < lease_duration_ms */
	uint64_t retry_period_ms;   /* default 2000; must be < renew_deadline_ms */
	void (*on_started_leading)(void *data);
	/* After leader_is_leader() has turned false: stop writing now. */
	void (*on_stopped_leading)(void *data);
	void *data;
} leader_options_t;

typedef struct leader leader_t;

/*
 * Start campaigning (the first read is sent at once). The strings in opt are
 * copied. Returns 0, or UV_EINVAL (logged) for a bad namespace, name,
 * identity or timing, in which case nothing was started.
 */
int leader_start(uv_loop_t *loop, kube_http_t *http, const leader_options_t *opt, leader_t **out);

/*
 * Whether we may act as leader right now: we lead, and lease_duration has not
 * passed since our last successful renewal was sent. Time is the loop's
 * (uv_now after uv_update_time), so this is exact even when the loop has been
 * busy and the renew-deadline timer has not fired yet. Turns false before
 * on_stopped_leading runs.
 */
bool leader_is_leader(const leader_t *l);

/* The holder last read from the Lease; "" when nobody holds it or it does not
 * exist; NULL before the first successful read (for /readyz). */
const char *leader_holder(const leader_t *l);

leader_state_t leader_state(const leader_t *l);
const char *leader_state_name(leader_state_t s);

/*
 * Clean shutdown (SIGTERM). leader_is_leader() is false from this call on. If
 * we led: on_stopped_leading runs, then the Lease is written held by nobody
 * with leaseDurationSeconds 1, so a successor takes over at its next try
 * (client-go's ReleaseOnCancel). Then the timers stop (state STOPPED) and done
 * runs from the loop, whether the write succeeded or not (it is bounded by
 * renew_deadline; a failure is logged and the Lease then simply expires).
 * Returns 0, or UV_EALREADY when releasing or stopped (done is then not called).
 */
int leader_release(leader_t *l, void (*done)(void *data), void *data);

/*
 * Stop and free, without writing the Lease (a crash looks the same to the
 * others). No on_stopped_leading: the owner is tearing down. A pending
 * release's done still runs, then on_stopped (may be NULL), from the loop,
 * once all memory is freed. The kube_http_t must stay open until then, or be
 * closed right after this call (closing it finishes the request in flight).
 */
void leader_stop(leader_t *l, void (*on_stopped)(void *data), void *data);

#endif
