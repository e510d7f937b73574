/*
 * Notifications (spec.notifications.webhooks): what a plan's change of
 * status tells the webhooks, and the JSON body each one is sent.
 *
 * The controller compares the status a reconcile writes with the status it
 * read (the one recorded before) and asks notify_decide() what happened:
 *
 *   breach            status.breach carries a new id: an SLO signal failed
 *   freeze            status.frozen turned true: expansion stopped, new claims
 *                     for the plan's classes refused (today only a breach
 *                     freezes, so breach and freeze arrive together; filter
 *                     with events to get one of them)
 *   poolDone          a pool's phase became DRA
 *   failure           more of a pool's nodes failed their handover than the
 *                     recorded status counted (status.pools[].nodes.failed
 *                     rose). Not the pool's phase: a failed node is also a
 *                     failedSteps breach, which freezes the plan in the same
 *                     reconcile, so the pool shows Frozen, not Failed
 *   awaitingApproval  a pool's canary baked and passed and its promotion is
 *                     Manual: it waits for kubectl drashift promote
 *
 * A pool first seen (no phase recorded) notifies nothing: a plan created over
 * a pool already on DRA did not finish it. Because the decision compares two
 * statuses, a change is notified once, after the status that records it was
 * written; a restart reads the recorded status and does not repeat it.
 *
 * The body (README, "Notifications"), one JSON object:
 *   {"kind":"MigrationPlanNotification","apiVersion":"drashift.io/v1alpha1",
 *    "id":"<plan>/<event>/<pool or breach>/<unix ms>","event":"breach",
 *    "time":"2026-12-01T22:00:00Z","plan":"gpu","pool":"a",
 *    "phase":"Frozen","previousPhase":"Canary","message":"...",
 *    "breach":{"id":..,"pool":..,"signal":..,"value":..,"threshold":..},
 *    "action":"what a person does next (empty when nothing)",
 *    "text":"one line for chat (format: slack only)"}
 * pool, phase, previousPhase and breach appear when the event has them.
 * Pure: no clock (the time comes in), no I/O.
 */
#ifndef DRASHIFT_NOTIFY_H
#define DRASHIFT_NOTIFY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

typedef enum {
	NOTIFY_BREACH,
	NOTIFY_FREEZE,
	NOTIFY_POOL_DONE,
	NOTIFY_FAILURE,
	NOTIFY_AWAITING_APPROVAL,
	NOTIFY_EVENTS,
} notify_event_t;

/* Every event, as a webhook's events filter (bit 1 << event). */
#define NOTIFY_ALL_EVENTS ((1u << NOTIFY_EVENTS) - 1)

/* How a body is shaped: drashift's JSON, or the same with Slack's "text". */
typedef enum { NOTIFY_FORMAT_JSON, NOTIFY_FORMAT_SLACK } notify_format_t;

/* "breach", "freeze", "poolDone", "failure", "awaitingApproval". */
const char *notify_event_name(notify_event_t e);
/* The event a name stands for; -1 when none. */
int notify_event_parse(const char *name);

/* One pool, as the status recorded it before and as it is now. */
typedef struct {
	const char *name;
	const char *phase_was; /* NULL: no phase recorded */
	const char *phase;
	bool awaiting_was, awaiting;
	const char *message; /* status.pools[].message now */
	int64_t failed_was, failed; /* status.pools[].nodes.failed before and now */
} notify_pool_t;

/* The recorded breach (status.breach). */
typedef struct {
	const char *id; /* NULL: none */
	const char *pool, *signal, *value, *threshold;
} notify_breach_t;

typedef struct {
	const char *plan;
	int64_t now_ms;   /* wall clock: the notification's time */
	const char *time; /* the same in RFC 3339 */
	bool frozen_was, frozen;
	const char *breach_id_was; /* status.breach.id recorded before; NULL: none */
	notify_breach_t breach;    /* status.breach now */
	const notify_pool_t *pools;
	size_t n_pools;
} notify_input_t;

/* One notification: its event and the pool it concerns (-1: the plan). */
typedef struct {
	notify_event_t event;
	long pool;
} notify_t;

/*
 * What changed from the recorded status to the new one, in this order: the
 * breach, the freeze, then each pool in plan order (failure, poolDone,
 * awaitingApproval). Writes at most NOTIFY_EVENTS + 3 * n_pools entries to
 * out (the caller sizes it so); returns how many.
 */
size_t notify_decide(const notify_input_t *in, notify_t *out);

/*
 * Whether a webhook whose events filter is mask (bits 1 << event) wants e.
 */
bool notify_wanted(uint32_t mask, notify_event_t e);

/* The body of n (see above) for a webhook of format f: a new cJSON object. */
cJSON *notify_payload(const notify_input_t *in, const notify_t *n, notify_format_t f);

#endif
