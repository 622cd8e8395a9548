/*
 * The one growable array (grow.h): doubling, with every count checked
 * before it is multiplied.
 */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/util/grow.h"

size_t hru_grow_room(size_t cap, size_t need, size_t size, size_t first)
{
    size_t room = cap ? cap : (first ? first : 1);

    if (size == 0)
        size = 1;
    while (room < need) {
        if (room > SIZE_MAX / 2)
            return 0;
        room *= 2;
    }
    if (room > SIZE_MAX / size)
        return 0;
    return room;
}

int hru_resize(void *arr, size_t n, size_t size)
{
    void *p, *q;

    if (size != 0 && n > SIZE_MAX / size)
        return -ENOMEM;
    memcpy(&p, arr, sizeof p);
    q = realloc(p, n * size != 0 ? n * size : 1);
    if (q == NULL)
        return -ENOMEM;
    memcpy(arr, &q, sizeof q);
    return 0;
}

int hru_grow(void *arr, size_t *cap, size_t need, size_t size, size_t first)
{
    size_t room;
    int rc;

    if (need <= *cap)
        return 0;
    room = hru_grow_room(*cap, need, size, first);
    if (room == 0)
        return -ENOMEM;
    if ((rc = hru_resize(arr, room, size)) != 0)
        return rc;
    *cap = room;
    return 0;
}

int hru_grow32(void *arr, uint32_t *cap, size_t need, size_t size,
               uint32_t first)
{
    size_t room;
    int rc;

    if (need <= *cap)
        return 0;
    if (need > UINT32_MAX)
        return -ENOMEM;
    room = hru_grow_room(*cap, need, size, first);
    if (room == 0)
        return -ENOMEM;
    if (room > UINT32_MAX)
        room = UINT32_MAX; /* doubling passed 32 bits; need still fits */
    if ((rc = hru_resize(arr, room, size)) != 0)
        return rc;
    *cap = (uint32_t)room;
    return 0;
}
