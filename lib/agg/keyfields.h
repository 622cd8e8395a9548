/*
 * The counters of a key: one table that the key's struct, the run file's
 * writer, scanner, joiner and loader, the conversions between a key and
 * its records, the report row and the daemon's reply all expand, so that a
 * counter is named in one place.
 *
 * HRA_KEY_COUNTERS(X) calls X(name, runkey, runpath, merge, row) once per
 * counter, in the order of their RunKey field numbers:
 *
 *   name     the uint64_t field of struct hra_key, and the field of the
 *            same name of RunKey (and of RunPath and Row where they have
 *            it) in proto/hostrange.proto;
 *   runkey   its RunKey field number;
 *   runpath  RUNPATH(n): a path key keeps it too, as RunPath field n;
 *            NOPATH: only the key has it;
 *   merge    how two keys' (or paths') counts become one: SUM (added),
 *            MAX (the larger); VALUES: the number of the key's values of
 *            one kind, counted by adding the values themselves (agg.c), so
 *            a loader does not merge it on its own (a join of the values,
 *            runjoin.c, adds it up);
 *   row      ROW: a report row (struct hra_row) and the daemon's Row carry
 *            it under its name; NOROW: they do not.
 *
 * A run file writes a counter in the order of its field number, as
 * protobuf-c packs a message: before the values those numbered below them
 * (the first three, a layout kept forever), else after the values and
 * before the paths when below RunKey's paths, after the paths otherwise.
 * A count of 0 is not written, and reads back as 0 (not known).
 *
 * Adding a counter: its fields in proto/hostrange.proto, a line here, and
 * the code that counts it (feed.c); a column of the report is the report's.
 */
#ifndef HOSTRANGE_KEYFIELDS_H
#define HOSTRANGE_KEYFIELDS_H

#define HRA_KEY_COUNTERS(X)                                  \
    X(pairs, 8, RUNPATH(2), VALUES, NOROW)                   \
    X(records, 9, NOPATH, VALUES, NOROW)                     \
    X(children, 10, RUNPATH(3), SUM, ROW)                    \
    X(descendants, 16, RUNPATH(8), SUM, ROW)

/* The RunPath field number of a runpath column (0: none). */
#define HRA_KF_PATHNUM(p) HRA_KF_PATHNUM_##p
#define HRA_KF_PATHNUM_RUNPATH(n) (n)
#define HRA_KF_PATHNUM_NOPATH 0

/* HRA_KF_IF_PATH(p)(code): code when the counter is a path's too. */
#define HRA_KF_IF_PATH(p) HRA_KF_IF_PATH_##p
#define HRA_KF_IF_PATH_RUNPATH(n) HRA_KF_KEEP
#define HRA_KF_IF_PATH_NOPATH HRA_KF_DROP

/* HRA_KF_IF_MERGED(m)(code): code when the counter merges on its own
 * (not VALUES); HRA_KF_MERGE(m, a, b): the merge of counts a and b. */
#define HRA_KF_IF_MERGED(m) HRA_KF_IF_MERGED_##m
#define HRA_KF_IF_MERGED_SUM HRA_KF_KEEP
#define HRA_KF_IF_MERGED_MAX HRA_KF_KEEP
#define HRA_KF_IF_MERGED_VALUES HRA_KF_DROP
#define HRA_KF_MERGE(m, a, b) HRA_KF_MERGE_##m(a, b)
#define HRA_KF_MERGE_SUM(a, b) ((a) + (b))
#define HRA_KF_MERGE_MAX(a, b) ((a) > (b) ? (a) : (b))
#define HRA_KF_MERGE_VALUES(a, b) ((a) + (b)) /* as the values join */

/* HRA_KF_IF_ROW(r)(code): code when rows carry the counter. */
#define HRA_KF_IF_ROW(r) HRA_KF_IF_ROW_##r
#define HRA_KF_IF_ROW_ROW HRA_KF_KEEP
#define HRA_KF_IF_ROW_NOROW HRA_KF_DROP

#define HRA_KF_KEEP(...) __VA_ARGS__
#define HRA_KF_DROP(...)

/* The fields of every counter, of the path counters, of the row counters
 * (for structs that hold counts). */
#define HRA_KF_FIELD_(name, runkey, runpath, merge, row) uint64_t name;
#define HRA_KF_PATH_FIELD_(name, runkey, runpath, merge, row) \
    HRA_KF_IF_PATH(runpath)(uint64_t name;)
#define HRA_KF_ROW_FIELD_(name, runkey, runpath, merge, row) \
    HRA_KF_IF_ROW(row)(uint64_t name;)
#define HRA_KEY_COUNTER_FIELDS HRA_KEY_COUNTERS(HRA_KF_FIELD_)
#define HRA_KEY_PATH_COUNTER_FIELDS HRA_KEY_COUNTERS(HRA_KF_PATH_FIELD_)
#define HRA_KEY_ROW_COUNTER_FIELDS HRA_KEY_COUNTERS(HRA_KF_ROW_FIELD_)

/* Copies the row counters from *src to *dst (any structs that have
 * them). */
#define HRA_KF_ROW_COPY_(name, runkey, runpath, merge, row) \
    HRA_KF_IF_ROW(row)(hra_kf_dst_->name = hra_kf_src_->name;)
#define HRA_KEY_ROW_COUNTERS_COPY(dst, src)                  \
    do {                                                     \
        __typeof__(dst) hra_kf_dst_ = (dst);                 \
        __typeof__(src) hra_kf_src_ = (src);                 \
        HRA_KEY_COUNTERS(HRA_KF_ROW_COPY_)                   \
    } while (0)

/* Copies the path counters from *src to *dst. */
#define HRA_KF_PATH_COPY_(name, runkey, runpath, merge, row) \
    HRA_KF_IF_PATH(runpath)(hra_kf_dst_->name = hra_kf_src_->name;)
#define HRA_KEY_PATH_COUNTERS_COPY(dst, src)                 \
    do {                                                     \
        __typeof__(dst) hra_kf_dst_ = (dst);                 \
        __typeof__(src) hra_kf_src_ = (src);                 \
        HRA_KEY_COUNTERS(HRA_KF_PATH_COPY_)                  \
    } while (0)

/* Merges the counters that merge on their own (not VALUES) of *src into
 * *dst; the _PATH_ form those a path has. */
#define HRA_KF_MERGE_ONE_(name, runkey, runpath, merge, row) \
    HRA_KF_IF_MERGED(merge)(hra_kf_dst_->name =              \
        HRA_KF_MERGE(merge, hra_kf_dst_->name, hra_kf_src_->name);)
#define HRA_KF_MERGE_PATH_ONE_(name, runkey, runpath, merge, row) \
    HRA_KF_IF_PATH(runpath)(HRA_KF_MERGE_ONE_(name, runkey, runpath, \
                                              merge, row))
#define HRA_KEY_COUNTERS_MERGE(dst, src)                     \
    do {                                                     \
        __typeof__(dst) hra_kf_dst_ = (dst);                 \
        __typeof__(src) hra_kf_src_ = (src);                 \
        HRA_KEY_COUNTERS(HRA_KF_MERGE_ONE_)                  \
    } while (0)
#define HRA_KEY_PATH_COUNTERS_MERGE(dst, src)                \
    do {                                                     \
        __typeof__(dst) hra_kf_dst_ = (dst);                 \
        __typeof__(src) hra_kf_src_ = (src);                 \
        HRA_KEY_COUNTERS(HRA_KF_MERGE_PATH_ONE_)             \
    } while (0)

/* The number of counters. */
#define HRA_KF_ONE_(name, runkey, runpath, merge, row) +1
#define HRA_KEY_NCOUNTERS (0 HRA_KEY_COUNTERS(HRA_KF_ONE_))

/* The field numbers, by name: HRA_KF_RUNKEY_<name>, HRA_KF_RUNPATH_<name>
 * (0: none). */
#define HRA_KF_NUMS_(name, runkey, runpath, merge, row) \
    HRA_KF_RUNKEY_##name = (runkey), HRA_KF_RUNPATH_##name = HRA_KF_PATHNUM(runpath),
enum hra_kf_num { HRA_KEY_COUNTERS(HRA_KF_NUMS_) };

#endif
