/*
 * The field numbers of the run file's messages (proto/hostrange.proto:
 * RunKey, RunPath, RunHist) and of the reply fields a save page travels in
 * (SaveReply, ControlReply), for the code that writes or reads those
 * messages byte by byte instead of through protobuf-c: runput.c and
 * runjoin.c write keys, runscan.c reads them in place, the daemon's save
 * and control code and hostrangectl save frame and split the pages. Each
 * enum names every field of its message, with the number the .proto gives
 * it; tests/unit/test_runput.c checks each one against protobuf-c's
 * descriptors, so a change to the .proto that is not made here fails
 * there.
 */
#ifndef HOSTRANGE_RUNFIELDS_H
#define HOSTRANGE_RUNFIELDS_H

/* RunKey: one key of a run. */
enum hrd_runkey_field {
    HRD_RUNKEY_NODE_ID = 1,
    HRD_RUNKEY_OPERATOR = 2,
    HRD_RUNKEY_BACKEND = 3,
    HRD_RUNKEY_PHASE = 4,
    HRD_RUNKEY_RANGE = 5,
    HRD_RUNKEY_NODE_RANK = 6,
    HRD_RUNKEY_RANGE_RANK = 7,
    HRD_RUNKEY_PAIRS = 8,
    HRD_RUNKEY_RECORDS = 9,
    HRD_RUNKEY_CHILDREN = 10,
    HRD_RUNKEY_INCLUSIVE = 11,
    HRD_RUNKEY_SELF = 12,
    HRD_RUNKEY_INCLUSIVE_HIST = 14,
    HRD_RUNKEY_SELF_HIST = 15,
    HRD_RUNKEY_DESCENDANTS = 16,
    HRD_RUNKEY_PATHS = 17,
    HRD_RUNKEY_EVENTS = 18,
};

/* RunPath: one calling context of a key. */
enum hrd_runpath_field {
    HRD_RUNPATH_PATH = 1,
    HRD_RUNPATH_PAIRS = 2,
    HRD_RUNPATH_CHILDREN = 3,
    HRD_RUNPATH_INCLUSIVE = 4,
    HRD_RUNPATH_SELF = 5,
    HRD_RUNPATH_INCLUSIVE_HIST = 6,
    HRD_RUNPATH_SELF_HIST = 7,
    HRD_RUNPATH_DESCENDANTS = 8,
    HRD_RUNPATH_EVENTS = 9,
    HRD_RUNPATH_SAME_AS_KEY = 10,
};

/* RunHist: a histogram of a key's or a path's values. */
enum hrd_runhist_field {
    HRD_RUNHIST_N = 1,
    HRD_RUNHIST_MIN = 2,
    HRD_RUNHIST_MAX = 3,
    HRD_RUNHIST_SUM_LO = 4,
    HRD_RUNHIST_SUM_HI = 5,
    HRD_RUNHIST_SUMSQ_HI = 6,
    HRD_RUNHIST_SUMSQ_LO = 7,
    HRD_RUNHIST_BUCKETS = 8,
    HRD_RUNHIST_COUNTS = 9,
};

/* SaveReply: a page of a save. */
enum hrd_savereply_field {
    HRD_SAVEREPLY_KEYS = 1,
    HRD_SAVEREPLY_NEXT_CURSOR = 2,
    HRD_SAVEREPLY_END = 3,
    HRD_SAVEREPLY_PACKED_KEYS = 4,
};

/* The two ControlReply fields a save page's reply is framed with by hand
 * (the others are left to protobuf-c). */
enum hrd_controlreply_field {
    HRD_CONTROLREPLY_VERSION = 1,
    HRD_CONTROLREPLY_SAVE = 7,
};

#endif
