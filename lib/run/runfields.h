/*
 * The field numbers of the run file's messages (proto/hostrange.proto:
 * RunKey, RunPath, RunHist) and of the reply fields a save page travels in
 * (SaveReply, ControlReply), for the code that writes or reads those
 * messages byte by byte instead of through protobuf-c: runput.c and
 * runjoin.c write keys, runscan.c reads them in place, the daemon's save
 * and control code and hostrangectl save frame and split the pages. Each
 * enum names every field of its message, with the number the .proto gives
 * it (a key's counters: from lib/agg/keyfields.h, whose table also
 * gives the ones named nowhere here); tests/unit/test_runput.c checks each one against protobuf-c's
 * descriptors, so a change to the .proto that is not made here fails
 * there.
 */
#ifndef HOSTRANGE_RUNFIELDS_H
#define HOSTRANGE_RUNFIELDS_H

#include "lib/agg/keyfields.h"

/* RunKey: one key of a run. */
enum hrr_runkey_field {
    HRR_RUNKEY_NODE_ID = 1,
    HRR_RUNKEY_OPERATOR = 2,
    HRR_RUNKEY_BACKEND = 3,
    HRR_RUNKEY_PHASE = 4,
    HRR_RUNKEY_RANGE = 5,
    HRR_RUNKEY_NODE_RANK = 6,
    HRR_RUNKEY_RANGE_RANK = 7,
    HRR_RUNKEY_PAIRS = HRA_KF_RUNKEY_pairs,
    HRR_RUNKEY_RECORDS = HRA_KF_RUNKEY_records,
    HRR_RUNKEY_CHILDREN = HRA_KF_RUNKEY_children,
    HRR_RUNKEY_INCLUSIVE = 11,
    HRR_RUNKEY_SELF = 12,
    HRR_RUNKEY_INCLUSIVE_HIST = 14,
    HRR_RUNKEY_SELF_HIST = 15,
    HRR_RUNKEY_DESCENDANTS = HRA_KF_RUNKEY_descendants,
    HRR_RUNKEY_PATHS = 17,
    HRR_RUNKEY_EVENTS = 18,
};

/* RunPath: one calling context of a key. */
enum hrr_runpath_field {
    HRR_RUNPATH_PATH = 1,
    HRR_RUNPATH_PAIRS = HRA_KF_RUNPATH_pairs,
    HRR_RUNPATH_CHILDREN = HRA_KF_RUNPATH_children,
    HRR_RUNPATH_INCLUSIVE = 4,
    HRR_RUNPATH_SELF = 5,
    HRR_RUNPATH_INCLUSIVE_HIST = 6,
    HRR_RUNPATH_SELF_HIST = 7,
    HRR_RUNPATH_DESCENDANTS = HRA_KF_RUNPATH_descendants,
    HRR_RUNPATH_EVENTS = 9,
    HRR_RUNPATH_SAME_AS_KEY = 10,
};

/* RunHist: a histogram of a key's or a path's values. */
enum hrr_runhist_field {
    HRR_RUNHIST_N = 1,
    HRR_RUNHIST_MIN = 2,
    HRR_RUNHIST_MAX = 3,
    HRR_RUNHIST_SUM_LO = 4,
    HRR_RUNHIST_SUM_HI = 5,
    HRR_RUNHIST_SUMSQ_HI = 6,
    HRR_RUNHIST_SUMSQ_LO = 7,
    HRR_RUNHIST_BUCKETS = 8,
    HRR_RUNHIST_COUNTS = 9,
};

/* SaveReply: a page of a save. */
enum hrr_savereply_field {
    HRR_SAVEREPLY_KEYS = 1,
    HRR_SAVEREPLY_NEXT_CURSOR = 2,
    HRR_SAVEREPLY_END = 3,
    HRR_SAVEREPLY_PACKED_KEYS = 4,
};

/* The two ControlReply fields a save page's reply is framed with by hand
 * (the others are left to protobuf-c). */
enum hrr_controlreply_field {
    HRR_CONTROLREPLY_VERSION = 1,
    HRR_CONTROLREPLY_SAVE = 7,
};

#endif
