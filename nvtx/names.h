/*
 * The names of NVTX ranges, interned once into hostrange sites.
 *
 * A name is (domain, message): the site's range name is the message, or
 * "DOMAIN:message" in a domain other than the default one. Entries live in
 * a fixed-size open-addressing table by content; they are written under a
 * mutex on first use, published by a release store of their slot, and never
 * freed, so a lookup takes no lock and a registered string handle
 * (nvtxStringHandle_t) is simply the address of its entry. Domains are
 * interned by name the same way (a domain created twice, e.g. by two shared
 * objects, is one domain) and never freed either.
 */
#ifndef HOSTRANGE_NVTX_NAMES_H
#define HOSTRANGE_NVTX_NAMES_H

#include <stddef.h>
#include <stdint.h>
#include <wchar.h>

#include "hostrange.h"

struct hrn_domain {
    char *name;
};

struct hrn_name {
    hr_site site;                  /* its name: the full range name */
    const struct hrn_domain *domain;
    uint64_t hash;
    size_t len;
    char *msg;                     /* the message as given */
    int window;                    /* the range that opens the window */
};

/* The most names a process keeps (the client library keeps as many range
 * names at the top of a stack); past it, new names share the range
 * "nvtx.other". */
#define HRN_MAX_NAMES 16384u

/* Sets the full range name that opens and closes the collection window
 * (NULL: none); call before any lookup. The string is copied. */
int hrn_names_window(const char *name);

/* The entry of message `msg` in `domain` (NULL: the default domain); never
 * NULL (a NULL or empty message is "(unnamed)"). A range name over
 * HR_MAX_NAME bytes ("DOMAIN:message" in a domain) is cut at a UTF-8
 * character's boundary and ends in U+2026 and 16 hex digits of a hash of
 * the whole name (counted: hostrangectl stats, client.N.names_cut). */
struct hrn_name *hrn_name_get(const struct hrn_domain *domain,
                              const char *msg);
/* The same for a wide-character message, converted to UTF-8. */
struct hrn_name *hrn_name_get_w(const struct hrn_domain *domain,
                                const wchar_t *msg);

/* The domain named `name` (NULL on ENOMEM or a NULL name). */
struct hrn_domain *hrn_domain_get(const char *name);
struct hrn_domain *hrn_domain_get_w(const wchar_t *name);

/* Writes the UTF-8 form of wide string `w` to buf (len > 0 bytes, cut at a
 * character's boundary, always terminated); returns buf. */
char *hrn_utf8(const wchar_t *w, char *buf, size_t len);

#endif
