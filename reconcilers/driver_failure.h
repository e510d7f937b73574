/*
 * Driver failure classes and quarantine (docs/state-machines.md, "Driver
 * failures").
 *
 * What the kubelet reports about a DRA driver, read from its own strings
 * (kubelet v1.36, pkg/kubelet/kuberuntime and pkg/kubelet/cm/dra): a pod
 * whose devices could not be prepared gets a Warning Event with reason
 * FailedPrepareDynamicResources and the message "Failed to prepare dynamic
 * resources: prepare dynamic resources: <error>", where <error> is
 *
 *   NodePrepareResources: rpc error: code = DeadlineExceeded ...
 *                             the driver did not answer in time: retryable
 *   NodePrepareResources failed for ResourceClaim <name>: <driver's error>
 *   NodePrepareResources: rpc error: code = <anything else> ...
 *                             the driver answered with an error: permanent
 *   DRA driver <driver> is not registered
 *                             the driver's kubelet plugin is away (a crash,
 *                             a restart, a rollout): retryable once the
 *                             kubelet has withdrawn its ResourceSlices for
 *                             the node (no new claim lands there, and the
 *                             pods already allocated prepare when it
 *                             registers again; an absence that lasts shows
 *                             as claims stuck not Ready in driverErrors);
 *                             needs cleanup when those slices are still
 *                             published DRIVER_FAILURE_WIPE_DELAY_MS after
 *                             the first report (stale slices: the kubelet's
 *                             wipe failed, and the scheduler keeps
 *                             allocating devices no plugin serves); retryable
 *                             before that
 *
 * Any other message (the pod may not use the claim, the claim could not be
 * fetched, ...) is not the driver's failure and is not classified. A report
 * describes the present only while its pod still waits (the controller
 * gathers those only, see controller/driver_failures.h): once the pod runs
 * or is gone, the failure is over.
 *
 * Besides the events, a ResourceClaim deleted for longer than the SLO's stuck
 * threshold that still carries the resource.kubernetes.io/delete-protection
 * finalizer on the node needs cleanup too: the claim controller only drops
 * it once nothing holds the claim, so a pod whose devices cannot be
 * unprepared keeps it forever.
 *
 * Classes, per node:
 *   retryable     shown; the kubelet retries on its own
 *   permanent     the node is quarantined: cordoned, recorded in the
 *                 drashift.io/quarantine annotation, excluded from its pool's
 *                 progress, never moved by drashift again until a person
 *                 removes that annotation
 *   needsCleanup  counted and shown with what to clean; drashift never deletes
 *                 a slice, a claim or a pod
 *
 * Pure: no I/O, no clock.
 */
#ifndef DRASHIFT_DRIVER_FAILURE_H
#define DRASHIFT_DRIVER_FAILURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The kubelet's event reason for a prepare that failed (pkg/kubelet/events). */
#define DRIVER_FAILURE_EVENT_REASON "FailedPrepareDynamicResources"
/*
 * The kubelet deletes the ResourceSlices of a driver that unregistered this
 * long after it went (pkg/kubelet/cm/dra: defaultWipingDelay, not
 * configurable): slices older than that with the driver away are stale.
 */
#define DRIVER_FAILURE_WIPE_DELAY_MS 30000

/* Recorded on a quarantined node: why, in one line. Only a person removes it. */
#define DRIVER_FAILURE_ANN_QUARANTINE "drashift.io/quarantine"

typedef enum {
	DRIVER_FAILURE_RETRYABLE,
	DRIVER_FAILURE_PERMANENT,
	DRIVER_FAILURE_CLEANUP,
	DRIVER_FAILURE_CLASSES,
} driver_failure_class_t;

/* "retryable", "permanent", "needsCleanup" (status keys). */
const char *driver_failure_class_name(driver_failure_class_t c);

/* What one kubelet message says about the plan's driver. */
typedef enum {
	DRIVER_REPORT_OTHER,          /* not about the driver: not classified */
	DRIVER_REPORT_DEADLINE,       /* NodePrepareResources ... DeadlineExceeded */
	DRIVER_REPORT_PREPARE_FAILED, /* NodePrepareResources answered with an error */
	DRIVER_REPORT_NOT_REGISTERED, /* DRA driver <driver> is not registered */
} driver_report_t;

/*
 * Read one FailedPrepareDynamicResources message. driver is the plan's: a
 * "not registered" naming another driver is OTHER. NULL message: OTHER.
 */
driver_report_t driver_failure_read(const char *message, const char *driver);

/* One node's evidence, gathered by the controller within the SLO window. */
typedef struct {
	const char *node;
	uint32_t deadline;       /* DRIVER_REPORT_DEADLINE reports (event counts) */
	uint32_t prepare_failed; /* DRIVER_REPORT_PREPARE_FAILED reports */
	uint32_t not_registered; /* DRIVER_REPORT_NOT_REGISTERED reports */
	int64_t not_registered_since_ms; /* the earliest of them (the Events' first occurrence); 0: none */
	int64_t now_ms;
	bool slices_present;     /* the plan's driver still publishes slices for the node */
	uint32_t stuck_claims;   /* claims deleted for stuck_threshold or longer, still delete-protected */
	bool dra_owned;          /* the DRA ownership label is on: the driver is meant to serve here */
	bool quarantined;        /* the node carries DRIVER_FAILURE_ANN_QUARANTINE */
	bool unschedulable;      /* spec.unschedulable now */
} driver_failure_node_t;

typedef struct {
	bool in[DRIVER_FAILURE_CLASSES]; /* the classes the node is in */
	char *patch;   /* quarantine: the node's JSON merge patch (owned); NULL: nothing to write */
	char *message; /* one line naming the node, its classes and what to do (owned); NULL: no failure */
} driver_failure_decision_t;

/*
 * Classify one node and decide its quarantine: a permanent failure on a node
 * the driver owns, not quarantined yet, gets a patch that cordons it (and
 * records drashift.io/cordoned-by-drashift only when it was schedulable, so
 * a node someone else cordoned is never uncordoned by drashift) and records
 * the quarantine. Nothing else is ever written: no uncordon, no label, no
 * step, no delete.
 */
void driver_failure_decide(const driver_failure_node_t *in, driver_failure_decision_t *out);
void driver_failure_decision_free(driver_failure_decision_t *d);

#endif
