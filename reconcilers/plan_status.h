/*
 * What a MigrationPlan's status says as a whole, decided from what its pools
 * decided (pool.h) and what its SLO gates judged (slo.h): whether it is
 * frozen, whether a new breach is recorded, its phase, and its conditions.
 *
 * The freeze (docs/invariants.md, "frozen means frozen"): a breach is recorded
 * in status.breach, and from then on the plan is frozen until a person writes
 * the breach's id into spec.acknowledgedBreach. Nothing here lifts a freeze by
 * itself: an acknowledged breach stays recorded, and a frozen plan records no
 * second breach on top of the first.
 *
 * Pure: no clock, no I/O. The controller gathers the inputs, renders the
 * result into the status JSON and acts on it.
 */
#ifndef DRASHIFT_PLAN_STATUS_H
#define DRASHIFT_PLAN_STATUS_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "plan.h"
#include "pool.h"
#include "slo.h"
#include "tenancy.h"

/* status.breach as recorded. Strings are borrowed; id NULL: no breach recorded. */
typedef struct {
	const char *id;
	const char *pool;
	const char *signal;
	const char *value;
	const char *threshold;
	int64_t acknowledged_ms; /* status.breach.acknowledgedTime; 0 when absent */
} plan_breach_t;

/* The freeze before the signals are judged: is the recorded breach acknowledged? */
typedef struct {
	bool acknowledged; /* spec.acknowledgedBreach names the recorded breach */
	bool frozen;       /* a breach is recorded and not acknowledged */
	/*
	 * Claims created from then on are judged: an acknowledgement accepts what
	 * was measured before it, or the samples that breached would freeze the
	 * plan again at once. 0: the whole window.
	 */
	int64_t judge_since_ms;
} plan_freeze_t;

void plan_status_freeze(const plan_t *plan, const plan_breach_t *recorded, int64_t now_ms, plan_freeze_t *out);

/*
 * The freeze parameter as the API server holds it (controller/freeze.h). A
 * new breach is written to it and to status.breach in the same reconcile, the
 * parameter first, so it is a record of the breach too. Strings borrowed.
 */
typedef struct {
	bool frozen;           /* data.frozen == "true": the admission policy denies */
	const char *owner_uid; /* the MigrationPlan in its ownerReferences; NULL: none */
	plan_breach_t breach;  /* data.breachId, pool, signal, value, threshold */
} plan_parameter_t;

/*
 * Whether the status must record the parameter's breach (adopt it): the
 * parameter is frozen, owned by this plan (plan_uid), names a breach, and the
 * status does not record that breach while its own is not holding a freeze
 * (none, or acknowledged). That happens when the status write of a new breach
 * was refused or the leader stopped between the two writes: the cluster
 * already denies claims for that breach, so the plan shows it and a person
 * acknowledges it like any other. Never the other way: a breach the status
 * holds is never replaced by the parameter's, and nothing here lifts a
 * freeze. A parameter of another plan by the same name (deleted and created
 * again, before the garbage collector took its parameter) is not adopted.
 */
bool plan_status_adopts_breach(const char *plan_uid, const plan_freeze_t *freeze, const plan_breach_t *recorded,
			       const plan_parameter_t *param);

/* One pool's gate, as judged. */
typedef struct {
	slo_verdict_t gate;
	const slo_result_t *breach; /* the first breached signal when gate is SLO_BREACH */
	bool moving;                /* recorded in Canary or Expanding: the migration is under way there */
} plan_pool_gate_t;

/* A breach to record now. */
typedef struct {
	bool found;
	size_t pool;       /* index into plan->pools */
	char *id;          /* "<pool>-<signal>-<unix seconds>" (owned) */
	char *value;       /* the measured value with its unit (owned) */
	char *threshold;   /* the threshold with its unit (owned) */
	const char *signal;
} plan_new_breach_t;

/*
 * A plan that is not frozen records a breach and is frozen from then on; a
 * frozen plan records nothing new. The breach recorded is the first moving
 * pool's (plan order), else the first pool's: a signal every pool's gate
 * shares (a Prometheus query over the cluster) is laid at the door of the
 * pool being migrated, which a FreezeAndRollback then rolls back, not at a
 * pool that finished or has not started. Free with
 * plan_new_breach_free().
 */
void plan_status_new_breach(const plan_t *plan, const plan_freeze_t *freeze, const plan_pool_gate_t *gates,
			    int64_t now_ms, plan_new_breach_t *out);
void plan_new_breach_free(plan_new_breach_t *b);

/* A signal's value and threshold as the status shows them ("573ms", "3000ms"). */
void plan_status_signal_text(const slo_result_t *r, char *value, char *threshold, size_t len);

/*
 * status.pools[].gate: the pool's SLO gate in one line a person reads before
 * the signals ("Pass: ...", "Breach: readyLatencyP95 41000ms over its limit
 * 30000ms", "Inconclusive (not a pass): allocationFailurePercent has 3 of 5
 * samples", a Prometheus query's "nodePrepareP95: no data"), over n results
 * (the built-in signals, then the plan's queries). Owned.
 */
char *plan_status_gate_summary(const slo_result_t *results, size_t n, uint32_t min_samples);

/* What status.activity is written from. */
typedef struct {
	const plan_t *plan;
	const pool_phase_t *phases;   /* one per pool */
	const char *const *messages;  /* each pool's message (pool_output_t), NULL entries allowed */
	const pool_record_t *records; /* each pool's record (the bake start) */
	const bool *preflight_held;   /* one per pool: its start waits for preflight; NULL: none does */
	bool frozen;
	const plan_breach_t *breach;  /* the breach in force when frozen */
	const char *awaiting_approval; /* the first pool waiting for a person's promotion (NULL: none) */
	int64_t now_ms;
} plan_activity_input_t;

/*
 * status.activity, the first line of the plan's status in kubectl describe:
 * the phase, one sentence of what drashift does or waits for next, and the
 * action a person should take ("Action: none", or the command). Times in it
 * are absolute, so it does not change while nothing happens. Owned.
 */
char *plan_status_activity(const plan_activity_input_t *in);

/*
 * The written status old and the rendered status new differ only in what
 * drashift observed and decides nothing from as written: counts and values
 * (pools[].capacity, pools[].nodes, signals[] rawValue, value, samples,
 * byClass), and the sentences that report them (activity, pools[].message,
 * pools[].gate, conditions[].message). A phase, a breach, a pool's record, a
 * signal's verdict, a condition's status or reason, the handovers: any other
 * difference is not. The controller writes such a status at most once a
 * second per plan (PLAN_STATUS_OBSERVED_MS): on a busy fleet the counts
 * change with every job, and a write in flight holds the next decision
 * until the watch shows it.
 */
bool plan_status_observed_only(const cJSON *old, const cJSON *new);

/*
 * Whether a new breach may be judged, and the freeze parameter written, for a
 * plan whose own status write (writing: the status it sets; NULL when none is
 * in flight) is not in the cache yet (cached): when that write changes
 * nothing the judgment reads from the status, which is the breach (recorded,
 * acknowledged or lifted) and each pool's phase (a breach freezes only a
 * moving pool). Counts, values, verdicts, conditions and a pool's record may
 * differ: the status written once a second on a busy fleet must not hold a
 * freeze (on 2026-12-06, 7 of 60 breaches at 1,000 busy nodes waited
 * 34-163 ms for one).
 */
bool plan_status_judges_ahead(const cJSON *cached, const cJSON *writing);

/* The plan's phase: Frozen, Failed, RollingBack, Paused, DRA, Legacy, or its first active pool's phase. */
const char *plan_status_phase(const pool_phase_t *phases, size_t n_pools, bool frozen, bool paused);

typedef enum {
	PLAN_COND_READY,
	PLAN_COND_PROGRESSING,
	PLAN_COND_PAUSED,
	PLAN_COND_FROZEN,
	PLAN_COND_DEGRADED,
	PLAN_COND_INVALID,
	PLAN_COND_AWAITING_APPROVAL,
	PLAN_COND_TENANT_BOUNDARY,
	PLAN_CONDITIONS,
} plan_condition_id_t;

typedef struct {
	const char *type;
	bool status;
	const char *reason;
	char *message; /* owned */
} plan_condition_t;

typedef struct {
	const plan_t *plan;
	const pool_phase_t *phases; /* one per pool */
	bool frozen, acknowledged;
	const plan_breach_t *breach; /* the breach in force when frozen */
	/* Why the API refused a freeze switch's last write (NULL: it did not), and how long until it is tried again. */
	const char *param_error, *taint_error;
	int retry_seconds;
	const char *first_conflict; /* a node two pools select (NULL: none) */
	size_t failed_nodes, refused_nodes;
	const char *awaiting_approval; /* the first pool waiting for a person's promotion (NULL: none) */
	/* The tenant boundary's parameter, and why its last write failed (NULL: it did not). */
	tenancy_param_t tenancy_param;
	const char *tenancy_error;
} plan_conditions_input_t;

/* The plan's conditions, in the order above. Free with plan_conditions_free(). */
void plan_status_conditions(const plan_conditions_input_t *in, plan_condition_t out[PLAN_CONDITIONS]);
void plan_conditions_free(plan_condition_t c[PLAN_CONDITIONS]);

#endif
