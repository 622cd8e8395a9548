/*
 * A gate's result where CI systems and people look: the keys a comparison
 * judged (hostrangectl diff, and the history's checks) written as JUnit
 * XML for test-report viewers, or as Markdown for a pull-request comment
 * or a CI step summary. Pure formatting: the writers take the judged rows
 * and write to the FILE * they are given, and do no other I/O.
 *
 * JUnit: one <testsuite> per node id (in order of first appearance), one
 * <testcase> per key, named by its phase, range and metric (with the
 * operator and backend when a key has them) and classed by its node. A key
 * slower than its failure limit is a <failure> whose message gives both
 * medians, the change, p and the limit; a key of one run only is
 * <skipped> with the reason, and so is a key not judged at its limit;
 * other keys pass, a flagged one (slower,
 * faster, beyond the warning level) saying so in <system-out>. Every
 * count attribute is the count of its elements. Names are written with
 * hrv_xml_escape (escape.h), the one XML rule of lib/view.
 *
 * Markdown: a one-line verdict ("2 keys slower than allowed, 1 faster, 76
 * unchanged; machines match"), then a GitHub-flavoured table of the
 * changed keys, worst first, at most `limit` rows and a line saying how
 * many more; keys not judged at their limit (their detectable change
 * above it) follow the changed ones, and the table has a column of the
 * detectable change when any row states one. Names are written with
 * hrv_md_escape (escape.h). The text ends with a
 * newline, so that several reports appended to one file
 * ($GITHUB_STEP_SUMMARY) stay apart.
 */
#ifndef HOSTRANGE_GATE_H
#define HOSTRANGE_GATE_H

#include <stddef.h>
#include <stdio.h>

#include "lib/view/escape.h"

/* The default of --limit: the most rows of a Markdown table. */
#define HRV_GATE_MARKDOWN_LIMIT 50

enum hrv_gate_verdict {
    HRV_GATE_UNCHANGED,  /* compared: no change flagged */
    HRV_GATE_FASTER,     /* flagged faster */
    HRV_GATE_SLOWER,     /* flagged slower */
    HRV_GATE_ONLY,       /* in one run only: no comparison */
};

/* One judged key. Strings are borrowed; op and backend may be NULL or "". */
struct hrv_gate_row {
    const char *node, *op, *backend, *phase, *range, *metric;
    double before, after;  /* the medians, ns (NaN on a missing side) */
    double change;         /* %, + slower (NaN for one run only) */
    double p;              /* the comparison's p-value (NaN: none) */
    double fail_pct;       /* the key's failure limit, % (NaN: none) */
    double warn_pct;       /* the key's warning level, % (NaN: none) */
    enum hrv_gate_verdict verdict;
    int fail;              /* slower than fail_pct allows: a failure */
    int warn;              /* slower than warn_pct (and not failing) */
    const char *reason;    /* HRV_GATE_ONLY: why ("only in the base run") */
    const char *where;     /* NULL, or where the key was judged ("on
                              MACHINE at commit C"), after its name */
    double detectable;     /* the smallest change the comparison could
                              have flagged, % (0: not stated; +inf: none) */
    int not_judged;        /* detectable above fail_pct: neither passed
                              nor failed */
    size_t pairs;          /* a sequential comparison's: the pairs of
                              rounds that decided it (0: not one) */
    int undecided;         /* a key that had to be decided and was not */
};

/* A gate's result: its rows, in report order, and what the runs were. */
struct hrv_gate {
    const char *title;     /* what compared, e.g. "hostrangectl diff" */
    const struct hrv_gate_row *rows;
    size_t n;
    const char *machines;  /* NULL when the runs' machines match, "" when
                              not to be said, else how they differ */
    size_t limit;          /* Markdown: the most table rows */
    const char *skipped;   /* the verdict's words for HRV_GATE_ONLY rows
                              (NULL: "in one run only") */
};

/* The words of a row not judged at its limit. */
#define HRV_GATE_NOT_JUDGED "not judged at this limit"

/* The counts of a gate's rows by outcome. */
struct hrv_gate_counts {
    size_t fail, warn, slower, faster, unchanged, only, not_judged,
        undecided;
};

/* Counts g's rows: fail and warn first (such a row counts there alone),
 * then not judged, then by verdict. */
void hrv_gate_count(const struct hrv_gate *g, struct hrv_gate_counts *c);

/* Writes g as a JUnit XML document. Returns 0, -ENOMEM or -EIO. */
int hrv_gate_junit(FILE *f, const struct hrv_gate *g);

/* Writes g as GitHub-flavoured Markdown. Returns 0, -ENOMEM or -EIO. */
int hrv_gate_markdown(FILE *f, const struct hrv_gate *g);

/*
 * A history's findings (hostrangectl history detect): each a group of
 * change points at one commit that belong together (lib/history/look.h),
 * its rows the series that moved, rows[0] the one its change starts in.
 *
 * JUnit: one <testsuite> of the findings, the rule as its property
 * "rule", a <testcase> per finding named by where it starts ("finding 1:
 * starts in warm layer7 self on MACHINE at commit C"), classed by the
 * starting node, a <failure> when a series of it is slower than its limit,
 * and its series listed, one a line, in <system-out>.
 *
 * Markdown: a line counting the findings, the rule's line, and a table of
 * the findings, worst first (failing, then by the change of the series
 * they start in, largest first), at most `limit` rows.
 */
struct hrv_gate_finding {
    const char *where;   /* "on MACHINE at commit C (run R)" */
    const struct hrv_gate_row *rows; /* its series; rows[0] its start */
    size_t n;
    size_t nodes;        /* how many nodes it holds */
    double p;            /* the smallest p of its series */
    int fail;            /* a series of it slower than its limit */
};

struct hrv_gate_findings {
    const char *title;
    const char *rule;    /* the rule over all series, in words */
    const struct hrv_gate_finding *f;
    size_t n;
    size_t series;       /* how many series were looked at */
    size_t limit;        /* Markdown: the most table rows */
};

/* Writes g as a JUnit XML document. Returns 0, -ENOMEM or -EIO. */
int hrv_gate_findings_junit(FILE *f, const struct hrv_gate_findings *g);

/* Writes g as GitHub-flavoured Markdown. Returns 0, -ENOMEM or -EIO. */
int hrv_gate_findings_markdown(FILE *f, const struct hrv_gate_findings *g);

#endif
