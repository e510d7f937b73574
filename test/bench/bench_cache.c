/*
 * The cache benchmark: what one cached object costs, in memory and in decode
 * time, on the path the reflector really takes.
 *
 *   bench_cache [--pods N] [--claims N] [--nodes N] [--repeat R]
 *   bench_cache --sample      print one synthetic event of each shape and exit
 *
 * A benchmark, not a test (docs/architecture.md, "How it is tested"): it prints numbers to read
 * and compare, never a timing verdict. It exits non-zero only when the path
 * malfunctions: an event that does not decode, a store that does not hold
 * exactly the objects sent, a projection that lost what a decision reads.
 * The memory budget (under 1 KiB per cached Pod) is reported as "ok" or
 * "OVER" and never fails the run.
 *
 * What it does, per kind (Pods, then ResourceClaims, then Nodes):
 *
 *  1. Generate N objects of realistic size and shape, modelled on the
 *     fixtures in test/unit/fixtures/objects (managedFields, labels,
 *     annotations, env, volumes, status with conditions and container
 *     statuses). A GPU job pod comes out at 8-15 KiB of compact JSON, as the
 *     API server sends it. Names, namespaces (50 tenants), nodes, uids,
 *     resourceVersions, IPs and container ids all vary, so no string is
 *     artificially shared or suspiciously short.
 *  2. Serialize them as one watch stream of that kind: ADDED events, one
 *     compact JSON object per line, fields in the order the API server's Go
 *     structs emit them. One stream per kind, because the reflector watches
 *     one resource per connection.
 *  3. Feed the stream in 16 KiB chunks (curl's usual write-callback size),
 *     each copied into a receive buffer first as curl does, through
 *     watch_framer_feed() -> store_apply_event() into one store per kind,
 *     keeping the latest resourceVersion exactly like reflector_on_event().
 *     Only this step is timed (monotonic clock): events/s and MiB/s of JSON.
 *  4. Measure memory two ways. cached_bytes/obj is store_bytes()/store_size():
 *     packed projections with malloc_usable_size, plus the store's table and
 *     the pool of strings its projections share (namespaces, node names...).
 *     rss_bytes/obj is the growth of the resident set (/proc/self/statm)
 *     from before generating to after storing, with the stream freed and
 *     malloc_trim(0) run before both readings so that freed parse garbage is
 *     not counted. It is the second opinion: it also sees malloc's chunk
 *     headers and fragmentation, which the first cannot.
 *
 * Then R rounds of MODIFIED events for every pod (a fresh resourceVersion
 * and a phase flip Running <-> Succeeded, so every event changes what the
 * projection holds) give the update rate, as the "pods-mod" row; its
 * objects column counts events and its rss column is growth per pod over all
 * rounds (a cache that replaces in place stays near 0).
 *
 * Generation is deterministic: every object derives from its index, so the
 * verifier can rebuild what each projection must hold without keeping it.
 */
#include <errno.h>
#include <inttypes.h>
#include <malloc.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "projection.h"
#include "kinds.h"
#include "store.h"
#include "watch_framer.h"
#include "xalloc.h"

#define BENCH_CHUNK (16u * 1024u)              /* bytes per watch_framer_feed() call */
#define BENCH_MAX_LINE (16u * 1024u * 1024u)   /* the reflector's default cap */
#define BENCH_MAX_OBJECTS 2000000u             /* per kind; keeps the streams in memory */
#define BENCH_MAX_EVENT (64u * 1024u)          /* no synthetic event is larger */
#define BENCH_POD_BUDGET 1024.0                /* bytes per cached pod (the budget) */

/* ---- a growing text buffer with a hard cap ------------------------------- */

/*
 * The stream under construction. The cap is set at creation (curl's dynbuf
 * rule); going past it marks the buffer failed and later appends do nothing,
 * so generators need no error paths and the caller checks once.
 */
typedef struct {
	char *p;
	size_t len, cap, max;
	bool failed;
} sbuf_t;

#define SBUF_TEMPLATE_MAX 8192 /* longest template below, with room */

static void sbuf_init(sbuf_t *b, size_t initial, size_t max)
{
	*b = (sbuf_t){ .p = xmalloc(initial), .cap = initial, .max = max };
	b->p[0] = '\0';
}

static void sbuf_free(sbuf_t *b)
{
	free(b->p);
	*b = (sbuf_t){ 0 };
}

static bool sbuf_reserve(sbuf_t *b, size_t extra)
{
	if (extra > b->max - b->len) {
		b->failed = true;
		return false;
	}
	size_t need = b->len + extra;
	if (need <= b->cap)
		return true;
	size_t cap = b->cap;
	while (cap < need)
		cap = cap > b->max / 2 ? b->max : cap * 2;
	b->p = xrealloc(b->p, cap);
	b->cap = cap;
	return true;
}

static void sbuf_vappend(sbuf_t *b, const char *fmt, va_list ap)
{
	va_list again;
	va_copy(again, ap);
	int n = vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
	if (n < 0) {
		b->failed = true;
	} else if ((size_t)n < b->cap - b->len) {
		b->len += (size_t)n;
	} else if (sbuf_reserve(b, (size_t)n + 1)) {
		vsnprintf(b->p + b->len, b->cap - b->len, fmt, again);
		b->len += (size_t)n;
	}
	va_end(again);
}

/*
 * Append printf-style JSON written with ' for " so that the templates below
 * stay readable; \\' gives an escaped quote inside a JSON string. Only the
 * template is translated, never the arguments (a fieldPath may hold a ').
 */
__attribute__((format(printf, 2, 3))) static void sbuf_json(sbuf_t *b, const char *tmpl, ...)
{
	char fmt[SBUF_TEMPLATE_MAX];
	size_t n = strlen(tmpl);
	if (b->failed)
		return;
	if (n >= sizeof(fmt)) {
		b->failed = true;
		return;
	}
	for (size_t i = 0; i <= n; i++)
		fmt[i] = tmpl[i] == '\'' ? '"' : tmpl[i];
	va_list ap;
	va_start(ap, tmpl);
	sbuf_vappend(b, fmt, ap);
	va_end(ap);
}

/* ---- deterministic variety ----------------------------------------------- */

/* splitmix64: every object gets its own stream, derived from (what, index). */
typedef struct {
	uint64_t state;
} synth_rng_t;

enum { SYNTH_JOB = 1, SYNTH_POD, SYNTH_NODE, SYNTH_CLAIM };

static uint64_t synth_mix(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
	return z ^ (z >> 31);
}

static synth_rng_t synth_rng(uint64_t what, uint64_t index)
{
	return (synth_rng_t){ synth_mix(what * 0x9e3779b97f4a7c15u + index) };
}

static uint64_t synth_next(synth_rng_t *r)
{
	r->state += 0x9e3779b97f4a7c15u;
	return synth_mix(r->state);
}

/* The alphabet of Kubernetes' generated name suffixes. */
static void synth_suffix(synth_rng_t *r, char *out, size_t n)
{
	static const char alphabet[] = "bcdfghjklmnpqrstvwxz2456789";
	for (size_t i = 0; i < n; i++)
		out[i] = alphabet[synth_next(r) % (sizeof(alphabet) - 1)];
	out[n] = '\0';
}

static void synth_hex(synth_rng_t *r, char *out, size_t n)
{
	static const char digits[] = "0123456789abcdef";
	for (size_t i = 0; i < n; i++)
		out[i] = digits[synth_next(r) & 15];
	out[n] = '\0';
}

static void synth_uuid(synth_rng_t *r, char out[37])
{
	uint64_t a = synth_next(r), b = synth_next(r);
	snprintf(out, 37, "%08" PRIx32 "-%04" PRIx32 "-4%03" PRIx32 "-%04" PRIx32 "-%012" PRIx64,
		 (uint32_t)(a >> 32), (uint32_t)(a >> 16) & 0xffff, (uint32_t)a & 0xfff,
		 0x8000 | ((uint32_t)(b >> 48) & 0x3fff), b & 0xffffffffffffu);
}

/* RFC 3339 in UTC, as metav1.Time prints. */
static void synth_time(int64_t t, char out[32])
{
	time_t tt = (time_t)t;
	struct tm tm;
	gmtime_r(&tt, &tm);
	strftime(out, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

#define SYNTH_EPOCH 1741942013 /* 2025-03-14T08:46:53Z, near the fixtures' times */
#define SYNTH_NAMESPACES 50
#define SYNTH_PODS_PER_JOB 8

/* ---- identities, rebuilt from an index by generator and verifier alike ---- */

enum { POD_DEVICE_PLUGIN, POD_DRA_EXTENDED, POD_DRA_TEMPLATE };

/*
 * A job pod. Every third pod is served by each of the three paths a
 * migration sees: a device plugin (extended resource, no claim), DRA behind
 * an extended resource (the scheduler's claim in extendedResourceClaimStatus),
 * and a DRA claim template (spec.resourceClaims, resourceClaimStatuses).
 */
typedef struct {
	unsigned index, job, completion, mode, gpus, n_env, node_index;
	bool kueue;    /* admitted through Kueue: its labels and annotation */
	bool metrics;  /* scraped: prometheus annotations, a metrics port */
	bool prefetch; /* an init container stages the dataset (training workloads) */
	int64_t created;
	const char *workload;
	char ns[32], job_name[48], job_uid[40], name[80], uid[40];
	char node[32], host_ip[24], pod_ip[24], pool[8];
	char claim[128], claim_uid[40], token_suffix[8];
	char container_id[72], init_container_id[72], image_digest[72], init_digest[72];
} synth_pod_t;

static const char *const synth_workloads[] = { "train", "finetune", "pretrain", "eval",
						 "embed",  "distill",  "rlhf",     "sft" };

static void synth_node_identity(unsigned n, char *name, size_t name_len, char *ip, size_t ip_len)
{
	snprintf(name, name_len, "gpu-node-%04u", n);
	snprintf(ip, ip_len, "172.%u.%u.%u", 16 + (n >> 16) % 16, (n >> 8) & 255, (n & 255));
}

static const char *synth_pool(unsigned node_index)
{
	return node_index % 2 == 0 ? "a100" : "h100";
}

static void synth_pod(unsigned i, unsigned n_nodes, synth_pod_t *p)
{
	memset(p, 0, sizeof(*p));
	p->index = i;
	p->job = i / SYNTH_PODS_PER_JOB;
	p->completion = i % SYNTH_PODS_PER_JOB;
	p->mode = i % 3;

	synth_rng_t jr = synth_rng(SYNTH_JOB, p->job);
	p->workload = synth_workloads[synth_next(&jr) % (sizeof(synth_workloads) / sizeof(synth_workloads[0]))];
	snprintf(p->ns, sizeof(p->ns), "tenant-%02u", p->job % SYNTH_NAMESPACES);
	snprintf(p->job_name, sizeof(p->job_name), "%s-%u", p->workload, p->job);
	synth_uuid(&jr, p->job_uid);
	p->gpus = 1u << (synth_next(&jr) % 4);
	p->n_env = (unsigned)(synth_next(&jr) % 25);
	p->kueue = p->job % 2 == 0;
	p->metrics = p->job % 3 != 0;
	p->prefetch = strcmp(p->workload, "eval") != 0 && strcmp(p->workload, "embed") != 0;
	p->created = SYNTH_EPOCH + (int64_t)p->job * 7;

	synth_rng_t r = synth_rng(SYNTH_POD, i);
	char sfx[8];
	synth_suffix(&r, sfx, 5);
	snprintf(p->name, sizeof(p->name), "%s-%u-%s", p->job_name, p->completion, sfx);
	synth_uuid(&r, p->uid);
	p->node_index = (unsigned)(synth_next(&r) % n_nodes);
	synth_node_identity(p->node_index, p->node, sizeof(p->node), p->host_ip, sizeof(p->host_ip));
	snprintf(p->pool, sizeof(p->pool), "%s", synth_pool(p->node_index));
	uint64_t ip = synth_next(&r);
	snprintf(p->pod_ip, sizeof(p->pod_ip), "10.%u.%u.%u", (unsigned)(ip % 64) + 128,
		 (unsigned)(ip >> 8) & 255, (unsigned)(ip >> 16) % 254 + 1);
	synth_suffix(&r, sfx, 5);
	if (p->mode == POD_DRA_EXTENDED)
		snprintf(p->claim, sizeof(p->claim), "%s-extended-resources-%s", p->name, sfx);
	else if (p->mode == POD_DRA_TEMPLATE)
		snprintf(p->claim, sizeof(p->claim), "%s-gpu-%s", p->name, sfx);
	synth_uuid(&r, p->claim_uid);
	synth_suffix(&r, p->token_suffix, 5);
	synth_hex(&r, p->container_id, 64);
	synth_hex(&r, p->init_container_id, 64);
	synth_hex(&jr, p->image_digest, 64);
	synth_hex(&jr, p->init_digest, 64);
}

/* Claims belong to the pods that have one: pods 1, 2, 4, 5, 7, 8, ... */
static unsigned synth_claim_pod_index(unsigned c)
{
	return (c / 2) * 3 + 1 + c % 2;
}

/* ---- Pod ------------------------------------------------------------------ */

/*
 * Environment of a training container. The first five come from valueFrom;
 * a job uses the first n_env of the rest. per_job values end in the job's
 * name so that they differ between jobs.
 */
static const struct {
	const char *name, *value;
	bool per_job;
} synth_env[] = {
	{ "NCCL_DEBUG", "WARN", false },
	{ "NCCL_IB_HCA", "mlx5_0,mlx5_1,mlx5_2,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_7", false },
	{ "NCCL_SOCKET_IFNAME", "eth0", false },
	{ "MASTER_ADDR", "", true },
	{ "MASTER_PORT", "29500", false },
	{ "CHECKPOINT_DIR", "/checkpoints/", true },
	{ "NCCL_IB_GID_INDEX", "3", false },
	{ "NCCL_NET_GDR_LEVEL", "PHB", false },
	{ "NCCL_P2P_LEVEL", "NVL", false },
	{ "NCCL_CROSS_NIC", "0", false },
	{ "NCCL_TIMEOUT", "1800", false },
	{ "TORCH_NCCL_ASYNC_ERROR_HANDLING", "1", false },
	{ "TORCH_DISTRIBUTED_DEBUG", "OFF", false },
	{ "CUDA_DEVICE_MAX_CONNECTIONS", "1", false },
	{ "CUDA_MODULE_LOADING", "LAZY", false },
	{ "PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True,max_split_size_mb:512", false },
	{ "OMP_NUM_THREADS", "8", false },
	{ "PYTHONUNBUFFERED", "1", false },
	{ "PYTHONDONTWRITEBYTECODE", "1", false },
	{ "HF_HOME", "/data/hf", false },
	{ "HF_HUB_OFFLINE", "1", false },
	{ "HF_DATASETS_CACHE", "/data/hf/datasets/", true },
	{ "TRANSFORMERS_CACHE", "/data/hf/models", false },
	{ "WANDB_PROJECT", "llm-platform", false },
	{ "WANDB_RUN_GROUP", "", true },
	{ "WANDB_MODE", "online", false },
	{ "DATASET_URI", "s3://ml-datasets/corpora/v7/shards/", true },
	{ "LOG_LEVEL", "info", false },
	{ "EPOCHS", "40", false },
	{ "LEARNING_RATE", "0.0003", false },
	{ "GLOBAL_BATCH_SIZE", "1024", false },
	{ "MICRO_BATCH_SIZE", "8", false },
	{ "SEQ_LEN", "4096", false },
	{ "MODEL_CONFIG", "/etc/train/model.yaml", false },
	{ "RESUME_FROM", "/checkpoints/latest", false },
};

static const char *const synth_env_from[] = { "POD_NAME", "POD_NAMESPACE", "JOB_COMPLETION_INDEX",
					      "WANDB_API_KEY", "GOMAXPROCS" };

static void synth_pod_env(sbuf_t *b, const synth_pod_t *p)
{
	sbuf_json(b, "'env':[{'name':'POD_NAME','valueFrom':{'fieldRef':{'apiVersion':'v1','fieldPath':'metadata.name'}}},"
		     "{'name':'POD_NAMESPACE','valueFrom':{'fieldRef':{'apiVersion':'v1','fieldPath':'metadata.namespace'}}},"
		     "{'name':'JOB_COMPLETION_INDEX','valueFrom':{'fieldRef':{'apiVersion':'v1','fieldPath':'%s'}}},"
		     "{'name':'WANDB_API_KEY','valueFrom':{'secretKeyRef':{'name':'%s-wandb','key':'api-key'}}},"
		     "{'name':'GOMAXPROCS','valueFrom':{'resourceFieldRef':{'containerName':'trainer','resource':'limits.cpu','divisor':'0'}}}",
		  "metadata.annotations['batch.kubernetes.io/job-completion-index']", p->ns);
	for (unsigned k = 0; k < p->n_env; k++)
		sbuf_json(b, ",{'name':'%s','value':'%s%s'}", synth_env[k].name, synth_env[k].value,
			  synth_env[k].per_job ? p->job_name : "");
	sbuf_json(b, "],");
}

static void synth_pod_env_fields(sbuf_t *b, const synth_pod_t *p)
{
	for (size_t k = 0; k < sizeof(synth_env_from) / sizeof(synth_env_from[0]); k++)
		sbuf_json(b, "%s'k:{\\'name\\':\\'%s\\'}':{'.':{},'f:name':{},'f:valueFrom':{}}", k ? "," : "",
			  synth_env_from[k]);
	for (unsigned k = 0; k < p->n_env; k++)
		sbuf_json(b, ",'k:{\\'name\\':\\'%s\\'}':{'.':{},'f:name':{},'f:value':{}}", synth_env[k].name);
}

/*
 * Odd rounds: the pod has Succeeded; even rounds (and ADDED): it runs and is
 * Ready. Map keys come sorted, as Go encodes maps; optional pieces are
 * spliced in where their keys sort.
 */
static void synth_pod_event(sbuf_t *b, const synth_pod_t *p, unsigned round, uint64_t rv)
{
	bool done = round % 2 == 1;
	char t_created[32], t_sched[32], t_init[32], t_init_done[32], t_start[32], t_ready[32], t_end[32];
	synth_time(p->created, t_created);
	synth_time(p->created + 1, t_sched);
	synth_time(p->created + 9, t_init);
	synth_time(p->created + 35, t_init_done);
	synth_time(p->created + 37, t_start);
	synth_time(p->created + 39, t_ready);
	synth_time(p->created + 3600 + 600 * (int64_t)round, t_end);
	const char *completed = done ? ",\"reason\":\"PodCompleted\"" : "";

	sbuf_json(b, "{'type':'%s','object':{'kind':'Pod','apiVersion':'v1','metadata':{'name':'%s','generateName':'%s-%u-',"
		     "'namespace':'%s','uid':'%s','resourceVersion':'%" PRIu64 "','creationTimestamp':'%s','labels':{",
		  round == 0 ? "ADDED" : "MODIFIED", p->name, p->job_name, p->completion, p->ns, p->uid, rv,
		  t_created);
	if (p->kueue)
		sbuf_json(b, "'app.kubernetes.io/managed-by':'kueue',");
	sbuf_json(b, "'app.kubernetes.io/name':'%s','app.kubernetes.io/part-of':'ml-platform','batch.kubernetes.io/controller-uid':'%s',"
		     "'batch.kubernetes.io/job-completion-index':'%u','batch.kubernetes.io/job-name':'%s',"
		     "'controller-uid':'%s','job-name':'%s',",
		  p->workload, p->job_uid, p->completion, p->job_name, p->job_uid, p->job_name);
	if (p->kueue)
		sbuf_json(b, "'kueue.x-k8s.io/podset':'main','kueue.x-k8s.io/queue-name':'%s-gpu',", p->ns);
	sbuf_json(b, "'team':'%s'},'annotations':{'batch.kubernetes.io/job-completion-index':'%u',"
		     "'cluster-autoscaler.kubernetes.io/safe-to-evict':'false'",
		  p->ns, p->completion);
	if (p->kueue)
		sbuf_json(b, ",'kueue.x-k8s.io/workload':'job-%s-%.5s'", p->job_name, p->job_uid);
	if (p->metrics)
		sbuf_json(b, ",'prometheus.io/path':'/metrics','prometheus.io/port':'9400','prometheus.io/scrape':'true'");
	sbuf_json(b, "},'ownerReferences':[{'apiVersion':'batch/v1','kind':'Job','name':'%s','uid':'%s','controller':true,"
		     "'blockOwnerDeletion':true}],'finalizers':['batch.kubernetes.io/job-tracking'],",
		  p->job_name, p->job_uid);

	/* managedFields: the job controller's, the scheduler's or claim controller's, kubelet's. */
	sbuf_json(b, "'managedFields':[{'manager':'kube-controller-manager','operation':'Update','apiVersion':'v1',"
		     "'time':'%s','fieldsType':'FieldsV1','fieldsV1':{'f:metadata':{'f:annotations':{'.':{},"
		     "'f:batch.kubernetes.io/job-completion-index':{},'f:cluster-autoscaler.kubernetes.io/safe-to-evict':{}%s%s},"
		     "'f:finalizers':{'.':{},'v:\\'batch.kubernetes.io/job-tracking\\'':{}},"
		     "'f:generateName':{},'f:labels':{'.':{},%s'f:app.kubernetes.io/name':{},"
		     "'f:app.kubernetes.io/part-of':{},'f:batch.kubernetes.io/controller-uid':{},"
		     "'f:batch.kubernetes.io/job-completion-index':{},'f:batch.kubernetes.io/job-name':{},"
		     "'f:controller-uid':{},'f:job-name':{},%s'f:team':{}},'f:ownerReferences':{'.':{},'k:{\\'uid\\':\\'%s\\'}':{}}},"
		     "'f:spec':{'f:affinity':{'.':{},'f:nodeAffinity':{'.':{},'f:requiredDuringSchedulingIgnoredDuringExecution':{}}},"
		     "'f:containers':{'k:{\\'name\\':\\'trainer\\'}':{'.':{},'f:command':{},'f:env':{'.':{},",
		  t_created, p->kueue ? ",\"f:kueue.x-k8s.io/workload\":{}" : "",
		  p->metrics ? ",\"f:prometheus.io/path\":{},\"f:prometheus.io/port\":{},\"f:prometheus.io/scrape\":{}" : "",
		  p->kueue ? "\"f:app.kubernetes.io/managed-by\":{}," : "",
		  p->kueue ? "\"f:kueue.x-k8s.io/podset\":{},\"f:kueue.x-k8s.io/queue-name\":{}," : "", p->job_uid);
	synth_pod_env_fields(b, p);
	sbuf_json(b, "},'f:image':{},'f:imagePullPolicy':{},'f:name':{},'f:ports':{'.':{},"
		     "'k:{\\'containerPort\\':29500,\\'protocol\\':\\'TCP\\'}':{'.':{},'f:containerPort':{},'f:name':{},'f:protocol':{}}%s},"
		     "'f:resources':{'.':{},'f:limits':{'.':{},'f:cpu':{},'f:memory':{}},'f:requests':{'.':{},'f:cpu':{},'f:memory':{}}},"
		     "'f:terminationMessagePath':{},'f:terminationMessagePolicy':{},'f:volumeMounts':{'.':{},"
		     "'k:{\\'mountPath\\':\\'/checkpoints\\'}':{'.':{},'f:mountPath':{},'f:name':{}},"
		     "'k:{\\'mountPath\\':\\'/data\\'}':{'.':{},'f:mountPath':{},'f:name':{},'f:readOnly':{}},"
		     "'k:{\\'mountPath\\':\\'/dev/shm\\'}':{'.':{},'f:mountPath':{},'f:name':{}},"
		     "'k:{\\'mountPath\\':\\'/etc/train\\'}':{'.':{},'f:mountPath':{},'f:name':{},'f:readOnly':{}}}}},"
		     "'f:dnsPolicy':{},'f:enableServiceLinks':{},",
		  p->metrics ? ",\"k:{\\\"containerPort\\\":9400,\\\"protocol\\\":\\\"TCP\\\"}\":{\".\":{},\"f:containerPort\":{},"
			       "\"f:name\":{},\"f:protocol\":{}}"
			     : "");
	if (p->prefetch)
		sbuf_json(b, "'f:initContainers':{'.':{},'k:{\\'name\\':\\'prefetch\\'}':{'.':{},'f:command':{},'f:image':{},"
			     "'f:imagePullPolicy':{},'f:name':{},'f:resources':{},'f:terminationMessagePath':{},"
			     "'f:terminationMessagePolicy':{},'f:volumeMounts':{}}},");
	sbuf_json(b, "'f:nodeSelector':{},'f:priorityClassName':{},%s"
		     "'f:restartPolicy':{},'f:schedulerName':{},'f:securityContext':{'.':{},'f:fsGroup':{},'f:runAsGroup':{},"
		     "'f:runAsUser':{}},'f:serviceAccount':{},'f:serviceAccountName':{},'f:subdomain':{},"
		     "'f:terminationGracePeriodSeconds':{},'f:tolerations':{},'f:volumes':{'.':{},"
		     "'k:{\\'name\\':\\'checkpoints\\'}':{'.':{},'f:name':{},'f:persistentVolumeClaim':{}},"
		     "'k:{\\'name\\':\\'config\\'}':{'.':{},'f:configMap':{},'f:name':{}},"
		     "'k:{\\'name\\':\\'dataset\\'}':{'.':{},'f:name':{},'f:persistentVolumeClaim':{}},"
		     "'k:{\\'name\\':\\'dshm\\'}':{'.':{},'f:emptyDir':{},'f:name':{}}}}}}",
		  p->mode == POD_DRA_TEMPLATE ? "\"f:resourceClaims\":{}," : "");
	if (p->mode == POD_DRA_EXTENDED)
		sbuf_json(b, ",{'manager':'kube-scheduler','operation':'Update','apiVersion':'v1','time':'%s',"
			     "'fieldsType':'FieldsV1','fieldsV1':{'f:status':{'f:extendedResourceClaimStatus':{'.':{},"
			     "'f:requestMappings':{},'f:resourceClaimName':{}}}},'subresource':'status'}",
			  t_sched);
	if (p->mode == POD_DRA_TEMPLATE)
		sbuf_json(b, ",{'manager':'kube-controller-manager','operation':'Update','apiVersion':'v1','time':'%s',"
			     "'fieldsType':'FieldsV1','fieldsV1':{'f:status':{'f:resourceClaimStatuses':{'.':{},"
			     "'k:{\\'name\\':\\'gpu\\'}':{'.':{},'f:name':{},'f:resourceClaimName':{}}}}},'subresource':'status'}",
			  t_created);
	sbuf_json(b, ",{'manager':'kubelet','operation':'Update','apiVersion':'v1','time':'%s','fieldsType':'FieldsV1',"
		     "'fieldsV1':{'f:status':{'f:conditions':{"
		     "'k:{\\'type\\':\\'ContainersReady\\'}':{'.':{},'f:lastProbeTime':{},'f:lastTransitionTime':{},'f:status':{},'f:type':{}},"
		     "'k:{\\'type\\':\\'Initialized\\'}':{'.':{},'f:lastProbeTime':{},'f:lastTransitionTime':{},'f:status':{},'f:type':{}},"
		     "'k:{\\'type\\':\\'PodReadyToStartContainers\\'}':{'.':{},'f:lastProbeTime':{},'f:lastTransitionTime':{},'f:status':{},'f:type':{}},"
		     "'k:{\\'type\\':\\'Ready\\'}':{'.':{},'f:lastProbeTime':{},'f:lastTransitionTime':{},'f:status':{},'f:type':{}}},"
		     "'f:containerStatuses':{},'f:hostIP':{},'f:hostIPs':{},%s'f:phase':{},'f:podIP':{},"
		     "'f:podIPs':{'.':{},'k:{\\'ip\\':\\'%s\\'}':{'.':{},'f:ip':{}}},'f:startTime':{}}},'subresource':'status'}]},",
		  done ? t_end : t_ready, p->prefetch ? "\"f:initContainerStatuses\":{}," : "", p->pod_ip);

	/* spec */
	sbuf_json(b, "'spec':{'volumes':[{'name':'dataset','persistentVolumeClaim':{'claimName':'%s-dataset','readOnly':true}},"
		     "{'name':'checkpoints','persistentVolumeClaim':{'claimName':'%s-checkpoints'}},"
		     "{'name':'dshm','emptyDir':{'medium':'Memory','sizeLimit':'64Gi'}},"
		     "{'name':'config','configMap':{'name':'%s-config','defaultMode':420}},"
		     "{'name':'kube-api-access-%s','projected':{'sources':[{'serviceAccountToken':{'expirationSeconds':3607,'path':'token'}},"
		     "{'configMap':{'name':'kube-root-ca.crt','items':[{'key':'ca.crt','path':'ca.crt'}]}},"
		     "{'downwardAPI':{'items':[{'path':'namespace','fieldRef':{'apiVersion':'v1','fieldPath':'metadata.namespace'}}]}}],"
		     "'defaultMode':420}}],",
		  p->job_name, p->job_name, p->job_name, p->token_suffix);
	if (p->prefetch)
		sbuf_json(b, "'initContainers':[{'name':'prefetch','image':'registry.example.com/ml/dataset-prefetch:1.3',"
			     "'command':['python','-m','prefetch','--shards','/data/shards'],"
			     "'resources':{'limits':{'cpu':'2','memory':'4Gi'},'requests':{'cpu':'1','memory':'1Gi'}},"
			     "'volumeMounts':[{'name':'dataset','mountPath':'/data'},"
			     "{'name':'kube-api-access-%s','readOnly':true,'mountPath':'/var/run/secrets/kubernetes.io/serviceaccount'}],"
			     "'terminationMessagePath':'/dev/termination-log','terminationMessagePolicy':'File','imagePullPolicy':'IfNotPresent'}],",
			  p->token_suffix);
	sbuf_json(b, "'containers':[{'name':'trainer','image':'registry.example.com/ml/%s:2.%u.%u',"
		     "'command':['torchrun','--nnodes=%u','--nproc-per-node=%u','--rdzv-backend=c10d',"
		     "'--rdzv-endpoint=%s-0.%s:29500','-m','%s.main','--config','/etc/train/config.yaml'],"
		     "'ports':[{'name':'dist','containerPort':29500,'protocol':'TCP'}%s],",
		  p->workload, p->job % 7, p->job % 13, SYNTH_PODS_PER_JOB, p->gpus, p->job_name, p->job_name,
		  p->workload, p->metrics ? ",{\"name\":\"metrics\",\"containerPort\":9400,\"protocol\":\"TCP\"}" : "");
	synth_pod_env(b, p);
	if (p->mode == POD_DRA_TEMPLATE)
		sbuf_json(b, "'resources':{'limits':{'cpu':'%u','memory':'%uGi'},'requests':{'cpu':'%u','memory':'%uGi'},"
			     "'claims':[{'name':'gpu'}]},",
			  8 * p->gpus, 64 * p->gpus, 8 * p->gpus, 64 * p->gpus);
	else
		sbuf_json(b, "'resources':{'limits':{'cpu':'%u','example.com/gpu':'%u','memory':'%uGi'},"
			     "'requests':{'cpu':'%u','example.com/gpu':'%u','memory':'%uGi'}},",
			  8 * p->gpus, p->gpus, 64 * p->gpus, 8 * p->gpus, p->gpus, 64 * p->gpus);
	sbuf_json(b, "'volumeMounts':[{'name':'dataset','readOnly':true,'mountPath':'/data'},{'name':'checkpoints','mountPath':'/checkpoints'},"
		     "{'name':'dshm','mountPath':'/dev/shm'},{'name':'config','readOnly':true,'mountPath':'/etc/train'},"
		     "{'name':'kube-api-access-%s','readOnly':true,'mountPath':'/var/run/secrets/kubernetes.io/serviceaccount'}],"
		     "'terminationMessagePath':'/dev/termination-log','terminationMessagePolicy':'File','imagePullPolicy':'IfNotPresent'}],"
		     "'restartPolicy':'Never','terminationGracePeriodSeconds':30,'dnsPolicy':'ClusterFirst',"
		     "'nodeSelector':{'drashift.io/pool':'%s'},'serviceAccountName':'trainer','serviceAccount':'trainer','nodeName':'%s',"
		     "'securityContext':{'runAsUser':1000,'runAsGroup':1000,'fsGroup':1000},'subdomain':'%s',"
		     "'affinity':{'nodeAffinity':{'requiredDuringSchedulingIgnoredDuringExecution':{'nodeSelectorTerms':[{'matchExpressions':"
		     "[{'key':'nvidia.com/gpu.product','operator':'In','values':['NVIDIA-A100-SXM4-80GB','NVIDIA-H100-80GB-HBM3']}]}]}}},"
		     "'schedulerName':'default-scheduler','tolerations':[{'key':'node.kubernetes.io/not-ready','operator':'Exists',"
		     "'effect':'NoExecute','tolerationSeconds':300},{'key':'node.kubernetes.io/unreachable','operator':'Exists',"
		     "'effect':'NoExecute','tolerationSeconds':300},{'key':'nvidia.com/gpu','operator':'Exists','effect':'NoSchedule'}],"
		     "'priorityClassName':'training','priority':1000,'enableServiceLinks':true,'preemptionPolicy':'PreemptLowerPriority'",
		  p->token_suffix, p->pool, p->node, p->job_name);
	if (p->mode == POD_DRA_TEMPLATE)
		sbuf_json(b, ",'resourceClaims':[{'name':'gpu','resourceClaimTemplateName':'gpu-x%u'}]", p->gpus);

	/* status */
	sbuf_json(b, "},'status':{'phase':'%s','conditions':["
		     "{'type':'PodReadyToStartContainers','status':'%s','lastProbeTime':null,'lastTransitionTime':'%s'},"
		     "{'type':'Initialized','status':'True','lastProbeTime':null,'lastTransitionTime':'%s'},"
		     "{'type':'Ready','status':'%s','lastProbeTime':null,'lastTransitionTime':'%s'%s},"
		     "{'type':'ContainersReady','status':'%s','lastProbeTime':null,'lastTransitionTime':'%s'%s},"
		     "{'type':'PodScheduled','status':'True','lastProbeTime':null,'lastTransitionTime':'%s'}],"
		     "'hostIP':'%s','hostIPs':[{'ip':'%s'}],'podIP':'%s','podIPs':[{'ip':'%s'}],'startTime':'%s',",
		  done ? "Succeeded" : "Running", done ? "False" : "True", done ? t_end : t_init,
		  p->prefetch ? t_init_done : t_init, done ? "False" : "True", done ? t_end : t_ready, completed,
		  done ? "False" : "True", done ? t_end : t_ready, completed, t_sched, p->host_ip, p->host_ip, p->pod_ip,
		  p->pod_ip, t_sched);
	if (p->prefetch)
		sbuf_json(b, "'initContainerStatuses':[{'name':'prefetch','state':{'terminated':{'exitCode':0,'reason':'Completed',"
			     "'startedAt':'%s','finishedAt':'%s','containerID':'containerd://%s'}},'lastState':{},'ready':true,'restartCount':0,"
			     "'image':'registry.example.com/ml/dataset-prefetch:1.3','imageID':'registry.example.com/ml/dataset-prefetch@sha256:%s',"
			     "'containerID':'containerd://%s','started':false,"
			     "'volumeMounts':[{'name':'dataset','mountPath':'/data'},{'name':'kube-api-access-%s',"
			     "'mountPath':'/var/run/secrets/kubernetes.io/serviceaccount','readOnly':true,'recursiveReadOnly':'Disabled'}]}],",
			  t_init, t_init_done, p->init_container_id, p->init_digest, p->init_container_id, p->token_suffix);
	sbuf_json(b, "'containerStatuses':[{'name':'trainer','state':{");
	if (done)
		sbuf_json(b, "'terminated':{'exitCode':0,'reason':'Completed','startedAt':'%s','finishedAt':'%s','containerID':'containerd://%s'}",
			  t_start, t_end, p->container_id);
	else
		sbuf_json(b, "'running':{'startedAt':'%s'}", t_start);
	sbuf_json(b, "},'lastState':{},'ready':%s,'restartCount':0,'image':'registry.example.com/ml/%s:2.%u.%u',"
		     "'imageID':'registry.example.com/ml/%s@sha256:%s','containerID':'containerd://%s','started':%s,",
		  done ? "false" : "true", p->workload, p->job % 7, p->job % 13, p->workload, p->image_digest,
		  p->container_id, done ? "false" : "true");
	if (p->mode == POD_DRA_TEMPLATE)
		sbuf_json(b, "'allocatedResources':{'cpu':'%u','memory':'%uGi'},"
			     "'resources':{'limits':{'cpu':'%u','memory':'%uGi'},'requests':{'cpu':'%u','memory':'%uGi'},'claims':[{'name':'gpu'}]},",
			  8 * p->gpus, 64 * p->gpus, 8 * p->gpus, 64 * p->gpus, 8 * p->gpus, 64 * p->gpus);
	else
		sbuf_json(b, "'allocatedResources':{'cpu':'%u','example.com/gpu':'%u','memory':'%uGi'},"
			     "'resources':{'limits':{'cpu':'%u','example.com/gpu':'%u','memory':'%uGi'},"
			     "'requests':{'cpu':'%u','example.com/gpu':'%u','memory':'%uGi'}},",
			  8 * p->gpus, p->gpus, 64 * p->gpus, 8 * p->gpus, p->gpus, 64 * p->gpus, 8 * p->gpus, p->gpus,
			  64 * p->gpus);
	sbuf_json(b, "'volumeMounts':[{'name':'dataset','mountPath':'/data','readOnly':true,'recursiveReadOnly':'Disabled'},"
		     "{'name':'checkpoints','mountPath':'/checkpoints'},{'name':'dshm','mountPath':'/dev/shm'},"
		     "{'name':'config','mountPath':'/etc/train','readOnly':true,'recursiveReadOnly':'Disabled'},"
		     "{'name':'kube-api-access-%s','mountPath':'/var/run/secrets/kubernetes.io/serviceaccount','readOnly':true,"
		     "'recursiveReadOnly':'Disabled'}],'user':{'linux':{'uid':1000,'gid':1000,'supplementalGroups':[1000]}}}],"
		     "'qosClass':'Burstable'",
		  p->token_suffix);
	if (p->mode == POD_DRA_EXTENDED)
		sbuf_json(b, ",'extendedResourceClaimStatus':{'requestMappings':[{'containerName':'trainer',"
			     "'resourceName':'example.com/gpu','requestName':'container-0-request-0'}],'resourceClaimName':'%s'}",
			  p->claim);
	if (p->mode == POD_DRA_TEMPLATE)
		sbuf_json(b, ",'resourceClaimStatuses':[{'name':'gpu','resourceClaimName':'%s'}]", p->claim);
	sbuf_json(b, "}}}\n");
}

/* ---- ResourceClaim ---------------------------------------------------------- */

/*
 * The claim of pod synth_claim_pod_index(c): generated from the pod's
 * template, or created by the scheduler for the pod's extended resource.
 * Allocated on the pod's node, one device per GPU, reserved for the pod, with
 * the driver's per-device conditions in status.
 */
static void synth_claim_event(sbuf_t *b, unsigned c, unsigned n_nodes, uint64_t rv)
{
	synth_pod_t p;
	synth_pod(synth_claim_pod_index(c), n_nodes, &p);
	bool from_template = p.mode == POD_DRA_TEMPLATE;
	const char *request = from_template ? "gpu" : "container-0-request-0";
	const char *driver = "gpu.example.com";
	char t_created[32], t_alloc[32], t_prepared[32];
	synth_time(p.created, t_created);
	synth_time(p.created + 1, t_alloc);
	synth_time(p.created + 8, t_prepared);
	synth_rng_t r = synth_rng(SYNTH_CLAIM, c);
	unsigned first_device = (unsigned)(synth_next(&r) % 8);

	sbuf_json(b, "{'type':'ADDED','object':{'kind':'ResourceClaim','apiVersion':'resource.k8s.io/v1','metadata':{'name':'%s',"
		     "'generateName':'%s-%s-','namespace':'%s','uid':'%s','resourceVersion':'%" PRIu64 "','creationTimestamp':'%s',",
		  p.claim, p.name, from_template ? "gpu" : "extended-resources", p.ns, p.claim_uid, rv, t_created);
	if (from_template)
		sbuf_json(b, "'annotations':{'resource.kubernetes.io/pod-claim-name':'gpu'},");
	sbuf_json(b, "'ownerReferences':[{'apiVersion':'v1','kind':'Pod','name':'%s','uid':'%s','controller':true,'blockOwnerDeletion':true}],"
		     "'finalizers':['resource.kubernetes.io/delete-protection'],"
		     "'managedFields':[{'manager':'%s','operation':'Update','apiVersion':'resource.k8s.io/v1','time':'%s',"
		     "'fieldsType':'FieldsV1','fieldsV1':{'f:metadata':{%s'f:finalizers':{'.':{},"
		     "'v:\\'resource.kubernetes.io/delete-protection\\'':{}},'f:generateName':{},'f:ownerReferences':{'.':{},"
		     "'k:{\\'uid\\':\\'%s\\'}':{}}},'f:spec':{'f:devices':{'f:requests':{}}}}},"
		     "{'manager':'kube-scheduler','operation':'Update','apiVersion':'resource.k8s.io/v1','time':'%s','fieldsType':'FieldsV1',"
		     "'fieldsV1':{'f:status':{'f:allocation':{'.':{},'f:allocationTimestamp':{},'f:devices':{'.':{},'f:results':{}},"
		     "'f:nodeSelector':{}},'f:reservedFor':{'.':{},'k:{\\'uid\\':\\'%s\\'}':{}}}},'subresource':'status'},"
		     "{'manager':'%s','operation':'Apply','apiVersion':'resource.k8s.io/v1','time':'%s','fieldsType':'FieldsV1',"
		     "'fieldsV1':{'f:status':{'f:devices':{",
		  p.name, p.uid, from_template ? "kube-controller-manager" : "kube-scheduler", t_created,
		  from_template ? "\"f:annotations\":{\".\":{},\"f:resource.kubernetes.io/pod-claim-name\":{}}," : "",
		  p.uid, t_alloc, p.uid, driver, t_prepared);
	for (unsigned d = 0; d < p.gpus; d++)
		sbuf_json(b, "%s'k:{\\'device\\':\\'gpu-%u\\',\\'driver\\':\\'%s\\',\\'pool\\':\\'%s\\'}':{}", d ? "," : "",
			  (first_device + d) % 8, driver, p.node);
	sbuf_json(b, "}}},'subresource':'status'}]},'spec':{'devices':{'requests':[{'name':'%s','exactly':{'deviceClassName':'%s',"
		     "'selectors':[{'cel':{'expression':'device.attributes[\\'%s\\'].model == \\'%s\\''}}],"
		     "'allocationMode':'ExactCount','count':%u}}]}},'status':{'allocation':{'devices':{'results':[",
		  request, driver, driver, strcmp(p.pool, "a100") == 0 ? "A100" : "H100", p.gpus);
	for (unsigned d = 0; d < p.gpus; d++)
		sbuf_json(b, "%s{'request':'%s','driver':'%s','pool':'%s','device':'gpu-%u'}", d ? "," : "", request, driver,
			  p.node, (first_device + d) % 8);
	sbuf_json(b, "]},'nodeSelector':{'nodeSelectorTerms':[{'matchFields':[{'key':'metadata.name','operator':'In','values':['%s']}]}]},"
		     "'allocationTimestamp':'%s'},'reservedFor':[{'resource':'pods','name':'%s','uid':'%s'}],'devices':[",
		  p.node, t_alloc, p.name, p.uid);
	for (unsigned d = 0; d < p.gpus; d++)
		sbuf_json(b, "%s{'driver':'%s','pool':'%s','device':'gpu-%u','conditions':[{'type':'Ready','status':'True',"
			     "'observedGeneration':1,'lastTransitionTime':'%s','reason':'Prepared','message':''},"
			     "{'type':'Healthy','status':'True','observedGeneration':1,'lastTransitionTime':'%s','reason':'NoXidErrors',"
			     "'message':''}]}",
			  d ? "," : "", driver, p.node, (first_device + d) % 8, t_prepared, t_prepared);
	sbuf_json(b, "]}}}\n");
}

/* ---- Node ------------------------------------------------------------------ */

static const char *const synth_images[] = { "trainer", "finetune", "pretrain", "eval", "embed", "distill",
					    "rlhf", "sft", "dataset-prefetch", "triton-server", "vllm", "nccl-tests" };

/*
 * A GPU node as the GPU operator and node-feature-discovery leave it: about
 * fifty labels, long annotations, 15-40 cached images in status.
 */
static void synth_node_event(sbuf_t *b, unsigned n, uint64_t rv)
{
	char name[32], ip[24], uid[40], boot[40], machine[40], instance[24], t_created[32], t_beat[32], t_gfd[32];
	synth_rng_t r = synth_rng(SYNTH_NODE, n);
	synth_node_identity(n, name, sizeof(name), ip, sizeof(ip));
	synth_uuid(&r, uid);
	synth_uuid(&r, boot);
	synth_hex(&r, machine, 32);
	synth_hex(&r, instance, 17);
	bool h100 = n % 2 == 1;
	const char *pool = synth_pool(n);
	const char *product = h100 ? "NVIDIA-H100-80GB-HBM3" : "NVIDIA-A100-SXM4-80GB";
	const char *itype = h100 ? "p5.48xlarge" : "p4de.24xlarge";
	char zone = (char)('a' + n % 4);
	bool cordoned = n % 10 == 0;
	static const char *const handover[] = { "serving-device-plugin", "draining", "driver-ready", "done" };
	const char *state = handover[n % 4];
	unsigned dp_gpus = strcmp(state, "done") == 0 ? 0 : 8;
	synth_time(SYNTH_EPOCH - 86400 * 30 - (int64_t)n * 60, t_created);
	synth_time(SYNTH_EPOCH + 7200 + (int64_t)(n % 40), t_beat);
	synth_time(SYNTH_EPOCH - 3600 + (int64_t)n, t_gfd);

	sbuf_json(b, "{'type':'ADDED','object':{'kind':'Node','apiVersion':'v1','metadata':{'name':'%s','uid':'%s',"
		     "'resourceVersion':'%" PRIu64 "','creationTimestamp':'%s','labels':{'beta.kubernetes.io/arch':'amd64',"
		     "'beta.kubernetes.io/instance-type':'%s','beta.kubernetes.io/os':'linux','drashift.io/pool':'%s',"
		     "'failure-domain.beta.kubernetes.io/region':'us-east-1','failure-domain.beta.kubernetes.io/zone':'us-east-1%c',"
		     "'kubernetes.io/arch':'amd64','kubernetes.io/hostname':'%s','kubernetes.io/os':'linux',"
		     "'node.kubernetes.io/instance-type':'%s','topology.kubernetes.io/region':'us-east-1',"
		     "'topology.kubernetes.io/zone':'us-east-1%c','topology.k8s.aws/network-node-layer-1':'nn-%.17s',",
		  name, uid, rv, t_created, itype, pool, zone, name, itype, zone, instance);
	sbuf_json(b, "'nvidia.com/cuda.driver-version.full':'570.124.06','nvidia.com/cuda.driver-version.major':'570',"
		     "'nvidia.com/cuda.driver-version.minor':'124','nvidia.com/cuda.driver-version.revision':'06',"
		     "'nvidia.com/cuda.runtime-version.full':'12.8','nvidia.com/cuda.runtime-version.major':'12',"
		     "'nvidia.com/cuda.runtime-version.minor':'8','nvidia.com/gfd.timestamp':'%" PRId64 "',"
		     "'nvidia.com/gpu-driver-upgrade-state':'upgrade-done','nvidia.com/gpu.compute.major':'%s',"
		     "'nvidia.com/gpu.compute.minor':'0','nvidia.com/gpu.count':'8','nvidia.com/gpu.deploy.container-toolkit':'true',"
		     "'nvidia.com/gpu.deploy.dcgm':'true','nvidia.com/gpu.deploy.dcgm-exporter':'true',"
		     "'nvidia.com/gpu.deploy.device-plugin':'%s','nvidia.com/gpu.deploy.driver':'true',"
		     "'nvidia.com/gpu.deploy.gpu-feature-discovery':'true','nvidia.com/gpu.deploy.node-status-exporter':'true',"
		     "'nvidia.com/gpu.deploy.operator-validator':'true','nvidia.com/gpu.family':'%s','nvidia.com/gpu.machine':'%s',"
		     "'nvidia.com/gpu.memory':'81920','nvidia.com/gpu.mode':'compute','nvidia.com/gpu.present':'true',"
		     "'nvidia.com/gpu.product':'%s','nvidia.com/gpu.replicas':'1','nvidia.com/gpu.sharing-strategy':'none',"
		     "'nvidia.com/mig.capable':'true','nvidia.com/mig.strategy':'single',",
		  (int64_t)SYNTH_EPOCH - 3600 + n, h100 ? "9" : "8", dp_gpus ? "true" : "false",
		  h100 ? "hopper" : "ampere", itype, product);
	sbuf_json(b, "'feature.node.kubernetes.io/cpu-cpuid.AVX512F':'true','feature.node.kubernetes.io/cpu-cpuid.AVX512VNNI':'true',"
		     "'feature.node.kubernetes.io/cpu-cpuid.AMXBF16':'%s','feature.node.kubernetes.io/cpu-hardware_multithreading':'true',"
		     "'feature.node.kubernetes.io/cpu-model.family':'6','feature.node.kubernetes.io/cpu-model.id':'%s',"
		     "'feature.node.kubernetes.io/cpu-model.vendor_id':'Intel','feature.node.kubernetes.io/kernel-version.full':'6.8.0-1021-aws',"
		     "'feature.node.kubernetes.io/kernel-version.major':'6','feature.node.kubernetes.io/kernel-version.minor':'8',"
		     "'feature.node.kubernetes.io/memory-numa':'true','feature.node.kubernetes.io/network-sriov.capable':'true',"
		     "'feature.node.kubernetes.io/pci-10de.present':'true','feature.node.kubernetes.io/pci-15b3.present':'true',"
		     "'feature.node.kubernetes.io/rdma.available':'true','feature.node.kubernetes.io/rdma.capable':'true',"
		     "'feature.node.kubernetes.io/storage-nonrotationaldisk':'true','feature.node.kubernetes.io/system-os_release.ID':'ubuntu',"
		     "'feature.node.kubernetes.io/system-os_release.VERSION_ID':'24.04'},",
		  h100 ? "true" : "false", h100 ? "143" : "106");
	sbuf_json(b, "'annotations':{'csi.volume.kubernetes.io/nodeid':'{\\'ebs.csi.aws.com\\':\\'i-%s\\',\\'efs.csi.aws.com\\':\\'i-%s\\'}',"
		     "'drashift.io/handover':'%s','drashift.io/plan':'migrate-%s',"
		     "'kubeadm.alpha.kubernetes.io/cri-socket':'unix:///run/containerd/containerd.sock',"
		     "'nfd.node.kubernetes.io/feature-labels':'cpu-cpuid.AMXBF16,cpu-cpuid.AVX512F,cpu-cpuid.AVX512VNNI,"
		     "cpu-hardware_multithreading,cpu-model.family,cpu-model.id,cpu-model.vendor_id,kernel-version.full,"
		     "kernel-version.major,kernel-version.minor,memory-numa,network-sriov.capable,pci-10de.present,pci-15b3.present,"
		     "rdma.available,rdma.capable,storage-nonrotationaldisk,system-os_release.ID,system-os_release.VERSION_ID',"
		     "'node.alpha.kubernetes.io/ttl':'0','nvidia.com/gpu-driver-upgrade-enabled':'true',"
		     "'volumes.kubernetes.io/controller-managed-attach-detach':'true'},",
		  instance, instance, state, pool);
	sbuf_json(b, "'managedFields':[{'manager':'kubelet','operation':'Update','apiVersion':'v1','time':'%s','fieldsType':'FieldsV1',"
		     "'fieldsV1':{'f:metadata':{'f:annotations':{'.':{},'f:volumes.kubernetes.io/controller-managed-attach-detach':{}},"
		     "'f:labels':{'.':{},'f:beta.kubernetes.io/arch':{},'f:beta.kubernetes.io/instance-type':{},'f:beta.kubernetes.io/os':{},"
		     "'f:failure-domain.beta.kubernetes.io/region':{},'f:failure-domain.beta.kubernetes.io/zone':{},'f:kubernetes.io/arch':{},"
		     "'f:kubernetes.io/hostname':{},'f:kubernetes.io/os':{},'f:node.kubernetes.io/instance-type':{},"
		     "'f:topology.kubernetes.io/region':{},'f:topology.kubernetes.io/zone':{}}},'f:spec':{'f:providerID':{}}}},"
		     "{'manager':'nfd-master','operation':'Update','apiVersion':'v1','time':'%s','fieldsType':'FieldsV1',"
		     "'fieldsV1':{'f:metadata':{'f:annotations':{'f:nfd.node.kubernetes.io/feature-labels':{}},'f:labels':{"
		     "'f:feature.node.kubernetes.io/cpu-cpuid.AVX512F':{},'f:feature.node.kubernetes.io/pci-10de.present':{},"
		     "'f:nvidia.com/gpu.count':{},'f:nvidia.com/gpu.product':{},'f:nvidia.com/gpu.memory':{},'f:nvidia.com/gfd.timestamp':{}}}}},"
		     "{'manager':'drashift','operation':'Apply','apiVersion':'v1','time':'%s','fieldsType':'FieldsV1',"
		     "'fieldsV1':{'f:metadata':{'f:annotations':{'f:drashift.io/handover':{},'f:drashift.io/plan':{}},"
		     "'f:labels':{'f:drashift.io/pool':{}}},'f:spec':{'f:unschedulable':{}}}},"
		     "{'manager':'kubelet','operation':'Update','apiVersion':'v1','time':'%s','fieldsType':'FieldsV1','fieldsV1':{'f:status':{"
		     "'f:allocatable':{'f:example.com/gpu':{},'f:nvidia.com/gpu':{}},'f:capacity':{'f:example.com/gpu':{},'f:nvidia.com/gpu':{}},"
		     "'f:conditions':{'k:{\\'type\\':\\'DiskPressure\\'}':{'f:lastHeartbeatTime':{}},"
		     "'k:{\\'type\\':\\'MemoryPressure\\'}':{'f:lastHeartbeatTime':{}},'k:{\\'type\\':\\'PIDPressure\\'}':{'f:lastHeartbeatTime':{}},"
		     "'k:{\\'type\\':\\'Ready\\'}':{'f:lastHeartbeatTime':{},'f:lastTransitionTime':{},'f:message':{},'f:reason':{},'f:status':{}}},"
		     "'f:images':{},'f:nodeInfo':{'f:bootID':{}}}},'subresource':'status'}]},",
		  t_created, t_gfd, t_gfd, t_beat);
	sbuf_json(b, "'spec':{'podCIDR':'10.%u.%u.0/24','podCIDRs':['10.%u.%u.0/24'],'providerID':'aws:///us-east-1%c/i-%s',"
		     "'taints':[{'key':'nvidia.com/gpu','value':'present','effect':'NoSchedule'}%s]%s},",
		  128 + (n >> 8) % 64, n & 255, 128 + (n >> 8) % 64, n & 255, zone, instance,
		  cordoned ? ",{\"key\":\"node.kubernetes.io/unschedulable\",\"effect\":\"NoSchedule\"}" : "",
		  cordoned ? ",\"unschedulable\":true" : "");
	sbuf_json(b, "'status':{'capacity':{'cpu':'96','ephemeral-storage':'101430960Ki','example.com/gpu':'%u','hugepages-1Gi':'0',"
		     "'hugepages-2Mi':'0','memory':'1177542296Ki','nvidia.com/gpu':'8','pods':'110','rdma/hca_shared_devices_a':'1k'},"
		     "'allocatable':{'cpu':'95500m','ephemeral-storage':'93478772582','example.com/gpu':'%u','hugepages-1Gi':'0',"
		     "'hugepages-2Mi':'0','memory':'1176925848Ki','nvidia.com/gpu':'8','pods':'110','rdma/hca_shared_devices_a':'1k'},"
		     "'conditions':[{'type':'MemoryPressure','status':'False','lastHeartbeatTime':'%s','lastTransitionTime':'%s',"
		     "'reason':'KubeletHasSufficientMemory','message':'kubelet has sufficient memory available'},"
		     "{'type':'DiskPressure','status':'False','lastHeartbeatTime':'%s','lastTransitionTime':'%s',"
		     "'reason':'KubeletHasNoDiskPressure','message':'kubelet has no disk pressure'},"
		     "{'type':'PIDPressure','status':'False','lastHeartbeatTime':'%s','lastTransitionTime':'%s',"
		     "'reason':'KubeletHasSufficientPID','message':'kubelet has sufficient PID available'},"
		     "{'type':'Ready','status':'True','lastHeartbeatTime':'%s','lastTransitionTime':'%s',"
		     "'reason':'KubeletReady','message':'kubelet is posting ready status'}],"
		     "'addresses':[{'type':'InternalIP','address':'%s'},{'type':'InternalDNS','address':'ip-%s.ec2.internal'},"
		     "{'type':'Hostname','address':'%s'}],'daemonEndpoints':{'kubeletEndpoint':{'Port':10250}},"
		     "'nodeInfo':{'machineID':'%s','systemUUID':'%.8s-%.4s-%.4s-%.4s-%.12s','bootID':'%s',"
		     "'kernelVersion':'6.8.0-1021-aws','osImage':'Ubuntu 24.04.1 LTS','containerRuntimeVersion':'containerd://2.0.2',"
		     "'kubeletVersion':'v1.34.1','kubeProxyVersion':'','operatingSystem':'linux','architecture':'amd64'},'images':[",
		  dp_gpus, dp_gpus, t_beat, t_created, t_beat, t_created, t_beat, t_created, t_beat, t_created, ip, ip, name,
		  machine, machine, machine + 8, machine + 12, machine + 16, machine + 20, boot);
	unsigned n_images = 15 + (unsigned)(synth_next(&r) % 26);
	for (unsigned k = 0; k < n_images; k++) {
		char digest[72];
		synth_hex(&r, digest, 64);
		const char *img = synth_images[k % (sizeof(synth_images) / sizeof(synth_images[0]))];
		sbuf_json(b, "%s{'names':['registry.example.com/ml/%s@sha256:%s','registry.example.com/ml/%s:2.%u.%u'],'sizeBytes':%" PRIu64 "}",
			  k ? "," : "", img, digest, img, k % 7, k, 300000000 + synth_next(&r) % 9000000000u);
	}
	sbuf_json(b, ",{'names':['registry.k8s.io/pause@sha256:ee6521f290b2168b6e0935a181d4cff9be1ac3f505666ef0e3c98fae8199917a',"
		     "'registry.k8s.io/pause:3.10'],'sizeBytes':320368}],'runtimeHandlers':[{'name':'nvidia','features':"
		     "{'recursiveReadOnlyMounts':true,'userNamespaces':true}},{'name':'','features':{'recursiveReadOnlyMounts':true,"
		     "'userNamespaces':true}}],'features':{'supplementalGroupsPolicy':true}}}}\n");
}

/* ---- the measured path ------------------------------------------------------ */

typedef enum { KIND_PODS, KIND_CLAIMS, KIND_NODES } bench_kind_t;

typedef struct {
	unsigned pods, claims, nodes, repeat;
} bench_opt_t;

/* What the reflector keeps while a watch runs: the store and the last resourceVersion. */
typedef struct {
	store_t *store;
	char *rv;
	bool relist;
} bench_watch_t;

/* reflector_on_event(), minus the reflector. */
static int bench_on_line(const char *line, size_t len, void *data)
{
	bench_watch_t *w = data;
	char *rv;
	if (store_apply_event(w->store, line, len, &rv) == STORE_RELIST) {
		w->relist = true;
		return 1;
	}
	if (rv) {
		free(w->rv);
		w->rv = rv;
	}
	return 0;
}

static double bench_clock(clockid_t clock)
{
	struct timespec ts;
	clock_gettime(clock, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/*
 * Resident bytes after giving freed heap pages back (malloc_trim), so that
 * garbage from parsing and from the freed stream does not count. -1 when
 * /proc/self/statm cannot be read.
 */
static long long bench_rss(void)
{
	char text[128], *end;
	malloc_trim(0);
	FILE *f = fopen("/proc/self/statm", "r");
	if (f == NULL)
		return -1;
	size_t n = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	text[n] = '\0';
	errno = 0;
	strtoull(text, &end, 10); /* total program size; the second field is the resident set */
	if (end == text || *end != ' ')
		return -1;
	const char *start = end + 1;
	unsigned long long resident = strtoull(start, &end, 10);
	long page = sysconf(_SC_PAGESIZE);
	if (end == start || errno != 0 || page <= 0)
		return -1;
	return (long long)resident * page;
}

/* One stream's worth of measurements. */
typedef struct {
	size_t events, json_bytes, min_event, max_event;
	double seconds;     /* wall time, monotonic clock: what the rates use */
	double cpu_seconds; /* this thread's CPU time meanwhile: below wall time, the machine was busy */
} bench_stream_t;

/*
 * Generate n events of one kind as a watch stream (round 0: ADDED, else
 * MODIFIED pods), feed it in chunks through the framer into the store, and
 * free it. Only the feeding is timed. *rv is the resourceVersion of the first
 * event and moves past the last one. Returns 0, or -1 on a malfunction.
 */
static int bench_stream(store_t *store, bench_kind_t kind, unsigned n, unsigned n_nodes, unsigned round,
			uint64_t *rv, bench_stream_t *out)
{
	sbuf_t stream;
	sbuf_init(&stream, 1u << 20, (size_t)n * BENCH_MAX_EVENT + 1);
	out->min_event = SIZE_MAX;
	out->max_event = 0;
	for (unsigned i = 0; i < n && !stream.failed; i++) {
		size_t before = stream.len;
		if (kind == KIND_PODS) {
			synth_pod_t p;
			synth_pod(i, n_nodes, &p);
			synth_pod_event(&stream, &p, round, (*rv)++);
		} else if (kind == KIND_CLAIMS) {
			synth_claim_event(&stream, i, n_nodes, (*rv)++);
		} else {
			synth_node_event(&stream, i, (*rv)++);
		}
		size_t size = stream.len - before;
		if (size > BENCH_MAX_EVENT)
			stream.failed = true;
		out->min_event = size < out->min_event ? size : out->min_event;
		out->max_event = size > out->max_event ? size : out->max_event;
	}
	if (stream.failed) {
		fprintf(stderr, "bench_cache: cannot generate the %s stream (a template over %u bytes or an event over %u)\n",
			store->kind->resource, SBUF_TEMPLATE_MAX, BENCH_MAX_EVENT);
		sbuf_free(&stream);
		return -1;
	}

	watch_framer_t framer;
	bench_watch_t w = { .store = store };
	char *chunk = xmalloc(BENCH_CHUNK);
	uint64_t events_before = store->events;
	int rc = 0;
	watch_framer_init(&framer, BENCH_MAX_LINE);

	double t0 = bench_clock(CLOCK_MONOTONIC), c0 = bench_clock(CLOCK_THREAD_CPUTIME_ID);
	for (size_t off = 0; off < stream.len && rc == 0; off += BENCH_CHUNK) {
		size_t len = stream.len - off < BENCH_CHUNK ? stream.len - off : BENCH_CHUNK;
		memcpy(chunk, stream.p + off, len); /* as curl hands over its receive buffer */
		rc = watch_framer_feed(&framer, chunk, len, bench_on_line, &w);
	}
	out->seconds = bench_clock(CLOCK_MONOTONIC) - t0;
	out->cpu_seconds = bench_clock(CLOCK_THREAD_CPUTIME_ID) - c0;

	out->events = n;
	out->json_bytes = stream.len;
	int result = 0;
	char want_rv[32];
	snprintf(want_rv, sizeof(want_rv), "%" PRIu64, *rv - 1);
	if (rc != 0 || w.relist || watch_framer_pending(&framer) != 0) {
		fprintf(stderr, "bench_cache: the %s watch stream broke (feed rc %d, relist %d, %zu bytes pending)\n",
			store->kind->resource, rc, w.relist, watch_framer_pending(&framer));
		result = -1;
	} else if (store->events - events_before != n || store->decode_errors != 0) {
		fprintf(stderr, "bench_cache: %s: %" PRIu64 " of %u events applied, %" PRIu64 " decode errors\n",
			store->kind->resource, store->events - events_before, n, store->decode_errors);
		result = -1;
	} else if (n > 0 && (w.rv == NULL || strcmp(w.rv, want_rv) != 0)) {
		fprintf(stderr, "bench_cache: %s: the watch would resume from %s, not %s\n", store->kind->resource,
			w.rv ? w.rv : "nothing", want_rv);
		result = -1;
	}
	free(w.rv);
	free(chunk);
	watch_framer_free(&framer);
	sbuf_free(&stream);
	return result;
}

/* ---- verification: the projections hold what the objects said ---------------- */

static bool bench_str_eq(const char *a, const char *b)
{
	return a != NULL && b != NULL && strcmp(a, b) == 0;
}

static int bench_verify_pods(const store_t *s, const bench_opt_t *o, unsigned round, uint64_t first_rv)
{
	unsigned n_nodes = o->nodes ? o->nodes : 1000;
	for (unsigned i = 0; i < o->pods; i++) {
		synth_pod_t p;
		synth_pod(i, n_nodes, &p);
		const projection_pod_t *got = store_get(s, p.ns, p.name);
		char rv[32];
		snprintf(rv, sizeof(rv), "%" PRIu64, first_rv + i);
		bool done = round % 2 == 1;
		int64_t count = 0;
		bool ok = got != NULL && bench_str_eq(got->meta.uid, p.uid) &&
			  bench_str_eq(got->meta.resource_version, rv) && bench_str_eq(got->node_name, p.node) &&
			  got->phase == (done ? PROJECTION_POD_SUCCEEDED : PROJECTION_POD_RUNNING) &&
			  got->ready == !done && got->scheduled == PROJECTION_CONDITION_TRUE;
		if (ok && p.mode == POD_DEVICE_PLUGIN)
			ok = got->n_claims == 0;
		else if (ok)
			ok = got->n_claims == 1 && bench_str_eq(got->claims[0], p.claim);
		if (ok && p.mode == POD_DRA_TEMPLATE)
			ok = got->n_requests == 0;
		else if (ok)
			ok = got->n_requests == 1 &&
			     projection_quantity_find(got->requests, got->n_requests, "example.com/gpu", &count) &&
			     count == p.gpus;
		if (!ok) {
			fprintf(stderr, "bench_cache: the cached pod %s/%s does not hold what was sent\n", p.ns, p.name);
			return -1;
		}
	}
	return 0;
}

static int bench_verify_claims(const store_t *s, const bench_opt_t *o)
{
	unsigned n_nodes = o->nodes ? o->nodes : 1000;
	for (unsigned c = 0; c < o->claims; c++) {
		synth_pod_t p;
		synth_pod(synth_claim_pod_index(c), n_nodes, &p);
		const projection_claim_t *got = store_get(s, p.ns, p.claim);
		bool ok = got != NULL && bench_str_eq(got->meta.uid, p.claim_uid) && got->allocated &&
			  got->n_results == p.gpus && bench_str_eq(got->node_name, p.node) &&
			  got->n_device_classes == 1 && bench_str_eq(got->device_classes[0], "gpu.example.com") &&
			  got->n_reserved_for == 1 && bench_str_eq(got->reserved_for[0].uid, p.uid) &&
			  bench_str_eq(got->owner_pod, p.name) && got->device_conditions_false == 0;
		if (!ok) {
			fprintf(stderr, "bench_cache: the cached claim %s/%s does not hold what was sent\n", p.ns, p.claim);
			return -1;
		}
	}
	return 0;
}

static int bench_verify_nodes(const store_t *s, const bench_opt_t *o)
{
	for (unsigned n = 0; n < o->nodes; n++) {
		char name[32], ip[24];
		synth_node_identity(n, name, sizeof(name), ip, sizeof(ip));
		const projection_node_t *got = store_get(s, NULL, name);
		int64_t gpus = -1;
		bool ok = got != NULL && got->n_labels >= 50 && got->n_annotations == 2 &&
			  got->unschedulable == (n % 10 == 0) && got->ready == PROJECTION_CONDITION_TRUE &&
			  got->n_allocatable == 3 && got->n_capacity == 3 &&
			  projection_quantity_find(got->allocatable, got->n_allocatable, "nvidia.com/gpu", &gpus) && gpus == 8;
		for (size_t k = 0; ok && k < got->n_labels; k++) {
			if (strcmp(got->labels[k].key, "kubernetes.io/hostname") == 0)
				ok = strcmp(got->labels[k].value, name) == 0;
		}
		if (!ok) {
			fprintf(stderr, "bench_cache: the cached node %s does not hold what was sent\n", name);
			return -1;
		}
	}
	return 0;
}

/* ---- report ------------------------------------------------------------------- */

typedef struct {
	const char *name;
	bool present;
	size_t objects;
	bench_stream_t stream;
	double cached_per_obj;
	size_t largest_cached;
	bool rss_known;
	long long rss_growth; /* may be negative: pages given back */
} bench_row_t;

static void bench_cached(const store_t *s, bench_row_t *row)
{
	size_t it = 0;
	const void *proj;
	row->cached_per_obj = store_size(s) ? (double)store_bytes(s) / (double)store_size(s) : 0;
	row->largest_cached = 0;
	while (store_next(s, &it, &proj)) {
		size_t b = store_object_bytes(s, proj);
		row->largest_cached = b > row->largest_cached ? b : row->largest_cached;
	}
}

static void bench_print_row(const bench_row_t *r, size_t rss_divisor)
{
	char rss[32];
	if (!r->rss_known || rss_divisor == 0)
		snprintf(rss, sizeof(rss), "n/a");
	else
		snprintf(rss, sizeof(rss), "%.0f", (double)r->rss_growth / (double)rss_divisor);
	double secs = r->stream.seconds > 0 ? r->stream.seconds : 1e-9;
	printf("%-10s %7zu  %14.0f  %16.0f  %13s  %15.0f  %5.1f\n", r->name, r->objects,
	       (double)r->stream.json_bytes / (double)r->stream.events, r->cached_per_obj, rss,
	       (double)r->stream.events / secs, (double)r->stream.json_bytes / 1048576.0 / secs);
}

static void bench_rss_growth(bench_row_t *row, long long before, long long after)
{
	row->rss_known = before >= 0 && after >= 0;
	row->rss_growth = row->rss_known ? after - before : 0;
}

/* Load one kind: rss before generating, stream, rss after storing. */
static int bench_load(store_t *s, bench_kind_t kind, unsigned n, unsigned n_nodes, uint64_t *rv, bench_row_t *row)
{
	long long before = bench_rss();
	int rc = bench_stream(s, kind, n, n_nodes, 0, rv, &row->stream);
	bench_rss_growth(row, before, bench_rss());
	row->present = true;
	row->objects = n;
	if (rc == 0 && store_size(s) != n) {
		fprintf(stderr, "bench_cache: %s: the store holds %zu objects, %u were sent\n", s->kind->resource,
			store_size(s), n);
		rc = -1;
	}
	bench_cached(s, row);
	return rc;
}

/* ---- command line ---------------------------------------------------------------- */

static void bench_usage(FILE *f)
{
	fprintf(f, "usage: bench_cache [--pods N] [--claims N] [--nodes N] [--repeat R]\n"
		   "       bench_cache --sample\n"
		   "Loads synthetic Pods, ResourceClaims and Nodes through the watch decode path and prints\n"
		   "bytes per cached object and events decoded per second (defaults: 20000 pods,\n"
		   "20000 claims, 1000 nodes, 1 round of MODIFIED pods). 0 skips a kind.\n"
		   "--sample prints one event of each shape and exits.\n");
}

static int bench_parse_count(const char *flag, const char *s, unsigned max, unsigned *out)
{
	char *end;
	if (s == NULL) {
		fprintf(stderr, "bench_cache: %s needs a number\n", flag);
		return -1;
	}
	errno = 0;
	unsigned long v = strtoul(s, &end, 10);
	if (end == s || *end != '\0' || errno != 0 || s[0] == '-' || v > max) {
		fprintf(stderr, "bench_cache: %s wants a whole number from 0 to %u, not '%s'\n", flag, max, s);
		return -1;
	}
	*out = (unsigned)v;
	return 0;
}

static int bench_sample(void)
{
	sbuf_t b;
	sbuf_init(&b, 1u << 16, 16u * BENCH_MAX_EVENT);
	for (unsigned i = 0; i < 3; i++) {
		synth_pod_t p;
		synth_pod(i, 1000, &p);
		synth_pod_event(&b, &p, 0, 4000000 + i);
	}
	synth_claim_event(&b, 0, 1000, 4100000);
	synth_claim_event(&b, 1, 1000, 4100001);
	synth_node_event(&b, 0, 4200000);
	if (b.failed) {
		sbuf_free(&b);
		return 1;
	}
	fwrite(b.p, 1, b.len, stdout);
	sbuf_free(&b);
	return 0;
}

int main(int argc, char **argv)
{
	bench_opt_t o = { .pods = 20000, .claims = 20000, .nodes = 1000, .repeat = 1 };
	for (int i = 1; i < argc; i += 2) { /* every flag that does not return takes a value */
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		int rc;
		if (strcmp(a, "--pods") == 0)
			rc = bench_parse_count(a, v, BENCH_MAX_OBJECTS, &o.pods);
		else if (strcmp(a, "--claims") == 0)
			rc = bench_parse_count(a, v, BENCH_MAX_OBJECTS, &o.claims);
		else if (strcmp(a, "--nodes") == 0)
			rc = bench_parse_count(a, v, BENCH_MAX_OBJECTS, &o.nodes);
		else if (strcmp(a, "--repeat") == 0)
			rc = bench_parse_count(a, v, 1000, &o.repeat);
		else if (strcmp(a, "--sample") == 0)
			return bench_sample();
		else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
			bench_usage(stdout);
			return 0;
		} else {
			fprintf(stderr, "bench_cache: unknown argument '%s'\n", a);
			bench_usage(stderr);
			return 2;
		}
		if (rc != 0)
			return 2;
	}
	/* Pods are spread over the nodes that exist; without nodes, over 1000 names. */
	unsigned n_nodes = o.nodes ? o.nodes : 1000;

	printf("bench_cache: %u pods, %u claims, %u nodes, %u MODIFIED round%s; watch stream fed in %u-byte chunks\n",
	       o.pods, o.claims, o.nodes, o.repeat, o.repeat == 1 ? "" : "s", BENCH_CHUNK);
	fflush(stdout);

	store_t pods, claims, nodes;
	store_init(&pods, &kinds_pods, NULL, NULL);
	store_init(&claims, &kinds_claims, NULL, NULL);
	store_init(&nodes, &kinds_nodes, NULL, NULL);
	bench_row_t rows[4] = { { .name = "pods" }, { .name = "claims" }, { .name = "nodes" }, { .name = "pods-mod" } };
	uint64_t rv = 4000000; /* one etcd revision counter across kinds, as on a real cluster */
	uint64_t pods_rv = rv;
	unsigned pods_round = 0;
	int rc = 0;

	if (o.pods && rc == 0)
		rc = bench_load(&pods, KIND_PODS, o.pods, n_nodes, &rv, &rows[0]);
	if (o.claims && rc == 0)
		rc = bench_load(&claims, KIND_CLAIMS, o.claims, n_nodes, &rv, &rows[1]);
	if (o.nodes && rc == 0)
		rc = bench_load(&nodes, KIND_NODES, o.nodes, n_nodes, &rv, &rows[2]);
	if (o.pods && o.repeat && rc == 0) {
		bench_row_t *m = &rows[3];
		long long before = bench_rss();
		m->present = true;
		m->stream.min_event = SIZE_MAX;
		for (unsigned r = 1; r <= o.repeat && rc == 0; r++) {
			bench_stream_t one;
			pods_rv = rv;
			pods_round = r;
			rc = bench_stream(&pods, KIND_PODS, o.pods, n_nodes, r, &rv, &one);
			m->stream.events += one.events;
			m->stream.json_bytes += one.json_bytes;
			m->stream.seconds += one.seconds;
			m->stream.cpu_seconds += one.cpu_seconds;
			m->stream.min_event = one.min_event < m->stream.min_event ? one.min_event : m->stream.min_event;
			m->stream.max_event = one.max_event > m->stream.max_event ? one.max_event : m->stream.max_event;
		}
		bench_rss_growth(m, before, bench_rss());
		m->objects = m->stream.events;
		if (rc == 0 && store_size(&pods) != o.pods) {
			fprintf(stderr, "bench_cache: pods: %zu cached after updates, %u expected\n", store_size(&pods),
				o.pods);
			rc = -1;
		}
		bench_cached(&pods, m);
	}
	if (rc == 0)
		rc = bench_verify_pods(&pods, &o, pods_round, pods_rv);
	if (rc == 0)
		rc = bench_verify_claims(&claims, &o);
	if (rc == 0)
		rc = bench_verify_nodes(&nodes, &o);

	if (rc == 0) {
		printf("%-10s %7s  %14s  %16s  %13s  %15s  %5s\n", "kind", "objects", "json_bytes/obj",
		       "cached_bytes/obj", "rss_bytes/obj", "decode_events/s", "MiB/s");
		for (int k = 0; k < 4; k++) {
			if (rows[k].present)
				bench_print_row(&rows[k], k == 3 ? o.pods : rows[k].objects);
		}
		printf("sizes:");
		for (int k = 0; k < 3; k++) {
			if (rows[k].present)
				printf(" %s json %zu..%zu B, largest cached %zu B;", rows[k].name, rows[k].stream.min_event,
				       rows[k].stream.max_event, rows[k].largest_cached);
		}
		printf("%s\n", rows[3].present ? " pods-mod rss is growth per pod over all rounds" : "");
		printf("cpu/wall:");
		for (int k = 0; k < 4; k++) {
			if (rows[k].present && rows[k].stream.seconds > 0)
				printf(" %s %.0f%%", rows[k].name, 100.0 * rows[k].stream.cpu_seconds / rows[k].stream.seconds);
		}
		printf(" (well below 100%%: other processes had the CPU, rates are low)\n");
		if (o.pods) {
			double per_pod = rows[0].cached_per_obj;
			bool over = per_pod >= BENCH_POD_BUDGET;
			printf("budget: pod cached_bytes/obj %.0f %s %.0f: %s\n", per_pod, over ? ">=" : "<",
			       BENCH_POD_BUDGET, over ? "OVER" : "ok");
		} else {
			printf("budget: no pods loaded\n");
		}
	}

	store_free(&pods);
	store_free(&claims);
	store_free(&nodes);
	return rc == 0 ? 0 : 1;
}
