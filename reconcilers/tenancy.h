/*
 * The tenant boundary of a plan's DeviceClasses: which namespaces may
 * create ResourceClaims for them while the plan migrates (docs/invariants.md,
 * "Tenant boundary"; README, spec.tenancy and spec.pools[].canary.namespaces).
 *
 * The stages, first match wins:
 *   Open       every pool is on DRA (the migration is over), or the plan
 *              restricts nothing: every namespace.
 *   Canary     no pool has expanded past its canary, and at least one pool
 *              in its canary lists canary.namespaces: only the union of the
 *              namespaces those pools list. spec.tenancy does not widen it.
 *   Migrating  spec.tenancy is set: the namespaces it lists, those whose
 *              labels match its namespaceSelector, and every pool's
 *              canary.namespaces (canary tenants keep their access as the
 *              pools expand).
 *
 * A pool is in its canary from the moment its phase is Canary or a node of
 * it has moved toward DRA, until it has expanded (phase Expanding or DRA, or
 * more nodes moved than its canary holds). Paused, Frozen, Failed and
 * RollingBack keep the stage the moved nodes show: a paused canary stays
 * restricted. The DeviceClasses are the plan's, shared by its pools, so once
 * one pool has expanded its tenants use them: a later pool's canary cannot
 * take them away again (use one plan per pool for a canary per pool).
 *
 * The controller writes the decision into the parameter that the
 * drashift-claim-tenancy ValidatingAdmissionPolicy reads (manifests/); the
 * API server judges each claim. tenancy_admits() is that judgement, here to
 * state it as a table.
 */
#ifndef DRASHIFT_TENANCY_H
#define DRASHIFT_TENANCY_H

#include <stdbool.h>
#include <stddef.h>

#include "plan.h"
#include "pool.h"

typedef enum { TENANCY_OPEN, TENANCY_CANARY, TENANCY_MIGRATING } tenancy_stage_t;

const char *tenancy_stage_name(tenancy_stage_t stage);

/* What a pool's run shows. */
typedef struct {
	pool_phase_t phase;
	size_t n_canary; /* the canary the plan's status recorded (0: not chosen yet) */
	size_t n_moved;  /* nodes on DRA or in a handover */
} tenancy_pool_t;

/* Strings are borrowed from the plan. */
typedef struct {
	tenancy_stage_t stage;
	const char **namespaces;         /* allowed by name, without repeats */
	size_t n_namespaces;
	const plan_selector_t *selector; /* Migrating with spec.tenancy.namespaceSelector; else NULL */
	const char **pools;              /* Canary: the pools whose canary.namespaces hold */
	size_t n_pools;
} tenancy_t;

/* pools: one per plan->pools, in order. */
void tenancy_decide(const plan_t *plan, const tenancy_pool_t *pools, tenancy_t *out);
void tenancy_free(tenancy_t *t);

/* May namespace ns, carrying labels, create a claim for the plan's classes? */
bool tenancy_admits(const tenancy_t *t, const char *ns, const projection_label_t *labels, size_t n_labels);

/* Where the plan's parameter stands, as the controller's writes left it. */
typedef enum {
	TENANCY_PARAM_UNWRITTEN, /* not written by this process yet (it is, at the end of the reconcile) */
	TENANCY_PARAM_WRITING,   /* a write is in flight */
	TENANCY_PARAM_WRITTEN,   /* the last write succeeded */
	TENANCY_PARAM_FAILED,    /* the last write failed; it is tried again */
} tenancy_param_t;

/* Can the plan restrict anyone (spec.tenancy, or a pool's canary.namespaces)? */
bool tenancy_restricts(const plan_t *plan);

/*
 * Whether handovers may start: a plan that can restrict starts none until
 * its parameter, as last decided, is written. The pool entering its canary
 * is recorded (no node moves in that reconcile) and its boundary written at
 * the end of it; its first node waits for that write to succeed, so a write
 * the API refuses holds the canary instead of exposing DRA to every
 * namespace. What remains is the admission chain's own lag in seeing the
 * parameter (its informer: moments), well within the first handover, which
 * serves nobody before its node's driver publishes devices. NULL: they may
 * start; otherwise why not, for the pool's message.
 */
const char *tenancy_hold(const plan_t *plan, tenancy_param_t param);

/*
 * The selector as the admission policy reads it: requirements joined by ';',
 * each "key Op" and, for In and NotIn, " v1,v2" ("team In a,b;gpu Exists").
 * Label keys and values never hold ' ', ',' or ';'. "" for no selector.
 */
char *tenancy_selector_text(const plan_selector_t *sel);

#endif
