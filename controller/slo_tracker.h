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
 * (slo_tracker_samples' since) are dropped, claims created before that are
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
 *
 * Also widens retention to twice now - since_ms (now being the latest
 * observation's now_ms); the tracker stays logically const.
 */
size_t slo_tracker_samples(const slo_tracker_t *t, const char *driver, const char *const *device_classes,
			   size_t n_classes, const char *const *pool_nodes, size_t n_nodes, int64_t since_ms,
			   slo_sample_t **out);

/*
 * The samples of several pools of one plan in one walk of the records:
 * out[p] and n_out[p] are what slo_tracker_samples gives for the nodes
 * pool_of(node, data) numbers p (a pending claim is a sample of each).
 * pool_of answers -1 for a node in none; a plan's pools are disjoint (a node
 * two pools select is a member of neither), so it names one pool at most.
 * The caller answers from what it already indexes: no set of the plan's
 * nodes is built for each call.
 *
 * out[p] is a buffer of cap[p] samples the caller keeps from one call to the
 * next (NULL and 0 at first; free() it at the end), grown with realloc when
 * a pool has more samples than it holds: a reconcile at 1,000 nodes asked
 * for buffers of hundreds of KiB and freed them again each time, and glibc
 * consolidated its free chunks at every such free.
 */
void slo_tracker_samples_pools(const slo_tracker_t *t, const char *driver, const char *const *device_classes,
			       size_t n_classes, ptrdiff_t (*pool_of)(const char *node, void *data), void *data,
			       size_t n_pools, int64_t since_ms, slo_sample_t **out, size_t *cap, size_t *n_out);

/* Records held (claims, deleted claims not yet aged out, placeholders): a /metrics gauge. */
size_t slo_tracker_size(const slo_tracker_t *t);

#endif
