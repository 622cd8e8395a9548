/*
 * Constants and helpers shared by both ends of the hostrange wire protocol.
 *
 * A daemon serves one runtime directory. In it live two nanomsg IPC sockets:
 * `ingest` (REQ/REP: a client sends a Batch, the daemon answers an Ack) and
 * `control` (REQ/REP: hostrangectl sends a ControlRequest, the daemon answers
 * a ControlReply), and the daemon's lock file `hostranged.pid`. Every message
 * carries HRP_VERSION; any other version is rejected.
 */
#ifndef HOSTRANGE_PROTOCOL_H
#define HOSTRANGE_PROTOCOL_H

#include <stddef.h>

#define HRP_VERSION 2u

/* The largest ingest message the daemon accepts, in bytes. A client never
 * builds a batch larger than HRP_BATCH_MAX_BYTES, well under this cap. */
#define HRP_MAX_INGEST_BYTES (4u * 1024u * 1024u)
#define HRP_BATCH_MAX_BYTES (1u * 1024u * 1024u)

/* Label and name strings longer than this are rejected. */
#define HRP_MAX_STRING 4096u

/* The phases; the public HR_PHASE_* of hostrange.h are tied to these by a
 * static assertion in protocol.c. */
#define HRP_PHASE_COLD 1u
#define HRP_PHASE_WARM 2u
#define HRP_METRIC_INCLUSIVE 1u
#define HRP_METRIC_SELF 2u

/*
 * The calibration of the observer cost (hostrange-bench --calibrate, read
 * by the daemon's observer.c): node HRP_CALIB_NODE, nested ranges
 * outer > mid > inner, a fan of child scopes around work and the same
 * work flat, and records of one clock read as timer.
 */
#define HRP_CALIB_NODE "calibration"
#define HRP_CALIB_OUTER "calibration.outer"
#define HRP_CALIB_MID "calibration.mid"
#define HRP_CALIB_INNER "calibration.inner"
#define HRP_CALIB_TIMER "calibration.timer"
/* A fan-out of child scopes around equal work, and the same work with no
 * scopes: the cost of a child scope where it has work around it. */
#define HRP_CALIB_FAN "calibration.fan"
#define HRP_CALIB_FAN_CHILD "calibration.fan.child"
#define HRP_CALIB_FLAT "calibration.flat"

/*
 * Clock paths (Batch.clock_path, hostrange.h's hr_clock_path): fast (plain
 * reads), waiting (the fast path whose reads wait for the work before them:
 * a batch says fast with a waiting clock order, HRP_CLOCK_ORDER_RDTSCP or
 * HRP_CLOCK_ORDER_LFENCE) or ordered (fenced reads). Their biases differ,
 * so that a calibration of one is not applied to another. Sets of them are
 * bit masks: a key fed by clients of more than one path is mixed, and none
 * is not known (a client or a file from before paths were named); a file
 * from before waiting reads were told apart says fast for both. hr_clock_path
 * returns fast or ordered; the daemon names waiting.
 */
#define HRP_CLOCK_PATH_FAST "fast"
#define HRP_CLOCK_PATH_ORDERED "ordered"
#define HRP_CLOCK_PATH_WAITING "waiting"
#define HRP_CLOCK_PATH_MIXED "mixed"
#define HRP_CLOCK_PATH_UNKNOWN "unknown"
#define HRP_PATH_FAST 1u
#define HRP_PATH_ORDERED 2u
#define HRP_PATH_WAITING 4u
#define HRP_PATHS_ALL (HRP_PATH_FAST | HRP_PATH_ORDERED | HRP_PATH_WAITING)
/* The clock orders of the fast path's reads (Batch.clock_order). */
#define HRP_CLOCK_ORDER_PLAIN "rdtsc"
#define HRP_CLOCK_ORDER_RDTSCP "rdtscp"
#define HRP_CLOCK_ORDER_LFENCE "lfence;rdtsc"

#define HRP_INGEST_NAME "ingest"
#define HRP_CONTROL_NAME "control"
#define HRP_LOCK_NAME "hostranged.pid"

/*
 * Resolves the runtime directory: `override` when not NULL or empty, else
 * $HOSTRANGE_RUNTIME_DIR, else $XDG_RUNTIME_DIR/hostrange, else
 * /run/hostrange for root and /tmp/hostrange-UID for others. Writes it to
 * buf and returns 0, or -ENAMETOOLONG when it does not fit.
 */
int hrp_runtime_dir(char *buf, size_t len, const char *override);

/*
 * Writes the nanomsg address of socket `name` (HRP_INGEST_NAME or
 * HRP_CONTROL_NAME) in runtime directory `dir` to buf ("ipc://DIR/NAME").
 * Returns 0 or -ENAMETOOLONG.
 */
int hrp_endpoint(char *buf, size_t len, const char *dir, const char *name);

/*
 * The longest runtime directory whose sockets can be bound: a socket's
 * path (DIR/control, the longer name) must fit a Unix socket address
 * (107 bytes on Linux), or the daemon cannot serve there ("File name too
 * long").
 */
size_t hrp_runtime_dir_max(void);

struct iovec;

/*
 * Writes the n pieces of iov to fd whole, through short writes and
 * interruptions (iov is consumed). The one writer of record files: the
 * spool's, the journal's and snapshots', and run files. Returns 0, or a
 * negative errno (-ENOSPC when the file takes no more).
 */
int hrp_write_all(int fd, struct iovec *iov, int n);

/* "cold", "warm", or NULL for a value that is neither. */
const char *hrp_phase_name(unsigned phase);

/* HRP_PHASE_COLD, HRP_PHASE_WARM, or 0 for an unknown name. */
unsigned hrp_phase_parse(const char *name);

/* A name both sides take (node id, range name, a calibration's label):
 * 1 to HRP_MAX_STRING bytes, none of them NUL. */
int hrp_name_ok(const char *s, size_t n);

/* A key's operator or backend: a name, or empty (hr_labels_set takes an
 * empty operator and backend; only the node id must be named). */
int hrp_label_ok(const char *s, size_t n);

/* The four names of a key, as the daemon takes them from a batch and a
 * run file from its writer: a named node and range, an operator and a
 * backend that are names or empty (NUL-terminated, each read up to
 * HRP_MAX_STRING + 1 bytes). */
int hrp_key_names_ok(const char *node, const char *op, const char *backend,
                     const char *range);

/* "self" for HRP_METRIC_SELF, else "inclusive": the report's names. */
const char *hrp_metric_name(unsigned metric);

/* HRP_METRIC_SELF for "self", else HRP_METRIC_INCLUSIVE. */
unsigned hrp_metric_parse(const char *name);

/*
 * The path bit of a clock path as a batch names it: HRP_PATH_FAST,
 * HRP_PATH_WAITING (fast with a waiting clock order, or waiting) or
 * HRP_PATH_ORDERED. A batch that names none (a client from before paths
 * were named, whose reads were all ordered) is HRP_PATH_ORDERED when it
 * states a clock order, and 0 (not known) otherwise. Returns -1 for a name
 * that is none of them.
 */
int hrp_clock_path_bit(const char *path, const char *clock_order);

/* The name of a set of paths: fast, waiting, ordered, mixed (more than
 * one), or unknown (0). */
const char *hrp_clock_path_name(unsigned paths);

/* The set of paths a name names (as hrp_clock_path_name writes them; mixed,
 * as files from before waiting reads were told apart wrote it, is fast and
 * ordered); 0 for unknown, an empty name or any other. */
unsigned hrp_clock_paths_parse(const char *name);

/* 1 when a set holds more than one path (mixed). */
static inline int hrp_clock_paths_mixed(unsigned paths)
{
    paths &= HRP_PATHS_ALL;
    return (paths & (paths - 1)) != 0;
}

/* 1 when a set is one of the fast path's: plain or waiting reads. */
static inline int hrp_clock_paths_fast(unsigned paths)
{
    paths &= HRP_PATHS_ALL;
    return paths == HRP_PATH_FAST || paths == HRP_PATH_WAITING;
}

/* The words of HOSTRANGE_CLOCK that choose a single path (fast,plain;
 * fast,waiting; ordered); NULL for any other set. */
const char *hrp_clock_path_env(unsigned paths);

/* What /proc/cpuinfo says of the first processor: both invariant-TSC
 * flags (*invariant), rdtscp (*rdtscp), and whether its vendor is AMD or
 * Hygon (*amd), whose plain rdtsc runs ahead of the work before it. All 0
 * off x86 or where the file cannot be read. */
void hrp_cpu_facts(int *invariant, int *rdtscp, int *amd);

/* A number of the client's environment (HOSTRANGE_FLUSH_TIMEOUT_MS,
 * HOSTRANGE_BUFFER_MB, HOSTRANGE_SPOOL_MB): env as a whole decimal number
 * from min to max, else def (env NULL, empty, not a whole number, or out
 * of range), so that a value that is not one takes the default rather
 * than the number its leading digits make ("2s" is not 2, "off" not 0). */
long hrp_env_number(const char *env, long min, long max, long def);

/* Reads HOSTRANGE_CLOCK's words (env, NULL: none): *tsc is 1 (tsc), 0
 * (monotonic) or -1 (neither named: the default), *ordered 1 (ordered) or
 * 0, *waiting 1 (waiting: the fast path's reads wait for the work before
 * them), 0 (plain) or -1 (the processor's default). Words it does not
 * know are ignored. */
void hrp_clock_env_parse(const char *env, int *tsc, int *ordered,
                         int *waiting);

/* The clock a client starts with (client/clock.c), HOSTRANGE_CLOCK's
 * words (env) over the processor's defaults: the TSC (tsc 1) where it is
 * invariant, else CLOCK_MONOTONIC (0; always off x86); the ordered path
 * (ordered 1) or the fast one; the fast path's reads waiting for the work
 * before them (waiting 1: by default on AMD's processors) or plain; and
 * whether rdtscp is there to wait with (rdtscp 1). */
struct hrp_clock_choice {
    int tsc, ordered, waiting, rdtscp;
};
void hrp_clock_choose(const char *env, struct hrp_clock_choice *c);

/* The clock path a client started here with HOSTRANGE_CLOCK env takes
 * (hrp_clock_choose): ordered; waiting (the TSC's fast path with waiting
 * reads); else fast. */
const char *hrp_clock_path_default(const char *env);

#endif
