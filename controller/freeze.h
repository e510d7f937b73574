/*
 * The freeze's switch: the parameter object of the ValidatingAdmissionPolicy
 * shipped in manifests/freeze-policy.yaml ("Frozen means frozen",
 * docs/invariants.md; the freeze in docs/dra-facts.md).
 *
 * When the SLO gate sees DRA hurting a pool, CREATE of ResourceClaims that
 * ask for the pool's DeviceClasses must be denied in the namespaces the plan
 * covers. drashift does not deny anything itself: the API server's admission
 * chain does, reading one ConfigMap per MigrationPlan,
 *
 *   drashift-system/drashift-freeze-<plan>
 *     labels  drashift.io/freeze-parameter: "true"   (the binding selects these)
 *             drashift.io/plan: <plan>                 (omitted when <plan> is
 *                                                      longer than a label value)
 *     data    frozen         "true" | "false"
 *             plan, pool, signal, value, threshold, breachId
 *                            what the denial message says
 *             time           when the breach was decided (RFC 3339)
 *             deviceClasses  "gpu.example.com,gpu-mig.example.com"
 *             namespaces     "team-a,team-b"; empty: every namespace
 *
 * so the freeze holds while drashift is down, restarting or changing leader,
 * and only a person lifts it (the controller writes frozen=false after a spec
 * change; never a timer).
 *
 * The object is written whole with server-side apply (field manager
 * "drashift", force), which creates it when missing and otherwise changes
 * only what differs: freezing and unfreezing toggle `frozen` (and the
 * describing fields) on the same object, whose uid never changes. drashift
 * never deletes it: a missing parameter means "no freeze"
 * (parameterNotFoundAction: Allow), so a delete would lift the freeze. It is
 * owned by its MigrationPlan (ownerReferences, when plan_uid is given): a
 * person who deletes the plan lifts its freeze with it, through the garbage
 * collector, instead of leaving a freeze nobody can acknowledge.
 * Writing the same state again changes nothing on the server (the
 * resourceVersion stays), so the controller may call freeze_set on every
 * reconcile to re-assert the state it recorded in the plan's status, which
 * also repairs a parameter someone edited by hand.
 *
 * Every field is always written, so the object's shape never depends on the
 * state: an unfreeze should pass the last breach's describing fields too,
 * so that they stay visible; a NULL field is written as "".
 *
 * Pods whose claims come from a ResourceClaimTemplate are not refused
 * directly: kube-controller-manager creates their claims, gets the denial,
 * records a Warning Event FailedResourceClaimCreation on the pod (which stays
 * Pending) and retries with its workqueue backoff (5 ms doubling, capped at
 * 1000 s) until the freeze lifts. After a long freeze a pod can therefore
 * wait up to about 17 minutes after the lift before its claim is created.
 */
#ifndef DRASHIFT_FREEZE_H
#define DRASHIFT_FREEZE_H

#include <stdbool.h>
#include <stddef.h>

#include "kube_http.h"
#include "projection.h"
#include "store.h"
#include "tenancy.h"

#define FREEZE_NAMESPACE "drashift-system"
#define FREEZE_NAME_PREFIX "drashift-freeze-"
#define FREEZE_LABEL_PARAMETER "drashift.io/freeze-parameter"
/* The policy and its binding (manifests/freeze-policy.yaml); both carry this name. */
#define FREEZE_POLICY_NAME "drashift-claim-freeze"

typedef struct {
	const char *plan;      /* the MigrationPlan's name; required */
	const char *pool;      /* the pool that breached */
	const char *signal;    /* the breached signal, e.g. "claim allocation latency p95" */
	const char *value;     /* its measured value, as shown, e.g. "2.4s" */
	const char *threshold; /* the plan's threshold, as shown, e.g. "2s" */
	const char *breach_id; /* the id a person acknowledges to lift the freeze */
	const char *time;      /* when the breach was decided, RFC 3339 */
	const char *plan_uid;  /* the plan's uid, for the owner reference; NULL: none */
	/*
	 * Borrowed lists. C does not convert char ** (plan_t's lists) to
	 * const char *const * implicitly: cast, e.g.
	 * (const char *const *)plan->device_classes.
	 */
	const char *const *device_classes; /* the DeviceClasses a freeze denies */
	size_t n_classes;
	const char *const *namespaces;     /* where it denies them; none: every namespace */
	size_t n_namespaces;
	bool frozen;
} freeze_state_t;

/*
 * The parameter's name for a plan: "drashift-freeze-<plan>". A plan name too
 * long for that (over 237 characters) gives its first characters and a hash
 * of the whole name instead, so every plan has exactly one parameter.
 * NULL when plan is NULL or empty.
 */
char *freeze_parameter_name(const char *plan);

/* The parameter's API path (for get, apply and watch by name); NULL as above. */
char *freeze_parameter_path(const char *plan);

/*
 * The whole ConfigMap, as the JSON that freeze_set applies. Pure; the caller
 * frees it. NULL when the state cannot make a parameter the policy reads
 * correctly: no plan; a DeviceClass or namespace that is empty or contains a
 * ',' (the lists are comma-separated); or frozen with no DeviceClass (a
 * freeze that would deny nothing).
 */
char *freeze_parameter_json(const freeze_state_t *state);

/*
 * Write state to the plan's parameter with server-side apply (field manager
 * "drashift", force: drashift's word wins over a hand edit). Creates the
 * object when missing, otherwise updates it in place. Like every request in
 * drashift: returns 0 and then calls cb exactly once from the loop (2xx: the
 * object as stored in resp->body), or returns a negative number and never
 * calls cb (-EINVAL when freeze_parameter_json refuses the state).
 */
int freeze_set(kube_http_t *http, const freeze_state_t *state, kube_http_cb cb, void *data);

/*
 * The other switch, for plans whose spec.slo.freezeMode asks for it: a
 * DeviceTaintRule per plan, at the newest version the cluster serves
 * (v1, v1beta2 or v1alpha3: reconcilers/api_versions.h), with the parameter's
 * name, that taints every device of the plan's driver
 *
 *   spec.deviceSelector  {driver: <driver>}
 *   spec.taint           {key: drashift.io/freeze, value: <signal>, effect: NoSchedule}
 *   annotations          drashift.io/breach: <breach id>
 *   ownerReferences      the MigrationPlan (deleting the plan deletes the rule)
 *
 * NoSchedule stops the scheduler from allocating the devices to any new
 * claim, including the claims it creates itself for pods that ask for the
 * extended resource (DeviceClass extendedResourceName), so those pods are
 * placed on device-plugin nodes instead; allocated claims and running pods
 * are not touched (that would be NoExecute). The whole driver is tainted,
 * not one pool, because the admission freeze is per DeviceClass too: a
 * freeze stops every new DRA allocation the plan's classes could make. A
 * taint has no namespace: it applies to claims in every namespace.
 *
 * Lifting deletes the rule: drashift created it and leaves the cluster as it
 * found it. Written with server-side apply like the parameter, so asserting
 * the same state again changes nothing.
 */
#define FREEZE_TAINT_KEY "drashift.io/freeze"

typedef struct {
	const char *plan;      /* the MigrationPlan's name; required */
	const char *plan_uid;  /* its uid, for the owner reference; required */
	const char *driver;    /* the DRA driver whose devices are tainted; required */
	const char *signal;    /* the breached signal: the taint's value (a label value: NULL or invalid gives "") */
	const char *breach_id; /* annotation drashift.io/breach */
	const char *api_version; /* "resource.k8s.io/v1", ...: what discovery chose; required */
} freeze_taint_t;

/* The rule's API path at api_version; NULL when plan or api_version is NULL or empty. */
char *freeze_taint_rule_path(const char *plan, const char *api_version);

/* The whole DeviceTaintRule as JSON; NULL when plan, plan_uid, driver or api_version is missing. */
char *freeze_taint_rule_json(const freeze_taint_t *taint);

/* Apply the rule (server-side apply, force); -EINVAL when the JSON is refused. Like freeze_set otherwise. */
int freeze_taint_set(kube_http_t *http, const freeze_taint_t *taint, kube_http_cb cb, void *data);

/* Delete the plan's rule; the answer is 404 when there was none. -EINVAL for no plan or api_version. */
int freeze_taint_clear(kube_http_t *http, const char *plan, const char *api_version, kube_http_cb cb, void *data);

/*
 * The freeze parameters as the cache holds them (one per plan): whether the
 * admission policy denies, and for which breach. The controller compares
 * this with the breach recorded in the plan's status, so after a restart it
 * writes the parameter only when the API server's copy differs. A new breach
 * is written to the parameter and the status at once, so the parameter is a
 * record too: a frozen parameter owned by the plan whose breach the status
 * lacks (a status write refused, or the leader gone between the two) is
 * recorded into the status from these fields (plan_status_adopts_breach).
 */
typedef struct {
	kube_object_meta_t meta;
	char *plan;      /* data.plan */
	bool frozen;     /* data.frozen == "true" */
	char *breach_id; /* data.breachId */
	char *pool, *signal, *value, *threshold, *time; /* data.*: the breach as the denial describes it */
	char *owner_uid; /* the uid of the MigrationPlan in metadata.ownerReferences; NULL: none */
} freeze_parameter_t;

extern const store_kind_t store_kind_freeze_parameters;

/*
 * The tenant boundary's parameter (manifests/tenancy-policy.yaml;
 * reconcilers/tenancy.h decides it), one ConfigMap per MigrationPlan next
 * to its freeze parameter:
 *
 *   drashift-system/drashift-tenancy-<plan>
 *     labels  drashift.io/tenancy-parameter: "true"   (the binding selects these)
 *             drashift.io/plan: <plan>
 *     data    restricted         "true" | "false" (stage Open)
 *             plan, stage        Canary | Migrating | Open
 *             pools              the pools in their canary whose namespaces hold
 *             deviceClasses      "gpu.example.com,gpu-mig.example.com"
 *             namespaces         allowed by name, "team-a,team-b"
 *             namespaceSelector  allowed by labels (tenancy_selector_text)
 *
 * Written whole with server-side apply like the freeze's, owned by the plan
 * (deleting the plan ends its restriction) and never deleted by drashift:
 * when the migration is over it says restricted=false.
 */
#define TENANCY_NAME_PREFIX "drashift-tenancy-"
#define TENANCY_LABEL_PARAMETER "drashift.io/tenancy-parameter"

/* The whole ConfigMap as JSON; NULL for no plan or a plan without DeviceClasses. */
char *tenancy_parameter_json(const plan_t *plan, const char *plan_uid, const tenancy_t *t);

/* Apply it (server-side apply, force); -EINVAL when the JSON is refused. Like freeze_set otherwise. */
int tenancy_parameter_set(kube_http_t *http, const char *json, const char *plan, kube_http_cb cb, void *data);

#endif
