/*
 * A pool's phase, and which of its nodes may move now (docs/state-machines.md,
 * "Pool").
 *
 *   Legacy -> Canary -> (bake, gate, approval when Manual) -> Expanding -> DRA
 *   any -> Paused (spec.paused) / Frozen (SLO breach) / Failed (a node failed)
 *   any -> RollingBack (spec.rollback) -> Legacy
 *
 * The durable state is split between the nodes (their handover records) and
 * the plan's status (the canary set and the bake start). pool_decide() never
 * starts a node before the status that justifies it is recorded: when the
 * record must change (the canary is chosen, the bake starts), the output says
 * so and holds every node; the controller writes the status and decides again.
 *
 * Concurrency comes from recorded state only: nodes whose records say they
 * are in a handover count against maxUnavailable, whatever this process
 * remembers.
 */
#ifndef DRASHIFT_POOL_H
#define DRASHIFT_POOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "handover.h"
#include "plan.h"

typedef enum {
	POOL_LEGACY,
	POOL_CANARY,
	POOL_EXPANDING,
	POOL_DRA,
	POOL_PAUSED,
	POOL_FROZEN,
	POOL_ROLLING_BACK,
	POOL_FAILED,
	POOL_PHASES,
} pool_phase_t;

const char *pool_phase_name(pool_phase_t phase);

/* What the plan's status recorded about a pool. Strings are borrowed. */
typedef struct {
	const char *const *canary_nodes;
	size_t n_canary;
	int64_t start_ms;      /* 0: not started */
	int64_t bake_start_ms; /* 0: canary not complete yet */
	int64_t finish_ms;     /* 0: not on DRA */
} pool_record_t;

typedef struct {
	const projection_node_t *node;
	handover_state_t state;
} pool_member_t;

typedef struct {
	const plan_t *plan;
	const plan_pool_t *pool;
	pool_record_t record;
	const pool_member_t *members; /* sorted by node name */
	size_t n_members;
	bool may_start; /* plan order, maxConcurrentPools and preflight let this pool migrate now */
	const char *start_held; /* why it may not start when that is not the pool order (may be NULL) */
	bool frozen;    /* an SLO breach froze the pool */
	bool breach_rollback; /* the breach policy is FreezeAndRollback and this pool breached */
	bool gate_passed; /* the canary's SLO gate passed (inconclusive is not a pass) */
	const char *gate_waiting; /* why it has not passed yet, for the message (may be NULL) */
	/* Outside every maintenance window (spec.windows): no handover starts; those under way finish. */
	bool window_closed;
	const char *window_opens; /* when the next window opens, for the message (may be NULL) */
	/* The tenant boundary is not in place yet (why; reconcilers/tenancy.h): no handover starts, those under way finish. */
	const char *boundary_pending;
	int64_t now_ms;
} pool_input_t;

typedef struct {
	pool_phase_t phase;
	handover_goal_t *goals; /* one per member */
	pool_record_t record;   /* the record to write; canary names point into members */
	bool record_changed;    /* write the status before any node moves */
	size_t n_legacy, n_handover, n_dra, n_failed;
	/*
	 * Quarantined members (a permanent driver failure, driver_failure.h):
	 * counted here and in no other count, always STAY, and left out of the
	 * pool's progress: the canary, the expansion, "all on DRA" and a
	 * rollback go on without them.
	 */
	size_t n_quarantined;
	char *message;
	uint64_t requeue_ms;    /* decide again after this long (bake end); 0: on change only */
	bool awaiting_approval; /* promotion: Manual: baked, gate passed, waiting for spec.promote */
} pool_output_t;

void pool_decide(const pool_input_t *in, pool_output_t *out);
void pool_output_free(pool_output_t *out);

#endif
