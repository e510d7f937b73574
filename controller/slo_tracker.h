/*
 * SLO observations: what drashift saw happen to ResourceClaims and their
 * pods, turned into samples for the SLO gate (reconcilers/slo.h).
 *
 * The claim and pod caches hold the present; the gate needs the past (when
 * did this claim get allocated? was its pod ever Ready?). The tracker keeps,
 * per claim uid, the times drashift first observed each step, fed from the
 * caches' add/update/delete callbacks:
 *
 *   created    metadata.creationTimestamp (the API's, whole seconds)
 *   allocated  the first observation with status.allocation; a claim
 *              already allocated the first time it is seen is marked
 *              latency_unknown: that sighting says nothing about latency
 *   ready      the first observation of a consumer pod Ready after that
 *   waits      a consumer pod Pending/Unschedulable while unallocated, or
 *              not Ready after allocation; when the pod or the claim goes
 *              away mid-wait, the wait's end is kept so the sample still
 *              tells how long it waited
 *
 * Times are the now_ms the caller passes: wall-clock ms since the epoch,
 * because they are compared with the API's creation timestamps.
 *
 * Memory only, on purpose. A restart (or a leader change) forgets
 * everything: claims seen again after it are either already allocated
 * (latency_unknown, no latency sample) or new. Either way the window holds
 * fewer samples, so the gate reads Inconclusive for longer; it never turns
 * into a false pass, because the judge needs min_samples before it passes a
 * signal. A deleted claim stays a sample until it ages out: its history
 * happened inside the window even if the object is gone.
 *
 * Bounded: observations older than twice the longest window asked for
 * (a query's since) are dropped, claims created before that are
 * not recorded at all, and at SLO_TRACKER_MAX_CLAIMS records the oldest
 * (by creation time) go first.
 *
 * Pods name their claims (pod->claims, same namespace), claims do not name
 * their pods, and the two watches deliver in no shared order: a pod seen
 * before its claim leaves a placeholder under the claim's namespace/name
 * that the claim adopts when it arrives, so a pod stuck Unschedulable before
 * the claim was observed is not missed. Placeholders are never samples.
 */
#ifndef DRASHIFT_SLO_TRACKER_H
#define DRASHIFT_SLO_TRACKER_H

#include <stddef.h>
#include <stdint.h>

#include "projection.h"
#include "slo.h"

/* Hard cap on records (claims and placeholders); the oldest eighth goes when it is reached. */
#define SLO_TRACKER_MAX_CLAIMS 100000

typedef struct slo_tracker slo_tracker_t;

slo_tracker_t *slo_tracker_new(void);
void slo_tracker_free(slo_tracker_t *t);

/*
 * A claim was added or updated (claim set), or deleted (claim NULL,
 * uid_if_deleted its uid). Claims without a uid are ignored.
 */
void slo_tracker_observe_claim(slo_tracker_t *t, const projection_claim_t *claim, const char *uid_if_deleted,
			       int64_t now_ms);

/*
 * A pod was added or updated (a deleting pod is observed with
 * meta.deleting). Only its claims matter: unallocatable while its claims
 * wait for allocation, Ready or still waiting after they are allocated.
 * When several pods share a claim, the last one observed speaks for it.
 */
void slo_tracker_observe_pod(slo_tracker_t *t, const projection_pod_t *pod, int64_t now_ms);

/*
 * The samples of one pool, created at or after since_ms: claims that ask
 * for one of device_classes and are allocated on one of pool_nodes, or are
 * not allocated yet (a pending claim belongs to the pool whose classes it
 * asks for). driver, when not NULL, further requires an allocated claim
 * with results to have one from that driver. Sorted by creation time;
 * *out is the caller's to free (NULL when none). Returns the count.
 * A view of its own, built for this one query and freed.
 *
 * Every query (this and slo_tracker_view_samples) widens retention to twice
 * now - since_ms, now being the latest observation's now_ms.
 */
size_t slo_tracker_samples(slo_tracker_t *t, const char *driver, const char *const *device_classes, size_t n_classes,
			   const char *const *pool_nodes, size_t n_nodes, int64_t since_ms, slo_sample_t **out);

/*
 * The samples of several pools of one plan, kept between queries: a view
 * holds every retained record's sample under the pool it belongs to, by
 * creation time, and a query brings it up to date from the records that
 * changed since the last one, so its cost grows with the claims and pods
 * observed in between, not with the records in the window. Several views
 * may follow one tracker (one a plan); every view is freed before the
 * tracker.
 *
 * A view is built again, one walk of the records, when its query changes
 * (driver, classes, pool count, members_version), after records were
 * dropped (age eviction, at most once a minute; the cap), or when more
 * records changed between two queries than the tracker holds.
 */
typedef struct slo_tracker_view slo_tracker_view_t;

slo_tracker_view_t *slo_tracker_view_new(slo_tracker_t *t);
void slo_tracker_view_free(slo_tracker_view_t *v);

/*
 * out[p] and n_out[p] are what slo_tracker_samples gives for the nodes
 * pool_of(node, data) numbers p (a pending claim is a sample of each), in
 * creation order, pointing into the view: valid until the next query or
 * observation. pool_of answers -1 for a node in none; a plan's pools are
 * disjoint (a node two pools select is a member of neither), so it names
 * one pool at most. The caller answers from what it already indexes, and
 * changes members_version whenever pool_of could answer differently for
 * any node: the view asks pool_of only about the records that changed.
 */
void slo_tracker_view_samples(slo_tracker_view_t *v, const char *driver, const char *const *device_classes,
			      size_t n_classes, ptrdiff_t (*pool_of)(const char *node, void *data), void *data,
			      size_t n_pools, uint64_t members_version, int64_t since_ms, const slo_sample_t **out,
			      size_t *n_out);

/* How many times a view was built from a walk of every record (the tests read it: most queries build nothing). */
uint64_t slo_tracker_view_builds(const slo_tracker_t *t);

/* Records held (claims, deleted claims not yet aged out, placeholders). */
size_t slo_tracker_size(const slo_tracker_t *t);

#endif
