/*
 * Preflight: can the cluster carry out the plan? Checked before the first
 * node of a pool moves (docs/state-machines.md, "Preflight").
 *
 * Pure. The controller reads what only the API can say (discovery, the
 * DeviceClasses, the DaemonSets, SelfSubjectAccessReviews: controller/
 * preflight_probe.h) and what its caches hold (the pools' nodes, the pods on
 * them); preflight_decide() turns that into one line per check, the
 * condition's reason and whether pools that have not started must wait.
 *
 * Checks, each line saying what to change when it fails:
 *   api               resource.k8s.io/v1 is served
 *   deviceClasses     each of spec.deviceClassNames exists and selects spec.driver
 *   daemonSets        a DaemonSet runs only where each ownership label is enabled
 *   deviceTaintRules  DeviceTaintRules are served at the version discovery chose (freezeMode with DeviceTaint)
 *   access            the ServiceAccount may do what the plan needs
 *   nodes             each pool's nodes exist and carry the device plugin's label
 *   preemption        (a warning) pods relying on preemption for the extended resource
 *
 * A Fail line blocks; a Warn line never does. Until the API reads are made
 * once the result is Checking, which blocks too: an unread cluster is no pass.
 */
#ifndef DRASHIFT_PREFLIGHT_H
#define DRASHIFT_PREFLIGHT_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

#include "plan.h"
#include "pool.h"

typedef enum { PREFLIGHT_PASS, PREFLIGHT_WARN, PREFLIGHT_FAIL } preflight_verdict_t;

/* One thing the plan needs the ServiceAccount to be allowed, and what the API answered. */
typedef struct {
	const char *verb;
	const char *group;       /* "" for the core group */
	const char *resource;    /* "pods", or with a subresource "pods/eviction" */
	const char *namespace;   /* NULL: cluster-wide */
	const char *why;         /* what of the plan needs it */
	int allowed;             /* 1 allowed, 0 denied, -1 not answered */
	const char *error;       /* when not answered: why */
} preflight_access_t;

#define PREFLIGHT_MAX_ACCESSES 32

/*
 * The accesses the plan needs, into out (cap PREFLIGHT_MAX_ACCESSES);
 * returns how many. freeze_ns is where the freeze parameters live
 * (borrowed); answers are unset (allowed -1).
 */
size_t preflight_accesses(const plan_t *plan, const char *freeze_ns, preflight_access_t *out);

/* What the pool's nodes and pods show, from the caches. */
typedef struct {
	bool started;                 /* the pool's record has a start: its nodes are checked by each handover */
	const pool_member_t *members; /* the nodes it selects (and no other plan does) */
	const handover_ads_t *ads;    /* per member */
	size_t n_members;
	size_t preempting_pods;       /* pods on its nodes with a preempting priority requesting the extended resource */
	const char *preempting_example; /* "namespace/name" of one of them */
} preflight_pool_t;

/* A read of the API: answered (error NULL) or not (error says why). */
typedef struct {
	bool read;          /* the request was made and answered */
	const char *error;  /* not answered: why */
} preflight_read_t;

typedef struct {
	const plan_t *plan;
	bool gathered;                 /* the API reads below were made at least once */
	preflight_read_t v1;           /* discovery of resource.k8s.io/v1 */
	bool v1_served;                /* it serves resourceclaims and resourceslices */
	/*
	 * The group/version drashift writes DeviceTaintRules at, as API discovery
	 * found it at start-up (api_versions_t.taint_rules; NULL: none served),
	 * and that version's discovery read again (only when the freeze needs it).
	 */
	const char *taint_rules_version;
	preflight_read_t taint_rules;
	bool taint_rules_served;       /* it serves devicetaintrules */
	const cJSON *const *classes;   /* per plan->device_classes: the DeviceClass, NULL when absent or unread */
	const preflight_read_t *class_reads; /* per class; a 404 is read with classes[i] NULL */
	preflight_read_t daemonsets_read;
	const cJSON *daemonsets;       /* the DaemonSetList's items (all namespaces) */
	const preflight_access_t *access;
	size_t n_access;
	const preflight_pool_t *pools; /* per plan pool */
} preflight_input_t;

typedef struct {
	const char *check;
	preflight_verdict_t verdict;
	char *message;
} preflight_line_t;

typedef struct {
	preflight_line_t *lines;
	size_t n_lines;
	bool passed;        /* gathered and no line failed (warnings pass) */
	bool blocks;        /* not passed and spec.preflight is Enforce: pools that have not started wait */
	const char *reason; /* Passed, PassedWithWarnings, Failed, FailedIgnored (preflight: Warn), Checking */
	char *message;      /* a summary line, then one line per check */
	char *problems;     /* the summary line, then the lines that did not pass (for an Event); NULL before the checks */
} preflight_result_t;

void preflight_decide(const preflight_input_t *in, preflight_result_t *out);
void preflight_result_free(preflight_result_t *r);

/*
 * What a DeviceClass's CEL selector says about drivers, from its text alone
 * (drashift evaluates no CEL): it requires driver (PREFLIGHT_CEL_DRIVER, the
 * name in *driver, malloc'd), or it cannot be told (UNDECIDED: other forms,
 * ||, ternaries, escapes, no device.driver at all). Decided only for
 * `device.driver == "name"` (either quote, either side), alone or as a
 * top-level && conjunct.
 */
typedef enum { PREFLIGHT_CEL_UNDECIDED, PREFLIGHT_CEL_DRIVER } preflight_cel_t;
preflight_cel_t preflight_cel_driver(const char *expression, char **driver);

/*
 * Whether a DaemonSet's pod template runs only on nodes carrying
 * key=value: its nodeSelector has it, or every required nodeAffinity term
 * has `key In [value]`. MENTIONS: the key appears but does not restrict the
 * pods to that value.
 */
typedef enum { PREFLIGHT_DS_NO, PREFLIGHT_DS_MENTIONS, PREFLIGHT_DS_SELECTS } preflight_ds_t;
preflight_ds_t preflight_daemonset_selects(const cJSON *daemonset, const char *key, const char *value);

/* Whether a pool that has not started may start: preflight passed now or was recorded for this generation, or does not block. */
bool preflight_pool_may_start(const preflight_result_t *r, bool recorded_pass, bool started);

#endif
